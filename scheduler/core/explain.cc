// explain: every verdict and score for one pod, and what preemption would do, changing nothing.

#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/core/scheduler.h"

namespace kubesched::scheduler {

Explanation Scheduler::Explain(const api::Pod& pod) {
  auto info = MakeInfo(std::make_shared<const api::Pod>(pod));
  const runtime::Framework* fw = FrameworkFor(pod);
  if (fw == nullptr) fw = frameworks_.front().get();
  if (const framework::Status gate = fw->RunPreEnqueue(*info); !gate.IsSuccess()) {
    // A gated pod is never tried: no node has a verdict, and the reason is the gate's, as
    // simulate reports it.
    Explanation gated;
    gated.message = gate.Message();
    return gated;
  }
  const std::shared_ptr<const policy::PolicyRuntime> policies = this->policies();
  const policy::PolicyChoice choice = policy::PolicyChooser().Choose(pod, policies);
  if (!choice.error.ok()) {
    Explanation unusable;
    unusable.message = std::string(choice.error.message());
    return unusable;
  }
  if (choice.framework != nullptr) fw = choice.framework;
  RefreshCycleView();
  std::shared_ptr<framework::CycleState> state = policy::NewCycleState(choice);
  // Explaining a pod must not change what the scheduler holds for it or for others (a gang's
  // quota hold, its members waiting at Permit).
  state->set_dry_run(true);
  Explanation explanation = algorithm_->Explain(*fw, *state, *info, snapshot_);
  if (explanation.selected == nullptr && !fw->post_filter_plugins().empty() &&
      !explanation.nodes.empty()) {
    // What preemption would do, without doing it.
    FitError fit_error;
    fit_error.num_all_nodes = static_cast<int>(snapshot_.nodes().size());
    fit_error.pre_filter_status = explanation.pre_filter_status;
    if (fit_error.pre_filter_status.IsSuccess()) {
      for (const auto& node : explanation.nodes) {
        for (const auto& status : node.filters) {
          if (status.IsSuccess() || status.IsSkip()) continue;
          fit_error.node_statuses.push_back({node.node, status});
          break;
        }
      }
    }
    auto outcome = DryRunPostFilter(*fw, *state, *info, fit_error);
    if (outcome.status.IsSuccess()) {
      explanation.preemption_node = outcome.nominated_node;
      explanation.preemption_victims = std::move(outcome.victims);
    } else if (!outcome.status.Message().empty()) {
      absl::StrAppend(&explanation.message, " ", outcome.status.Message(), ".");
    }
  }
  explanation.state = std::move(state);
  return explanation;
}

}  // namespace kubesched::scheduler
