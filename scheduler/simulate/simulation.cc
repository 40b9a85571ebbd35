#include "scheduler/simulate/simulation.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <deque>
#include <iterator>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "policy/policy.h"
#include "scheduler/cluster/embedded_cluster.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/instrumentation/instrumentation.h"
#include "scheduler/metrics/metrics_server.h"
#include "scheduler/util/strings.h"

namespace kubesched::scheduler {
namespace {

// The per-pod policy of the pod: the one it asks for (kubesched.io/policy), else the one the
// first binding that selects it names; none means its profile's.
std::optional<std::string> PolicyOf(Scheduler& scheduler, const api::Pod& pod) {
  if (const std::optional<std::string_view> named = policy::RequestedPolicy(pod)) {
    return std::string(*named);
  }
  if (scheduler.policies()->set().bindings().empty()) return std::nullopt;
  std::string bound = scheduler.ChoosePolicy(pod).name;
  if (bound.empty()) return std::nullopt;
  return bound;
}

// Kinds are created in this order so that what a pod refers to (its namespace, its priority
// class, its node) exists before the pod; pods keep their input order.
constexpr int kKindRanks = 4;
int KindRank(const api::Object& object) {
  if (std::holds_alternative<api::Pod>(object)) return 3;
  if (std::holds_alternative<api::Node>(object)) return 1;
  if (std::holds_alternative<api::NodeMetrics>(object)) return 2;
  return 0;
}

struct LoadedInput {
  std::vector<api::DecodeProblem> problems;
  std::vector<std::string> pending_pod_keys;  // in input order: pending at start or workload
  absl::flat_hash_map<std::string, std::string> workload_bound;  // workload pods with a node
  std::vector<std::string> gang_pod_keys;  // pods of a group, bound or not, in input order
};

// What simulate keeps of a pod it loads, read before the pod moves into the cluster.
struct LoadedPod {
  std::string key;
  std::string node;
  bool in_group = false;
};

std::optional<LoadedPod> Tracked(const api::Object& object) {
  const auto* pod = std::get_if<api::Pod>(&object);
  if (pod == nullptr || pod->IsTerminal()) return std::nullopt;
  return LoadedPod{pod->Key(), pod->spec.node_name, framework::GangMembershipOf(*pod).InGroup()};
}

void CreateOne(api::Object&& object, const std::string& source, bool is_workload,
               cluster::EmbeddedCluster* cluster, LoadedInput* loaded) {
  std::optional<LoadedPod> pod = Tracked(object);
  if (auto status = cluster->Create(std::move(object)); !status.ok()) {
    loaded->problems.push_back(
        {source, api::DescribeObject(object), std::string(util::Std(status.message()))});
    return;
  }
  if (!pod.has_value()) return;
  if (pod->in_group) loaded->gang_pod_keys.push_back(pod->key);
  if (!pod->node.empty() && !is_workload) return;  // bound in the cluster: nothing to place
  if (!pod->node.empty()) loaded->workload_bound[pod->key] = std::move(pod->node);
  loaded->pending_pod_keys.push_back(std::move(pod->key));
}

// From the front, each object freed as it moves into the cluster; kinds in KindRank's order.
void CreateAll(std::deque<api::Object> objects, const std::string& source, bool is_workload,
               cluster::EmbeddedCluster* cluster, LoadedInput* loaded) {
  std::array<std::deque<api::Object>, kKindRanks> ranked;
  for (; !objects.empty(); objects.pop_front()) {
    ranked[KindRank(objects.front())].push_back(std::move(objects.front()));
  }
  for (std::deque<api::Object>& rank : ranked) {
    for (; !rank.empty(); rank.pop_front()) {
      CreateOne(std::move(rank.front()), source, is_workload, cluster, loaded);
    }
  }
}

void CreateAll(std::vector<api::Object> objects, const std::string& source, bool is_workload,
               cluster::EmbeddedCluster* cluster, LoadedInput* loaded) {
  CreateAll(std::deque<api::Object>(std::make_move_iterator(objects.begin()),
                                    std::make_move_iterator(objects.end())),
            source, is_workload, cluster, loaded);
}

// Pre-decoded `objects` when set, else the file at `path`.
absl::Status LoadInput(const std::optional<std::vector<api::Object>>& objects,
                       const std::string& path, bool is_workload, cluster::EmbeddedCluster* cluster,
                       LoadedInput* loaded) {
  if (objects.has_value()) {
    CreateAll(*objects, is_workload ? "workload" : "cluster", is_workload, cluster, loaded);
    return absl::OkStatus();
  }
  auto decoded = api::DecodeFileQueue(path);
  if (!decoded.ok()) return decoded.status();
  for (auto& problem : decoded->problems) loaded->problems.push_back(std::move(problem));
  CreateAll(std::move(decoded->objects), path, is_workload, cluster, loaded);
  return absl::OkStatus();
}

// Records what happened to each pod during a simulation. Single-threaded in simulate (binds run
// on the driver thread), but guarded anyway because the observer contract allows bind workers.
class SimulationObserver : public SchedulingObserver {
 public:
  // One per pod tried; node names interned (kEmptySymbol for none), as hostname labels are.
  struct Outcome {
    int attempts = 0;
    api::Symbol node = api::kEmptySymbol;
    api::Symbol nominated_node = api::kEmptySymbol;
    std::optional<std::string> message;
  };

