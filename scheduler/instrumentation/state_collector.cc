#include "scheduler/instrumentation/state_collector.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "scheduler/api/resource.h"
#include "scheduler/framework/gang_state.h"
#include "scheduler/instrumentation/metrics_observer.h"
#include "scheduler/metrics/scheduler_metrics.h"

namespace kubesched::metrics {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<std::pair<std::string, std::string>>;

MetricFamily NewFamily(std::string name, std::string help, MetricType type) {
  MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = type;
  return family;
}

// One sample of a gauge or counter family.
void Add(MetricFamily& family, const Labels& labels, double value) {
  ClientMetric metric;
  for (const auto& [name, label_value] : labels) metric.label.push_back({name, label_value});
  if (family.type == MetricType::Counter) {
    metric.counter.value = value;
  } else {
    metric.gauge.value = value;
  }
  family.metric.push_back(std::move(metric));
}

// Queue quota amounts in Prometheus' base units: cores rather than milli-cores.
double BaseUnits(api::ResourceId id, int64_t amount) {
  return api::CountsInMilli(id) ? static_cast<double>(amount) / 1000.0
                                : static_cast<double>(amount);
}

constexpr double kSecondsPerHour = 3600;

std::string ResourceLabel(api::ResourceId id) { return std::string(api::ResourceName(id)); }

// "Pod" -> "pods", "PriorityClass" -> "priorityclasses": the resource a reflector lists.
std::string ResourceOfKind(const std::string& kind) {
  std::string resource;
  for (char c : kind)
    resource.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  resource += !resource.empty() && resource.back() == 's' ? "es" : "s";
  return resource;
}

// The score plugin of a profile that reports a watermark, if any.
const framework::WatermarkReporter* WatermarkReporterOf(const scheduler::Scheduler& scheduler,
                                                        const std::string& profile) {
  api::Pod probe;
  probe.spec.scheduler_name = profile;
  const runtime::Framework* fw = scheduler.FrameworkFor(probe);
  return fw == nullptr ? nullptr : fw->watermark_reporter();
}

}  // namespace

StateCollector::StateCollector(std::vector<std::string> profiles, SchedulerMetrics* metrics)
    : profiles_(std::move(profiles)), metrics_(metrics) {}

void StateCollector::AttachScheduler(scheduler::Scheduler* scheduler) {
  absl::MutexLock lock(&mu_);
  scheduler_ = scheduler;
}

void StateCollector::AttachInformers(const client::Informers* informers) {
  absl::MutexLock lock(&mu_);
  informers_ = informers;
}

std::vector<MetricFamily> StateCollector::Collect() const {
  absl::MutexLock lock(&mu_);
  std::vector<MetricFamily> out;
  if (scheduler_ != nullptr) {
    CollectQueue(*scheduler_, &out);
    CollectCache(*scheduler_, &out);
    CollectQuota(*scheduler_, &out);
    CollectGangs(*scheduler_, &out);
    CollectWatermark(*scheduler_, &out);
  }
  if (informers_ != nullptr) CollectInformers(*informers_, &out);
  return out;
}

