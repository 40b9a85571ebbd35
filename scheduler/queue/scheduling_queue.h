#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "scheduler/framework/cluster_event.h"
#include "scheduler/framework/plugin.h"
#include "scheduler/framework/pod_info.h"
#include "scheduler/util/clock.h"

namespace kubesched::queue {

// A pod waiting to be scheduled, with its queue bookkeeping.
struct QueuedPodInfo {
  framework::PodInfoPtr pod_info;
  absl::Time timestamp;                  // when it last entered activeQ / was last tried
  absl::Time initial_attempt_timestamp;  // first time it was popped
  int32_t attempts = 0;
  // Plugins that rejected it in the last attempt; empty means "any event may help".
  std::vector<std::string> unschedulable_plugins;
  // The cluster events that may help it after a rejection: those the rejecting plugins
  // registered (runtime::Framework::EventsHelping); every event unless the scheduler says less.
  framework::ClusterEventSet helpful_events = framework::kAllEvents;
  // The queue's scheduling cycle at the Pop that handed the pod out; AddUnschedulable compares it
  // with the last move request (upstream's schedulingCycle / moveRequestCycle).
  int64_t scheduling_cycle = 0;
  // Set when only queue quota stood in the way: the pod waits for one of these keys
  // (quota::QuotaTracker's wait keys) instead of for cluster events.
  std::vector<std::string> quota_wait_keys;
  // Set while a PreEnqueue plugin keeps the pod out of activeQ (upstream's Gated): the pod is in
  // no other sub-queue, has never been tried since, and is pending for `gated_message` (the
  // plugin's status message, e.g. "waiting for scheduling gates: [example.com/foo]"); the plugin
  // is unschedulable_plugins' one entry.
  bool gated = false;
  std::string gated_message;
  // The policy a policy binding chose for the pod in its latest cycle, so that reports (the
  // unschedulable gauge) count it under that policy's profile; empty when the pod names its own
  // policy or no binding chose one.
  std::string bound_policy;
  // A pod that was nominated when it was assumed (a preemptor, its room made by its victims): the
  // node it was assumed on. A binding that fails nominates the pod there again before it gives the
  // room back, so that the room stays promised to it. Upstream drops the nomination: a pod of the
  // same priority may then take the room, and this one preempts again elsewhere, evicting more
  // than the preemptors need. Cleared when the pod is back in the queue; a pod deleted meanwhile
  // loses the nomination.
  std::string keep_room_on;
};

// Why a pod entered activeQ, backoffQ or the unschedulable set, as upstream's
// scheduler_queue_incoming_pods_total labels it ("PodAdd", "BackoffComplete", "NodeAdd", ...;
// kQuotaChange, "QuotaChange", is kubesched's: queue quota freed room or changed; kStorageChange,
// "StorageChange", stands for upstream's PersistentVolumeClaim/PersistentVolume/StorageClass/
// CSINode/VolumeAttachment events; kPodGroupChange, "PodGroupChange", for scheduler-plugins'
// PodGroup events; kResourceClaimChange, "ResourceClaimChange", for upstream's ResourceClaim
// events, and kDeviceChange, "DeviceChange", for its ResourceSlice/DeviceClass events).
enum class IncomingEvent : uint8_t {
  kPodAdd,
  kPodUpdate,
  kScheduleAttemptFailure,
  kBackoffComplete,
  kNodeAdd,
  kNodeUpdate,
  kAssignedPodDelete,
  kAssignedPodAdd,
  kUnschedulableTimeout,
  kQuotaChange,
  kStorageChange,
  kPodGroupChange,
  kResourceClaimChange,
  kDeviceChange,
};
inline constexpr size_t kIncomingEventCount = 14;
std::string_view IncomingEventName(IncomingEvent event);
// Pods that entered each sub-queue by event: [0] activeQ, [1] backoffQ, [2] the unschedulable set
// (quota waiters included), indexed by IncomingEvent.
using IncomingCounts = std::array<std::array<uint64_t, kIncomingEventCount>, 3>;

struct QueueOptions {
  absl::Duration initial_backoff = absl::Seconds(1);
  absl::Duration max_backoff = absl::Seconds(10);
  absl::Duration max_in_unschedulable = absl::Minutes(5);
};

// The scheduling queue: activeQ (a heap ordered by the profile's QueueSort plugin, else priority
// then arrival), backoffQ (ordered by backoff expiry; backoff = initial * 2^(attempts-1), capped at
// max), and the unschedulable set (moved back by cluster events, flushed after
// max_in_unschedulable). Pods held back only by queue quota wait in a separate set, keyed by
// what blocks them, and leave it when MoveQuotaWaiters names one of their keys (or the leftover
// flush). Pods that PreEnqueue rejected (gated) are kept apart from all of these: no event or
// flush moves them; only an Update whose PreEnqueue verdict is Success does, to activeQ at once.
// Also tracks nominated pods per node.
//
// In flight: a popped pod stays known until AddUnschedulable / AddBackoff / Done / Delete. Add of
// it is ignored; an Update is kept and applied when it comes back (then via backoffQ); a Delete
// makes its return a no-op, so a deleted pod is never queued again.
//
// Threads: shared by informer threads (Add/Update/Delete/MoveAll) and the scheduling thread
// (Pop/AddUnschedulable). One mutex guards everything; no call blocks except PopWait.
// What NominationsSince reports.
struct NominationDelta {
  uint64_t version = 0;  // to pass to the next call
  // Every nominated node is listed (the change log did not reach back far enough): nodes not
  // listed have no nomination.
  bool complete = false;
  // Changed nodes with the pods now nominated to them (empty: none any more).
  std::vector<std::pair<std::string, std::vector<framework::PodInfoPtr>>> nodes;
};

class SchedulingQueue {
 public:
  SchedulingQueue(const util::Clock* clock, QueueOptions options,
                  const framework::QueueSortPlugin* less = nullptr);
  ~SchedulingQueue();  // defined in the .cc, where Impl is complete

