#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "config/config.h"
#include "policy/policy_runtime.h"
#include "policy/reloader.h"
#include "scheduler/cache/cache.h"
#include "scheduler/client/event_handler.h"
#include "scheduler/client/pod_deleter.h"
#include "scheduler/client/pod_group_status_writer.h"
#include "scheduler/core/algorithm.h"
#include "scheduler/core/bind_executor.h"
#include "scheduler/core/nominated_pods.h"
#include "scheduler/core/observer.h"
#include "scheduler/core/waiting_pods.h"
#include "scheduler/queue/scheduling_queue.h"
#include "scheduler/quota/config_reloader.h"
#include "scheduler/quota/quota_tracker.h"
#include "scheduler/runtime/framework.h"
#include "scheduler/util/clock.h"
#include "scheduler/util/parallel.h"

namespace kubesched::scheduler {

// Builds every profile's plugins once, so that a bad plugin arg is reported as a configuration
// error before any input is read.
absl::Status CheckConfiguration(const config::Configuration& config);

struct SchedulerDeps {
  const util::Clock* clock = nullptr;
  framework::PodBinder* binder = nullptr;
  BindExecutor* bind_executor = nullptr;
  SchedulingObserver* observer = nullptr;          // optional
  uint64_t seed = 1;                               // tie-breaking between equal scores
  int threads = 0;                                 // filter/score threads; 0 = hardware concurrency
  client::PodDeleter* deleter = nullptr;           // evicts preemption victims; optional
  const plugins::RegistryMap* registry = nullptr;  // plugin factories; null = the built-in ones
  metrics::SchedulerMetrics* metrics = nullptr;    // framework timings; optional
  framework::VolumeBinder* volume_binder = nullptr;      // VolumeBinding's writes; optional
  framework::ClaimStatusWriter* claim_writer = nullptr;  // DynamicResources' writes; optional
  // Where PodGroup status goes (gang scheduling's phase and counts); optional.
  client::PodGroupStatusWriter* pod_group_status = nullptr;
  // Asked by each binding cycle before it starts (PreBind's writes included): false fails the
  // cycle, so the pod is unreserved and requeued (run mode: no longer leading, lease renewal
  // overdue, or shutting down). Empty: always true. Called from bind workers.
  std::function<bool()> may_bind;
};

// explain's view of a gang member's group (README "Gangs").
struct GangExplanation {
  std::string key;                    // "namespace/name"
  bool implicit = false;              // formed by annotations rather than by a PodGroup object
  std::optional<int32_t> min_member;  // unknown when the group cannot be used
  framework::GangCounts counts;       // members known, and placed (bound or assumed)
  std::string phase;                  // framework::GangPhase
  std::string problem;  // why the group cannot be used (bad or missing PodGroup, bad annotations)
  // The group's whole need as group quota judges it (framework::GangNeedOf, pods raised to
  // minMember; empty when min_member is unknown), and whether it is the PodGroup's
  // spec.minResources rather than the requests of its first minMember members.
  api::ResourceList need;
  bool need_from_min_resources = false;
  // The room for the need on the pod's queue and each ancestor, leaf first
  // (QuotaTracker::GangPathUsage); empty when the pod names no usable queue.
  std::vector<quota::QueueUsage> queue_path;
};

// The scheduler: consumes cluster events into the cache and the queue, and schedules one pod at a
// time (ScheduleOne). The scheduling loop itself (when to call ScheduleOne) belongs to the caller:
// simulate drives it with a virtual clock, run drives it from a thread.
//
// Threads: event handlers may be called from an informer thread while ScheduleOne runs on the
// scheduling thread; the cache and queue do their own locking, and the one field here that both
// touch (the priority classes) is guarded by mu_.
class Scheduler : public client::ClusterEventHandler {
 public:
  static absl::StatusOr<std::unique_ptr<Scheduler>> Create(const config::Configuration& config,
                                                           SchedulerDeps deps);
  ~Scheduler() override;

