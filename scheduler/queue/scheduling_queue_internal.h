#pragma once

// Internal to scheduler/queue/: the state behind SchedulingQueue (the queued items, the orders of
// activeQ and backoffQ, and SchedulingQueue::Impl), shared by its .cc files (scheduling_queue.cc:
// the pod lifecycle; nominator.cc: nominations; queue_views.cc: counts and views). Not part of the
// queue's contract; include scheduling_queue.h instead.
//
// Threads and lifetime: everything here is guarded by Impl::mu; the helpers marked
// ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) expect the caller to hold it. The small helpers stay inline
// here because Add and Pop call them under the lock.

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "scheduler/queue/indexed_heap.h"
#include "scheduler/queue/scheduling_queue.h"
#include "scheduler/util/strings.h"

namespace kubesched::queue {
namespace internal {

// Which sub-queue holds an item.
enum class Where : uint8_t { kActive, kBackoff, kUnschedulable, kQuotaWaiting, kGated };

// A queued pod and its place in the queue. Owned by Impl::items; the heaps and the unschedulable
// set hold raw pointers to it.
struct Item {
  QueuedPodInfo info;
  Where where = Where::kActive;
  size_t heap_index = 0;      // position in the heap it is in (activeQ or backoffQ)
  uint64_t sequence = 0;      // insertion order, breaks ties so equal pods stay FIFO
  int64_t enqueued_ns = 0;    // info.timestamp in ns, as QueueSortPlugin::Less wants it
  absl::Time backoff_expiry;  // backoffQ's key
  // Non-zero for the members of a gang being placed (SchedulingQueue::ActivateGang): they pop
  // before every other pod, the latest gang's first, so that gangs are not interleaved.
  uint64_t lane = 0;
};

// activeQ order: the profile's QueueSort plugin, else priority (high first) then arrival.
struct ActiveOrder {
  const framework::QueueSortPlugin* plugin;
  bool operator()(const Item* a, const Item* b) const {
    if (a->lane != b->lane) return a->lane > b->lane;
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
inline bool HelpedBy(const QueuedPodInfo& info, framework::ClusterEvent event) {
  return event == framework::ClusterEvent::kUnschedulableTimeout ||
         (info.helpful_events & framework::EventBit(event)) != 0;
}

// A popped pod not yet handed back. Changes that arrive meanwhile are kept here and applied when
// it comes back (AddUnschedulable / AddBackoff), so they are neither lost nor double-queued. Its
// nomination belongs to its cycle meanwhile: an update seen now is the watch catching up with the
// pod's earlier writes (its nominatedNodeName), and nominating it again could undo what the cycle
// decided (an assumed pod gives up its nomination; holding both, its room would count twice).
struct InFlight {
  std::string uid;                // of the pod popped: a successor of the same name has another
  framework::PodInfoPtr updated;  // newer object seen by Update, if any
  framework::Status pre_enqueue;  // that object's PreEnqueue verdict
  bool deleted = false;
  // Bound (SchedulingQueue::Bound), and the watch has not shown it yet: its updates and adds are
  // ignored until Delete (the watch showing it bound or gone). Without this an update already on
  // its way when the pod bound would queue it as pending and nominate it again.
  bool bound = false;
};

}  // namespace internal

// The queue's state. The sub-queues hold raw pointers into `items`, which owns every queued pod;
// an item is in exactly one sub-queue (Item::where says which) until it is popped or erased.
struct SchedulingQueue::Impl {
  using Item = internal::Item;
  using Where = internal::Where;
  using InFlight = internal::InFlight;
  using PodInfoPtr = framework::PodInfoPtr;

  Impl(const util::Clock* c, QueueOptions o, const framework::QueueSortPlugin* less)
      : clock(c),
        options(o),
        active(internal::ActiveOrder{less}),
        backoff(internal::BackoffOrder{}) {
    move_request_cycle.fill(-1);
  }

  const util::Clock* const clock;
  const QueueOptions options;

