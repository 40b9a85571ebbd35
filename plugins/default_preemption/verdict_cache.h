#pragma once

// DefaultPreemption's dry-run verdicts, kept from one preemptor to the next one alike.
//
// The preemptors of a workload are usually alike (one template: the same spec and priority), and
// between two of them the cluster changes on a node or two (the last preemption's nomination, a
// victim gone, a pod bound). So nearly every node the next dry run judges was judged the same way
// a moment before. When the host says the filters judge the pod and the node alone
// (PostFilterHost::VerdictScopeFor), a node's verdict is a function of the pod, the node and the
// pods nominated to it (NominationStamp); this cache keeps, per snapshot position, the last
// verdict worth keeping (passed over by the resource screen, or a candidate with its victims) and
// gives it back while all three are the same. Whether the node changed comes from the snapshot
// (Snapshot::NodesChangedSince), so a node whose verdict is kept is not read at all: in a dry run
// that passes over thousands of nodes nominated to earlier preemptors, reading each node's
// NodeInfo was most of the run.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "plugins/default_preemption/pick_node.h"
#include "scheduler/api/objects.h"
#include "scheduler/framework/kept_result.h"
#include "scheduler/framework/plugin.h"
#include "scheduler/framework/pod_exemplar.h"
#include "scheduler/framework/snapshot.h"

namespace kubesched::plugins::preemption {

// One node's verdict as kept: a candidate without PDB violations (a node passed over by the screen
// needs no more than its key says).
struct KeptVerdict {
  VictimSummary summary;
  // The victims' positions in the node's pods(), most important first (the same pods while the
  // node is unchanged).
  absl::InlinedVector<uint32_t, 4> victims;
};

// Threads: Begin on the calling thread before the dry run's rounds; Find and Keep from the
// workers, each on the positions of its own chunk (the slots are not resized during a round). The
// owner serialises dry runs (DefaultPreemption holds its lock around each).
class VerdictCache {
 public:
  // What Find answers for a node whose verdict is kept.
  struct Found {
    bool screened_out = false;
    const KeptVerdict* candidate = nullptr;  // set unless screened out
  };

  // Prepares a dry run of `pod` judged in `scope` over `snapshot`. The kept verdicts stay valid
  // only when `pod` is alike the pod they were judged for (namespace, labels, annotations, spec,
  // priority, NonPreemptible) in the same scope, and only for the nodes the snapshot says did not
  // change since the last Begin; the others are dropped.
  void Begin(const framework::PodInfo& pod, const framework::VerdictScope& scope,
             const framework::Snapshot& snapshot);
  // The kept verdict of `node`, at snapshot position `position`, when it was judged with the
  // same nominations; none otherwise. Reads nothing of `node` but its address.
  std::optional<Found> Find(uint32_t position, const framework::NodeInfo* node,
                            uint64_t nominations) const {
    if (position >= keys_.size()) return std::nullopt;
    const Key& key = keys_[position];
    if (key.era != exemplar_.era() || key.node != node || key.nominations != nominations) {
      return std::nullopt;
    }
    if (key.screened_out) return Found{true, nullptr};
    return Found{false, &verdicts_[position]};
  }
  // Keeps the verdict for `node` at `position` with `nominations`. A candidate's `victims` are
  // pods of `node`; a victim not found there (not expected) keeps nothing.
  void Keep(uint32_t position, const framework::NodeInfo& node, uint64_t nominations,
            bool screened_out, const std::vector<const framework::PodInfo*>& victims,
            const VictimSummary& summary);

 private:
  // What decides whether a kept verdict applies, apart from the verdict: all that a dry run reads
  // of a node passed over.
  struct Key {
    uint64_t nominations = 0;
    uint64_t era = 0;  // the exemplar's it was judged for; 0: none (the node changed since)
    const framework::NodeInfo* node = nullptr;
    bool screened_out = false;
  };

  framework::PodExemplar exemplar_;
  // The snapshot state the keys hold verdicts for.
  framework::SnapshotMark mark_;
  std::vector<uint32_t> changed_;
  // By snapshot position.
  std::vector<Key> keys_;
  std::vector<KeptVerdict> verdicts_;
};

}  // namespace kubesched::plugins::preemption
