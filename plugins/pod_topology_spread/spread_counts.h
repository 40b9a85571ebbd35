#pragma once

// PodTopologySpread's PreFilter counts, kept from one cycle to the next for each pod template and
// brought up to date by recounting only the nodes that changed (framework/kept_result.h).

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "plugins/pod_topology_spread/common.h"
#include "scheduler/framework/kept_result.h"
#include "scheduler/util/parallel.h"

namespace kubesched::plugins::pod_topology_spread {

// What Filter needs for one DoNotSchedule constraint.
struct ConstraintCounts {
  // Matching pods per topology value, for every eligible domain (zero counts included: an empty
  // domain is the global minimum).
  absl::flat_hash_map<api::Symbol, int64_t> per_domain;
  // The global minimum the skew is measured against: 0 while there are fewer eligible domains
  // than minDomains; "infinite" when there is no domain at all (then nothing can be skewed).
  int64_t min_match = 0;
  // Whether the incoming pod counts itself in the domain it lands in.
  bool self_match = false;
};
using SpreadCounts = std::vector<ConstraintCounts>;  // parallel to the constraints

// Upstream's minimum over the eligible domains (see ConstraintCounts::min_match).
int64_t GlobalMinimum(const ConstraintCounts& counts, int32_t min_domains);

// The pods of one template, as far as their counts go: the same label group (namespace, labels,
// terminating), the same compiled DoNotSchedule constraints and, when a constraint honors them,
// the same required node affinity and tolerations.
struct SpreadTemplate {
  const framework::PodInfo& pod;
  const std::vector<Constraint>& constraints;
};

// SpreadCounts for the pods of one template. Counting every node (in pieces over the scheduler's
// threads) is needed only for the template's first pod, or when the snapshot cannot say which
// nodes changed; each node's share is remembered so that a changed node's old share can be taken
// back. The counts always equal those of counting every node afresh
// (tests/plugins/pod_topology_spread_kept_test.cc).
class SpreadCounter {
 public:
  SpreadCounter(const framework::PodInfo& pod, std::vector<Constraint> constraints);

  bool Serves(const SpreadTemplate& key) const;
  // Brings the counts up to date with `snapshot`; `pool` (may be null) counts every node.
  void Update(const framework::Snapshot& snapshot, util::WorkerPool* pool);

  // Never changed while a state holds them: the next Update copies them first then.
  std::shared_ptr<const SpreadCounts> counts() const { return counts_; }
  const std::shared_ptr<const std::vector<Constraint>>& constraints() const { return constraints_; }

 private:
  // One node's matching pods for one constraint, in the node's domain of that constraint's key.
  struct Share {
    uint32_t constraint = 0;
    api::Symbol value = api::kEmptySymbol;
    int64_t count = 0;
  };
  using Shares = absl::InlinedVector<Share, 2>;
  // Per domain of one constraint: the matching pods and the eligible nodes.
  struct DomainTally {
    int64_t pods = 0;
    int32_t nodes = 0;
  };
  using Tallies = std::vector<absl::flat_hash_map<api::Symbol, DomainTally>>;

  void CountAll(const framework::Snapshot& snapshot, util::WorkerPool* pool);
  void CountPiece(const std::vector<const framework::NodeInfo*>& nodes, size_t begin, size_t end,
                  Tallies& out);
  void Recount(const framework::NodeInfo& node, uint32_t position);
  void SharesOf(const framework::NodeInfo& node, std::vector<SelectorMemo>& memos,
                Shares& out) const;
  void Tally(const Share& share, int sign);
  void Settle();
  SpreadCounts& MutableCounts();

  // The template: what Serves compares.
  framework::LabelGroupId label_group_;
  std::shared_ptr<const api::Pod> sample_;  // a pod of the template, for its affinity and taints
  std::shared_ptr<const std::vector<Constraint>> constraints_;
  bool honors_affinity_ = false;
  bool honors_taints_ = false;
  RequiredNodeAffinity affinity_;

  framework::SnapshotMark mark_;
  std::shared_ptr<SpreadCounts> counts_;
  std::vector<absl::flat_hash_map<api::Symbol, int32_t>> domain_nodes_;  // eligible nodes
  std::vector<Shares> shares_;                                           // by snapshot position
  std::vector<SelectorMemo> memos_;  // per constraint, valid for the template's life
  std::vector<uint8_t> changed_constraints_;
  std::vector<uint32_t> changed_;
  Shares scratch_;
};

}  // namespace kubesched::plugins::pod_topology_spread
