#pragma once

// The Filter phase's verdicts, kept from one pod to the next one alike.
//
// A pod that fits nowhere (a preemptor, usually one of many made from one template) is judged on
// every node, and the next one alike is judged on nearly the same cluster: a preemption changes a
// node or two. When every filter that runs judges the pod and the node alone
// (FilterPlugin::FilterJudgesPodAndNodeAlone) and no PreFilter extension runs, a node's verdict is
// a function of the pod, the node and the pods nominated to it (NominatedPods::StampAt). This
// keeps, per snapshot position, the last verdict given to a pod alike, and gives it back while the
// node (Snapshot::NodesChangedSince) and its nominations are the same: the verdict the filters
// would give, without running them.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "scheduler/core/nominated_pods.h"
#include "scheduler/framework/kept_result.h"
#include "scheduler/framework/pod_exemplar.h"
#include "scheduler/framework/snapshot.h"
#include "scheduler/runtime/framework.h"

namespace kubesched::scheduler {

// Threads: Begin on the scheduling thread before a search; JudgeInto from the workers, each on
// the positions of its own chunk (the slots are not resized during a search).
class FilterVerdicts {
 public:
  // Prepares the search of `pod` over every node of `snapshot`, in the cycle of `state` with
  // filter skips `skip` and the nominations `nominated` (null: none). Returns false when kept
  // verdicts may not serve it: a filter that runs reads more than the pod and the node, a
  // PreFilter extension runs, the pod is itself nominated, or the plugins' durations are
  // recorded node by node this cycle.
  bool Begin(const runtime::Framework& fw, const framework::CycleState& state,
             const framework::PodInfo& pod, const runtime::FilterSkips& skip,
             const framework::Snapshot& snapshot, const NominatedPods* nominated);

  // Writes into `out` the verdict for the pod of the last Begin on the node at snapshot position
  // `position`, whose nominations have stamp `nominations`: the kept one when the node and its
  // nominations are as they were, otherwise what `filter` writes into `out`, then kept unless an
  // error.
  template <typename Filter>
  void JudgeInto(size_t position, uint64_t nominations, framework::Status& out, Filter&& filter) {
    Slot& slot = slots_[position];
    const uint64_t era = exemplar_.era();
    if (slot.era == era && slot.nominations == nominations) {
      out = slot.verdict;
      return;
    }
    filter();
    if (out.code() == framework::Code::kError) return;
    slot.nominations = nominations;
    slot.verdict = out;
    slot.era = era;
  }

 private:
  struct Slot {
    uint64_t nominations = 0;
    uint64_t era = 0;  // the exemplar's it was judged for; 0: none (the node changed since)
    framework::Status verdict;
  };

  framework::PodExemplar exemplar_;
  // The snapshot state the slots hold verdicts for.
  framework::SnapshotMark mark_;
  std::vector<uint32_t> changed_;
  std::vector<Slot> slots_;
};

}  // namespace kubesched::scheduler
