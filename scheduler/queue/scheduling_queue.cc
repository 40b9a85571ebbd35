#include "scheduler/queue/scheduling_queue.h"

#include <algorithm>
#include <array>
#include <deque>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "scheduler/queue/pod_update.h"

namespace kubesched::queue {
namespace {

using framework::PodInfoPtr;

enum class Where : uint8_t { kActive, kBackoff, kUnschedulable, kQuotaWaiting };

constexpr std::string_view kWakeAll = "*";  // quota::kWakeAll

// A queued pod and its place in the queue. Owned by Impl::items; the heaps and the unschedulable
// set hold raw pointers to it.
struct Item {
  QueuedPodInfo info;
  Where where = Where::kActive;
  size_t heap_index = 0;      // position in the heap it is in (activeQ or backoffQ)
  uint64_t sequence = 0;      // insertion order, breaks ties so equal pods stay FIFO
  int64_t enqueued_ns = 0;    // info.timestamp in ns, as QueueSortPlugin::Less wants it
  absl::Time backoff_expiry;  // backoffQ's key
};

// A binary heap of Item* that records each item's position in Item::heap_index, so that any item
// can be removed or re-positioned in O(log n) without searching (upstream's heap with its
// key-to-index map, minus the map).
template <typename Before>
class IndexedHeap {
 public:
  explicit IndexedHeap(Before before) : before_(std::move(before)) {}

  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  Item* top() const { return heap_.front(); }
  const std::vector<Item*>& items() const { return heap_; }

  void Push(Item* item) {
    heap_.push_back(item);
    item->heap_index = heap_.size() - 1;
    SiftUp(item->heap_index);
  }
  Item* Pop() {
    Item* item = heap_.front();
    Erase(item);
    return item;
  }
  void Erase(Item* item) {
    const size_t i = item->heap_index;
    Item* last = heap_.back();
    heap_.pop_back();
    if (last == item) return;
    Place(i, last);
    Fix(last);
  }
  // Restores order after the item's key changed.
  void Fix(Item* item) {
    SiftUp(item->heap_index);
    SiftDown(item->heap_index);
  }

 private:
  void Place(size_t i, Item* item) {
    heap_[i] = item;
    item->heap_index = i;
  }
  void SiftUp(size_t i) {
    Item* item = heap_[i];
    while (i > 0) {
      const size_t parent = (i - 1) / 2;
      if (!before_(item, heap_[parent])) break;
      Place(i, heap_[parent]);
      i = parent;
    }
    Place(i, item);
  }
  void SiftDown(size_t i) {
    Item* item = heap_[i];
    const size_t n = heap_.size();
    while (true) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && before_(heap_[child + 1], heap_[child])) ++child;
      if (!before_(heap_[child], item)) break;
      Place(i, heap_[child]);
      i = child;
    }
    Place(i, item);
  }

  std::vector<Item*> heap_;
  Before before_;
};

// activeQ order: the profile's QueueSort plugin, else priority (high first) then arrival.
struct ActiveOrder {
  const framework::QueueSortPlugin* plugin;
  bool operator()(const Item* a, const Item* b) const {
    const framework::PodInfo& pa = *a->info.pod_info;
    const framework::PodInfo& pb = *b->info.pod_info;
    if (plugin != nullptr) {
      if (plugin->Less(pa, a->enqueued_ns, pb, b->enqueued_ns)) return true;
      if (plugin->Less(pb, b->enqueued_ns, pa, a->enqueued_ns)) return false;
    } else {
      if (pa.priority != pb.priority) return pa.priority > pb.priority;
      if (a->enqueued_ns != b->enqueued_ns) return a->enqueued_ns < b->enqueued_ns;
    }
    return a->sequence < b->sequence;
  }
};

struct BackoffOrder {
  bool operator()(const Item* a, const Item* b) const {
    if (a->backoff_expiry != b->backoff_expiry) return a->backoff_expiry < b->backoff_expiry;
    return a->sequence < b->sequence;
  }
};

// Whether `event` may help the pod: one of the plugins that rejected it registered the event. The
// periodic flush helps every pod.
bool HelpedBy(const QueuedPodInfo& info, framework::ClusterEvent event) {
  return event == framework::ClusterEvent::kUnschedulableTimeout ||
         (info.helpful_events & framework::EventBit(event)) != 0;
}

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
    case framework::ClusterEvent::kUnschedulableTimeout:
      return IncomingEvent::kUnschedulableTimeout;
  }
  return IncomingEvent::kUnschedulableTimeout;
}