void StateCollector::CollectQueue(scheduler::Scheduler& scheduler,
                                  std::vector<MetricFamily>* out) const {
  queue::SchedulingQueue& queue = scheduler.queue();
  MetricFamily pending = NewFamily(
      kPendingPods,
      "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; "
      "'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in "
      "unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the "
      "number of unschedulable pods that the scheduler never attempted to schedule because they "
      "are gated.",
      MetricType::Gauge);
  Add(pending, {{"queue", "active"}}, static_cast<double>(queue.ActiveCount()));
  Add(pending, {{"queue", "backoff"}}, static_cast<double>(queue.BackoffCount()));
  Add(pending, {{"queue", "unschedulable"}}, static_cast<double>(queue.UnschedulableCount()));
  Add(pending, {{"queue", "gated"}}, static_cast<double>(queue.GatedCount()));
  out->push_back(std::move(pending));

  // A pod counts once for every plugin that rejected it, as upstream's gauge does (a gated pod:
  // for the PreEnqueue plugin that holds it).
  // Counted by profile, then plugin, under the queue's lock: a plugin's name is copied once per
  // scrape, not once per pod.
  absl::flat_hash_map<const ProfileMetrics*, absl::flat_hash_map<std::string, int64_t>> rejected;
  queue.ForEachUnschedulable([this, &rejected](const queue::QueuedPodInfo& pod) {
    const ProfileMetrics* found = ProfileOf(pod, *metrics_);
    if (found == nullptr) return;
    absl::flat_hash_map<std::string, int64_t>& of_profile = rejected[found];
    for (const std::string& plugin : pod.unschedulable_plugins) ++of_profile[plugin];
  });
  std::map<std::pair<std::string, std::string>, int64_t> by_plugin;  // sorted for the output
  for (const auto& [profile, of_profile] : rejected) {
    for (const auto& [plugin, count] : of_profile) by_plugin[{plugin, profile->label()}] = count;
  }
  MetricFamily unschedulable = NewFamily(
      kUnschedulablePods,
      "The number of unschedulable pods broken down by plugin name. A pod will increment the "
      "gauge for all plugins that caused it to not schedule and so this metric have meaning only "
      "when broken down by plugin.",
      MetricType::Gauge);
  for (const auto& [key, count] : by_plugin) {
    Add(unschedulable, {{"plugin", key.first}, {"profile", key.second}},
        static_cast<double>(count));
  }
  out->push_back(std::move(unschedulable));

  MetricFamily incoming = NewFamily(
      kQueueIncomingPodsTotal, "Number of pods added to scheduling queues by event and queue type.",
      MetricType::Counter);
  const queue::IncomingCounts counts = queue.Incoming();
  constexpr const char* kQueues[] = {"active", "backoff", "unschedulable"};
  for (size_t q = 0; q < counts.size(); ++q) {
    for (size_t e = 0; e < queue::kIncomingEventCount; ++e) {
      if (counts[q][e] == 0) continue;  // upstream exports only what happened
      Add(incoming,
          {{"queue", kQueues[q]},
           {"event", std::string(queue::IncomingEventName(static_cast<queue::IncomingEvent>(e)))}},
          static_cast<double>(counts[q][e]));
    }
  }
  out->push_back(std::move(incoming));
}

void StateCollector::CollectCache(scheduler::Scheduler& scheduler,
                                  std::vector<MetricFamily>* out) const {
  cache::Cache& cache = scheduler.cache();
  MetricFamily size = NewFamily(
      kCacheSize, "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
      MetricType::Gauge);
  Add(size, {{"type", "nodes"}}, static_cast<double>(cache.NodeCount()));
  Add(size, {{"type", "pods"}}, static_cast<double>(cache.PodCount()));
  Add(size, {{"type", "assumed"}}, static_cast<double>(cache.AssumedCount()));
  out->push_back(std::move(size));

  const cache::Cache::UnconfirmedBinds unconfirmed = cache.BindsAwaitingConfirmation();
  MetricFamily waiting = NewFamily(
      kUnconfirmedBinds,
      "Pods bound by this scheduler that the pod watch has not shown bound yet; they keep their "
      "room until it does.",
      MetricType::Gauge);
  Add(waiting, {}, static_cast<double>(unconfirmed.count));
  out->push_back(std::move(waiting));
  MetricFamily age = NewFamily(
      kUnconfirmedBindAge,
      "How long the oldest bind not yet shown by the pod watch has waited (0 when none): above "
      "30 s, the watch is stalled.",
      MetricType::Gauge);
  Add(age, {}, absl::ToDoubleSeconds(unconfirmed.longest_wait));
  out->push_back(std::move(age));

  const cache::Cache::ClusterTotals totals = cache.Totals();
  MetricFamily ratio = NewFamily(
      kClusterAllocatedRatio,
      "Requested over allocatable, summed over all nodes, by resource (the requests of bound and "
      "assumed pods).",
      MetricType::Gauge);
  totals.allocatable.ForEachNonZero([&](api::ResourceId id, int64_t allocatable) {
    const double requested = static_cast<double>(totals.requested.Get(id));
    Add(ratio, {{"resource", ResourceLabel(id)}}, requested / static_cast<double>(allocatable));
  });
  out->push_back(std::move(ratio));
}

