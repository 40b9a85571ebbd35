// From the chosen node to a bound pod: assume, Reserve and Permit on the scheduling thread, then
// PreBind and Bind on a bind worker; every failure after assume undoes its work on one path.

#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/api/cordon.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/util/strings.h"

namespace kubesched::scheduler {

void Scheduler::AssumeAndBind(const runtime::Framework& fw,
                              std::unique_ptr<framework::CycleState> state,
                              queue::QueuedPodInfo queued, const std::string& node) {
  // The assumed copy names the node, so that the cache counts it there at once.
  auto assumed_pod = std::make_shared<api::Pod>(queued.pod_info->get());
  assumed_pod->spec.node_name = node;
  auto assumed_info = std::make_shared<framework::PodInfo>(*queued.pod_info);
  assumed_info->pod = std::move(assumed_pod);
  framework::PodInfoPtr assumed = assumed_info;

  if (auto status = cache_->AssumePod(assumed); !status.ok()) {
    HandleFailure(fw, std::move(queued), nullptr,
                  framework::Status::Error(util::Std(status.message())));
    return;
  }
  framework::Status status = fw.RunReserve(*state, *assumed, node);
  runtime::Framework::PermitWait wait;
  if (status.IsSuccess()) status = fw.RunPermit(*state, *assumed, node, &wait);
  if (status.IsWait()) {
    HoldAtPermit(fw, std::move(state), std::move(queued), std::move(assumed), node, wait);
    return;
  }
  if (!status.IsSuccess()) {
    fw.RunUnreserve(*state, *assumed, node);
    (void)cache_->ForgetPod(assumed->key, assumed->get().meta.uid);
    HandleFailure(fw, std::move(queued), nullptr, status);
    return;
  }
  std::shared_ptr<framework::CycleState> shared_state(std::move(state));
  deps_.bind_executor->Submit(
      [this, &fw, shared_state, queued = std::move(queued), assumed, node]() mutable {
        RunBindingCycle(fw, shared_state, std::move(queued), assumed, node);
      });
}

void Scheduler::HoldAtPermit(const runtime::Framework& fw,
                             std::shared_ptr<framework::CycleState> state,
                             queue::QueuedPodInfo queued, framework::PodInfoPtr assumed,
                             const std::string& node, const runtime::Framework::PermitWait& wait) {
  WaitingPod pod;
  pod.fw = &fw;
  pod.state = std::move(state);
  pod.queued = std::move(queued);
  pod.assumed = std::move(assumed);
  pod.node = node;
  pod.timeout = wait.timeout;
  pod.deadline = deps_.clock->Now() + wait.timeout;
  for (std::string_view plugin : wait.plugins) pod.waiting_on.emplace(plugin);
  // The first member of a gang to wait: its siblings go next, before any other pod.
  const std::string gang = pod.assumed->gang.key;
  const bool first_of_gang = !gang.empty() && !waiting_->HasGangMember(gang);
  waiting_->Add(std::move(pod));
  if (first_of_gang) queue_->ActivateGang(gang);
}

void Scheduler::SettleWaitingPods() {
  std::vector<WaitingPod> settled = waiting_->TakeSettled(deps_.clock->Now());
  if (settled.empty()) return;
  bool released = false;
  for (WaitingPod& pod : settled) {
    if (!pod.rejection.has_value()) {
      deps_.bind_executor->Submit([this, fw = pod.fw, state = pod.state,
                                   queued = std::move(pod.queued), assumed = pod.assumed,
                                   node = pod.node]() mutable {
        RunBindingCycle(*fw, state, std::move(queued), assumed, node);
      });
      continue;
    }
    released = true;
    const std::string gang = pod.assumed->gang.key;
    const std::vector<std::string> plugins = {pod.rejection->first};
    const framework::ClusterEventSet events = pod.fw->EventsHelping(plugins);
    UndoRejectedWait(std::move(pod));
    // The gang's members not tried yet wait with it rather than being tried in vain.
    if (!gang.empty()) {
      queue_->ParkGang(gang, plugins, events);
      ReportGangReleased(gang);
    }
  }
  // The room the rejected pods held is free again for the pods outside gangs that wanted it.
  if (released) {
    queue_->MoveAllToActiveOrBackoff(framework::ClusterEvent::kPodDeleted,
                                     /*except_gang_members=*/true);
  }
}

void Scheduler::UndoRejectedWait(WaitingPod pod) {
  const auto& [plugin, message] = *pod.rejection;
  pod.fw->RunUnreserve(*pod.state, *pod.assumed, pod.node);
  (void)cache_->ForgetPod(pod.assumed->key, pod.assumed->get().meta.uid);
  ReportGangStatus(*pod.assumed);
  queue::QueuedPodInfo& queued = pod.queued;
  // No plugin: the pod was deleted while it waited, and there is no one to tell.
  if (deps_.observer != nullptr && !plugin.empty()) {
    deps_.observer->OnUnschedulable(*queued.pod_info, message, queued.attempts);
  }
  queued.quota_wait_keys.clear();
  queued.keep_room_on.clear();  // its room goes to the pods that wanted it
  queued.unschedulable_plugins = {plugin};
  queued.helpful_events = pod.fw->EventsHelping(queued.unschedulable_plugins);
  // The queue drops a pod deleted meanwhile.
  Requeue(std::move(queued), /*unschedulable=*/true);
}

namespace {

// Why a bind not yet sent must not be sent any more: its node was deleted, or cordoned and the pod
// does not tolerate that. Empty when it may go.
std::string NodeNoLongerTakes(const api::Node* node, const api::Pod& pod,
                              const std::string& node_name) {
  if (node == nullptr) {
    return absl::StrCat("node ", node_name, " was deleted before the pod was bound to it");
  }
  if (!node->spec.unschedulable || api::ToleratesCordon(pod.spec.tolerations)) return "";
  return absl::StrCat("node ", node_name, " was cordoned before the pod was bound to it");
}

}  // namespace

void Scheduler::RunBindingCycle(const runtime::Framework& fw,
                                const std::shared_ptr<framework::CycleState>& state,
                                queue::QueuedPodInfo queued, const framework::PodInfoPtr& assumed,
                                const std::string& node) {
  // Checked on the bind worker, right before PreBind: binds queued behind slow ones must not go
  // to a node that left meanwhile, nor from a replica that may no longer bind.
  std::string gone = NodeNoLongerTakes(cache_->GetNode(node).get(), assumed->get(), node);
  if (gone.empty() && deps_.may_bind && !deps_.may_bind()) {
    gone = "not bound: this replica may no longer bind (not leading, or stopping)";
  }
  framework::Status status =
      gone.empty() ? fw.RunPreBind(*state, *assumed, node) : framework::Status::Error(gone);
  if (status.IsSuccess()) status = fw.RunBind(*state, *assumed, node);
  if (status.IsSuccess()) {
    (void)cache_->FinishBinding(assumed->key, assumed->get().meta.uid);
    queue_->Bound(assumed->key, assumed->get().meta.uid);
    fw.RunPostBind(*state, *assumed, node);
    ReportGangStatus(*assumed);
    if (deps_.observer != nullptr) deps_.observer->OnBound(*assumed, node, queued.attempts);
    if (assumed->gang.InGroup()) ReportGangMemberBound(*assumed);
    return;
  }
  // A preemptor keeps its room (QueuedPodInfo::keep_room_on), unless its node left.
  if (!queued.keep_room_on.empty() && gone.empty()) {
    queue_->AddNominatedPod(assumed, queued.keep_room_on);
  } else {
    queued.keep_room_on.clear();
  }
  // One path undoes everything after assume: unreserve, forget, requeue with backoff.
  fw.RunUnreserve(*state, *assumed, node);
  (void)cache_->ForgetPod(assumed->key, assumed->get().meta.uid);
  // A bind the fence stopped is no failure of the pod's: it stays pending, silently, for whoever
  // leads next.
  const bool fenced = deps_.may_bind && !deps_.may_bind();
  if (deps_.observer != nullptr && !fenced) {
    deps_.observer->OnBindFailed(*assumed, node, status.Message());
  }
  // The room this pod held is free again for the pods that wanted it.
  queue_->MoveAllToActiveOrBackoff(framework::ClusterEvent::kPodDeleted);
  // Even when the API said the pod is gone or already bound, it waits in backoff rather than
  // being dropped: the watch removes it from the queue once it confirms that, and if the answer
  // was wrong, the pod is not lost.
  Requeue(std::move(queued), /*unschedulable=*/false);
}

}  // namespace kubesched::scheduler
