#include "scheduler/core/filter_verdicts.h"

namespace kubesched::scheduler {

bool FilterVerdicts::Begin(const runtime::Framework& fw, const framework::CycleState& state,
                           const framework::PodInfo& pod, const runtime::FilterSkips& skip,
                           const framework::Snapshot& snapshot, const NominatedPods* nominated) {
  if (state.record_plugin_metrics() || (nominated != nullptr && nominated->MayHold(pod)) ||
      fw.HasActiveExtensions(skip) || !fw.FiltersJudgePodAndNodeAlone(state, pod, skip)) {
    return false;
  }
  const size_t num_nodes = snapshot.nodes().size();
  if (mark_.CatchUp(snapshot, &changed_)) {
    for (const uint32_t position : changed_) {
      if (position < keys_.size()) keys_[position].era = 0;
    }
  } else {
    keys_.clear();
    verdicts_.clear();
  }
  if (keys_.size() < num_nodes) {
    keys_.resize(num_nodes);
    verdicts_.resize(num_nodes);
  }
  exemplar_.Follow(pod, framework::VerdictScope{&fw, skip.running_mask()});
  return true;
}

}  // namespace kubesched::scheduler