  void OnAttempt(const framework::PodInfo&, double seconds) override {
    absl::MutexLock lock(&mu_);
    latencies_.push_back(seconds);
  }
  void OnUnschedulable(const framework::PodInfo& pod, const std::string& message,
                       int attempts) override {
    Record(pod.key, attempts, api::kEmptySymbol, message);
  }
  void OnError(const framework::PodInfo& pod, const std::string& message, int attempts) override {
    Record(pod.key, attempts, api::kEmptySymbol, message);
  }
  void OnBound(const framework::PodInfo& pod, const std::string& node, int attempts) override {
    Record(pod.key, attempts, api::Intern(node), std::nullopt);
  }
  void OnPreempted(const framework::PodInfo& pod, const std::string& node,
                   const std::vector<std::string>& victims) override {
    absl::MutexLock lock(&mu_);
    outcomes_[pod.key].nominated_node = api::Intern(node);
    preemptions_.push_back({pod.key, node, victims});
  }
  void OnBindFailed(const framework::PodInfo& pod, const std::string& node,
                    const std::string& message) override {
    absl::MutexLock lock(&mu_);
    outcomes_[pod.key].message = absl::StrCat("binding to ", node, " failed: ", message);
  }

  // Pods with an outcome so far: tried at least once, or bound.
  int Decided() {
    absl::MutexLock lock(&mu_);
    return static_cast<int>(outcomes_.size());
  }

  // The pod's outcome, moved out: building the report never holds every outcome twice.
  std::optional<Outcome> Take(const std::string& key) {
    absl::MutexLock lock(&mu_);
    auto it = outcomes_.find(key);
    if (it == outcomes_.end()) return std::nullopt;
    Outcome outcome = std::move(it->second);
    outcomes_.erase(it);
    return outcome;
  }
  const std::vector<PreemptionResult>& preemptions() const { return preemptions_; }
  LatencySummary Latency() {
    LatencySummary summary;
    if (latencies_.empty()) return summary;
    std::sort(latencies_.begin(), latencies_.end());
    auto at = [&](double q) {
      const size_t index = static_cast<size_t>(q * static_cast<double>(latencies_.size() - 1));
      return latencies_[index];
    };
    summary.p50 = at(0.50);
    summary.p90 = at(0.90);
    summary.p99 = at(0.99);
    return summary;
  }

 private:
  void Record(const std::string& key, int attempts, api::Symbol node,
              std::optional<std::string> message) {
    absl::MutexLock lock(&mu_);
    auto& outcome = outcomes_[key];
    outcome.attempts = attempts;
    outcome.node = node;
    outcome.message = std::move(message);
  }

