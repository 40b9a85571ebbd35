#pragma once

// DefaultPreemption's dry-run verdicts, kept from one preemptor to the next one alike.
//
// The preemptors of a workload are usually alike (one template: the same spec and priority), and
// between two of them the cluster changes on a node or two (the last preemption's nomination, a
// victim gone, a pod bound). So nearly every node the next dry run judges was judged the same way
// a moment before. When the host says the filters judge the pod and the node alone
// (PostFilterHost::VerdictScopeFor), a node's verdict is a function of the pod, the node (its
// generation) and the pods nominated to it (NominationStamp); this cache keeps, per node, the last
// verdict worth keeping (passed over by the resource screen, or a candidate with its victims) and
// gives it back while all three are the same.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "plugins/default_preemption/pick_node.h"
#include "scheduler/api/objects.h"
#include "scheduler/framework/plugin.h"
#include "scheduler/framework/pod_exemplar.h"

namespace kubesched::plugins::preemption {

// One node's verdict as kept: passed over by the screen, or a candidate without PDB violations.
struct KeptVerdict {
  bool screened_out = false;
  VictimSummary summary;
  // The victims' positions in the node's pods(), most important first (the same pods while the
  // node's generation is the same).
  absl::InlinedVector<uint32_t, 4> victims;
};

// Threads: Begin on the calling thread before the dry run's rounds; Find and Keep from the
// workers, each on the nodes of its own chunk (one slot per node, by snapshot position, and the
// slots are not resized during a round). The owner serialises dry runs (DefaultPreemption holds
// its lock around each).
class VerdictCache {
 public:
  // Prepares a dry run of `pod` judged in `scope` over a snapshot of `num_nodes` nodes. The kept
  // verdicts stay valid only when `pod` is alike the pod they were judged for (namespace, labels,
  // annotations, spec, priority, NonPreemptible) in the same scope; otherwise they are dropped.
  void Begin(const framework::PodInfo& pod, const framework::VerdictScope& scope, size_t num_nodes);
  // `node`'s kept verdict, if it was judged at the node's present generation with the same
  // nominations; null otherwise.
  const KeptVerdict* Find(const framework::NodeInfo& node, uint64_t nominations) const;
  // Keeps `verdict` for `node` (its generation now) and `nominations`. A candidate's `victims`
  // are pods of `node`; a victim not found there (not expected) keeps nothing.
  void Keep(const framework::NodeInfo& node, uint64_t nominations, bool screened_out,
            const std::vector<const framework::PodInfo*>& victims, const VictimSummary& summary);

 private:
  struct Slot {
    const framework::NodeInfo* node = nullptr;
    int64_t generation = 0;
    uint64_t nominations = 0;
    uint64_t era = 0;  // the exemplar's it was judged for
    KeptVerdict verdict;
  };

  Slot* SlotOf(const framework::NodeInfo& node);

  framework::PodExemplar exemplar_;
  std::vector<Slot> slots_;
};

}  // namespace kubesched::plugins::preemption