void StateCollector::CollectQuota(scheduler::Scheduler& scheduler,
                                  std::vector<MetricFamily>* out) const {
  MetricFamily max =
      NewFamily(kQueueQuotaMax, "A queue's max by resource, in base units (cores, bytes, devices).",
                MetricType::Gauge);
  MetricFamily used = NewFamily(
      kQueueQuotaUsed,
      "What the pods of a queue's subtree request, by resource, in base units; typed keys "
      "(nvidia.com/gpu.A100) count the part on nodes of that model.",
      MetricType::Gauge);
  MetricFamily budget_limit =
      NewFamily(kQueueBudgetLimit,
                "A queue's budget per period, in resource-seconds (a GPU-hour is 3600 "
                "GPU-seconds; cpu in core-seconds).",
                MetricType::Gauge);
  MetricFamily budget_used =
      NewFamily(kQueueBudgetUsed, "Budget spent in the current period, in resource-seconds.",
                MetricType::Gauge);
  const std::vector<quota::QueueUsage> queues = scheduler.quota().Usage();
  // The resources whose usage is shown beyond a queue's own limits: the built-in ones and those
  // some queue limits. A pod's extended resource that nothing limits adds no series.
  std::vector<bool> shown_anywhere(api::kPods + 1, true);
  for (const quota::QueueUsage& queue : queues) {
    for (api::ResourceId id : queue.limited) {
      if (id >= shown_anywhere.size()) shown_anywhere.resize(id + 1, false);
      shown_anywhere[id] = true;
    }
  }
  for (const quota::QueueUsage& queue : queues) {
    for (api::ResourceId id : queue.limited) {
      Add(max, {{"queue", queue.path}, {"resource", ResourceLabel(id)}},
          BaseUnits(id, queue.max.Get(id)));
    }
    // Usage of every limited resource (zero included) and of the others shown, when in use.
    std::vector<api::ResourceId> shown = queue.limited;
    queue.used.ForEachNonZero([&](api::ResourceId id, int64_t) {
      if (id >= shown_anywhere.size() || !shown_anywhere[id]) return;
      if (std::find(shown.begin(), shown.end(), id) == shown.end()) shown.push_back(id);
    });
    std::sort(shown.begin(), shown.end());
    for (api::ResourceId id : shown) {
      Add(used, {{"queue", queue.path}, {"resource", ResourceLabel(id)}},
          BaseUnits(id, queue.used.Get(id)));
    }
    for (const quota::BudgetUsage& budget : queue.budgets) {
      const Labels labels = {{"queue", queue.path}, {"resource", ResourceLabel(budget.resource)}};
      Add(budget_limit, labels, budget.limit_hours * kSecondsPerHour);
      Add(budget_used, labels, budget.used_hours * kSecondsPerHour);
    }
  }
  for (MetricFamily* family : {&max, &used, &budget_limit, &budget_used}) {
    out->push_back(std::move(*family));
  }
  CollectQueueState(scheduler, queues, out);
  const config::ConfigReloads reloads = scheduler.queue_config_reloads();
  MetricFamily config_reloads = NewFamily(
      kQueueConfigReloadsTotal,
      "Updates of the queue configuration ConfigMap by result: 'applied', or 'rejected' (the "
      "last good configuration stays in force).",
      MetricType::Counter);
  Add(config_reloads, {{"result", "applied"}}, static_cast<double>(reloads.applied));
  Add(config_reloads, {{"result", "rejected"}}, static_cast<double>(reloads.rejected));
  out->push_back(std::move(config_reloads));
}