// A popped pod not yet handed back. Changes that arrive meanwhile are kept here and applied when
// it comes back (AddUnschedulable / AddBackoff), so they are neither lost nor double-queued.
struct InFlight {
  PodInfoPtr updated;  // newer object seen by Update, if any
  bool deleted = false;
};

}  // namespace

struct SchedulingQueue::Impl {
  Impl(const util::Clock* c, QueueOptions o, const framework::QueueSortPlugin* less)
      : clock(c), options(o), active(ActiveOrder{less}), backoff(BackoffOrder{}) {
    move_request_cycle.fill(-1);
  }

  const util::Clock* const clock;
  const QueueOptions options;

  // Guards everything below. Never held while calling out, except QueueSortPlugin::Less.
  mutable absl::Mutex mu;
  absl::flat_hash_map<std::string, std::unique_ptr<Item>> items ABSL_GUARDED_BY(mu);
  IndexedHeap<ActiveOrder> active ABSL_GUARDED_BY(mu);
  IndexedHeap<BackoffOrder> backoff ABSL_GUARDED_BY(mu);
  absl::flat_hash_set<Item*> unschedulable ABSL_GUARDED_BY(mu);
  // The part of `unschedulable` each event may help (QueuedPodInfo::helpful_events), so that an
  // event that helps few pods (kAssignedPodAdded, one per bind) does not scan every one.
  std::array<absl::flat_hash_set<Item*>, framework::kClusterEventCount> unschedulable_by_event
      ABSL_GUARDED_BY(mu);
  // Pods held back only by queue quota, by wait key (a pod is under each of its keys).
  absl::flat_hash_map<std::string, absl::flat_hash_set<Item*>> quota_waiting ABSL_GUARDED_BY(mu);
  size_t quota_waiting_count ABSL_GUARDED_BY(mu) = 0;
  uint64_t next_sequence ABSL_GUARDED_BY(mu) = 0;

  // Upstream's schedulingCycle / moveRequestCycle: a pod popped in cycle c that fails after a
  // move request in cycle >= c may have missed the event that helps it, so it goes to backoffQ
  // rather than waiting for another event. An event only counts for pods it can help.
  int64_t scheduling_cycle ABSL_GUARDED_BY(mu) = 0;
  std::array<int64_t, framework::kClusterEventCount> move_request_cycle ABSL_GUARDED_BY(mu);
  int64_t quota_move_request_cycle ABSL_GUARDED_BY(mu) = -1;