  // Guards everything below. Never held while calling out, except QueueSortPlugin::Less.
  mutable absl::Mutex mu;
  absl::flat_hash_map<std::string, std::unique_ptr<Item>> items ABSL_GUARDED_BY(mu);
  IndexedHeap<Item, internal::ActiveOrder> active ABSL_GUARDED_BY(mu);
  IndexedHeap<Item, internal::BackoffOrder> backoff ABSL_GUARDED_BY(mu);
  absl::flat_hash_set<Item*> unschedulable ABSL_GUARDED_BY(mu);
  // The part of `unschedulable` each event may help (QueuedPodInfo::helpful_events), so that an
  // event that helps few pods (kAssignedPodAdded, one per bind) does not scan every one.
  std::array<absl::flat_hash_set<Item*>, framework::kClusterEventCount> unschedulable_by_event
      ABSL_GUARDED_BY(mu);
  // Pods held back only by queue quota, by wait key (a pod is under each of its keys).
  absl::flat_hash_map<std::string, absl::flat_hash_set<Item*>> quota_waiting ABSL_GUARDED_BY(mu);
  size_t quota_waiting_count ABSL_GUARDED_BY(mu) = 0;
  // Pods that PreEnqueue keeps out of activeQ (QueuedPodInfo::gated). A set rather than a count
  // so that a scrape can list them by plugin.
  absl::flat_hash_set<Item*> gated ABSL_GUARDED_BY(mu);
  uint64_t next_sequence ABSL_GUARDED_BY(mu) = 0;
  uint64_t next_lane ABSL_GUARDED_BY(mu) = 1;  // Item::lane of the next gang activated
  // The items of each gang, by gang key (kept by NewItem and ForgetItem).
  absl::flat_hash_map<std::string, absl::flat_hash_set<Item*>> gang_items ABSL_GUARDED_BY(mu);

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
          internal::HelpedBy(pod, static_cast<framework::ClusterEvent>(e))) {
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

  // Pods that entered each sub-queue, by why (scheduler_queue_incoming_pods_total). Quota waiters
  // and gated pods count as entering the unschedulable set, as upstream labels gated pods.
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

  // The items of a gang waiting in activeQ, backoffQ or the unschedulable set.
  std::vector<Item*> GangItems(std::string_view gang_key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    std::vector<Item*> found;
    auto members = gang_items.find(util::Absl(gang_key));
    if (members == gang_items.end()) return found;
    for (Item* item : members->second) {
      const Where where = item->where;
      if (where == Where::kActive || where == Where::kBackoff || where == Where::kUnschedulable) {
        found.push_back(item);
      }
    }
    // In the order they were queued, whatever the set's order: simulate must be reproducible.
    std::sort(found.begin(), found.end(),
              [](const Item* a, const Item* b) { return a->sequence < b->sequence; });
    return found;
  }

  // Every item leaves `items` through here, so that the gang index stays true.
  void ForgetItem(absl::flat_hash_map<std::string, std::unique_ptr<Item>>::iterator it)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    const std::string& gang = it->second->info.pod_info->gang.key;
    if (!gang.empty()) {
      auto members = gang_items.find(gang);
      if (members != gang_items.end()) {
        members->second.erase(it->second.get());
        if (members->second.empty()) gang_items.erase(members);
      }
    }
    items.erase(it);
  }

  Item* NewItem(QueuedPodInfo info) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    auto& slot = items[info.pod_info->key];
    slot = std::make_unique<Item>();
    slot->info = std::move(info);
    const std::string& gang = slot->info.pod_info->gang.key;
    if (!gang.empty()) gang_items[gang].insert(slot.get());
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
      if (internal::HelpedBy(item->info, static_cast<framework::ClusterEvent>(e))) {
        unschedulable_by_event[e].insert(item);
      }
    }
  }

  // Keeps the item out of activeQ for `pre_enqueue`, a PreEnqueue rejection (upstream's gated pod:
  // its gating plugin counts as the plugin that made it unschedulable).
  void PushGated(Item* item, const framework::Status& pre_enqueue)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    item->where = Where::kGated;
    item->sequence = next_sequence++;
    item->info.gated = true;
    item->info.gated_message = pre_enqueue.Message();
    item->info.unschedulable_plugins.assign(1, std::string(pre_enqueue.plugin()));
    gated.insert(item);
  }

  // A pod entering the queue anew (added, or updated while not queued): activeQ when PreEnqueue
  // let it in, else gated; counted as entering by `event`.
  void Enqueue(Item* item, const framework::Status& pre_enqueue, IncomingEvent event)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (pre_enqueue.IsSuccess()) [[likely]] {
      PushActive(item);
    } else {
      PushGated(item, pre_enqueue);
    }
    CountIncoming(event, item);
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
      case Where::kGated:
        gated.erase(item);
        item->info.gated = false;
        item->info.gated_message.clear();
        item->info.unschedulable_plugins.clear();
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
    ForgetItem(it);
  }

  // The pod lifecycle's steps under the lock (scheduling_queue.cc).
  std::optional<QueuedPodInfo> PopLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // The in-flight entry that `pod` belongs to (being scheduled, or bound and not yet shown), or
  // null. A bound entry of another UID is a predecessor whose end the watch never showed (deleted
  // and re-created meanwhile): it is dropped, and `pod` is a pod like any other.
  InFlight* CurrentFlight(const framework::PodInfo& pod) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // Done and Bound under the lock.
  void Finish(const std::string& pod_key, std::string_view uid, bool bound)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  void ReturnPod(QueuedPodInfo pod, bool to_backoff, bool unschedulable_verdict)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // The nominator's steps under the lock (nominator.cc).
  void Nominate(PodInfoPtr pod, const std::string& node) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  void Unnominate(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  void UpdateNomination(const PodInfoPtr& pod) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // The UID of the pod nominated to `node` under `key` (empty when none).
  std::string_view NominatedUid(const std::string& key, const std::string& node) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
};

}  // namespace kubesched::queue