  void OnPod(const client::Event<api::Pod>& event) override;
  void OnNode(const client::Event<api::Node>& event) override;
  void OnNamespace(const client::Event<api::Namespace>& event) override;
  void OnPriorityClass(const client::Event<api::PriorityClass>& event) override;
  // The queue quota ConfigMap (queues.configMap): a valid update replaces the queue tree; a bad
  // one is logged and counted, and the last good tree stays. Deleting it restores the file's.
  // The policy ConfigMap (policyConfigMap) likewise replaces the per-pod policies from the next
  // cycle on; pods waiting for a policy then try again.
  void OnConfigMap(const client::Event<api::ConfigMap>& event) override;
  // Metrics samples feed the cache (MostAvailable); they never move pods between queues.
  void OnNodeMetrics(const client::Event<api::NodeMetrics>& event) override;
  // The volume objects feed the cache's snapshots (the volume plugins) and may help pods that a
  // volume plugin rejected.
  void OnPersistentVolumeClaim(const client::Event<api::PersistentVolumeClaim>& event) override;
  void OnPersistentVolume(const client::Event<api::PersistentVolume>& event) override;
  void OnStorageClass(const client::Event<api::StorageClass>& event) override;
  void OnCsiNode(const client::Event<api::CsiNode>& event) override;
  void OnVolumeAttachment(const client::Event<api::VolumeAttachment>& event) override;
  // PodGroups feed the cache's snapshots (Snapshot::gangs(), the gang plugin); one added, deleted
  // or with a changed spec may help pods waiting for their group (ClusterEvent::kPodGroupChanged).
  void OnPodGroup(const client::Event<api::PodGroup>& event) override;
  void OnDeviceClass(const client::Event<api::DeviceClass>& event) override;
  void OnResourceSlice(const client::Event<api::ResourceSlice>& event) override;
  void OnResourceClaim(const client::Event<api::ResourceClaim>& event) override;
  void OnResourceClaimTemplate(const client::Event<api::ResourceClaimTemplate>& event) override;
  // Budgets feed the cache's snapshots (preemption prefers victims that violate none).
  void OnPodDisruptionBudget(const client::Event<api::PodDisruptionBudget>& event) override;

  // Pops and schedules one pod, waiting up to `wait` for one (run mode; simulate never waits).
  // Returns false if activeQ stayed empty.
  bool ScheduleOne(absl::Duration wait = absl::ZeroDuration());

  // Time-driven queue and cache upkeep for run mode, called about once a second by the scheduling
  // thread: backoff expiry, the unschedulable leftover flush, the pod watch's lag behind our binds.
  void Housekeep();
  // How long a successful bind may wait for the pod watch to show it before the watch counts as
  // stalled (logged; kubesched_pod_watch_unconfirmed_binds shows it all along).
  static constexpr absl::Duration kPodWatchStallAfter = absl::Seconds(30);

  // Sends on the pods that every Permit plugin now allows and undoes the rejected ones (by a
  // plugin, by their Permit timeout, or deleted meanwhile). The scheduling thread calls it after
  // each cycle and from Housekeep; simulate calls it as its virtual clock moves.
  void SettleWaitingPods();
  // The earliest Permit timeout of a waiting pod (simulate moves its clock there).
  std::optional<absl::Time> NextPermitDeadline() const { return waiting_->NextDeadline(); }
  // The pods held at Permit now.
  const WaitingPodRegistry& waiting_pods() const { return *waiting_; }

  // Whether one of our profiles serves this pod's schedulerName.
  bool Responsible(const api::Pod& pod) const;
  // The profile for a pod; null if none serves it.
  const runtime::Framework* FrameworkFor(const api::Pod& pod) const;

  // The shortest node metrics poll interval the profiles' score plugins ask for
  // (framework::NodeMetricsConsumer); nullopt when none reads node metrics, and then nothing
  // polls. `consumer` (optional) names the plugin that asks for it.
  std::optional<absl::Duration> NodeMetricsPollInterval(std::string_view* consumer = nullptr) const;

  // The pod's effective priority (spec.priority, else its class, else the global default).
  int32_t ResolvePriority(const api::Pod& pod) const;

  // explain: every filter on every node and every score, for a pod not necessarily in the
  // cluster. Uses the pod's profile, else the first profile.
  Explanation Explain(const api::Pod& pod);
  // The policy `pod` would be scheduled under now (its annotation's, or a binding's), for reports.
  policy::PolicyChoice ChoosePolicy(const api::Pod& pod);
  // explain's view of the pod's group, as this cycle's snapshot has it; nullopt when the pod is
  // in none. Changes nothing.
  std::optional<GangExplanation> ExplainGang(const api::Pod& pod);

  // The scheduling thread's own snapshot, brought up to date as before a cycle (the nominations
  // too): for reports over the whole cluster, which would otherwise copy every node. Scheduling
  // thread only, between cycles.
  const framework::Snapshot& CurrentSnapshot() {
    RefreshCycleView();
    return snapshot_;
  }

  queue::SchedulingQueue& queue() { return *queue_; }
  cache::Cache& cache() { return *cache_; }
  quota::QuotaTracker& quota() { return *quota_; }
  // Makes room in the cache and the quota ledger for `pods` pods, before a cluster whose size is
  // known up front is delivered (cache::Cache::ReservePods).
  void ReservePods(size_t pods) {
    cache_->ReservePods(pods);
    quota_->ReservePods(pods);
  }