void StateCollector::CollectQueueState(scheduler::Scheduler& scheduler,
                                       const std::vector<quota::QueueUsage>& queues,
                                       std::vector<MetricFamily>* out) const {
  MetricFamily pending = NewFamily(
      kQueuePendingPods,
      "Pods waiting to be scheduled by the quota queue they belong to (a pod naming a queue that "
      "does not exist counts where its usage would).",
      MetricType::Gauge);
  MetricFamily next_reset =
      NewFamily(kQueueBudgetNextReset,
                "When a queue's budget period ends and the budget resets, as Unix time in seconds.",
                MetricType::Gauge);
  MetricFamily unmatched = NewFamily(
      kQueueTypedLimitsMatchingNoNode,
      "Typed limits (a max or budget on <resource>.<model>) of a queue that no known node's model "
      "matches: they limit nothing. Series only while some do.",
      MetricType::Gauge);
  const std::vector<framework::PodInfoPtr> waiting = scheduler.queue().PendingPodInfos();
  std::vector<const framework::PodInfo*> pods;
  pods.reserve(waiting.size());
  for (const framework::PodInfoPtr& pod : waiting) pods.push_back(pod.get());
  const absl::flat_hash_map<std::string, int64_t> by_queue = scheduler.quota().PendingByQueue(pods);
  for (const quota::QueueUsage& queue : queues) {
    auto count = by_queue.find(queue.path);
    Add(pending, {{"queue", queue.path}},
        count == by_queue.end() ? 0.0 : static_cast<double>(count->second));
    for (const quota::BudgetUsage& budget : queue.budgets) {
      if (!budget.next_reset.has_value()) continue;
      Add(next_reset, {{"queue", queue.path}, {"resource", ResourceLabel(budget.resource)}},
          static_cast<double>(absl::ToUnixSeconds(*budget.next_reset)));
    }
  }
  std::map<std::pair<std::string, std::string>, int> unmatched_counts;
  for (const quota::UnmatchedTypedLimit& limit : scheduler.quota().UnmatchedTypedLimits()) {
    ++unmatched_counts[{limit.queue, limit.resource}];
  }
  for (const auto& [key, count] : unmatched_counts) {
    Add(unmatched, {{"queue", key.first}, {"resource", key.second}}, count);
  }
  for (MetricFamily* family : {&pending, &next_reset, &unmatched}) {
    out->push_back(std::move(*family));
  }
}

void StateCollector::CollectGangs(scheduler::Scheduler& scheduler,
                                  std::vector<MetricFamily>* out) const {
  // In the order of a group's life; the controller's phases last.
  static constexpr std::string_view kPhases[] = {
      framework::kGangPending, framework::kGangScheduling, framework::kGangScheduled,
      framework::kGangRunning, framework::kGangFinished,   framework::kGangFailed};
  std::array<int64_t, std::size(kPhases)> counts{};
  scheduler.cache().ForEachGang([&](const cache::Cache::GangView& gang) {
    const std::string_view phase = framework::GangPhase(
        gang.group != nullptr ? std::string_view(gang.group->status.phase) : std::string_view(),
        gang.counts, gang.min_member);
    for (size_t i = 0; i < counts.size(); ++i) counts[i] += phase == kPhases[i] ? 1 : 0;
  });
  MetricFamily groups = NewFamily(
      kPodGroups,
      "Pod groups (PodGroup objects, and groups formed by annotations that have a member) by "
      "phase: 'Pending' (no member placed), 'Scheduling' (fewer than minMember placed, the others "
      "waiting at Permit or binding), 'Scheduled' (minMember placed), and the 'Running', "
      "'Finished' or 'Failed' phase a PodGroup's controller set.",
      MetricType::Gauge);
  for (size_t i = 0; i < counts.size(); ++i) {
    Add(groups, {{"phase", std::string(kPhases[i])}}, static_cast<double>(counts[i]));
  }
  out->push_back(std::move(groups));
}