  absl::Mutex mu_;
  // A node per pod, so that each outcome's memory goes back as the report takes it.
  absl::node_hash_map<std::string, Outcome> outcomes_;
  std::vector<double> latencies_;
  std::vector<PreemptionResult> preemptions_;
};

std::vector<NodeResult> NodeResults(Scheduler& scheduler) {
  const framework::Snapshot& snapshot = scheduler.CurrentSnapshot();
  std::vector<NodeResult> nodes;
  nodes.reserve(snapshot.nodes().size());
  for (const auto* info : snapshot.nodes()) {
    nodes.push_back({info->name(), info->allocatable(), info->requested(),
                     static_cast<int>(info->pods().size())});
  }
  std::sort(nodes.begin(), nodes.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return nodes;
}

// The watermark of `fw`'s score plugin that reports one, observed on the cache's current state
// (what the next pod would be scored on; observing moves the kept mode exactly as that pod's
// PreScore would). nullopt when `fw` is null or no plugin of it switches by a watermark.
// `pod` (null: a pod without tolerations) chooses the pool.
std::optional<WatermarkReport> WatermarkOf(const runtime::Framework* fw, Scheduler& scheduler,
                                           const framework::PodInfo* pod = nullptr) {
  if (fw == nullptr || fw->watermark_reporter() == nullptr) return std::nullopt;
  const auto state =
      fw->watermark_reporter()->ObserveWatermarkState(scheduler.CurrentSnapshot(), pod);
  if (!state.has_value()) return std::nullopt;
  return WatermarkReport{std::string(state->mode), state->allocated_ratio, state->pool};
}

// The framework serving `scheduler_name`, found the way a pod of that name would find it.
const runtime::Framework* ProfileFramework(const Scheduler& scheduler,
                                           const std::string& scheduler_name) {
  api::Pod probe;
  probe.spec.scheduler_name = scheduler_name;
  return scheduler.FrameworkFor(probe);
}

// The first profile, in configuration order, that uses the Watermark strategy.
std::optional<WatermarkReport> FirstWatermark(Scheduler& scheduler,
                                              const config::Configuration& config) {
  for (const auto& profile : config.profiles) {
    auto report = WatermarkOf(ProfileFramework(scheduler, profile.scheduler_name), scheduler);
    if (report.has_value()) return report;
  }
  return std::nullopt;
}

// The pods PreEnqueue keeps out of the queue, by key, with the reason each is pending for.
absl::flat_hash_map<std::string, std::string> GatedMessages(Scheduler& scheduler) {
  absl::flat_hash_map<std::string, std::string> gated;
  if (scheduler.queue().GatedCount() == 0) return gated;
  for (auto& queued : scheduler.queue().PendingPods()) {
    if (queued.gated) gated[queued.pod_info->key] = std::move(queued.gated_message);
  }
  return gated;
}

// An outcome's node by name; nullopt for none.
std::optional<std::string> NodeName(api::Symbol node) {
  if (node == api::kEmptySymbol) return std::nullopt;
  return std::string(api::SymbolText(node));
}

void FillPodResults(const LoadedInput& loaded, const cluster::EmbeddedCluster& cluster,
                    Scheduler& scheduler, SimulationObserver& observer, SimulationReport* report) {
  const absl::flat_hash_map<std::string, std::string> gated = GatedMessages(scheduler);
  report->pod_results.reserve(loaded.pending_pod_keys.size());
  for (const auto& key : loaded.pending_pod_keys) {
    const auto pod = cluster.GetPod(key);
    if (pod == nullptr) continue;
    PodResult result;
    result.namespace_name = pod->meta.namespace_name;
    result.name = pod->meta.name;
    if (auto bound = loaded.workload_bound.find(key); bound != loaded.workload_bound.end()) {
      result.node = bound->second;  // came bound in the workload: occupies, not scheduled
    } else if (!scheduler.Responsible(*pod)) {
      result.skipped = true;
      result.message = absl::StrCat("skipped: schedulerName \"", pod->spec.scheduler_name,
                                    "\" is not served by this scheduler");
      ++report->skipped;
    } else if (std::optional<SimulationObserver::Outcome> outcome = observer.Take(key)) {
      result.attempts = outcome->attempts;
      result.node = NodeName(outcome->node);
      result.message = std::move(outcome->message);
      if (!result.node.has_value()) result.nominated_node = NodeName(outcome->nominated_node);
      if (!pod->spec.node_name.empty()) result.node = pod->spec.node_name;
    } else if (auto gate = gated.find(key); gate != gated.end()) {
      result.message = gate->second;  // never tried: pending for its gate
    }
    if (!result.skipped) result.policy = PolicyOf(scheduler, *pod);
    if (!result.skipped) {
      const auto admission =
          scheduler.quota().Admit(*framework::MakePodInfo(pod, scheduler.ResolvePriority(*pod)));
      if (!admission.queue.empty()) result.queue = admission.queue;
    }
    if (!result.skipped && !loaded.workload_bound.contains(key)) {
      if (result.node.has_value()) {
        ++report->scheduled;
      } else {
        ++report->unschedulable;
      }
    }
    report->pod_results.push_back(std::move(result));
  }
  report->pods = static_cast<int>(report->pod_results.size());
}

// The groups of the pods in `loaded` (those still there) and the PodGroups the cache holds.
std::vector<GroupResult> GroupResults(const LoadedInput& loaded,
                                      const cluster::EmbeddedCluster& cluster, Scheduler& scheduler,
                                      const SimulationReport& report) {
  // The messages of the pods of a group, by key (none to look up when no pod is in a group).
  absl::flat_hash_map<std::string, const PodResult*> results;
  if (!loaded.gang_pod_keys.empty()) {
    for (const auto& result : report.pod_results) {
      results[absl::StrCat(result.namespace_name, "/", result.name)] = &result;
    }
  }
  std::vector<GroupMember> members;
  for (const auto& key : loaded.gang_pod_keys) {
    const auto pod = cluster.GetPod(key);  // null: deleted (preempted)
    if (pod == nullptr || pod->IsTerminal()) continue;
    GroupMember member{pod->meta.name, framework::GangMembershipOf(*pod),
                       !pod->spec.node_name.empty(), std::nullopt};
    if (auto it = results.find(key); it != results.end()) member.message = it->second->message;
    members.push_back(std::move(member));
  }
  return BuildGroupResults(std::move(members), scheduler.CurrentSnapshot().gangs());
}

// The typed limits of the queue tree that no node of the simulated cluster matches.
std::vector<std::string> TypedLimitWarnings(Scheduler& scheduler) {
  std::vector<std::string> warnings;
  for (const auto& limit : scheduler.quota().UnmatchedTypedLimits()) {
    warnings.push_back(limit.Message());
  }
  return warnings;
}

}  // namespace

void DriveToQuiescence(cluster::EmbeddedCluster& cluster, Scheduler& scheduler,
                       DeferredBindExecutor& binds, util::FakeClock& clock,
                       const std::function<void()>& after_attempt) {
  for (;;) {
    cluster.DeliverEvents();
    scheduler.queue().FlushBackoffCompleted();
    if (scheduler.ScheduleOne()) {
      binds.RunPending();
      if (after_attempt) after_attempt();
      continue;
    }
    if (binds.RunPending() > 0 || cluster.HasPendingEvents()) continue;
    // Nothing to do now: move the clock to the next backoff expiry or Permit timeout.
    std::optional<absl::Time> next = scheduler.queue().NextBackoffExpiry();
    if (const auto deadline = scheduler.NextPermitDeadline(); deadline.has_value()) {
      next = next.has_value() ? std::min(*next, *deadline) : *deadline;
    }
    if (!next.has_value()) return;
    clock.Set(*next);
    scheduler.SettleWaitingPods();
  }
}

namespace {

// An embedded cluster with a scheduler watching it on a virtual clock: what simulate and explain
// both run on. Fill `cluster`, then Start.
struct Simulation {
  cluster::EmbeddedCluster cluster;
  util::FakeClock clock{absl::Now()};
  DeferredBindExecutor binds;
  std::unique_ptr<Scheduler> scheduler;
  const plugins::RegistryMap* registry = nullptr;  // null: the binary's own plugins

