#pragma once

// Every metric kubesched records itself, declared in one place: kube-scheduler's families under
// their upstream names, labels and buckets (pkg/scheduler/metrics/metrics.go), and kubesched's
// own under the kubesched_ prefix. Gauges that mirror state (pending pods, cache size, quota) are
// not here: they are read from the scheduler when scraped (state_collector.h).
//
// Recording costs no label look-up and no lock on the scheduling path: a profile's series are
// resolved once (ProfileMetrics), the per-(point, status) histograms on first use; histograms are
// lock-free (histogram_family.h), counters prometheus-cpp's atomic ones.
//
// Threads: every method may be called from any thread.

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "prometheus/collectable.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/registry.h"
#include "scheduler/framework/pod_info.h"
#include "scheduler/framework/status.h"
#include "scheduler/metrics/buckets.h"
#include "scheduler/metrics/extension_point.h"
#include "scheduler/metrics/histogram_family.h"
#include "scheduler/metrics/plugin_timings.h"

namespace kubesched::metrics {

// Upstream families (subsystem "scheduler").
inline constexpr char kScheduleAttemptsTotal[] = "scheduler_schedule_attempts_total";
inline constexpr char kSchedulingAttemptDuration[] =
    "scheduler_scheduling_attempt_duration_seconds";
inline constexpr char kSchedulingAlgorithmDuration[] =
    "scheduler_scheduling_algorithm_duration_seconds";
inline constexpr char kPendingPods[] = "scheduler_pending_pods";
inline constexpr char kPodSchedulingSliDuration[] = "scheduler_pod_scheduling_sli_duration_seconds";
inline constexpr char kPodSchedulingAttempts[] = "scheduler_pod_scheduling_attempts";
inline constexpr char kFrameworkExtensionPointDuration[] =
    "scheduler_framework_extension_point_duration_seconds";
inline constexpr char kPluginExecutionDuration[] = "scheduler_plugin_execution_duration_seconds";
inline constexpr char kPreemptionAttemptsTotal[] = "scheduler_preemption_attempts_total";
inline constexpr char kPreemptionVictims[] = "scheduler_preemption_victims";
inline constexpr char kQueueIncomingPodsTotal[] = "scheduler_queue_incoming_pods_total";
inline constexpr char kUnschedulablePods[] = "scheduler_unschedulable_pods";
// Upstream's Name "scheduler_cache_size" under subsystem "scheduler".
inline constexpr char kCacheSize[] = "scheduler_scheduler_cache_size";

// client-go's and component-base's families, as kube-scheduler exports them.
inline constexpr char kRestClientRequestsTotal[] = "rest_client_requests_total";
inline constexpr char kRestClientRequestDuration[] = "rest_client_request_duration_seconds";
inline constexpr char kLeaderElectionMasterStatus[] = "leader_election_master_status";

// kubesched's own.
inline constexpr char kQueueQuotaMax[] = "kubesched_queue_quota_max";
inline constexpr char kQueueQuotaUsed[] = "kubesched_queue_quota_used";
// Budgets in resource-seconds (GPU-seconds, core-seconds): Prometheus' base unit of time.
inline constexpr char kQueueBudgetLimit[] = "kubesched_queue_budget_limit_resource_seconds";
inline constexpr char kQueueBudgetUsed[] = "kubesched_queue_budget_used_resource_seconds";
inline constexpr char kClusterAllocatedRatio[] = "kubesched_cluster_allocated_ratio";
inline constexpr char kWatermarkMode[] = "kubesched_watermark_mode";
inline constexpr char kWatermarkAllocatedRatio[] = "kubesched_watermark_allocated_ratio";
inline constexpr char kQueueConfigReloadsTotal[] = "kubesched_queue_config_reloads_total";
inline constexpr char kQueuePendingPods[] = "kubesched_queue_pending_pods";
inline constexpr char kQueueBudgetNextReset[] =
    "kubesched_queue_budget_next_reset_timestamp_seconds";
inline constexpr char kQueueTypedLimitsMatchingNoNode[] =
    "kubesched_queue_typed_limits_matching_no_node";
inline constexpr char kPolicyReloadsTotal[] = "kubesched_policy_reloads_total";
inline constexpr char kInformerRelistsTotal[] = "kubesched_informer_relists_total";
inline constexpr char kInformerWatchRestartsTotal[] = "kubesched_informer_watch_restarts_total";
inline constexpr char kInformerWatchErrorsTotal[] = "kubesched_informer_watch_errors_total";
inline constexpr char kInformerDecodeErrorsTotal[] = "kubesched_informer_decode_errors_total";
inline constexpr char kInformerRejectedObjectsTotal[] = "kubesched_informer_rejected_objects_total";
inline constexpr char kBindsTotal[] = "kubesched_binds_total";
inline constexpr char kUnconfirmedBinds[] = "kubesched_pod_watch_unconfirmed_binds";
inline constexpr char kUnconfirmedBindAge[] = "kubesched_pod_watch_oldest_unconfirmed_bind_seconds";
inline constexpr char kPodGroups[] = "kubesched_pod_groups";
inline constexpr char kPodGroupSchedulingDuration[] =
    "kubesched_pod_group_scheduling_duration_seconds";

enum class AttemptResult : uint8_t { kScheduled, kUnschedulable, kError };
// "scheduled", "unschedulable", "error" (upstream's profile_metrics.go).
std::string_view AttemptResultName(AttemptResult result);

// The series of one profile label, resolved once. Lives as long as its SchedulerMetrics.
class ProfileMetrics {
 public:
  // scheduler_schedule_attempts_total and scheduler_scheduling_attempt_duration_seconds.
  void ObserveAttempt(AttemptResult result, double seconds);
  // scheduler_framework_extension_point_duration_seconds.
  void ObserveExtensionPoint(ExtensionPoint point, framework::Code code, double seconds);
  // kubesched_binds_total{result="bound"|"failed"}.
  void CountBind(bool bound);