  // Updates of the queue ConfigMap taken and refused, and the last error.
  config::ConfigReloads queue_config_reloads() const { return queue_config_->reloads(); }
  // Once the nodes are known (after the informers' first lists): warns of typed queue limits that
  // match no node's model, and from now on after every queue reload (QueueConfigReloader).
  std::vector<quota::UnmatchedTypedLimit> CheckTypedLimits() {
    return queue_config_->CheckTypedLimits();
  }
  // The same for the policy ConfigMap.
  config::ConfigReloads policy_reloads() const { return policies_->reloads(); }
  // The per-pod policies in force (an immutable snapshot).
  std::shared_ptr<const policy::PolicyRuntime> policies() const { return policies_->Current(); }

 private:
  explicit Scheduler(SchedulerDeps deps) : deps_(deps) {}
  // Has the cache group nodes for the Watermark strategy when a profile uses it.
  void EnableWatermarkGroups();
  void OnPodAdded(const std::shared_ptr<const api::Pod>& pod);
  void OnPodUpdated(const std::shared_ptr<const api::Pod>& old_pod,
                    const std::shared_ptr<const api::Pod>& pod);
  void OnPodDeleted(const std::shared_ptr<const api::Pod>& pod);
  // Keeps the cache's count of the pod's gang members (framework::GangCounts) true.
  void TrackGangMember(const api::Pod& pod);
  template <typename T>
  void OnStorageObject(const client::Event<T>& event);
  template <typename T>
  void OnDraObject(const client::Event<T>& event, framework::ClusterEvent cluster_event);
  // DRA devices in queue quota (device_charges.cc): the devices the pod's claims hold as the
  // cache has them now; a charged, bound pod charged them anew; the first consumers of a claim
  // that changed recharged; a slice's devices counted as known models, and the pods whose devices
  // were not found yet recharged. No-ops unless the queue configuration counts devices.
  quota::PodDevices DevicesOf(const api::Pod& pod) const;
  void RechargeDevicesOf(const std::string& pod_key);
  void ChargeClaimChange(const api::ResourceClaim* before, const api::ResourceClaim* after);
  void ChargeSliceChange(const api::ResourceSlice* before, const api::ResourceSlice* after);
  // The profile that schedules `pod` when it is pending for us (not bound, not terminal, not
  // being deleted, its schedulerName ours); null otherwise.
  const runtime::Framework* PendingFrameworkFor(const api::Pod& pod) const;
  framework::PodInfoPtr MakeInfo(std::shared_ptr<const api::Pod> pod) const;
  // What the pod's PriorityClass says about preemption.
  framework::PriorityClassTraits ClassTraits(const api::Pod& pod) const;
  static bool NonPreemptible(const api::PriorityClass& priority_class);

