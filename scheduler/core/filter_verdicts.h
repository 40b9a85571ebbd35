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

  // Writes into `out` `node` and the verdict for the pod of the last Begin on it, at snapshot
  // position `position`, whose nominations have stamp `nominations`: the kept one when the node
  // and its nominations are as they were, otherwise what `filter` writes into `out.status`, then
  // kept unless an error. Returns whether the pod fits the node.
  //
  // `in_place`: `out` is where the last search wrote this node's verdict, and holds it still
  // (the search judged every node, and its FitError's statuses came back as they were). A kept
  // verdict is then there already and is not written again: a preemptor's search writes nothing
  // for the nodes that did not change, and neither the worker nor the FitError's reader waits on
  // those lines. (Whenever a search stores a verdict, it writes it to `out` too.)
  template <typename Filter>
  bool JudgeInto(size_t position, const framework::NodeInfo* node, uint64_t nominations,
                 bool in_place, framework::NodeStatus& out, Filter&& filter) {
    const Key& key = keys_[position];
    if (key.era == exemplar_.era() && key.node == node && key.nominations == nominations) {
      if (!in_place) {
        out.node = node;
        // Copied, then moved in: absl's InlinedVector copies an inline buffer with one memcpy
        // when it constructs, but assigns element by element.
        out.status = framework::Status(verdicts_[position]);
      }
      return key.fits;
    }
    out.node = node;
    filter();
    Key& judged = keys_[position];
    judged.era = 0;
    if (out.status.code() == framework::Code::kError) return false;
    verdicts_[position] = out.status;
    judged.node = node;
    judged.nominations = nominations;
    judged.fits = out.status.IsSuccess();
    judged.era = exemplar_.era();
    return judged.fits;
  }

 private:
  // What tells whether a kept verdict applies, apart from the verdict: all that a search that
  // finds its verdicts in place reads, and it writes nothing.
  struct Key {
    uint64_t nominations = 0;
    uint64_t era = 0;  // the exemplar's it was judged for; 0: none (the node changed since)
    const framework::NodeInfo* node = nullptr;
    bool fits = false;
  };

  framework::PodExemplar exemplar_;
  // The snapshot state the slots hold verdicts for.
  framework::SnapshotMark mark_;
  std::vector<uint32_t> changed_;
  // By snapshot position.
  std::vector<Key> keys_;
  std::vector<framework::Status> verdicts_;
};

}  // namespace kubesched::scheduler