  // Whether a move request that may help `pod` came at or after the cycle that popped it.
  bool MissedHelpfulEvent(const QueuedPodInfo& pod) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    for (size_t e = 0; e < framework::kClusterEventCount; ++e) {
      if (move_request_cycle[e] >= pod.scheduling_cycle &&
          HelpedBy(pod, static_cast<framework::ClusterEvent>(e))) {
        return true;
      }
    }
    return false;
  }
  absl::flat_hash_map<std::string, InFlight> in_flight ABSL_GUARDED_BY(mu);

  // Nominator: at most one node per pod.
  absl::flat_hash_map<std::string, std::string> nominated_node ABSL_GUARDED_BY(mu);
  absl::flat_hash_map<std::string, std::vector<PodInfoPtr>> nominated_pods ABSL_GUARDED_BY(mu);
  // The nodes whose nominations changed, with the version each change took, oldest first; bounded,
  // so a reader that falls further behind gets every nomination instead.
  uint64_t nomination_version ABSL_GUARDED_BY(mu) = 0;
  std::deque<std::pair<uint64_t, std::string>> nomination_log ABSL_GUARDED_BY(mu);
  static constexpr size_t kNominationLogSize = 4096;

  void LogNomination(const std::string& node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    nomination_log.emplace_back(++nomination_version, node);
    if (nomination_log.size() > kNominationLogSize) nomination_log.pop_front();
  }

  bool HasActive() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return !active.empty(); }

  // Pods that entered each sub-queue, by why (scheduler_queue_incoming_pods_total).
  IncomingCounts incoming ABSL_GUARDED_BY(mu) = {};
  void CountIncoming(IncomingEvent event, const Item* item) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    const size_t queue = item->where == Where::kActive ? 0 : item->where == Where::kBackoff ? 1 : 2;
    ++incoming[queue][static_cast<size_t>(event)];
  }

  absl::Duration BackoffDuration(int32_t attempts) const {
    absl::Duration duration = options.initial_backoff;
    for (int32_t i = 1; i < attempts && duration < options.max_backoff; ++i) {
      if (duration == absl::ZeroDuration()) break;
      duration *= 2;
    }
    return std::min(duration, options.max_backoff);
  }

  Item* NewItem(QueuedPodInfo info) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    auto& slot = items[info.pod_info->key];
    slot = std::make_unique<Item>();
    slot->info = std::move(info);
    return slot.get();
  }

  void PushActive(Item* item) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    item->where = Where::kActive;
    item->sequence = next_sequence++;
    item->enqueued_ns = absl::ToUnixNanos(item->info.timestamp);
    active.Push(item);
  }

  void PushBackoff(Item* item) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    item->where = Where::kBackoff;
    item->sequence = next_sequence++;
    item->backoff_expiry = item->info.timestamp + BackoffDuration(item->info.attempts);
    backoff.Push(item);
  }

  void PushUnschedulable(Item* item) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    item->where = Where::kUnschedulable;
    item->sequence = next_sequence++;  // moves back out in the order pods were parked
    unschedulable.insert(item);
    for (size_t e = 0; e < framework::kClusterEventCount; ++e) {
      if (HelpedBy(item->info, static_cast<framework::ClusterEvent>(e))) {
        unschedulable_by_event[e].insert(item);
      }
    }
  }

  void PushQuotaWaiting(Item* item) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    item->where = Where::kQuotaWaiting;
    item->sequence = next_sequence++;
    for (const auto& key : item->info.quota_wait_keys) quota_waiting[key].insert(item);
    ++quota_waiting_count;
  }

  // Takes the item out of whichever sub-queue holds it; it stays in `items`.
  void Detach(Item* item) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    switch (item->where) {
      case Where::kActive:
        active.Erase(item);
        break;
      case Where::kBackoff:
        backoff.Erase(item);
        break;
      case Where::kUnschedulable:
        unschedulable.erase(item);
        for (auto& helped : unschedulable_by_event) helped.erase(item);
        break;
      case Where::kQuotaWaiting:
        for (const auto& key : item->info.quota_wait_keys) {
          auto it = quota_waiting.find(key);
          if (it == quota_waiting.end()) continue;
          it->second.erase(item);
          if (it->second.empty()) quota_waiting.erase(it);
        }
        --quota_waiting_count;
        break;
    }
  }

  void MoveToActiveOrBackoff(Item* item, absl::Time now, IncomingEvent event)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    Detach(item);
    const absl::Time expiry = item->info.timestamp + BackoffDuration(item->info.attempts);
    if (now < expiry) {
      PushBackoff(item);
    } else {
      PushActive(item);
    }
    CountIncoming(event, item);
  }

  void EraseItem(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    auto it = items.find(key);
    if (it == items.end()) return;
    Detach(it->second.get());
    items.erase(it);
  }

  std::optional<QueuedPodInfo> PopLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  void ReturnPod(QueuedPodInfo pod, bool to_backoff, bool unschedulable_verdict)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  void Nominate(PodInfoPtr pod, const std::string& node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  void Unnominate(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  void UpdateNomination(const PodInfoPtr& pod) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
};

SchedulingQueue::SchedulingQueue(const util::Clock* clock, QueueOptions options,
                                 const framework::QueueSortPlugin* less)
    : impl_(std::make_unique<Impl>(clock, options, less)) {}

SchedulingQueue::~SchedulingQueue() = default;

void SchedulingQueue::Add(framework::PodInfoPtr pod) {
  absl::MutexLock lock(&impl_->mu);
  const std::string& key = pod->key;
  if (impl_->items.contains(key)) return;
  auto flight = impl_->in_flight.find(key);
  if (flight != impl_->in_flight.end() && !flight->second.deleted) return;
  if (!pod->get().status.nominated_node_name.empty()) {
    impl_->Nominate(pod, pod->get().status.nominated_node_name);
  }
  QueuedPodInfo info;
  info.timestamp = impl_->clock->Now();
  info.pod_info = std::move(pod);
  Item* item = impl_->NewItem(std::move(info));
  impl_->PushActive(item);
  impl_->CountIncoming(IncomingEvent::kPodAdd, item);
}

void SchedulingQueue::Update(framework::PodInfoPtr pod) {
  absl::MutexLock lock(&impl_->mu);
  impl_->UpdateNomination(pod);
  auto flight = impl_->in_flight.find(pod->key);
  if (flight != impl_->in_flight.end() && !flight->second.deleted) {
    flight->second.updated = std::move(pod);
    return;
  }
  auto it = impl_->items.find(pod->key);
  if (it == impl_->items.end()) {
    // Not queued (e.g. its add was missed): an update of a pending pod makes it pending (upstream).
    QueuedPodInfo info;
    info.timestamp = impl_->clock->Now();
    info.pod_info = std::move(pod);
    Item* item = impl_->NewItem(std::move(info));
    impl_->PushActive(item);
    impl_->CountIncoming(IncomingEvent::kPodUpdate, item);
    return;
  }
  Item* item = it->second.get();
  const PodInfoPtr old = std::exchange(item->info.pod_info, std::move(pod));
  switch (item->where) {
    case Where::kActive:
      impl_->active.Fix(item);  // the priority may have changed
      break;
    case Where::kBackoff:
      break;  // the expiry does not depend on the object
    case Where::kUnschedulable:
    case Where::kQuotaWaiting:
      if (PodChangedBeyondStatus(old->get(), item->info.pod_info->get())) {
        impl_->Detach(item);
        impl_->PushActive(item);
        impl_->CountIncoming(IncomingEvent::kPodUpdate, item);
      }
      break;
  }
}

void SchedulingQueue::Delete(const std::string& pod_key) {
  absl::MutexLock lock(&impl_->mu);
  auto flight = impl_->in_flight.find(pod_key);
  if (flight != impl_->in_flight.end()) flight->second.deleted = true;
  impl_->EraseItem(pod_key);
  impl_->Unnominate(pod_key);
}

std::optional<QueuedPodInfo> SchedulingQueue::Impl::PopLocked() {
  if (active.empty()) return std::nullopt;
  Item* item = active.Pop();
  auto it = items.find(item->info.pod_info->key);
  QueuedPodInfo info = std::move(item->info);
  items.erase(it);
  ++info.attempts;
  info.quota_wait_keys.clear();  // set again by the attempt's verdict
  if (info.attempts == 1) info.initial_attempt_timestamp = clock->Now();
  info.scheduling_cycle = ++scheduling_cycle;
  in_flight[info.pod_info->key] = InFlight{};
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
  if (auto flight = in_flight.find(key); flight != in_flight.end()) {
    const InFlight state = std::move(flight->second);
    in_flight.erase(flight);
    if (state.deleted) return;  // deleted while being scheduled: do not resurrect it
    if (state.updated != nullptr) {
      pod.pod_info = state.updated;
      to_backoff = true;  // it changed: worth retrying without waiting for an event
    }
  }
  if (items.contains(key)) return;
  pod.timestamp = clock->Now();
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

void SchedulingQueue::Done(const std::string& pod_key) {
  absl::MutexLock lock(&impl_->mu);
  impl_->in_flight.erase(pod_key);
  impl_->EraseItem(pod_key);
  impl_->Unnominate(pod_key);
}

namespace {
// The unschedulable set is a hash set of pointers; moving in its iteration order would make the
// queue order (and so a simulation) depend on allocation addresses. Move in the order the pods
// were last queued instead.
void SortByQueueOrder(std::vector<Item*>& items) {
  std::sort(items.begin(), items.end(),
            [](const Item* a, const Item* b) { return a->sequence < b->sequence; });
}
}  // namespace

void SchedulingQueue::MoveAllToActiveOrBackoff(framework::ClusterEvent event) {
  absl::MutexLock lock(&impl_->mu);
  const auto index = static_cast<size_t>(event);
  const auto& source = event == framework::ClusterEvent::kUnschedulableTimeout
                           ? impl_->unschedulable
                           : impl_->unschedulable_by_event[index];
  // Copied first: moving an item erases it from the set being walked.
  std::vector<Item*> moving(source.begin(), source.end());
  SortByQueueOrder(moving);
  const absl::Time now = impl_->clock->Now();
  const IncomingEvent incoming = IncomingEventOf(event);
  for (Item* item : moving) impl_->MoveToActiveOrBackoff(item, now, incoming);
  impl_->move_request_cycle[index] = impl_->scheduling_cycle;
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

void SchedulingQueue::Impl::Nominate(PodInfoPtr pod, const std::string& node) {
  Unnominate(pod->key);
  nominated_node[pod->key] = node;
  nominated_pods[node].push_back(std::move(pod));
  LogNomination(node);
}

void SchedulingQueue::Impl::Unnominate(const std::string& key) {
  auto it = nominated_node.find(key);
  if (it == nominated_node.end()) return;
  auto pods_it = nominated_pods.find(it->second);
  if (pods_it != nominated_pods.end()) {
    auto& pods = pods_it->second;
    pods.erase(std::remove_if(pods.begin(), pods.end(),
                              [&key](const PodInfoPtr& p) { return p->key == key; }),
               pods.end());
    if (pods.empty()) nominated_pods.erase(pods_it);
  }
  LogNomination(it->second);
  nominated_node.erase(it);
}

// A pod's object changed: its nomination follows the new status.nominatedNodeName, but an update
// that does not carry one keeps the node reserved in memory (it may predate our own patch).
void SchedulingQueue::Impl::UpdateNomination(const PodInfoPtr& pod) {
  std::string node = pod->get().status.nominated_node_name;
  if (node.empty()) {
    auto it = nominated_node.find(pod->key);
    if (it == nominated_node.end()) return;
    node = it->second;
  }
  Nominate(pod, node);
}

void SchedulingQueue::AddNominatedPod(framework::PodInfoPtr pod, const std::string& node_name) {
  absl::MutexLock lock(&impl_->mu);
  const std::string node = node_name.empty() ? pod->get().status.nominated_node_name : node_name;
  if (node.empty()) return;
  impl_->Nominate(std::move(pod), node);
}

void SchedulingQueue::DeleteNominatedPod(const std::string& pod_key) {
  absl::MutexLock lock(&impl_->mu);
  impl_->Unnominate(pod_key);
}

std::vector<framework::PodInfoPtr> SchedulingQueue::NominatedPodsForNode(
    const std::string& node_name) const {
  absl::MutexLock lock(&impl_->mu);
  auto it = impl_->nominated_pods.find(node_name);
  if (it == impl_->nominated_pods.end()) return {};
  return it->second;
}

std::vector<std::pair<std::string, std::vector<framework::PodInfoPtr>>>
SchedulingQueue::AllNominatedPods() const {
  absl::MutexLock lock(&impl_->mu);
  return {impl_->nominated_pods.begin(), impl_->nominated_pods.end()};
}

std::string SchedulingQueue::NominatedNodeOf(const std::string& pod_key) const {
  absl::MutexLock lock(&impl_->mu);
  auto it = impl_->nominated_node.find(pod_key);
  return it == impl_->nominated_node.end() ? std::string() : it->second;
}

NominationDelta SchedulingQueue::NominationsSince(uint64_t version) const {
  absl::MutexLock lock(&impl_->mu);
  NominationDelta delta;
  delta.version = impl_->nomination_version;
  if (version == impl_->nomination_version) return delta;
  const auto& log = impl_->nomination_log;
  const auto pods_of = [this](const std::string& node) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    auto it = impl_->nominated_pods.find(node);
    return it == impl_->nominated_pods.end() ? std::vector<PodInfoPtr>() : it->second;
  };
  if (version == 0 || version > impl_->nomination_version || log.empty() ||
      log.front().first > version + 1) {
    delta.complete = true;
    delta.nodes.assign(impl_->nominated_pods.begin(), impl_->nominated_pods.end());
    return delta;
  }
  absl::flat_hash_set<std::string_view> seen;
  // The log is in version order: walk back to the first change after `version`.
  for (auto it = log.rbegin(); it != log.rend() && it->first > version; ++it) {
    if (seen.insert(it->second).second) delta.nodes.emplace_back(it->second, pods_of(it->second));
  }
  return delta;
}

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

IncomingCounts SchedulingQueue::Incoming() const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->incoming;
}

void SchedulingQueue::ForEachUnschedulable(
    const std::function<void(const QueuedPodInfo&)>& visit) const {
  absl::MutexLock lock(&impl_->mu);
  for (const Item* item : impl_->unschedulable) visit(item->info);
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

}  // namespace kubesched::queue