  void HandleFailure(const runtime::Framework& fw, queue::QueuedPodInfo queued,
                     const FitError* fit_error, const framework::Status& status);
  // After a FitError: lets PostFilter plugins nominate a node and evict victims; a rejection's
  // message joins the FailedScheduling message.
  // What the PostFilter plugins (preemption) would do for a pod no node fits; changes nothing.
  framework::PostFilterOutcome DryRunPostFilter(const runtime::Framework& fw,
                                                framework::CycleState& state,
                                                const framework::PodInfo& pod,
                                                const FitError& fit_error);
  // Brings the snapshot and the nominations up to date for the next cycle.
  void RefreshCycleView();
  void RunPostFilter(const runtime::Framework& fw, framework::CycleState& state,
                     const framework::PodInfoPtr& pod, FitError* fit_error);
  // Deletes one preemption victim (a bind worker runs it).
  void Evict(const framework::PodInfo& victim, const framework::PodInfo& preemptor,
             const std::string& node);
  // The pod as PostFilter must judge it: nominated where the queue says. The API shows the
  // nomination only once the status write came back through the pod watch.
  framework::PodInfoPtr AsNominated(const framework::PodInfoPtr& pod) const;
  // Victims whose deletion this scheduler decided are terminating from then on (evicting_), so
  // that their preemptor waits for them instead of preempting again elsewhere (upstream's
  // PodEligibleToPreemptOthers), whether the API deletes pods at once or the watch lags.
  void MarkEvicting(const framework::PodInfo& victim);
  // The deletion failed: the victim stays, no longer terminating, and its preemptor may preempt
  // again.
  void UnmarkEvicting(const framework::PodInfo& victim);
  // The watch shows the pod gone (deleted or finished).
  void ForgetEvicting(const std::string& pod_key);
  // An update of a bound pod from the watch, still terminating while this scheduler evicts it.
  void UpdateBoundPod(std::shared_ptr<const api::Pod> pod);
  void AssumeAndBind(const runtime::Framework& fw, std::unique_ptr<framework::CycleState> state,
                     queue::QueuedPodInfo queued, const std::string& node);
  // A pod a Permit plugin holds: kept, reserved and assumed, in the waiting pods.
  void HoldAtPermit(const runtime::Framework& fw, std::shared_ptr<framework::CycleState> state,
                    queue::QueuedPodInfo queued, framework::PodInfoPtr assumed,
                    const std::string& node, const runtime::Framework::PermitWait& wait);
  // Undoes a waiting pod that was rejected.
  void UndoRejectedWait(WaitingPod pod);
  // Writes the member's PodGroup status (members placed, phase) when it changed (gang_status.cc).
  // Called as members bind and as a group is given up; best effort, off the scheduling thread
  // where binding is.
  void ReportGangStatus(const framework::PodInfo& member);
  // Tells the observer that a gang member was bound, with its group's minMember (nothing for a
  // pod outside a usable group), and that a group was released (SchedulingObserver).
  void ReportGangMemberBound(const framework::PodInfo& member);
  void ReportGangReleased(const std::string& gang_key);
  // Logs when binds have waited longer than kPodWatchStallAfter for the watch, and when it caught
  // up again.
  void ReportPodWatchStall();
  void RunBindingCycle(const runtime::Framework& fw,
                       const std::shared_ptr<framework::CycleState>& state,
                       queue::QueuedPodInfo queued, const framework::PodInfoPtr& assumed,
                       const std::string& node);
  // Requeues a pod after a failure (the queue drops it if it was bound or deleted meanwhile).
  void Requeue(queue::QueuedPodInfo queued, bool unschedulable);
  // A pod whose policy annotation cannot be served this cycle: pending, waiting for the policy
  // set to change.
  // Records on the pod (and tells the observer) the policy a binding chose for this cycle.
  void NoteBoundPolicy(const policy::PolicyChoice& choice, queue::QueuedPodInfo& queued);
  void HandlePolicyFailure(const runtime::Framework& fw, queue::QueuedPodInfo queued,
                           const policy::PolicyChoice& choice);
  // When one plugin with wait keys (queue quota), or the policy choice, alone rejected the pod, it
  // waits for what blocks it; returns false (and the pod should go to backoff) when that is gone
  // already.
  bool SetQuotaWait(const runtime::Framework& fw, queue::QueuedPodInfo& queued);

  SchedulerDeps deps_;
  // Before the frameworks: their plugins hold them (PluginHandle::pool, ::volume_cache), so they
  // must outlive them.
  std::unique_ptr<util::WorkerPool> pool_;
  std::unique_ptr<cache::Cache> cache_;
  std::unique_ptr<WaitingPodRegistry> waiting_;  // PluginHandle::waiting_pods
  std::vector<std::unique_ptr<runtime::Framework>> frameworks_;
  std::unique_ptr<quota::QuotaTracker> quota_;
  std::unique_ptr<quota::QueueConfigReloader> queue_config_;
  std::unique_ptr<queue::SchedulingQueue> queue_;
  std::unique_ptr<ScheduleAlgorithm> algorithm_;
  framework::Snapshot snapshot_;  // scheduling thread only
  NominatedPods nominated_;       // scheduling thread only; refreshed every cycle
  std::vector<const framework::NodeInfo*> refreshed_nodes_;  // of the last snapshot update
  // Every node's status when a PreFilter rejected the pod (DryRunPostFilter's buffer).
  std::vector<framework::NodeStatus> pre_filter_rejections_;
  policy::PolicyChooser policy_chooser_;  // scheduling thread only
  bool pod_watch_stalled_ = false;        // scheduling thread only (Housekeep)
  // The per-pod policies in force, reloaded from their ConfigMap on an informer thread; the
  // scheduling thread takes the current set once per cycle and keeps it for the whole cycle.
  std::unique_ptr<policy::PolicyReloader> policies_;

  // Victims being evicted, by key: their uid and since when they count as terminating. Taken
  // before the cache's lock, so that a mark and a watch update of the same pod do not interleave.
  struct Eviction {
    std::string uid;
    absl::Time since;
  };
  absl::Mutex evicting_mu_;
  absl::flat_hash_map<std::string, Eviction> evicting_ ABSL_GUARDED_BY(evicting_mu_);

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, api::PriorityClass> priority_classes_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubesched::scheduler