  const std::string& label() const { return label_; }

 private:
  friend class SchedulerMetrics;
  ProfileMetrics(std::string label, prometheus::Family<prometheus::Counter>& attempts,
                 HistogramFamily& attempt_duration, HistogramFamily& extension_points,
                 prometheus::Family<prometheus::Counter>& binds);

  static constexpr size_t kResults = 3;
  const std::string label_;
  std::array<prometheus::Counter*, kResults> attempts_{};
  std::array<AtomicHistogram*, kResults> attempt_duration_{};
  prometheus::Counter* bound_ = nullptr;
  prometheus::Counter* bind_failed_ = nullptr;
  // Per (point, code), created on first use: upstream only exports what happened.
  HistogramFamily& extension_point_family_;
  std::array<std::atomic<AtomicHistogram*>, kExtensionPointCount * PluginTimings::kCodes>
      extension_points_{};
};

class SchedulerMetrics {
 public:
  SchedulerMetrics();
  SchedulerMetrics(const SchedulerMetrics&) = delete;
  SchedulerMetrics& operator=(const SchedulerMetrics&) = delete;

  // What a scrape reads: the counters' registry, the histogram families and the plugin timings.
  std::vector<std::shared_ptr<prometheus::Collectable>> collectables() const;
  PluginTimings& plugin_timings() { return *plugin_timings_; }

  // The series of `label`, created (with zeroed attempt and bind series) on first use. Only for
  // names from the configuration: a profile's, or a policy's when its framework is built.
  ProfileMetrics& Profile(std::string_view label);
  // The series of `label` if Profile created them, else null: what recording per pod uses, so
  // that a name a pod carries (an annotation naming no policy) never creates a series. The label
  // found last is found without a lock (nearly every pod has the same one).
  ProfileMetrics* FindProfile(std::string_view label);

  // scheduler_scheduling_algorithm_duration_seconds: from the start of a cycle until a node was
  // selected (cycles that find none are not observed, as upstream).
  void ObserveAlgorithm(double seconds);
  // A pod bound after `attempts` attempts, `sli_seconds` after its first attempt began:
  // scheduler_pod_scheduling_sli_duration_seconds{attempts} and scheduler_pod_scheduling_attempts.
  void ObservePodScheduled(int attempts, double sli_seconds);
  // scheduler_preemption_attempts_total: one run of the PostFilter plugins.
  void CountPreemptionAttempt();
  // scheduler_preemption_victims: a preemption chose this many victims.
  void ObservePreemptionVictims(size_t victims);
  // One request to the API server at `host` ("host:port", from the configuration), as client-go
  // counts it: rest_client_requests_total{code,method,host} and, when `seconds` >= 0,
  // rest_client_request_duration_seconds{verb,host}. `method` is the HTTP method; `status` the
  // HTTP status code, 0 (no response came) counted as code "<error>". Codes outside 100..599
  // count as "<error>" too, so the label takes at most a few hundred values.
  void ObserveApiRequest(std::string_view host, std::string_view method, int status,
                         double seconds);
  // leader_election_master_status{name=lease}: 1 while this replica holds the lease, else 0.
  // The series exists once leader election has begun (as upstream: none without it).
  void SetLeaderStatus(std::string_view lease, bool leading);
  // kubesched_policy_reloads_total{result="applied"|"rejected"}: one policy update taken or
  // refused.
  void CountPolicyReload(bool applied);
  // kubesched_pod_group_scheduling_duration_seconds: a pod group had minMember members bound
  // `seconds` after its first member's first attempt began.
  void ObservePodGroupScheduled(double seconds);

 private:
  // Counters live in the registry; histograms in lock-free families (histogram_family.h).
  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<PluginTimings> plugin_timings_;
  std::shared_ptr<HistogramFamily> attempt_duration_;
  std::shared_ptr<HistogramFamily> algorithm_duration_family_;
  std::shared_ptr<HistogramFamily> sli_duration_;
  std::shared_ptr<HistogramFamily> pod_attempts_family_;
  std::shared_ptr<HistogramFamily> extension_points_;
  std::shared_ptr<HistogramFamily> preemption_victims_family_;
  std::shared_ptr<HistogramFamily> api_request_duration_;
  std::shared_ptr<HistogramFamily> pod_group_duration_family_;
  AtomicHistogram& algorithm_duration_;
  AtomicHistogram& pod_attempts_;
  AtomicHistogram& preemption_victims_;
  AtomicHistogram& pod_group_duration_;

  prometheus::Family<prometheus::Counter>& attempts_;
  prometheus::Counter& preemption_attempts_;
  prometheus::Family<prometheus::Counter>& api_requests_;
  prometheus::Family<prometheus::Gauge>& leader_status_;
  prometheus::Family<prometheus::Counter>& binds_;
  prometheus::Family<prometheus::Counter>& policy_reloads_;
  prometheus::Counter* policy_reloads_applied_ = nullptr;
  prometheus::Counter* policy_reloads_rejected_ = nullptr;

  absl::Mutex mu_;  // guards creating series; reading resolved ones takes no lock
  absl::flat_hash_map<std::string, std::unique_ptr<ProfileMetrics>> profiles_ ABSL_GUARDED_BY(mu_);
  std::atomic<ProfileMetrics*> last_profile_{nullptr};
  // "1" … "14", "15+" (upstream's attempts label), created on first use.
  std::array<std::atomic<AtomicHistogram*>, 15> sli_by_attempts_{};
  absl::flat_hash_map<std::string, prometheus::Counter*> api_requests_by_key_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubesched::metrics
