// From the chosen node to a bound pod: assume, Reserve and Permit on the scheduling thread, then
// PreBind and Bind on a bind worker; every failure after assume undoes its work on one path.

#include <utility>

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
  if (status.IsSuccess()) status = fw.RunPermit(*state, *assumed, node);
  if (!status.IsSuccess()) {
    fw.RunUnreserve(*state, *assumed, node);
    (void)cache_->ForgetPod(assumed->key);
    HandleFailure(fw, std::move(queued), nullptr, status);
    return;
  }
  std::shared_ptr<framework::CycleState> shared_state(std::move(state));
  deps_.bind_executor->Submit(
      [this, &fw, shared_state, queued = std::move(queued), assumed, node]() mutable {
        RunBindingCycle(fw, shared_state, std::move(queued), assumed, node);
      });
}

void Scheduler::RunBindingCycle(const runtime::Framework& fw,
                                const std::shared_ptr<framework::CycleState>& state,
                                queue::QueuedPodInfo queued, const framework::PodInfoPtr& assumed,
                                const std::string& node) {
  framework::Status status = fw.RunPreBind(*state, *assumed, node);
  if (status.IsSuccess()) status = fw.RunBind(*state, *assumed, node);
  if (status.IsSuccess()) {
    (void)cache_->FinishBinding(assumed->key);
    queue_->Done(assumed->key);
    fw.RunPostBind(*state, *assumed, node);
    if (deps_.observer != nullptr) deps_.observer->OnBound(*assumed, node, queued.attempts);
    return;
  }
  // One path undoes everything after assume: unreserve, forget, requeue with backoff.
  fw.RunUnreserve(*state, *assumed, node);
  (void)cache_->ForgetPod(assumed->key);
  if (deps_.observer != nullptr) deps_.observer->OnBindFailed(*assumed, node, status.Message());
  // The room this pod held is free again for the pods that wanted it.
  queue_->MoveAllToActiveOrBackoff(framework::ClusterEvent::kPodDeleted);
  // Even when the API said the pod is gone or already bound, it waits in backoff rather than
  // being dropped: the watch removes it from the queue once it confirms that, and if the answer
  // was wrong, the pod is not lost.
  Requeue(std::move(queued), /*unschedulable=*/false);
}

}  // namespace kubesched::scheduler
