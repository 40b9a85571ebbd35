// The pod lifecycle of the scheduling queue: pods enter (Add, Update), leave (Delete, Pop, Done),
// come back after an attempt (AddUnschedulable, AddBackoff) and move between the sub-queues
// (cluster events, quota changes, expired backoff, the periodic flush). Nominations are in
// nominator.cc, counts and views in queue_views.cc.

#include "scheduler/queue/scheduling_queue.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "scheduler/queue/pod_update.h"
#include "scheduler/queue/scheduling_queue_internal.h"

namespace kubesched::queue {
namespace {

using framework::PodInfoPtr;
using internal::InFlight;
using internal::Item;
using internal::Where;

constexpr std::string_view kWakeAll = "*";  // quota::kWakeAll

// The incoming-pods event of a cluster event (upstream's event labels).
IncomingEvent IncomingEventOf(framework::ClusterEvent event) {
  switch (event) {
    case framework::ClusterEvent::kNodeAdded:
      return IncomingEvent::kNodeAdd;
    case framework::ClusterEvent::kNodeUpdated:
      return IncomingEvent::kNodeUpdate;
    case framework::ClusterEvent::kPodDeleted:
      return IncomingEvent::kAssignedPodDelete;
    case framework::ClusterEvent::kAssignedPodAdded:
      return IncomingEvent::kAssignedPodAdd;
    case framework::ClusterEvent::kStorageChanged:
      return IncomingEvent::kStorageChange;
    case framework::ClusterEvent::kPodGroupChanged:
      return IncomingEvent::kPodGroupChange;
    case framework::ClusterEvent::kResourceClaimChanged:
      return IncomingEvent::kResourceClaimChange;
    case framework::ClusterEvent::kDeviceInventoryChanged:
      return IncomingEvent::kDeviceChange;
    case framework::ClusterEvent::kGangMemberAdded:
      return IncomingEvent::kPodAdd;
    case framework::ClusterEvent::kUnschedulableTimeout:
      return IncomingEvent::kUnschedulableTimeout;
  }
  return IncomingEvent::kUnschedulableTimeout;
}

// The unschedulable set is a hash set of pointers; moving in its iteration order would make the
// queue order (and so a simulation) depend on allocation addresses. Move in the order the pods
// were last queued instead.
void SortByQueueOrder(std::vector<Item*>& items) {
  std::sort(items.begin(), items.end(),
            [](const Item* a, const Item* b) { return a->sequence < b->sequence; });
}

}  // namespace

SchedulingQueue::SchedulingQueue(const util::Clock* clock, QueueOptions options,
                                 const framework::QueueSortPlugin* less)
    : impl_(std::make_unique<Impl>(clock, options, less)) {}

SchedulingQueue::~SchedulingQueue() = default;

void SchedulingQueue::Add(framework::PodInfoPtr pod, const framework::Status& pre_enqueue) {
  absl::MutexLock lock(&impl_->mu);
  const std::string& key = pod->key;
  if (impl_->items.contains(key)) return;
  if (impl_->CurrentFlight(*pod) != nullptr) return;
  if (!pod->get().status.nominated_node_name.empty()) {
    impl_->Nominate(pod, pod->get().status.nominated_node_name);
  }
  QueuedPodInfo info;
  info.timestamp = impl_->clock->Now();
  info.pod_info = std::move(pod);
  Item* item = impl_->NewItem(std::move(info));
  impl_->Enqueue(item, pre_enqueue, IncomingEvent::kPodAdd);
}

void SchedulingQueue::Update(framework::PodInfoPtr pod, const framework::Status& pre_enqueue) {
  absl::MutexLock lock(&impl_->mu);
  if (InFlight* flight = impl_->CurrentFlight(*pod)) {
    if (flight->bound) return;
    // A successor's update still drops the predecessor's nomination; the pod's own is its cycle's.
    if (flight->uid != pod->get().meta.uid) impl_->UpdateNomination(pod);
    flight->updated = std::move(pod);
    flight->pre_enqueue = pre_enqueue;
    return;
  }
  impl_->UpdateNomination(pod);
  auto it = impl_->items.find(pod->key);
  if (it == impl_->items.end()) {
    // Not queued (e.g. its add was missed): an update of a pending pod makes it pending (upstream).
    QueuedPodInfo info;
    info.timestamp = impl_->clock->Now();
    info.pod_info = std::move(pod);
    impl_->Enqueue(impl_->NewItem(std::move(info)), pre_enqueue, IncomingEvent::kPodUpdate);
    return;
  }
  Item* item = it->second.get();
  const PodInfoPtr old = std::exchange(item->info.pod_info, std::move(pod));
  if (!pre_enqueue.IsSuccess()) [[unlikely]] {
    const bool newly_gated = item->where != Where::kGated;
    impl_->Detach(item);
    impl_->PushGated(item, pre_enqueue);  // an already gated pod takes the new reason
    if (newly_gated) impl_->CountIncoming(IncomingEvent::kPodUpdate, item);
    return;
  }
  switch (item->where) {
    case Where::kActive:
      impl_->active.Fix(item);  // the priority may have changed
      break;
    case Where::kBackoff:
      break;  // the expiry does not depend on the object
    case Where::kUnschedulable:
    case Where::kQuotaWaiting:
      if (!PodChangedBeyondStatus(old->get(), item->info.pod_info->get())) break;
      [[fallthrough]];
    case Where::kGated:
      // No backoff for a pod whose gate was lifted: it was kept from trying, it did not fail.
      impl_->Detach(item);
      impl_->PushActive(item);
      impl_->CountIncoming(IncomingEvent::kPodUpdate, item);
      break;
  }
}

void SchedulingQueue::Delete(const std::string& pod_key) {
  absl::MutexLock lock(&impl_->mu);
  auto flight = impl_->in_flight.find(pod_key);
  if (flight != impl_->in_flight.end()) {
    // A bound pod's entry waited only for this; a pod being scheduled must not come back.
    if (flight->second.bound) {
      impl_->in_flight.erase(flight);
    } else {
      flight->second.deleted = true;
    }
  }
  impl_->EraseItem(pod_key);
  impl_->Unnominate(pod_key);
}

std::optional<QueuedPodInfo> SchedulingQueue::Impl::PopLocked() {
  if (active.empty()) return std::nullopt;
  Item* item = active.Pop();
  auto it = items.find(item->info.pod_info->key);
  QueuedPodInfo info = std::move(item->info);
  item->info.pod_info = info.pod_info;  // ForgetItem reads the gang
  ForgetItem(it);
  ++info.attempts;
  info.quota_wait_keys.clear();  // set again by the attempt's verdict
  if (info.attempts == 1) info.initial_attempt_timestamp = clock->Now();
  info.scheduling_cycle = ++scheduling_cycle;
  in_flight[info.pod_info->key] = InFlight{.uid = info.pod_info->get().meta.uid};
  return info;
}

std::optional<QueuedPodInfo> SchedulingQueue::Pop() {
  absl::MutexLock lock(&impl_->mu);
  return impl_->PopLocked();
}

std::optional<QueuedPodInfo> SchedulingQueue::PopWait(absl::Duration timeout) {
  absl::MutexLock lock(&impl_->mu);
  impl_->mu.AwaitWithTimeout(absl::Condition(impl_.get(), &Impl::HasActive), timeout);
  return impl_->PopLocked();
}

// Common path of AddUnschedulable and AddBackoff: applies what happened while the pod was out.
void SchedulingQueue::Impl::ReturnPod(QueuedPodInfo pod, bool to_backoff,
                                      bool unschedulable_verdict) {
  const std::string key = pod.pod_info->key;
  framework::Status pre_enqueue;  // of an update that came while the pod was out
  if (auto flight = in_flight.find(key); flight != in_flight.end()) {
    // A successor of the same name is in flight now: this pod was deleted, and its stale entry
    // must neither end the successor's flight nor come back.
    if (flight->second.uid != pod.pod_info->get().meta.uid) return;
    const InFlight state = std::move(flight->second);
    in_flight.erase(flight);
    if (state.deleted) {
      // Deleted while being scheduled: do not resurrect it, nor the room kept for it.
      if (!pod.keep_room_on.empty()) Unnominate(key);
      return;
    }
    if (state.updated != nullptr) {
      pod.pod_info = state.updated;
      pre_enqueue = state.pre_enqueue;
      to_backoff = true;  // it changed: worth retrying without waiting for an event
    }
  }
  if (items.contains(key)) return;
  pod.keep_room_on.clear();
  pod.timestamp = clock->Now();
  if (!pre_enqueue.IsSuccess()) {
    // The update failed PreEnqueue: the pod waits gated, whatever this attempt said.
    Item* item = NewItem(std::move(pod));
    PushGated(item, pre_enqueue);
    CountIncoming(IncomingEvent::kPodUpdate, item);
    return;
  }
  const bool quota_wait = !pod.quota_wait_keys.empty();
  if (unschedulable_verdict && !to_backoff) {
    // A quota release while the pod was out may have been the one it waits for.
    to_backoff =
        quota_wait ? quota_move_request_cycle >= pod.scheduling_cycle : MissedHelpfulEvent(pod);
  }
  Item* item = NewItem(std::move(pod));
  if (to_backoff) {
    PushBackoff(item);
  } else if (quota_wait) {
    PushQuotaWaiting(item);
  } else {
    PushUnschedulable(item);
  }
  CountIncoming(IncomingEvent::kScheduleAttemptFailure, item);
}

void SchedulingQueue::AddUnschedulable(QueuedPodInfo pod, bool unschedulable) {
  absl::MutexLock lock(&impl_->mu);
  impl_->ReturnPod(std::move(pod), /*to_backoff=*/!unschedulable, unschedulable);
}

void SchedulingQueue::AddBackoff(QueuedPodInfo pod) {
  absl::MutexLock lock(&impl_->mu);
  impl_->ReturnPod(std::move(pod), /*to_backoff=*/true, /*unschedulable_verdict=*/false);
}

void SchedulingQueue::Done(const std::string& pod_key, std::string_view uid) {
  absl::MutexLock lock(&impl_->mu);
  impl_->Finish(pod_key, uid, /*bound=*/false);
}

void SchedulingQueue::Bound(const std::string& pod_key, std::string_view uid) {
  absl::MutexLock lock(&impl_->mu);
  impl_->Finish(pod_key, uid, /*bound=*/true);
}

void SchedulingQueue::Impl::Finish(const std::string& pod_key, std::string_view uid, bool bound) {
  auto flight = in_flight.find(pod_key);
  // A successor of the same name is in flight, or queued: the pod that is done was deleted.
  if (flight != in_flight.end() && flight->second.uid != uid) return;
  if (auto it = items.find(pod_key);
      it != items.end() && it->second->info.pod_info->get().meta.uid != uid) {
    return;
  }
  if (flight != in_flight.end()) {
    if (bound && !flight->second.deleted) {
      flight->second.bound = true;
      flight->second.updated = nullptr;
    } else {
      in_flight.erase(flight);
    }
  }
  EraseItem(pod_key);
  Unnominate(pod_key);
}

SchedulingQueue::Impl::InFlight* SchedulingQueue::Impl::CurrentFlight(
    const framework::PodInfo& pod) {
  auto flight = in_flight.find(pod.key);
  if (flight == in_flight.end() || flight->second.deleted) return nullptr;
  if (flight->second.bound && flight->second.uid != pod.get().meta.uid) {
    in_flight.erase(flight);
    return nullptr;
  }
  return &flight->second;
}

void SchedulingQueue::MoveAllToActiveOrBackoff(framework::ClusterEvent event,
                                               bool except_gang_members) {
  absl::MutexLock lock(&impl_->mu);
  const auto index = static_cast<size_t>(event);
  const auto& source = event == framework::ClusterEvent::kUnschedulableTimeout
                           ? impl_->unschedulable
                           : impl_->unschedulable_by_event[index];
  // Copied first: moving an item erases it from the set being walked.
  std::vector<Item*> moving(source.begin(), source.end());
  if (except_gang_members) {
    std::erase_if(moving, [](const Item* item) { return item->info.pod_info->gang.InGroup(); });
  }
  SortByQueueOrder(moving);
  const absl::Time now = impl_->clock->Now();
  const IncomingEvent incoming = IncomingEventOf(event);
  for (Item* item : moving) impl_->MoveToActiveOrBackoff(item, now, incoming);
  impl_->move_request_cycle[index] = impl_->scheduling_cycle;
}

void SchedulingQueue::ActivateGang(std::string_view gang_key) {
  absl::MutexLock lock(&impl_->mu);
  std::vector<Item*> members = impl_->GangItems(gang_key);
  if (members.empty()) return;
  const uint64_t lane = impl_->next_lane++;
  for (Item* item : members) {
    impl_->Detach(item);
    item->lane = lane;
    impl_->PushActive(item);
  }
}

void SchedulingQueue::ParkGang(std::string_view gang_key, const std::vector<std::string>& plugins,
                               framework::ClusterEventSet events) {
  absl::MutexLock lock(&impl_->mu);
  for (Item* item : impl_->GangItems(gang_key)) {
    if (item->where == Where::kUnschedulable) continue;
    impl_->Detach(item);
    item->lane = 0;
    item->info.unschedulable_plugins = plugins;
    item->info.helpful_events = events;
    impl_->PushUnschedulable(item);
  }
}

void SchedulingQueue::MoveQuotaWaiters(const std::vector<std::string>& keys) {
  absl::MutexLock lock(&impl_->mu);
  impl_->quota_move_request_cycle = impl_->scheduling_cycle;
  absl::flat_hash_set<Item*> unique;
  for (const auto& key : keys) {
    if (key == kWakeAll) {
      for (const auto& [k, items] : impl_->quota_waiting) unique.insert(items.begin(), items.end());
      break;
    }
    auto it = impl_->quota_waiting.find(key);
    if (it != impl_->quota_waiting.end()) unique.insert(it->second.begin(), it->second.end());
  }
  if (unique.empty()) return;
  std::vector<Item*> moving(unique.begin(), unique.end());
  SortByQueueOrder(moving);
  const absl::Time now = impl_->clock->Now();
  for (Item* item : moving) impl_->MoveToActiveOrBackoff(item, now, IncomingEvent::kQuotaChange);
}

void SchedulingQueue::FlushBackoffCompleted() {
  absl::MutexLock lock(&impl_->mu);
  const absl::Time now = impl_->clock->Now();
  while (!impl_->backoff.empty() && impl_->backoff.top()->backoff_expiry <= now) {
    Item* item = impl_->backoff.Pop();
    impl_->PushActive(item);
    impl_->CountIncoming(IncomingEvent::kBackoffComplete, item);
  }
}

void SchedulingQueue::FlushUnschedulableLeftover() {
  absl::MutexLock lock(&impl_->mu);
  const absl::Time now = impl_->clock->Now();
  std::vector<Item*> moving;
  auto old = [&](const Item* item) {
    return now - item->info.timestamp > impl_->options.max_in_unschedulable;
  };
  for (Item* item : impl_->unschedulable) {
    if (old(item)) moving.push_back(item);
  }
  // Quota waiters are woken by the tracker; this is only the same safety net as upstream's.
  absl::flat_hash_set<Item*> quota_old;
  for (const auto& [key, items] : impl_->quota_waiting) {
    for (Item* item : items) {
      if (old(item)) quota_old.insert(item);
    }
  }
  moving.insert(moving.end(), quota_old.begin(), quota_old.end());
  if (moving.empty()) return;
  SortByQueueOrder(moving);
  for (Item* item : moving) {
    impl_->MoveToActiveOrBackoff(item, now, IncomingEvent::kUnschedulableTimeout);
  }
  impl_->move_request_cycle[static_cast<size_t>(framework::ClusterEvent::kUnschedulableTimeout)] =
      impl_->scheduling_cycle;
}

std::optional<absl::Time> SchedulingQueue::NextBackoffExpiry() const {
  absl::MutexLock lock(&impl_->mu);
  if (impl_->backoff.empty()) return std::nullopt;
  return impl_->backoff.top()->backoff_expiry;
}

}  // namespace kubesched::queue
