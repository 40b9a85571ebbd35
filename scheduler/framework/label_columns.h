#pragma once

// The values of a few label keys (topology keys) on every node, by snapshot position, kept from
// one cycle to the next and brought up to date by the nodes that changed, so that a Filter reads
// a node's domain from a flat array instead of following the node to its labels (a cache miss or
// two per node: about half of InterPodAffinity's Filter in SchedulingPodAntiAffinity).
//
// Threads: Update runs in PreFilter, on the scheduling thread; the columns it hands out are never
// changed while a cycle holds them (the next Update copies them first then), and Filter reads
// them from any thread.

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "scheduler/api/labels.h"
#include "scheduler/framework/kept_result.h"
#include "scheduler/framework/node_info.h"
#include "scheduler/framework/snapshot.h"

namespace kubesched::framework {

// Columns of node label values: for keys[i], values[i][position] is the value of that key on the
// snapshot's node at `position`, or api::kNoSuchSymbol where the node lacks it (or has no Node
// object).
struct LabelColumns {
  absl::InlinedVector<api::Symbol, 4> keys;
  absl::InlinedVector<std::vector<api::Symbol>, 4> values;  // parallel to keys

  // The column of `key`; null when it has none. Stays valid while the columns are held.
  const std::vector<api::Symbol>* Column(api::Symbol key) const {
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] == key) return &values[i];
    }
    return nullptr;
  }
  // The value of `key` on `node`, as ValueIn(Column(key), ...).
  std::optional<api::Symbol> ValueOf(api::Symbol key, const NodeInfo& node,
                                     const api::LabelSet& labels) const;
};

// The value of `key` on `node`: from `column` (key's, or null) for a node of the snapshot the
// columns were brought up to date with; from `labels` (the node's) without a column or for a node
// outside the snapshot's list (a what-if copy).
inline std::optional<api::Symbol> ValueIn(const std::vector<api::Symbol>* column, api::Symbol key,
                                          const NodeInfo& node, const api::LabelSet& labels) {
  const uint32_t position = node.snapshot_position();
  if (column == nullptr || position >= column->size()) return labels.Get(key);
  const api::Symbol value = (*column)[position];
  if (value == api::kNoSuchSymbol) return std::nullopt;
  return value;
}

inline std::optional<api::Symbol> LabelColumns::ValueOf(api::Symbol key, const NodeInfo& node,
                                                        const api::LabelSet& labels) const {
  return ValueIn(Column(key), key, node, labels);
}

// LabelColumns kept for one plugin: a column per key any of its pods asked for (up to
// kMaxKeys; further keys are read from the labels), every column refilled when the snapshot
// cannot tell what changed (nodes added or removed), otherwise only the changed nodes' entries.
// Equal to reading the labels (tests/scheduler/framework/label_columns_test.cc).
class KeptLabelColumns {
 public:
  static constexpr size_t kMaxKeys = 8;

  // Brings the columns up to date with `snapshot` and adds one for each of `keys` that has none.
  void Update(const Snapshot& snapshot, absl::Span<const api::Symbol> keys);
  // Never changed while a state holds it: the next Update copies it first then.
  std::shared_ptr<const LabelColumns> columns() const { return columns_; }

 private:
  LabelColumns& Mutable();

  SnapshotMark mark_;
  std::shared_ptr<LabelColumns> columns_ = std::make_shared<LabelColumns>();
  std::vector<uint32_t> changed_;
};

}  // namespace kubesched::framework
