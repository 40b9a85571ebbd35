// explain: every verdict and score for one pod, and what preemption would do, changing nothing
// (Scheduler::Explain, and the search it makes, ScheduleAlgorithm::Explain).

#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/core/algorithm.h"
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
  const policy::PolicyChoice choice = ChoosePolicy(pod);
  if (!choice.error.ok()) {
    Explanation unusable;
    unusable.message = std::string(choice.error.message());
    return unusable;
  }
  if (choice.framework != nullptr) fw = choice.framework;
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

policy::PolicyChoice Scheduler::ChoosePolicy(const api::Pod& pod) {
  RefreshCycleView();
  return policy::PolicyChooser().Choose(pod, policies(), snapshot_);
}

std::optional<GangExplanation> Scheduler::ExplainGang(const api::Pod& pod) {
  const framework::PodInfoPtr info = MakeInfo(std::make_shared<const api::Pod>(pod));
  const framework::GangMembership& gang = info->gang;
  if (!gang.InGroup()) return std::nullopt;
  // The group as the Coscheduling plugin would see it this cycle.
  RefreshCycleView();
  const framework::GangState& gangs = snapshot_.gangs();
  GangExplanation group;
  group.key = gang.key;
  group.implicit = gang.implicit;
  group.counts = gangs.CountsOf(gang.key);
  const api::PodGroup* object = gang.implicit ? nullptr : gangs.Find(gang.key);
  if (!gang.error.empty()) {
    group.problem = gang.error;
  } else if (gang.implicit) {
    group.min_member = gang.min_member;
  } else if (object == nullptr) {
    group.problem = absl::StrCat("pod group \"", gang.key, "\" does not exist");
  } else if (!object->error.empty()) {
    group.problem = object->error;
  } else {
    group.min_member = object->min_member;
    group.need_from_min_resources = !object->min_resources.IsZero();
  }
  const std::string_view controller_phase =
      object != nullptr ? std::string_view(object->status.phase) : std::string_view();
  group.phase = std::string(
      framework::GangPhase(controller_phase, group.counts, group.min_member.value_or(0)));
  if (!group.min_member.has_value()) return group;
  group.need = quota::WithMemberPods(framework::GangNeedOf(*info, gangs), *group.min_member);
  group.queue_path = quota_->GangPathUsage(*info);
  return group;
}

Explanation ScheduleAlgorithm::Explain(const runtime::Framework& fw, framework::CycleState& state,
                                       const framework::PodInfo& pod,
                                       const framework::Snapshot& snapshot) {
  Explanation out;
  FitError fit_error;
  fit_error.num_all_nodes = static_cast<int>(snapshot.nodes().size());
  auto pre = fw.RunPreFilter(state, pod, snapshot);
  last_skip_filter_ = pre.skip_filter;
  out.pre_filter_status = pre.status;
  if (!pre.status.IsSuccess()) {
    fit_error.pre_filter_status = pre.status;
    out.message = fit_error.Message();
    for (const auto* node : snapshot.nodes()) out.nodes.push_back({node, {}, false, {}, 0});
    return out;
  }
  feasible_.clear();
  feasible_rows_.clear();
  for (const auto* node : snapshot.nodes()) {
    NodeExplanation explained;
    explained.node = node;
    // Nodes left out by PreFilter still show every filter's own verdict; if they all pass,
    // the exclusion is the node's verdict.
    framework::Status first = fw.RunFilter(state, pod, *node, pre.skip_filter, &explained.filters);
    if (first.IsSuccess() && pre.node_names.has_value() &&
        !pre.node_names->contains(node->name())) {
      first = runtime::ExcludedByPreFilter(pre);
      explained.filters.push_back(first);
    }
    explained.feasible = first.IsSuccess();
    if (explained.feasible) {
      feasible_.push_back(node);
      feasible_rows_.push_back(&node->row());
    } else {
      fit_error.node_statuses.push_back({node, first});
    }
    out.nodes.push_back(std::move(explained));
  }
  if (feasible_.empty()) {
    out.message = fit_error.Message();
    return out;
  }
  framework::Status error;
  if (!ScoreFeasible(fw, state, pod, snapshot, &error, /*keep_raw=*/true)) {
    out.message = error.Message();
    return out;
  }
  const auto& plugins = fw.score_plugins();
  size_t f = 0;
  for (auto& explained : out.nodes) {
    if (!explained.feasible) continue;
    for (size_t k = 0; k < plugins.size(); ++k) {
      if (skip_score_[k]) continue;  // PreScore said Skip: the plugin does not score this pod
      ScoreDetail detail;
      detail.plugin = std::string(plugins[k].plugin->Name());
      detail.raw = raw_scores_[k][f];
      detail.normalized = plugin_scores_[k][f];
      detail.weight = plugins[k].weight;
      explained.scores.push_back(std::move(detail));
    }
    explained.total = totals_[f];
    ++f;
  }
  out.selected = feasible_[SelectHost()];
  return out;
}

}  // namespace kubesched::scheduler
