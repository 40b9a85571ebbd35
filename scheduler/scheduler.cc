#include "scheduler/scheduler.h"

#include <chrono>
#include <thread>

#include "absl/strings/str_cat.h"
#include "plugins/names.h"
#include "scheduler/client/client_log.h"
#include "scheduler/framework/policy_affinity.h"
#include "scheduler/metrics/scheduler_metrics.h"
#include "scheduler/util/strings.h"

namespace kubesched::scheduler {
namespace {

using client::EventType;

bool IsAssigned(const api::Pod& pod) { return !pod.spec.node_name.empty(); }

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// DeferredBindExecutor

void DeferredBindExecutor::Submit(std::function<void()> task) {
  absl::MutexLock lock(&mu_);
  tasks_.push_back(std::move(task));
}

size_t DeferredBindExecutor::RunPending() {
  size_t ran = 0;
  for (;;) {
    std::vector<std::function<void()>> batch;
    {
      absl::MutexLock lock(&mu_);
      batch.swap(tasks_);
    }
    if (batch.empty()) return ran;
    for (auto& task : batch) task();
    ran += batch.size();
  }
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
  s->file_queues_ = config.queues;
  s->quota_ = std::make_unique<quota::QuotaTracker>(deps.clock, config.queues);
  plugins::PluginHandle handle;
  handle.binder = deps.binder;
  handle.quota = s->quota_.get();
  handle.metrics = deps.metrics;
  handle.pool = s->pool_.get();
  for (const auto& profile : config.profiles) {
    auto fw = runtime::Framework::Create(
        profile, handle, deps.registry != nullptr ? *deps.registry : plugins::Registry());
    if (!fw.ok()) return fw.status();
    s->frameworks_.push_back(std::move(*fw));
  }
  if (s->frameworks_.empty()) return absl::InvalidArgumentError("no profiles configured");
  if (auto status = runtime::CheckQueueSortsAgree(s->frameworks_); !status.ok()) return status;
  s->plugin_handle_ = handle;
  s->registry_ = deps.registry != nullptr ? deps.registry : &plugins::Registry();
  s->file_policies_ = config.policies;
  s->policy_config_map_ = config.policy_config_map;
  auto set = config::BuildPolicySet(config.policies, {});
  if (!set.ok()) return set.status();
  auto policies = PolicyRuntime::Build(*std::move(set), handle, *s->registry_);
  if (!policies.ok()) return policies.status();
  {
    absl::MutexLock lock(&s->mu_);
    s->policies_ = *std::move(policies);
  }

  s->algorithm_ = std::make_unique<ScheduleAlgorithm>(
      s->pool_.get(), config.percentage_of_nodes_to_score, deps.seed);
  s->cache_ = std::make_unique<cache::Cache>(deps.clock);
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

// ---------------------------------------------------------------------------------------------
// Who schedules what

const runtime::Framework* Scheduler::FrameworkFor(const api::Pod& pod) const {
  for (const auto& fw : frameworks_) {
    if (fw->profile_name() == pod.spec.scheduler_name) return fw.get();
  }
  return nullptr;
}

bool Scheduler::Responsible(const api::Pod& pod) const { return FrameworkFor(pod) != nullptr; }

bool Scheduler::IsPendingForUs(const api::Pod& pod) const {
  return !IsAssigned(pod) && !pod.IsTerminal() && !pod.meta.deletion_timestamp.has_value() &&
         Responsible(pod);
}

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

// ---------------------------------------------------------------------------------------------
// Events

void Scheduler::OnPod(const client::Event<api::Pod>& event) {
  switch (event.type) {
    case EventType::kAdded:
      OnPodAdded(event.object);
      break;
    case EventType::kModified:
      OnPodUpdated(event.old_object, event.object);
      break;
    case EventType::kDeleted:
      OnPodDeleted(event.object);
      break;
  }
}

void Scheduler::OnPodAdded(const std::shared_ptr<const api::Pod>& pod) {
  if (IsAssigned(*pod)) {
    if (pod->IsTerminal()) return;  // finished pods take no resources
    auto info = MakeInfo(pod);
    (void)cache_->AddPod(info);
    quota_->ChargeBound(*info);
    queue_->MoveAllToActiveOrBackoff(queue::ClusterEvent::kAssignedPodAdded);
    return;
  }
  if (IsPendingForUs(*pod)) queue_->Add(MakeInfo(pod));
}

void Scheduler::OnPodUpdated(const std::shared_ptr<const api::Pod>& old_pod,
                             const std::shared_ptr<const api::Pod>& pod) {
  const std::string key = pod->Key();
  const bool was_assigned = old_pod != nullptr && IsAssigned(*old_pod);
  if (IsAssigned(*pod)) {
    if (!was_assigned) {
      // Newly bound (by us or anyone): it leaves the queue (which also keeps a pod that is being
      // scheduled from being requeued) and joins the cache.
      queue_->Delete(key);
      if (!pod->IsTerminal()) {
        auto info = MakeInfo(pod);
        (void)cache_->AddPod(info);
        quota_->ChargeBound(*info);
        queue_->MoveAllToActiveOrBackoff(queue::ClusterEvent::kAssignedPodAdded);
      }
      return;
    }
    if (pod->IsTerminal()) {
      (void)cache_->RemovePod(key);
      quota_->Release(key, /*assumed_only=*/false);
      queue_->MoveAllToActiveOrBackoff(queue::ClusterEvent::kPodDeleted);
      return;
    }
    (void)cache_->UpdatePod(MakeInfo(pod));
    return;
  }
  if (IsPendingForUs(*pod)) {
    auto info = MakeInfo(pod);
    queue_->Update(info);
    queue_->Add(info);
  } else {
    queue_->Delete(key);
  }
}

void Scheduler::OnPodDeleted(const std::shared_ptr<const api::Pod>& pod) {
  const std::string key = pod->Key();
  if (IsAssigned(*pod) || cache_->IsAssumed(key)) {
    (void)cache_->RemovePod(key);
    quota_->Release(key, /*assumed_only=*/false);
    queue_->MoveAllToActiveOrBackoff(queue::ClusterEvent::kPodDeleted);
  }
  queue_->Delete(key);
}

void Scheduler::OnNode(const client::Event<api::Node>& event) {
  switch (event.type) {
    case EventType::kAdded:
      quota_->SetNode(*event.object);
      cache_->AddNode(event.object);
      queue_->MoveAllToActiveOrBackoff(queue::ClusterEvent::kNodeAdded);
      break;
    case EventType::kModified:
      quota_->SetNode(*event.object);
      cache_->UpdateNode(event.object);
      queue_->MoveAllToActiveOrBackoff(queue::ClusterEvent::kNodeUpdated);
      break;
    case EventType::kDeleted:
      quota_->RemoveNode(event.object->meta.name);
      cache_->RemoveNode(event.object->meta.name);
      break;
  }
}

void Scheduler::OnNamespace(const client::Event<api::Namespace>& event) {
  const api::Symbol name = api::Intern(event.object->meta.name);
  if (event.type == EventType::kDeleted) {
    cache_->RemoveNamespace(name);
    quota_->RemoveNamespace(event.object->meta.name);
  } else {
    cache_->SetNamespace(name, event.object->meta.labels);
    quota_->SetNamespace(*event.object);
  }
}

void Scheduler::OnConfigMap(const client::Event<api::ConfigMap>& event) {
  OnPolicyConfigMap(event);
  const config::ObjectRef& ref = file_queues_.config_map;
  const api::ConfigMap& map = *event.object;
  if (ref.empty() || map.meta.name != ref.name || map.meta.namespace_name != ref.namespace_name) {
    return;
  }
  const std::string source = absl::StrCat("ConfigMap ", ref.namespace_name, "/", ref.name);
  if (event.type == EventType::kDeleted) {
    client::LogInfo(absl::StrCat(source, " deleted: the configuration file's queues apply"));
    quota_->SetConfig(file_queues_);
    return;
  }
  auto text = map.data.find(std::string(config::kQueuesConfigMapKey));
  absl::StatusOr<config::QueuesConfig> parsed =
      text == map.data.end()
          ? absl::InvalidArgumentError(absl::StrCat("no data key ", config::kQueuesConfigMapKey))
          : config::ParseQueuesDocument(text->second);
  if (!parsed.ok()) {
    const std::string error = absl::StrCat(source,
                                           ": queue configuration rejected, the last good "
                                           "one stays in force: ",
                                           parsed.status().message());
    client::LogWarning(error);
    absl::MutexLock lock(&mu_);
    ++reloads_.rejected;
    reloads_.last_error = error;
    return;
  }
  // Where the ConfigMap lives and where the ledger goes stay the file's business.
  parsed->config_map = file_queues_.config_map;
  parsed->ledger = file_queues_.ledger;
  parsed->ledger_interval = file_queues_.ledger_interval;
  quota_->SetConfig(*std::move(parsed));
  client::LogInfo(absl::StrCat(source, ": queue configuration applied"));
  absl::MutexLock lock(&mu_);
  ++reloads_.applied;
}

Scheduler::QueueConfigReloads Scheduler::queue_config_reloads() const {
  absl::MutexLock lock(&mu_);
  return reloads_;
}

void Scheduler::OnPolicyConfigMap(const client::Event<api::ConfigMap>& event) {
  const config::ObjectRef& ref = policy_config_map_;
  const api::ConfigMap& map = *event.object;
  if (ref.empty() || map.meta.name != ref.name || map.meta.namespace_name != ref.namespace_name) {
    return;
  }
  const std::string source = absl::StrCat("ConfigMap ", ref.namespace_name, "/", ref.name);
  const bool deleted = event.type == EventType::kDeleted;
  int64_t generation = 0;
  {
    absl::MutexLock lock(&mu_);
    generation = ++policy_generation_;
  }
  std::map<std::string, std::string> data;
  if (!deleted) data.insert(map.data.begin(), map.data.end());
  auto set = config::BuildPolicySet(file_policies_, data, generation);
  absl::StatusOr<std::shared_ptr<const PolicyRuntime>> built =
      set.ok() ? PolicyRuntime::Build(*std::move(set), plugin_handle_, *registry_)
               : absl::StatusOr<std::shared_ptr<const PolicyRuntime>>(set.status());
  if (!built.ok()) {
    const std::string error = absl::StrCat(
        source,
        ": policies rejected, the last good set stays in force: ", built.status().message());
    client::LogWarning(error);
    if (deps_.metrics != nullptr) deps_.metrics->CountPolicyReload(/*applied=*/false);
    absl::MutexLock lock(&mu_);
    ++policy_reloads_.rejected;
    policy_reloads_.last_error = error;
    return;
  }
  std::vector<std::string> wake;
  for (const std::string& name : (*built)->set().names()) wake.push_back(PolicyWaitKey(name));
  client::LogInfo(absl::StrCat(source, deleted ? " deleted: the configuration file's " : ": ",
                               (*built)->set().Describe(), " in force"));
  {
    absl::MutexLock lock(&mu_);
    policies_ = *std::move(built);
    ++policy_reloads_.applied;
  }
  if (deps_.metrics != nullptr) deps_.metrics->CountPolicyReload(/*applied=*/true);
  // Pods waiting for a policy that now exists (or whose args may now fill a changed template).
  queue_->MoveQuotaWaiters(wake);
}

Scheduler::QueueConfigReloads Scheduler::policy_reloads() const {
  absl::MutexLock lock(&mu_);
  return policy_reloads_;
}

std::shared_ptr<const PolicyRuntime> Scheduler::policies() const {
  absl::MutexLock lock(&mu_);
  return policies_;
}

void Scheduler::HandlePolicyFailure(queue::QueuedPodInfo queued, const PolicyChoice& choice) {
  const std::string message(choice.error.message());
  framework::Status status = framework::Status::Unschedulable(message);
  status.set_plugin(kPolicySelection);
  HandleFailure(std::move(queued), nullptr, status);
}

void Scheduler::OnNodeMetrics(const client::Event<api::NodeMetrics>& event) {
  if (event.type == EventType::kDeleted) {
    cache_->RemoveNodeMetrics(event.object->meta.name);
  } else {
    cache_->SetNodeMetrics(*event.object);
  }
}

void Scheduler::OnPodDisruptionBudget(const client::Event<api::PodDisruptionBudget>& event) {
  if (event.type == EventType::kDeleted) {
    cache_->RemovePdb(
        absl::StrCat(event.object->meta.namespace_name, "/", event.object->meta.name));
  } else {
    cache_->SetPdb(event.object);
  }
}

void Scheduler::OnPriorityClass(const client::Event<api::PriorityClass>& event) {
  const std::string& name = event.object->meta.name;
  bool preemption_changed = false;
  {
    absl::MutexLock lock(&mu_);
    auto it = priority_classes_.find(name);
    auto traits = [](const api::PriorityClass* pc) {
      return pc == nullptr ? std::pair(false, std::optional<api::PreemptionPolicy>())
                           : std::pair(NonPreemptible(*pc), pc->preemption_policy);
    };
    const auto before = traits(it == priority_classes_.end() ? nullptr : &it->second);
    if (event.type == EventType::kDeleted) {
      if (it != priority_classes_.end()) priority_classes_.erase(it);
      preemption_changed = before != traits(nullptr);
    } else {
      priority_classes_[name] = *event.object;
      preemption_changed = before != traits(event.object.get());
    }
  }
  if (!preemption_changed) return;
  // Annotating a class NonPreemptible protects the pods already running with it.
  for (const auto& info : cache_->Pods()) {
    if (info->get().spec.priority_class_name == name) (void)cache_->UpdatePod(MakeInfo(info->pod));
  }
}

// ---------------------------------------------------------------------------------------------
// The scheduling cycle

void Scheduler::Housekeep() {
  queue_->FlushBackoffCompleted();
  queue_->FlushUnschedulableLeftover();
  const auto expired = cache_->CleanupExpiredAssumedPods();
  for (const auto& key : expired) quota_->Release(key, /*assumed_only=*/true);
  if (!expired.empty()) {
    // Room held by a pod whose binding was never confirmed is free again.
    queue_->MoveAllToActiveOrBackoff(queue::ClusterEvent::kPodDeleted);
  }
  quota_->Tick();
}

void Scheduler::RefreshCycleView() {
  const auto stats = cache_->UpdateSnapshot(&snapshot_, &refreshed_nodes_);
  nominated_.Sync(queue_->NominationsSince(nominated_.version()), snapshot_, refreshed_nodes_,
                  stats.lists_rebuilt || stats.nodes_removed > 0);
}

bool Scheduler::ScheduleOne(absl::Duration wait) {
  auto popped = wait > absl::ZeroDuration() ? queue_->PopWait(wait) : queue_->Pop();
  if (!popped.has_value()) return false;
  const auto start = std::chrono::steady_clock::now();
  const framework::PodInfoPtr pod_info = popped->pod_info;
  const runtime::Framework* fw = FrameworkFor(pod_info->get());
  if (fw == nullptr) {
    queue_->Done(pod_info->key);
    return true;
  }
  // The policy set of this cycle: a reload meanwhile applies from the next one.
  const std::shared_ptr<const PolicyRuntime> policies = this->policies();
  const PolicyChoice choice = policy_chooser_.Choose(pod_info->get(), policies);
  if (!choice.error.ok()) {
    HandlePolicyFailure(std::move(*popped), choice);
    if (deps_.observer != nullptr) deps_.observer->OnAttempt(*pod_info, SecondsSince(start));
    return true;
  }
  if (choice.framework != nullptr) fw = choice.framework;
  RefreshCycleView();
  auto state = std::make_unique<framework::CycleState>();
  if (choice.added_affinity != nullptr) {
    auto added = std::make_unique<framework::PolicyNodeAffinity>();
    added->affinity = choice.added_affinity;
    state->Write(framework::PolicyNodeAffinityKey(), std::move(added));
  }
  auto outcome = algorithm_->Schedule(*fw, *state, *pod_info, snapshot_, &nominated_,
                                      queue_->NominatedNodeOf(pod_info->key));
  if (auto* success = std::get_if<ScheduleSuccess>(&outcome)) {
    if (deps_.observer != nullptr) {
      deps_.observer->OnNodeSelected(*popped, success->node->name(), SecondsSince(start));
    }
    AssumeAndBind(*fw, std::move(state), std::move(*popped), success->node->name());
  } else if (auto* fit_error = std::get_if<FitError>(&outcome)) {
    RunPostFilter(*fw, *state, pod_info, fit_error);
    HandleFailure(std::move(*popped), fit_error, framework::Status());
    algorithm_->Recycle(std::move(fit_error->node_statuses));
  } else {
    HandleFailure(std::move(*popped), nullptr, std::get<framework::Status>(outcome));
  }
  if (deps_.observer != nullptr) deps_.observer->OnAttempt(*pod_info, SecondsSince(start));
  return true;
}

framework::PostFilterOutcome Scheduler::DryRunPostFilter(const runtime::Framework& fw,
                                                         framework::CycleState& state,
                                                         const framework::PodInfo& pod,
                                                         const FitError& fit_error) {
  // A PreFilter rejection is every node's verdict.
  std::vector<framework::NodeStatus> all_rejected;
  std::vector<bool> skip = algorithm_->last_skip_filter();
  const framework::Status& pre = fit_error.pre_filter_status;
  if (pre.code() == framework::Code::kUnschedulable &&
      pre.plugin() == plugins::names::kQueueQuota) {
    // Quota-aware preemption needs what the other plugins say: their PreFilter did not run.
    auto others = fw.RunPreFilter(state, pod, snapshot_, plugins::names::kQueueQuota);
    if (!others.status.IsSuccess()) {
      // Removing pods of the queue would not be enough.
      framework::PostFilterOutcome none;
      none.status = framework::Status::Unschedulable("");
      return none;
    }
    skip = std::move(others.skip_filter);
    const framework::Status excluded =
        others.node_names.has_value() ? runtime::ExcludedByPreFilter(others) : framework::Status();
    for (const auto* node : snapshot_.nodes()) {
      const bool allowed =
          !others.node_names.has_value() || others.node_names->contains(node->name());
      all_rejected.push_back({node, allowed ? pre : excluded});
    }
  } else if (!pre.IsSuccess()) {
    for (const auto* node : snapshot_.nodes()) all_rejected.push_back({node, pre});
  }
  const CycleFilterHost host(fw, skip, nominated_, pool_.get());
  return fw.RunPostFilter(state, pod, snapshot_,
                          all_rejected.empty() ? absl::MakeConstSpan(fit_error.node_statuses)
                                               : absl::MakeConstSpan(all_rejected),
                          host);
}

void Scheduler::RunPostFilter(const runtime::Framework& fw, framework::CycleState& state,
                              const framework::PodInfoPtr& pod, FitError* fit_error) {
  if (fw.post_filter_plugins().empty()) return;
  auto outcome = DryRunPostFilter(fw, state, *pod, *fit_error);
  if (!outcome.status.IsSuccess()) {
    fit_error->post_filter_message = outcome.status.Message();
    if (outcome.clear_nomination && !queue_->NominatedNodeOf(pod->key).empty()) {
      queue_->DeleteNominatedPod(pod->key);
      if (deps_.observer != nullptr) deps_.observer->OnNominationCleared(*pod);
    }
    return;
  }
  if (deps_.deleter == nullptr) {
    fit_error->post_filter_message = "preemption: no pod deleter configured";
    return;
  }
  std::vector<framework::PodInfoPtr> victims;
  for (const auto& key : outcome.victims) {
    framework::PodInfoPtr victim = cache_->GetPod(key);
    if (victim == nullptr) {
      fit_error->post_filter_message = absl::StrCat("preemption: victim ", key, " is not cached");
      return;
    }
    victims.push_back(std::move(victim));
  }
  queue_->AddNominatedPod(pod, outcome.nominated_node);
  // Pods of lower priority nominated to the same node lose the nomination (upstream): the room
  // they were waiting for now goes to this pod.
  for (const auto& other : queue_->NominatedPodsForNode(outcome.nominated_node)) {
    if (other->priority >= pod->priority || other->key == pod->key) continue;
    queue_->DeleteNominatedPod(other->key);
    if (deps_.observer != nullptr) deps_.observer->OnNominationCleared(*other);
  }
  if (deps_.observer != nullptr) {
    deps_.observer->OnPreempted(*pod, outcome.nominated_node, outcome.victims);
  }
  // Deleting goes over the network in run mode: off the scheduling thread. The pod waits in the
  // queue; the victims' deletion events move it back.
  deps_.bind_executor->Submit(
      [this, victims = std::move(victims), preemptor = pod, node = outcome.nominated_node] {
        for (const auto& victim : victims) Evict(*victim, *preemptor, node);
      });
}

void Scheduler::Evict(const framework::PodInfo& victim, const framework::PodInfo& preemptor,
                      const std::string& node) {
  if (deps_.observer != nullptr) deps_.observer->OnEvicting(victim, preemptor, node);
  const api::Pod& pod = victim.get();
  const absl::Status status =
      deps_.deleter->DeletePod(pod.meta.namespace_name, pod.meta.name, pod.meta.uid);
  if (status.ok() || absl::IsNotFound(status)) {
    if (deps_.observer != nullptr && status.ok()) {
      deps_.observer->OnEvicted(victim, preemptor, node);
    }
    return;
  }
  client::LogWarning(absl::StrCat("preemption: deleting victim ", victim.key, " for ",
                                  preemptor.key, " failed: ", status.message()));
  // The preemptor waits for deletions that will not come: let it try again.
  queue_->MoveAllToActiveOrBackoff(queue::ClusterEvent::kPodDeleted);
}

void Scheduler::HandleFailure(queue::QueuedPodInfo queued, const FitError* fit_error,
                              const framework::Status& status) {
  const framework::PodInfo& pod = *queued.pod_info;
  queued.quota_wait_keys.clear();
  if (fit_error != nullptr) {
    if (deps_.observer != nullptr) {
      FitError::Summary summary = fit_error->Summarize();
      queued.unschedulable_plugins = std::move(summary.rejecting_plugins);
      deps_.observer->OnUnschedulable(pod, summary.message, queued.attempts);
    } else {
      queued.unschedulable_plugins = fit_error->RejectingPlugins();
    }
    const bool waits = SetQuotaWait(queued, queued.unschedulable_plugins);
    Requeue(std::move(queued), /*unschedulable=*/waits);
    return;
  }
  const bool rejected = status.IsRejected();
  if (deps_.observer != nullptr) {
    std::string message = status.Message();
    if (!status.plugin().empty()) {
      message = absl::StrCat("running \"", util::Absl(status.plugin()), "\": ", message);
    }
    if (rejected) {
      deps_.observer->OnUnschedulable(pod, message, queued.attempts);
    } else {
      deps_.observer->OnError(pod, message, queued.attempts);
    }
  }
  if (rejected) queued.unschedulable_plugins = {std::string(status.plugin())};
  const bool waits = !rejected || SetQuotaWait(queued, queued.unschedulable_plugins);
  Requeue(std::move(queued), rejected && waits);
}

bool Scheduler::SetQuotaWait(queue::QueuedPodInfo& queued,
                             const std::vector<std::string>& rejecting) {
  if (rejecting.size() == 1 && rejecting.front() == kPolicySelection) {
    const auto& annotations = queued.pod_info->get().meta.annotations;
    auto named = annotations.find(config::kPolicyAnnotation);
    queued.quota_wait_keys = {PolicyWaitKey(named == annotations.end() ? "" : named->second)};
    return true;
  }
  if (rejecting.size() != 1 || rejecting.front() != plugins::names::kQueueQuota) return true;
  queued.quota_wait_keys = quota_->WaitKeys(*queued.pod_info);
  return !queued.quota_wait_keys.empty();
}

void Scheduler::Requeue(queue::QueuedPodInfo queued, bool unschedulable) {
  // The queue drops a pod that was deleted or bound while it was being scheduled.
  queue_->AddUnschedulable(std::move(queued), unschedulable);
}

void Scheduler::AssumeAndBind(const runtime::Framework& fw,
                              std::unique_ptr<framework::CycleState> state,
                              queue::QueuedPodInfo queued, const std::string& node) {
  // The assumed copy names the node, so that the cache counts it there at once.
  auto assumed_pod = std::make_shared<api::Pod>(queued.pod_info->get());
  assumed_pod->spec.node_name = node;
  auto assumed_info = std::make_shared<framework::PodInfo>(*queued.pod_info);
  assumed_info->pod = std::move(assumed_pod);
  framework::PodInfoPtr assumed = assumed_info;

  if (auto status = cache_->AssumePod(assumed); !status.ok()) {
    HandleFailure(std::move(queued), nullptr,
                  framework::Status::Error(util::Std(status.message())));
    return;
  }
  framework::Status status = fw.RunReserve(*state, *assumed, node);
  if (status.IsSuccess()) status = fw.RunPermit(*state, *assumed, node);
  if (!status.IsSuccess()) {
    fw.RunUnreserve(*state, *assumed, node);
    (void)cache_->ForgetPod(assumed->key);
    HandleFailure(std::move(queued), nullptr, status);
    return;
  }
  std::shared_ptr<framework::CycleState> shared_state(std::move(state));
  deps_.bind_executor->Submit(
      [this, &fw, shared_state, queued = std::move(queued), assumed, node]() mutable {
        RunBindingCycle(fw, shared_state, std::move(queued), assumed, node);
      });
}

void Scheduler::RunBindingCycle(const runtime::Framework& fw,
                                const std::shared_ptr<framework::CycleState>& state,
                                queue::QueuedPodInfo queued, const framework::PodInfoPtr& assumed,
                                const std::string& node) {
  framework::Status status = fw.RunPreBind(*state, *assumed, node);
  if (status.IsSuccess()) status = fw.RunBind(*state, *assumed, node);
  if (status.IsSuccess()) {
    (void)cache_->FinishBinding(assumed->key);
    queue_->Done(assumed->key);
    fw.RunPostBind(*state, *assumed, node);
    if (deps_.observer != nullptr) deps_.observer->OnBound(*assumed, node, queued.attempts);
    return;
  }
  // One path undoes everything after assume: unreserve, forget, requeue with backoff.
  fw.RunUnreserve(*state, *assumed, node);
  (void)cache_->ForgetPod(assumed->key);
  if (deps_.observer != nullptr) deps_.observer->OnBindFailed(*assumed, node, status.Message());
  // The room this pod held is free again for the pods that wanted it.
  queue_->MoveAllToActiveOrBackoff(queue::ClusterEvent::kPodDeleted);
  // Even when the API said the pod is gone or already bound, it waits in backoff rather than
  // being dropped: the watch removes it from the queue once it confirms that, and if the answer
  // was wrong, the pod is not lost.
  Requeue(std::move(queued), /*unschedulable=*/false);
}

Explanation Scheduler::Explain(const api::Pod& pod) {
  auto info = MakeInfo(std::make_shared<const api::Pod>(pod));
  const runtime::Framework* fw = FrameworkFor(pod);
  if (fw == nullptr) fw = frameworks_.front().get();
  const std::shared_ptr<const PolicyRuntime> policies = this->policies();
  const PolicyChoice choice = PolicyChooser().Choose(pod, policies);
  if (!choice.error.ok()) {
    Explanation unusable;
    unusable.message = std::string(choice.error.message());
    return unusable;
  }
  if (choice.framework != nullptr) fw = choice.framework;
  RefreshCycleView();
  auto state = std::make_shared<framework::CycleState>();
  if (choice.added_affinity != nullptr) {
    auto added = std::make_unique<framework::PolicyNodeAffinity>();
    added->affinity = choice.added_affinity;
    state->Write(framework::PolicyNodeAffinityKey(), std::move(added));
  }
  Explanation explanation = algorithm_->Explain(*fw, *state, *info, snapshot_);
  if (explanation.selected == nullptr && !fw->post_filter_plugins().empty() &&
      !explanation.nodes.empty()) {
    // What preemption would do, without doing it.
    FitError fit_error;
    fit_error.num_all_nodes = static_cast<int>(snapshot_.nodes().size());
    fit_error.pre_filter_status = explanation.pre_filter_status;
    if (fit_error.pre_filter_status.IsSuccess()) {
      for (const auto& node : explanation.nodes) {
        for (const auto& status : node.filters) {
          if (status.IsSuccess() || status.IsSkip()) continue;
          fit_error.node_statuses.push_back({node.node, status});
          break;
        }
      }
    }
    auto outcome = DryRunPostFilter(*fw, *state, *info, fit_error);
    if (outcome.status.IsSuccess()) {
      explanation.preemption_node = outcome.nominated_node;
      explanation.preemption_victims = std::move(outcome.victims);
    } else if (!outcome.status.Message().empty()) {
      absl::StrAppend(&explanation.message, " ", outcome.status.Message(), ".");
    }
  }
  explanation.state = std::move(state);
  return explanation;
}

}  // namespace kubesched::scheduler
