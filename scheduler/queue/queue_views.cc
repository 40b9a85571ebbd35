// Read-only views of the scheduling queue for metrics and reports: sub-queue sizes, incoming-pod
// counts and their labels, the unschedulable pods and every pending pod. Each view takes the
// queue's lock once and changes nothing.

#include <functional>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "scheduler/queue/scheduling_queue.h"
#include "scheduler/queue/scheduling_queue_internal.h"

namespace kubesched::queue {

using internal::Item;

size_t SchedulingQueue::ActiveCount() const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->active.size();
}

size_t SchedulingQueue::BackoffCount() const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->backoff.size();
}

size_t SchedulingQueue::UnschedulableCount() const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->unschedulable.size() + impl_->quota_waiting_count;
}

size_t SchedulingQueue::QuotaWaitingCount() const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->quota_waiting_count;
}

size_t SchedulingQueue::GatedCount() const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->gated.size();
}

IncomingCounts SchedulingQueue::Incoming() const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->incoming;
}

void SchedulingQueue::ForEachUnschedulable(
    const std::function<void(const QueuedPodInfo&)>& visit) const {
  absl::MutexLock lock(&impl_->mu);
  for (const Item* item : impl_->unschedulable) visit(item->info);
  for (const Item* item : impl_->gated) visit(item->info);
  absl::flat_hash_set<const Item*> seen;  // a quota waiter is listed under each of its keys
  for (const auto& [key, items] : impl_->quota_waiting) {
    for (const Item* item : items) {
      if (seen.insert(item).second) visit(item->info);
    }
  }
}

std::string_view IncomingEventName(IncomingEvent event) {
  switch (event) {
    case IncomingEvent::kPodAdd:
      return "PodAdd";
    case IncomingEvent::kPodUpdate:
      return "PodUpdate";
    case IncomingEvent::kScheduleAttemptFailure:
      return "ScheduleAttemptFailure";
    case IncomingEvent::kBackoffComplete:
      return "BackoffComplete";
    case IncomingEvent::kNodeAdd:
      return "NodeAdd";
    case IncomingEvent::kNodeUpdate:
      return "NodeUpdate";
    case IncomingEvent::kAssignedPodDelete:
      return "AssignedPodDelete";
    case IncomingEvent::kAssignedPodAdd:
      return "AssignedPodAdd";
    case IncomingEvent::kUnschedulableTimeout:
      return "UnschedulableTimeout";
    case IncomingEvent::kQuotaChange:
      return "QuotaChange";
    case IncomingEvent::kStorageChange:
      return "StorageChange";
    case IncomingEvent::kPodGroupChange:
      return "PodGroupChange";
    case IncomingEvent::kResourceClaimChange:
      return "ResourceClaimChange";
    case IncomingEvent::kDeviceChange:
      return "DeviceChange";
  }
  return "Unknown";
}

std::vector<QueuedPodInfo> SchedulingQueue::PendingPods() const {
  absl::MutexLock lock(&impl_->mu);
  std::vector<QueuedPodInfo> pods;
  pods.reserve(impl_->items.size());
  for (const auto& [key, item] : impl_->items) pods.push_back(item->info);
  return pods;
}

std::vector<framework::PodInfoPtr> SchedulingQueue::PendingPodInfos() const {
  absl::MutexLock lock(&impl_->mu);
  std::vector<framework::PodInfoPtr> pods;
  pods.reserve(impl_->items.size());
  for (const auto& [key, item] : impl_->items) pods.push_back(item->info.pod_info);
  return pods;
}

}  // namespace kubesched::queue
