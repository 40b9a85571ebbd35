#include "scheduler/core/filter_verdicts.h"

#include "scheduler/framework/kept_by_position.h"

namespace kubesched::scheduler {

bool FilterVerdicts::Begin(const runtime::Framework& fw, const framework::CycleState& state,
                           const framework::PodInfo& pod, const runtime::FilterSkips& skip,
                           const framework::Snapshot& snapshot, const NominatedPods* nominated) {
  if (state.record_plugin_metrics() || (nominated != nullptr && nominated->MayHold(pod)) ||
      fw.HasActiveExtensions(skip) || !fw.FiltersJudgePodAndNodeAlone(state, pod, skip)) {
    return false;
  }
  framework::CatchUpByPosition(snapshot, mark_, changed_, keys_, verdicts_);
  exemplar_.Follow(pod, framework::VerdictScope{&fw, skip.running_mask()});
  return true;
}

}  // namespace kubesched::scheduler
