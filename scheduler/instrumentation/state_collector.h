#pragma once

// The metrics that mirror state rather than count events: read from the scheduler and the
// informers when scraped, under their own locks, never on the scheduling path.
//
//   scheduler_pending_pods{queue}              activeQ, backoffQ, unschedulable (quota waiters
//                                              included), gated (always 0: no scheduling gates)
//   scheduler_unschedulable_pods{plugin,profile}
//   scheduler_queue_incoming_pods_total{queue,event}
//   scheduler_scheduler_cache_size{type}       nodes, pods (assumed included), assumed
//   kubesched_pod_watch_unconfirmed_binds      binds the pod watch has not shown yet
//   kubesched_pod_watch_oldest_unconfirmed_bind_seconds   how long the oldest has waited
//   kubesched_queue_quota_max / _used{queue,resource}           base units (cores, bytes, GPUs)
//   kubesched_queue_budget_limit_resource_seconds / _used_resource_seconds{queue,resource}
//                                              resource-seconds (a GPU-hour is 3600)
//   kubesched_cluster_allocated_ratio{resource}  Σ requested / Σ allocatable over all nodes
//   kubesched_watermark_mode{profile,pool,mode}     1 for the mode a Watermark pool is in
//   kubesched_watermark_allocated_ratio{profile,pool}  the ratio that last moved it
//   kubesched_queue_config_reloads_total{result}
//   kubesched_queue_pending_pods{queue}        pending pods by the quota queue they belong to
//   kubesched_queue_budget_next_reset_timestamp_seconds{queue,resource}   Unix seconds
//   kubesched_queue_typed_limits_matching_no_node{queue,resource}   limits (max, budget) on a
//                                              typed key no known node's model matches
//   kubesched_pod_groups{phase}                PodGroups and implicit groups with a member, by
//                                              phase (every phase, 0 when none)
//   kubesched_informer_relists_total{resource,reason}   reason: expired, too_large,
//                                              bookmark_went_back, resync (all four always)
//   kubesched_informer_watch_restarts_total / _watch_errors_total / _decode_errors_total /
//     _rejected_objects_total{resource}
//
// Every label value comes from the configuration or a fixed set, never from a pod: `profile` is
// a configured profile or policy (ProfileOf), `plugin` a plugin's name, `queue` a configured
// queue or one made for a namespace (autoCreate), `resource` one that a queue limits or a
// built-in one (cpu, memory, ephemeral-storage, pods) for quota, one that nodes offer for the
// allocated ratio. A series whose pods are gone goes with them.
//
// Threads: Collect runs on the scraping thread; Attach* may be called from any thread and waits
// for a running Collect, so after Attach*(nullptr) returns, the object is no longer read.

#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "prometheus/collectable.h"
#include "prometheus/metric_family.h"
#include "scheduler/client/informers.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/metrics/scheduler_metrics.h"

namespace kubesched::metrics {

class StateCollector : public prometheus::Collectable {
 public:
  // `profiles`: the configured profile names (their Watermark state is reported). `metrics` (which
  // must outlive the collector) says which profile and policy names have series.
  StateCollector(std::vector<std::string> profiles, SchedulerMetrics* metrics);

  // Reads `scheduler` from now on; null stops reading it. It must stay alive while attached.
  void AttachScheduler(scheduler::Scheduler* scheduler);
  // Reads the informers' counters from now on; null stops. Same lifetime rule.
  void AttachInformers(const client::Informers* informers);

  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  void CollectQueue(scheduler::Scheduler& scheduler,
                    std::vector<prometheus::MetricFamily>* out) const;
  void CollectCache(scheduler::Scheduler& scheduler,
                    std::vector<prometheus::MetricFamily>* out) const;
  void CollectQuota(scheduler::Scheduler& scheduler,
                    std::vector<prometheus::MetricFamily>* out) const;
  // Per-queue pending pods, budget resets and typed limits matching no node.
  void CollectQueueState(scheduler::Scheduler& scheduler,
                         const std::vector<quota::QueueUsage>& queues,
                         std::vector<prometheus::MetricFamily>* out) const;
  void CollectGangs(scheduler::Scheduler& scheduler,
                    std::vector<prometheus::MetricFamily>* out) const;
  void CollectWatermark(const scheduler::Scheduler& scheduler,
                        std::vector<prometheus::MetricFamily>* out) const;
  void CollectInformers(const client::Informers& informers,
                        std::vector<prometheus::MetricFamily>* out) const;

  const std::vector<std::string> profiles_;
  SchedulerMetrics* const metrics_;
  mutable absl::Mutex mu_;  // held for a whole Collect, so detaching waits for it
  scheduler::Scheduler* scheduler_ ABSL_GUARDED_BY(mu_) = nullptr;
  const client::Informers* informers_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace kubesched::metrics