  // Builds the scheduler and delivers the initial list of objects to it, recording metrics into
  // `instrumentation` when given.
  absl::Status Start(const config::Configuration& config, SchedulingObserver* observer,
                     uint64_t seed, int threads,
                     metrics::Instrumentation* instrumentation = nullptr) {
    SchedulerDeps deps{&clock, &cluster, &binds, observer, seed, threads};
    deps.deleter = &cluster;
    deps.registry = registry;
    deps.volume_binder = &cluster;
    deps.claim_writer = &cluster;
    deps.pod_group_status = &cluster;
    if (instrumentation != nullptr) instrumentation->Instrument(deps);
    auto created = Scheduler::Create(config, deps);
    if (!created.ok()) return created.status();
    scheduler = std::move(*created);
    if (instrumentation != nullptr) instrumentation->state().AttachScheduler(scheduler.get());
    scheduler->ReservePods(cluster.PodCount());
    cluster.Watch(scheduler.get());
    cluster.DeliverEvents();
    return absl::OkStatus();
  }
};

// The pods simulate has to place: the pending ones and the workload, less those that came bound.
int CountToPlace(const LoadedInput& loaded) {
  return static_cast<int>(loaded.pending_pod_keys.size() - loaded.workload_bound.size());
}

// Reports progress every kProgressEvery attempts, so that the callback costs nothing per pod.
std::function<void()> ProgressReporter(const ProgressCallback& progress,
                                       SimulationObserver& observer, const LoadedInput& loaded) {
  if (!progress) return nullptr;
  constexpr int kProgressEvery = 256;
  return [&progress, &observer, total = CountToPlace(loaded), attempts = 0]() mutable {
    if (++attempts % kProgressEvery == 0) progress(observer.Decided(), total);
  };
}

}  // namespace

absl::StatusOr<SimulationReport> RunSimulation(const SimulationInput& input,
                                               const config::Configuration& config) {
  const auto load_start = std::chrono::steady_clock::now();
  std::optional<metrics::Instrumentation> instrumentation;  // outlives the scheduler using it
  Simulation sim;
  LoadedInput loaded;
  if (auto s = LoadInput(input.cluster_objects, input.cluster_path, false, &sim.cluster, &loaded);
      !s.ok()) {
    return s;
  }
  if (input.workload_objects.has_value() || input.workload_path.has_value()) {
    if (auto s = LoadInput(input.workload_objects, input.workload_path.value_or(""), true,
                           &sim.cluster, &loaded);
        !s.ok()) {
      return s;
    }
  }
  SimulationObserver observer;
  if (input.collect_metrics) instrumentation.emplace(&sim.clock, config);
  // The initial list is delivered by Start, outside the timed run.
  if (auto s = sim.Start(config, &observer, input.seed, input.threads,
                         instrumentation.has_value() ? &*instrumentation : nullptr);
      !s.ok()) {
    return s;
  }

  const auto start = std::chrono::steady_clock::now();
  const double load_seconds = std::chrono::duration<double>(start - load_start).count();
  DriveToQuiescence(sim.cluster, *sim.scheduler, sim.binds, sim.clock,
                    ProgressReporter(input.progress, observer, loaded));
  if (input.progress) input.progress(observer.Decided(), CountToPlace(loaded));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  SimulationReport report;
  report.problems = std::move(loaded.problems);
  FillPodResults(loaded, sim.cluster, *sim.scheduler, observer, &report);
  report.seconds = seconds;
  report.load_seconds = load_seconds;
  report.pods_per_second = seconds > 0 ? report.scheduled / seconds : 0;
  report.attempt_latency = observer.Latency();
  report.preemptions = observer.preemptions();
  for (const auto& preemption : report.preemptions) {
    report.preempted += static_cast<int>(preemption.victims.size());
  }
  report.nodes = NodeResults(*sim.scheduler);
  report.watermark = FirstWatermark(*sim.scheduler, config);
  report.queues = sim.scheduler->quota().Usage();
  report.typed_limit_warnings = TypedLimitWarnings(*sim.scheduler);
  report.groups = GroupResults(loaded, sim.cluster, *sim.scheduler, report);
  if (instrumentation.has_value()) {
    report.metrics_text = metrics::ScrapeText(instrumentation->collectables());
    instrumentation->state().AttachScheduler(nullptr);
  }
  return report;
}

namespace {

// The pod as it was before it was bound: not on a node, so that its own requests are not
// counted on the node it is judged for.
// `pod` as if not yet bound, when the cluster holds it bound (explaining a running pod asks where
// it would go now). A pod the cluster does not hold keeps its spec.nodeName: NodeName judges it.
api::Pod AsPending(const api::Pod& pod, const std::vector<api::Object>& objects) {
  api::Pod pending = pod;
  const std::string key = pod.Key();
  for (const auto& object : objects) {
    const auto* held = std::get_if<api::Pod>(&object);
    if (held != nullptr && !held->spec.node_name.empty() && held->Key() == key) {
      pending.spec.node_name.clear();
      break;
    }
  }
  return pending;
}

// `objects` with the cluster's copy of `pending` (same namespace and name), if any, replaced by
// it: a bound pod would otherwise count on its node while being explained.
std::vector<api::Object> WithPodAsPending(const std::vector<api::Object>& objects,
                                          const api::Pod& pending) {
  std::vector<api::Object> result = objects;
  const std::string key = pending.Key();
  for (auto& object : result) {
    const auto* pod = std::get_if<api::Pod>(&object);
    if (pod != nullptr && pod->Key() == key) object = pending;
  }
  return result;
}

ExplainedNode ToExplainedNode(const NodeExplanation& explained) {
  ExplainedNode node;
  node.name = explained.node->name();
  node.feasible = explained.feasible;
  for (const auto& status : explained.filters) {
    FilterResult filter{std::string(status.plugin()), status.code(), {}};
    for (auto reason : status.reasons()) filter.reasons.emplace_back(reason);
    node.filters.push_back(std::move(filter));
  }
  node.scores = explained.scores;
  node.total = explained.total;
  return node;
}

}  // namespace

absl::StatusOr<ExplainReport> ExplainObjects(const std::vector<api::Object>& cluster_objects,
                                             const api::Pod& pod,
                                             const config::Configuration& config, uint64_t seed,
                                             const plugins::RegistryMap* registry) {
  Simulation sim;
  sim.registry = registry;
  LoadedInput loaded;
  const api::Pod pending = AsPending(pod, cluster_objects);
  CreateAll(WithPodAsPending(cluster_objects, pending), "cluster", false, &sim.cluster, &loaded);
  if (auto s = sim.Start(config, nullptr, seed, 1); !s.ok()) return s;

  const Explanation explanation = sim.scheduler->Explain(pending);
  ExplainReport report;
  const policy::PolicyChoice choice = sim.scheduler->ChoosePolicy(pending);
  if (!choice.name.empty()) report.policy = choice.name;
  if (!choice.binding.empty()) report.policy_binding = choice.binding;
  report.problems = std::move(loaded.problems);
  report.pod = pod.Key();
  for (const auto& node : explanation.nodes) report.nodes.push_back(ToExplainedNode(node));
  // Best first: feasible nodes by total score, then the rest; ties by name.
  std::sort(report.nodes.begin(), report.nodes.end(), [](const auto& a, const auto& b) {
    if (a.feasible != b.feasible) return a.feasible;
    if (a.total != b.total) return a.total > b.total;
    return a.name < b.name;
  });
  if (!explanation.pre_filter_status.IsSuccess()) {
    // PreFilter rejected the pod for every node: show that verdict on each node.
    for (auto& node : report.nodes) {
      node.filters = {FilterResult{std::string(explanation.pre_filter_status.plugin()),
                                   explanation.pre_filter_status.code(),
                                   {explanation.pre_filter_status.Message()}}};
    }
  }
  if (explanation.selected != nullptr) report.selected = explanation.selected->name();
  if (!explanation.message.empty()) report.message = explanation.message;
  report.preemption_node = explanation.preemption_node;
  report.preemption_victims = explanation.preemption_victims;
  // The profile Explain used: the pod's, else the first.
  const runtime::Framework* fw = sim.scheduler->FrameworkFor(pending);
  if (fw == nullptr && !config.profiles.empty()) {
    fw = ProfileFramework(*sim.scheduler, config.profiles.front().scheduler_name);
  }
  const auto info = framework::MakePodInfo(std::make_shared<const api::Pod>(pending),
                                           sim.scheduler->ResolvePriority(pending));
  report.watermark = WatermarkOf(fw, *sim.scheduler, info.get());
  const auto admission = sim.scheduler->quota().Admit(*info);
  if (!admission.queue.empty()) report.queue = admission.queue;
  report.queue_path = sim.scheduler->quota().PathUsage(*info);
  report.typed_limit_warnings = TypedLimitWarnings(*sim.scheduler);
  report.group = sim.scheduler->ExplainGang(pending);
  return report;
}

absl::StatusOr<ExplainReport> RunExplain(const ExplainInput& input,
                                         const config::Configuration& config) {
  auto cluster_objects = api::DecodeFile(input.cluster_path);
  if (!cluster_objects.ok()) return cluster_objects.status();
  auto pod_objects = api::DecodeFile(input.pod_path);
  if (!pod_objects.ok()) return pod_objects.status();
  std::vector<const api::Pod*> pods;
  for (const auto& object : pod_objects->objects) {
    if (const auto* pod = std::get_if<api::Pod>(&object)) pods.push_back(pod);
  }
  if (pods.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(input.pod_path, ": expected exactly one Pod, found ", pods.size()));
  }
  api::Pod pod = *pods[0];
  if (input.policy.has_value()) pod.meta.annotations[policy::kPolicyAnnotation] = *input.policy;
  auto report = ExplainObjects(cluster_objects->objects, pod, config, input.seed);
  if (!report.ok()) return report;
  std::vector<api::DecodeProblem> problems = std::move(cluster_objects->problems);
  for (auto& problem : report->problems) {
    problem.source = input.cluster_path;
    problems.push_back(std::move(problem));
  }
  for (auto& problem : pod_objects->problems) problems.push_back(std::move(problem));
  report->problems = std::move(problems);
  return report;
}

}  // namespace kubesched::scheduler