void StateCollector::CollectWatermark(const scheduler::Scheduler& scheduler,
                                      std::vector<MetricFamily>* out) const {
  MetricFamily mode =
      NewFamily(kWatermarkMode,
                "1 for the mode of the Watermark scoring strategy a profile's pool is in: 'spread' "
                "(LeastAllocated) or 'stack' (MostAllocated).",
                MetricType::Gauge);
  MetricFamily ratio = NewFamily(
      kWatermarkAllocatedRatio,
      "The weighted allocated ratio over the Watermark strategy's resources and the nodes of a "
      "pool ('default': nodes in no configured pool that pods without tolerations can use, or "
      "the class of pods scored last) at its last scored cycle.",
      MetricType::Gauge);
  for (const std::string& profile : profiles_) {
    const framework::WatermarkReporter* reporter = WatermarkReporterOf(scheduler, profile);
    if (reporter == nullptr) continue;
    // One series per pool: the configured pools and "default", so the label set stays bounded.
    for (const framework::WatermarkState& state : reporter->LastWatermarkStates()) {
      const bool stacking = state.mode == "stack";
      Add(mode, {{"profile", profile}, {"pool", state.pool}, {"mode", "spread"}}, stacking ? 0 : 1);
      Add(mode, {{"profile", profile}, {"pool", state.pool}, {"mode", "stack"}}, stacking ? 1 : 0);
      Add(ratio, {{"profile", profile}, {"pool", state.pool}}, state.allocated_ratio);
    }
  }
  out->push_back(std::move(mode));
  out->push_back(std::move(ratio));
}

void StateCollector::CollectInformers(const client::Informers& informers,
                                      std::vector<MetricFamily>* out) const {
  MetricFamily relists = NewFamily(
      kInformerRelistsTotal,
      "Full lists after the first, by resource and reason: 'expired' (410 Gone), 'too_large' (the "
      "API server has not reached the watch's resourceVersion: it lost state), "
      "'bookmark_went_back' (a BOOKMARK older than what was seen), 'resync' (periodic).",
      MetricType::Counter);
  MetricFamily restarts = NewFamily(
      kInformerWatchRestartsTotal,
      "Watches started after the first one (server timeouts, errors, relists), by resource.",
      MetricType::Counter);
  MetricFamily errors =
      NewFamily(kInformerWatchErrorsTotal,
                "Watches that ended in an error rather than a server timeout, by resource.",
                MetricType::Counter);
  MetricFamily decode_errors = NewFamily(
      kInformerDecodeErrorsTotal, "Objects or watch events skipped because they did not decode.",
      MetricType::Counter);
  MetricFamily rejected = NewFamily(
      kInformerRejectedObjectsTotal,
      "Object versions rejected because they did not decode, each counted (and logged) once "
      "however often a relist or re-watch delivers it again.",
      MetricType::Counter);
  for (const client::ReflectorStats& stats : informers.Stats()) {
    const Labels labels = {{"resource", ResourceOfKind(stats.kind)}};
    for (int reason = 0; reason < client::kRelistReasonCount; ++reason) {
      const std::string_view name =
          client::RelistReasonName(static_cast<client::RelistReason>(reason));
      Add(relists, {{"resource", ResourceOfKind(stats.kind)}, {"reason", std::string(name)}},
          static_cast<double>(stats.relists_by_reason[reason]));
    }
    Add(restarts, labels, static_cast<double>(std::max<int64_t>(0, stats.watch_starts - 1)));
    Add(errors, labels, static_cast<double>(stats.watch_errors));
    Add(decode_errors, labels, static_cast<double>(stats.decode_errors));
    Add(rejected, labels, static_cast<double>(stats.rejected_objects));
  }
  for (MetricFamily* family : {&relists, &restarts, &errors, &decode_errors, &rejected}) {
    out->push_back(std::move(*family));
  }
}

}  // namespace kubesched::metrics