  // A new pending pod, with the verdict of its profile's PreEnqueue plugins (runtime::Framework::
  // RunPreEnqueue): Success queues it in activeQ, anything else keeps it gated with that status's
  // plugin and message. Ignored if a pod with the same key is already queued.
  void Add(framework::PodInfoPtr pod, const framework::Status& pre_enqueue = {});
  // A pending pod changed, with the new object's PreEnqueue verdict: replaces the queued copy
  // wherever it is. A rejection gates it (from any sub-queue); Success moves a gated pod to
  // activeQ at once, as upstream moves a pod whose last scheduling gate is removed, and an
  // unschedulable pod whose spec changed too.
  void Update(framework::PodInfoPtr pod, const framework::Status& pre_enqueue = {});
  // The pod is gone or no longer pending for us.
  void Delete(const std::string& pod_key);

  // Pops the next pod from activeQ, if any (never blocks). Increments attempts.
  std::optional<QueuedPodInfo> Pop();
  // Like Pop, but waits up to `timeout` for a pod (run mode).
  std::optional<QueuedPodInfo> PopWait(absl::Duration timeout);

  // After a failed attempt. `unschedulable` (no node fits) parks the pod in the unschedulable set,
  // unless a move request arrived since it was popped, in which case it goes to backoffQ; an error
  // sends it to backoffQ.
  void AddUnschedulable(QueuedPodInfo pod, bool unschedulable);
  // Back to backoffQ after a failed bind (the pod keeps its attempts count).
  void AddBackoff(QueuedPodInfo pod);
  // The pod left scheduling (deleted, or not ours): forget everything about it.
  // `uid`: the pod's; a successor of the same name (another UID) is left alone.
  void Done(const std::string& pod_key, std::string_view uid);
  // The pod was bound: as Done, but until Delete (the watch showing the pod bound or gone), the
  // queue ignores updates and adds of this pod (same UID) that the watch still shows pending.
  void Bound(const std::string& pod_key, std::string_view uid);

  // Moves every unschedulable pod that the event could help to activeQ (or backoffQ while its
  // backoff has not expired). `except_gang_members`: members of gangs stay (the event is a gang
  // giving back what it held tentatively, which helps no other gang: retrying them on it could
  // only repeat attempts that failed on real pods).
  void MoveAllToActiveOrBackoff(framework::ClusterEvent event, bool except_gang_members = false);
  // A member of the gang reached Permit: the gang's other pending members go to the head of
  // activeQ (whatever their backoff), so that the gang is placed before any other pod.
  void ActivateGang(std::string_view gang_key);
  // The gang was given up: its members still in activeQ or backoffQ wait as unschedulable, as if
  // `plugins` had rejected them (helped by `events`), instead of each being tried in vain.
  void ParkGang(std::string_view gang_key, const std::vector<std::string>& plugins,
                framework::ClusterEventSet events);
  // Moves the quota-waiting pods under any of `keys` (quota::kWakeAll: all of them) to activeQ
  // (or backoffQ while their backoff has not expired).
  void MoveQuotaWaiters(const std::vector<std::string>& keys);
  // Moves pods whose backoff expired from backoffQ to activeQ.
  void FlushBackoffCompleted();
  // Moves pods that have been unschedulable longer than max_in_unschedulable.
  void FlushUnschedulableLeftover();
  // Earliest backoff expiry in backoffQ; nullopt if empty (the simulator advances its clock to it).
  std::optional<absl::Time> NextBackoffExpiry() const;

  // Nominated pods (preemption): at most one node per pod.
  void AddNominatedPod(framework::PodInfoPtr pod, const std::string& node_name);
  void DeleteNominatedPod(const std::string& pod_key);
  std::vector<framework::PodInfoPtr> NominatedPodsForNode(const std::string& node_name) const;
  // Every nomination, by node (empty when none: the common case costs one lock).
  std::vector<std::pair<std::string, std::vector<framework::PodInfoPtr>>> AllNominatedPods() const;
  // The node the pod is nominated to; empty when none.
  std::string NominatedNodeOf(const std::string& pod_key) const;
  // The nominations that changed after `version` (0: all of them), so that a reader keeps its copy
  // in step in proportion to what changed rather than to how many pods are nominated.
  NominationDelta NominationsSince(uint64_t version) const;

  size_t ActiveCount() const;
  size_t BackoffCount() const;
  // Includes the quota-waiting pods, not the gated ones.
  size_t UnschedulableCount() const;
  size_t QuotaWaitingCount() const;
  size_t GatedCount() const;
  // Every pod known to the queue (any sub-queue), for reporting.
  std::vector<QueuedPodInfo> PendingPods() const;
  // The same pods' PodInfos only: pointers copied under the queue's lock, so that a metrics scrape
  // holds the lock for as short a time as it can.
  std::vector<framework::PodInfoPtr> PendingPodInfos() const;
  // How many pods entered each sub-queue, by event, since the queue was made (for metrics).
  IncomingCounts Incoming() const;
  // Calls `visit` for each pod in the unschedulable set, quota waiters and gated pods included,
  // under the queue's lock (for metrics, when scraped): `visit` must be quick and must not call
  // the queue.
  void ForEachUnschedulable(const std::function<void(const QueuedPodInfo&)>& visit) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kubesched::queue
