#include "scheduler/core/scheduler.h"

#include <algorithm>
#include <thread>

namespace kubesched::scheduler {
namespace {

// Stands in for the real binder while a configuration is only being checked.
class UnusedBinder : public framework::PodBinder {
 public:
  framework::Status BindPod(const api::Pod&, std::string_view) override {
    return framework::Status::Error("binder not available while checking a configuration");
  }
};

}  // namespace

absl::Status CheckConfiguration(const config::Configuration& config) {
  auto policies = policy::ParseFilePolicies(config.policies);
  if (!policies.ok()) return policies.status();
  auto bindings = policy::ParseFileBindings(config.policy_bindings);
  if (!bindings.ok()) return bindings.status();
  if (auto set = policy::BuildPolicySet(*policies, {}, 0, *bindings); !set.ok()) {
    return set.status();
  }
  UnusedBinder binder;
  plugins::PluginHandle handle;
  handle.binder = &binder;
  std::vector<std::unique_ptr<runtime::Framework>> frameworks;
  for (const auto& profile : config.profiles) {
    auto fw = runtime::Framework::Create(profile, handle);
    if (!fw.ok()) return fw.status();
    frameworks.push_back(std::move(*fw));
  }
  return runtime::CheckQueueSortsAgree(frameworks);
}

// ---------------------------------------------------------------------------------------------
// Construction

absl::StatusOr<std::unique_ptr<Scheduler>> Scheduler::Create(const config::Configuration& config,
                                                             SchedulerDeps deps) {
  if (deps.clock == nullptr || deps.binder == nullptr || deps.bind_executor == nullptr) {
    return absl::InvalidArgumentError("scheduler needs a clock, a binder and a bind executor");
  }
  std::unique_ptr<Scheduler> s(new Scheduler(deps));
  int threads = deps.threads;
  if (threads <= 0) {
    threads = std::min<int>(std::max(1u, std::thread::hardware_concurrency()), config.parallelism);
  }
  s->pool_ = std::make_unique<util::WorkerPool>(threads);
  s->quota_ = std::make_unique<quota::QuotaTracker>(deps.clock, config.queues);
  s->queue_config_ = std::make_unique<quota::QueueConfigReloader>(s->quota_.get(), config.queues);
  if (deps.observer != nullptr) {
    s->queue_config_->SetWarningHandler([observer = deps.observer](const api::ObjectMeta& map,
                                                                   const std::string& reason,
                                                                   const std::string& message) {
      observer->OnConfigWarning(map, reason, message);
    });
  }
  s->cache_ = std::make_unique<cache::Cache>(deps.clock);
  s->cache_->EnableDeviceResources(s->quota_->device_resources());
  s->waiting_ = std::make_unique<WaitingPodRegistry>();
  plugins::PluginHandle handle;
  handle.binder = deps.binder;
  handle.quota = s->quota_.get();
  handle.metrics = deps.metrics;
  handle.pool = s->pool_.get();
  handle.volume_cache = s->cache_.get();
  handle.volume_binder = deps.volume_binder;
  handle.claim_cache = s->cache_.get();
  handle.claim_writer = deps.claim_writer;
  handle.waiting_pods = s->waiting_.get();
  for (const auto& profile : config.profiles) {
    auto fw = runtime::Framework::Create(
        profile, handle, deps.registry != nullptr ? *deps.registry : plugins::Registry());
    if (!fw.ok()) return fw.status();
    s->frameworks_.push_back(std::move(*fw));
  }
  if (s->frameworks_.empty()) return absl::InvalidArgumentError("no profiles configured");
  s->EnableWatermarkGroups();
  if (auto status = runtime::CheckQueueSortsAgree(s->frameworks_); !status.ok()) return status;
  auto file_policies = policy::ParseFilePolicies(config.policies);
  if (!file_policies.ok()) return file_policies.status();
  auto file_bindings = policy::ParseFileBindings(config.policy_bindings);
  if (!file_bindings.ok()) return file_bindings.status();
  auto policies = policy::PolicyReloader::Create(
      *std::move(file_policies), config.policy_config_map, handle,
      deps.registry != nullptr ? *deps.registry : plugins::Registry(), *std::move(file_bindings));
  if (!policies.ok()) return policies.status();
  s->policies_ = *std::move(policies);

  s->algorithm_ = std::make_unique<ScheduleAlgorithm>(
      s->pool_.get(), config.percentage_of_nodes_to_score, deps.seed);
  queue::QueueOptions options;
  options.initial_backoff = absl::Seconds(config.pod_initial_backoff_seconds);
  options.max_backoff = absl::Seconds(config.pod_max_backoff_seconds);
  s->queue_ = std::make_unique<queue::SchedulingQueue>(deps.clock, options,
                                                       s->frameworks_.front()->queue_sort());
  queue::SchedulingQueue* queue = s->queue_.get();
  s->quota_->SetWakeHandler(
      [queue](const std::vector<std::string>& keys) { queue->MoveQuotaWaiters(keys); });
  return s;
}

Scheduler::~Scheduler() = default;

// The cache keeps per-group sums only when a profile switches by a watermark: other setups pay
// nothing for them.
void Scheduler::EnableWatermarkGroups() {
  std::optional<std::vector<std::string>> keys;
  for (const auto& fw : frameworks_) {
    if (fw->watermark_reporter() == nullptr) continue;
    auto profile_keys = fw->watermark_reporter()->NodeGroupLabelKeys();
    if (!profile_keys.has_value()) continue;
    if (!keys.has_value()) keys.emplace();
    keys->insert(keys->end(), profile_keys->begin(), profile_keys->end());
  }
  if (keys.has_value()) cache_->EnableNodeGroups(*keys);
}

// ---------------------------------------------------------------------------------------------
// Who schedules what

const runtime::Framework* Scheduler::FrameworkFor(const api::Pod& pod) const {
  for (const auto& fw : frameworks_) {
    if (fw->profile_name() == pod.spec.scheduler_name) return fw.get();
  }
  return nullptr;
}

std::optional<absl::Duration> Scheduler::NodeMetricsPollInterval(std::string_view* consumer) const {
  std::optional<absl::Duration> shortest;
  for (const auto& fw : frameworks_) {
    std::string_view name;
    const std::optional<absl::Duration> interval = fw->NodeMetricsPollInterval(&name);
    if (!interval.has_value() || (shortest.has_value() && *shortest <= *interval)) continue;
    shortest = interval;
    if (consumer != nullptr) *consumer = name;
  }
  return shortest;
}

bool Scheduler::Responsible(const api::Pod& pod) const { return FrameworkFor(pod) != nullptr; }

int32_t Scheduler::ResolvePriority(const api::Pod& pod) const {
  if (pod.spec.priority.has_value()) return *pod.spec.priority;
  absl::MutexLock lock(&mu_);
  if (!pod.spec.priority_class_name.empty()) {
    auto it = priority_classes_.find(pod.spec.priority_class_name);
    if (it != priority_classes_.end()) return it->second.value;
  }
  for (const auto& [name, pc] : priority_classes_) {
    if (pc.global_default) return pc.value;
  }
  return 0;
}

framework::PodInfoPtr Scheduler::MakeInfo(std::shared_ptr<const api::Pod> pod) const {
  const int32_t priority = ResolvePriority(*pod);
  const framework::PriorityClassTraits traits = ClassTraits(*pod);
  return framework::MakePodInfo(std::move(pod), priority, traits);
}

bool Scheduler::NonPreemptible(const api::PriorityClass& priority_class) {
  auto policy = priority_class.meta.annotations.find(framework::kPreemptionPolicyAnnotation);
  return policy != priority_class.meta.annotations.end() &&
         policy->second == framework::kNonPreemptible;
}

framework::PriorityClassTraits Scheduler::ClassTraits(const api::Pod& pod) const {
  if (pod.spec.priority_class_name.empty()) return {};
  absl::MutexLock lock(&mu_);
  auto it = priority_classes_.find(pod.spec.priority_class_name);
  if (it == priority_classes_.end()) return {};
  const auto& policy = it->second.preemption_policy;
  return {NonPreemptible(it->second),
          policy.has_value() && *policy == api::PreemptionPolicy::kNever};
}

}  // namespace kubesched::scheduler
