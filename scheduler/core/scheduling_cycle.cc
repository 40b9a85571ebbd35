// The scheduling cycle: pop a pod, choose its policy, run the algorithm, and either assume it on
// the chosen node or hand it back to the queue with the reason.

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/util/log.h"
#include "scheduler/util/strings.h"

namespace kubesched::scheduler {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

void Scheduler::Housekeep() {
  queue_->FlushBackoffCompleted();
  queue_->FlushUnschedulableLeftover();
  ReportPodWatchStall();
  quota_->Tick();
  SettleWaitingPods();
}

void Scheduler::ReportPodWatchStall() {
  const cache::Cache::UnconfirmedBinds unconfirmed = cache_->BindsAwaitingConfirmation();
  const absl::Duration oldest = unconfirmed.longest_wait;
  const bool stalled = oldest > kPodWatchStallAfter;
  if (stalled == pod_watch_stalled_) return;
  pod_watch_stalled_ = stalled;
  if (stalled) {
    util::LogWarning(absl::StrCat("the pod watch has not shown ", unconfirmed.count,
                                  " successful bind(s) for up to ",
                                  absl::FormatDuration(absl::Trunc(oldest, absl::Seconds(1))),
                                  "; their pods keep their room until it does (nothing expires)"));
  } else {
    util::LogInfo("the pod watch caught up with the binds");
  }
}

void Scheduler::RefreshCycleView() {
  const auto stats = cache_->UpdateSnapshot(&snapshot_, &refreshed_nodes_);
  nominated_.Sync(queue_->NominationsSince(nominated_.version()), snapshot_, refreshed_nodes_,
                  stats.lists_rebuilt || stats.nodes_removed > 0);
}

bool Scheduler::ScheduleOne(absl::Duration wait) {
  auto popped = wait > absl::ZeroDuration() ? queue_->PopWait(wait) : queue_->Pop();
  if (!popped.has_value()) return false;
  const auto start = std::chrono::steady_clock::now();
  const framework::PodInfoPtr pod_info = popped->pod_info;
  const runtime::Framework* fw = FrameworkFor(pod_info->get());
  if (fw == nullptr) {
    queue_->Done(pod_info->key, pod_info->get().meta.uid);
    return true;
  }
  // The policy set of this cycle: a reload meanwhile applies from the next one.
  const std::shared_ptr<const policy::PolicyRuntime> policies = this->policies();
  // The view first: a policy binding may select the pod by its namespace's labels.
  RefreshCycleView();
  const policy::PolicyChoice choice = policy_chooser_.Choose(pod_info->get(), policies, snapshot_);
  if (!choice.error.ok()) {
    HandlePolicyFailure(*fw, std::move(*popped), choice);
    if (deps_.observer != nullptr) deps_.observer->OnAttempt(*pod_info, SecondsSince(start));
    return true;
  }
  if (choice.framework != nullptr) fw = choice.framework;
  NoteBoundPolicy(choice, *popped);
  std::unique_ptr<framework::CycleState> state = policy::NewCycleState(choice);
  const std::string nominated_node = queue_->NominatedNodeOf(pod_info->key);
  auto outcome =
      algorithm_->Schedule(*fw, *state, *pod_info, snapshot_, &nominated_, nominated_node);
  if (auto* success = std::get_if<ScheduleSuccess>(&outcome)) {
    if (deps_.observer != nullptr) {
      deps_.observer->OnNodeSelected(*popped, success->node->name(), SecondsSince(start));
    }
    // Assumed, the pod holds its room in the cache: still nominated, it would be counted twice on
    // its node (upstream's assume drops the nomination too), and a pod nominated beside it would
    // find the room it was promised taken and preempt again.
    queue_->DeleteNominatedPod(pod_info->key);
    if (!nominated_node.empty()) popped->keep_room_on = success->node->name();
    AssumeAndBind(*fw, std::move(state), std::move(*popped), success->node->name());
  } else if (auto* fit_error = std::get_if<FitError>(&outcome)) {
    RunPostFilter(*fw, *state, pod_info, fit_error);
    HandleFailure(*fw, std::move(*popped), fit_error, framework::Status());
    algorithm_->Recycle(std::move(fit_error->node_statuses));
  } else {
    HandleFailure(*fw, std::move(*popped), nullptr, std::get<framework::Status>(outcome));
  }
  // Permit (of this pod) or PostFilter may have allowed or rejected pods that were waiting.
  SettleWaitingPods();
  if (deps_.observer != nullptr) deps_.observer->OnAttempt(*pod_info, SecondsSince(start));
  return true;
}

void Scheduler::NoteBoundPolicy(const policy::PolicyChoice& choice, queue::QueuedPodInfo& queued) {
  if (choice.binding.empty()) {
    queued.bound_policy.clear();
    return;
  }
  queued.bound_policy = choice.name;
  if (deps_.observer != nullptr) {
    deps_.observer->OnPolicyChosenByBinding(*queued.pod_info, choice.name);
  }
}

void Scheduler::HandlePolicyFailure(const runtime::Framework& fw, queue::QueuedPodInfo queued,
                                    const policy::PolicyChoice& choice) {
  // Like a PreFilter rejection upstream: "0/N nodes are available: <why>.", no per-node reasons.
  // The caller refreshed the view.
  FitError fit_error;
  fit_error.num_all_nodes = static_cast<int>(snapshot_.nodes().size());
  // The status holds a view: the message must outlive HandleFailure.
  const std::string message(choice.error.message());
  fit_error.pre_filter_status = framework::Status::Unschedulable(message);
  fit_error.pre_filter_status.set_plugin(policy::kPolicySelection);
  HandleFailure(fw, std::move(queued), &fit_error, framework::Status());
}

void Scheduler::HandleFailure(const runtime::Framework& fw, queue::QueuedPodInfo queued,
                              const FitError* fit_error, const framework::Status& status) {
  const framework::PodInfo& pod = *queued.pod_info;
  queued.quota_wait_keys.clear();
  if (fit_error != nullptr) {
    if (deps_.observer != nullptr) {
      FitError::Summary summary = fit_error->Summarize();
      queued.unschedulable_plugins = std::move(summary.rejecting_plugins);
      deps_.observer->OnUnschedulable(pod, summary.message, queued.attempts);
    } else {
      queued.unschedulable_plugins = fit_error->RejectingPlugins();
    }
    queued.helpful_events = fw.EventsHelping(queued.unschedulable_plugins);
    const bool waits = SetQuotaWait(fw, queued);
    Requeue(std::move(queued), /*unschedulable=*/waits);
    return;
  }
  const bool rejected = status.IsRejected();
  if (deps_.observer != nullptr) {
    // A rejection on the chosen node (Reserve, Permit) reads as upstream's one-node FitError:
    // "0/1 nodes are available: 1 <reason>."; errors are reported as they are.
    std::string message = status.Message();
    if (rejected) {
      FitError on_chosen_node;
      on_chosen_node.num_all_nodes = 1;
      on_chosen_node.node_statuses.push_back({nullptr, status});
      message = on_chosen_node.Message();
    }
    if (rejected) {
      deps_.observer->OnUnschedulable(pod, message, queued.attempts);
    } else {
      deps_.observer->OnError(pod, message, queued.attempts);
    }
  }
  if (rejected) {
    queued.unschedulable_plugins = {std::string(status.plugin())};
    queued.helpful_events = fw.EventsHelping(queued.unschedulable_plugins);
  }
  const bool waits = !rejected || SetQuotaWait(fw, queued);
  Requeue(std::move(queued), rejected && waits);
}

bool Scheduler::SetQuotaWait(const runtime::Framework& fw, queue::QueuedPodInfo& queued) {
  const std::vector<std::string>& rejecting = queued.unschedulable_plugins;
  if (rejecting.size() == 1 && rejecting.front() == policy::kPolicySelection) {
    const std::optional<std::string_view> named = policy::RequestedPolicy(queued.pod_info->get());
    queued.quota_wait_keys = {policy::PolicyWaitKey(named.value_or(""))};
    return true;
  }
  if (rejecting.size() != 1) return true;
  const framework::WaitKeysPlugin* waits = fw.WaitKeysPluginNamed(rejecting.front());
  if (waits == nullptr) return true;
  queued.quota_wait_keys = waits->WaitKeys(*queued.pod_info);
  return !queued.quota_wait_keys.empty();
}

void Scheduler::Requeue(queue::QueuedPodInfo queued, bool unschedulable) {
  // The queue drops a pod that was deleted or bound while it was being scheduled.
  queue_->AddUnschedulable(std::move(queued), unschedulable);
}

}  // namespace kubesched::scheduler
