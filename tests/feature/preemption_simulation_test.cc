// DefaultPreemption through the real scheduler on the embedded cluster (what `simulate` runs): the
// source's GPU platform (batch, NonPreemptible training, online, and a system-node-critical
// DaemonSet pod), preemptionPolicy Never, the preemptor binding to its nominated node only once
// its victims are gone, and a randomized check of preemption's invariants.

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "config/config.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/simulate/simulation.h"
#include "tests/testing/builders.h"
#include "tests/testing/scheduler_world.h"
#include "tests/testing/temp_file.h"

namespace kubesched::scheduler {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;

constexpr int32_t kOverride = 2'000'000'000;  // nonPreemptibleOverridePriority's default
constexpr int32_t kSystemNodeCritical = 2'000'001'000;
constexpr char kNonPreemptibleReason[] = "NonPreemptible pods cannot be preempted";

struct Preemption {
  std::string preemptor;
  std::string node;
  std::vector<std::string> victims;
};

// Records what the scheduler reports, and checks at each bind that the preemptor's victims are
// gone from the cluster. Simulate runs binds and evictions on the driver's thread, so no locking.
class Observer : public SchedulingObserver {
 public:
  explicit Observer(const cluster::EmbeddedCluster* cluster) : cluster_(cluster) {}

  void OnUnschedulable(const framework::PodInfo& pod, const std::string& message, int) override {
    messages[pod.key] = message;
  }
  void OnBound(const framework::PodInfo& pod, const std::string& node, int) override {
    bound[pod.key] = node;
    messages.erase(pod.key);
    log.push_back(absl::StrCat("bound ", pod.key, " to ", node));
    for (const Preemption& preemption : preemptions) {
      if (preemption.preemptor != pod.key) continue;
      for (const std::string& victim : preemption.victims) {
        if (cluster_->GetPod(victim) != nullptr) victims_alive_at_bind.push_back(victim);
      }
    }
  }
  void OnPreempted(const framework::PodInfo& pod, const std::string& node,
                   const std::vector<std::string>& victims) override {
    preemptions.push_back({pod.key, node, victims});
    log.push_back(absl::StrCat(pod.key, " preempts ", absl::StrJoin(victims, ","), " on ", node));
  }
  void OnEvicting(const framework::PodInfo& victim, const framework::PodInfo& preemptor,
                  const std::string& node) override {
    evicting[victim.key] = preemptor.key;
    victim_infos[victim.key] = {victim.priority, victim.non_preemptible};
    preemptor_infos[preemptor.key] = {preemptor.priority, preemptor.non_preemptible};
  }
  void OnEvicted(const framework::PodInfo& victim, const framework::PodInfo& preemptor,
                 const std::string& node) override {
    evicted[victim.key] = preemptor.key;
    log.push_back(absl::StrCat("evicted ", victim.key));
  }
  void OnNominationCleared(const framework::PodInfo& pod) override {
    nominations_cleared.push_back(pod.key);
  }

  // The preemptors that chose `victim`.
  std::vector<std::string> PreemptorsOf(const std::string& victim) const {
    std::vector<std::string> preemptors;
    for (const Preemption& preemption : preemptions) {
      for (const std::string& key : preemption.victims) {
        if (key == victim) preemptors.push_back(preemption.preemptor);
      }
    }
    return preemptors;
  }

  struct Seen {
    int32_t priority = 0;
    bool non_preemptible = false;
  };
  std::map<std::string, std::string> messages, bound, evicting, evicted;
  std::map<std::string, Seen> victim_infos, preemptor_infos;
  std::vector<Preemption> preemptions;
  std::vector<std::string> log;
  std::vector<std::string> victims_alive_at_bind;
  std::vector<std::string> nominations_cleared;

 private:
  const cluster::EmbeddedCluster* cluster_;
};

// The embedded cluster with the real scheduler (default configuration: DefaultPreemption on),
// driven on a virtual clock; the cluster deletes the victims.
struct World : testing::SchedulerWorld {
  Observer observer{&cluster};

  World() {
    SchedulerDeps deps;
    deps.observer = &observer;
    deps.threads = 1;
    deps.deleter = &cluster;
    Start(config::DefaultConfiguration(), deps);
  }
  bool Exists(const std::string& key) const { return cluster.GetPod(key) != nullptr; }
  std::string NodeOf(const std::string& key) const {
    auto pod = cluster.GetPod(key);
    return pod == nullptr ? "<deleted>" : pod->spec.node_name;
  }
  std::vector<std::string> BoundWithPrefix(const std::string& prefix) const {
    std::vector<std::string> keys;
    for (const auto& [key, node] : observer.bound) {
      if (absl::StartsWith(key, prefix) && Exists(key)) keys.push_back(key);
    }
    return keys;
  }
};

api::PriorityClass Class(const std::string& name, int32_t value, bool non_preemptible = false) {
  api::PriorityClass priority_class;
  priority_class.meta.name = name;
  priority_class.value = value;
  if (non_preemptible) {
    priority_class.meta.annotations[framework::kPreemptionPolicyAnnotation] =
        framework::kNonPreemptible;
  }
  return priority_class;
}

api::Pod ClassPod(const std::string& name, const std::string& priority_class,
                  const std::string& cpu) {
  api::Pod pod = PodBuilder(name).Container({{"cpu", cpu}}).Build();
  pod.spec.priority_class_name = priority_class;
  return pod;
}

api::Node CpuNode(const std::string& name, const std::string& cpu) {
  return NodeBuilder(name).Capacity({{"cpu", cpu}, {"memory", "16Gi"}, {"pods", "110"}}).Build();
}

std::string Describe(const Observer& observer) {
  return absl::StrCat("log:\n  ", absl::StrJoin(observer.log, "\n  "));
}

TEST_CASE(
    "the GPU platform: training preempts batch, online cannot preempt training, a "
    "system-node-critical pod can",
    "[preemption][simulation]") {
  World world;
  world.Add(Class("batch", 0));
  world.Add(Class("training", 1000, /*non_preemptible=*/true));
  world.Add(Class("online", 10000));
  world.Add(Class("system-node-critical", kSystemNodeCritical));
  for (int i = 0; i < 3; ++i) world.Add(CpuNode(absl::StrCat("gpu-", i), "4"));

  // Batch fills every node.
  for (int i = 0; i < 12; ++i) world.Add(ClassPod(absl::StrCat("batch-", i), "batch", "1"));
  world.Run();
  REQUIRE(world.BoundWithPrefix("default/batch-").size() == 12);
  REQUIRE(world.observer.preemptions.empty());

  // Training preempts batch (2 batch pods for each) and binds to the node it nominated.
  for (int i = 0; i < 4; ++i) world.Add(ClassPod(absl::StrCat("train-", i), "training", "2"));
  world.Run();
  INFO(Describe(world.observer));
  CHECK(world.BoundWithPrefix("default/train-").size() == 4);
  CHECK(world.BoundWithPrefix("default/batch-").size() == 4);
  REQUIRE(world.observer.preemptions.size() == 4);
  for (const Preemption& preemption : world.observer.preemptions) {
    CHECK(absl::StartsWith(preemption.preemptor, "default/train-"));
    CHECK(world.NodeOf(preemption.preemptor) == preemption.node);
    CHECK(preemption.victims.size() == 2);
    for (const std::string& victim : preemption.victims) {
      CHECK(absl::StartsWith(victim, "default/batch-"));
      CHECK_FALSE(world.Exists(victim));
    }
  }

  // Online preempts the batch pods that are left, never training: the third online pod stays
  // pending, and its message says NonPreemptible pods stood in the way.
  for (int i = 0; i < 3; ++i) world.Add(ClassPod(absl::StrCat("online-", i), "online", "2"));
  world.Run();
  CHECK(world.BoundWithPrefix("default/train-").size() == 4);
  CHECK(world.BoundWithPrefix("default/batch-").empty());
  CHECK(world.BoundWithPrefix("default/online-").size() == 2);
  REQUIRE(world.observer.preemptions.size() == 6);
  for (size_t i = 4; i < world.observer.preemptions.size(); ++i) {
    for (const std::string& victim : world.observer.preemptions[i].victims) {
      CHECK(absl::StartsWith(victim, "default/batch-"));
    }
  }
  std::string pending_online;
  for (int i = 0; i < 3; ++i) {
    const std::string key = absl::StrCat("default/online-", i);
    if (world.NodeOf(key).empty()) pending_online = key;
  }
  REQUIRE_FALSE(pending_online.empty());
  const std::string message = world.observer.messages[pending_online];
  CHECK_THAT(message, Catch::StartsWith("0/3 nodes are available: 3 Insufficient cpu. preemption: "
                                        "0/3 nodes are available: "));
  CHECK_THAT(message, Catch::Contains(kNonPreemptibleReason));

  // A DaemonSet pod at system-node-critical priority is above the override: it preempts one
  // training pod (the least important victim it can choose) and binds.
  api::Pod daemon = ClassPod("daemon", "system-node-critical", "2");
  daemon.meta.owner_references.push_back({"apps/v1", "DaemonSet", "node-agent", "ds-uid", true});
  world.Add(daemon);
  world.Run();
  REQUIRE(world.observer.preemptions.size() == 7);
  const Preemption& by_daemon = world.observer.preemptions.back();
  CHECK(by_daemon.preemptor == "default/daemon");
  REQUIRE(by_daemon.victims.size() == 1);
  CHECK(absl::StartsWith(by_daemon.victims[0], "default/train-"));
  CHECK_FALSE(world.Exists(by_daemon.victims[0]));
  CHECK(world.NodeOf("default/daemon") == by_daemon.node);
  CHECK(world.BoundWithPrefix("default/train-").size() == 3);
  CHECK(world.BoundWithPrefix("default/online-").size() == 2);
  CHECK(world.NodeOf(pending_online).empty());
  CHECK(world.observer.victims_alive_at_bind.empty());
}

TEST_CASE("the pod's own NonPreemptible annotation protects it like its class's",
          "[preemption][simulation]") {
  World world;
  world.Add(CpuNode("n", "4"));
  world.Add(PodBuilder("guarded")
                .Container({{"cpu", "2"}})
                .Priority(100)
                .Annotation(framework::kPreemptionPolicyAnnotation, framework::kNonPreemptible)
                .Build());
  world.Add(PodBuilder("plain").Container({{"cpu", "2"}}).Priority(100).Build());
  world.Run();
  REQUIRE(world.NodeOf("default/guarded") == "n");
  REQUIRE(world.NodeOf("default/plain") == "n");

  world.Add(PodBuilder("urgent-1").Container({{"cpu", "2"}}).Priority(kOverride - 1).Build());
  world.Add(PodBuilder("urgent-2").Container({{"cpu", "2"}}).Priority(kOverride - 1).Build());
  world.Run();
  INFO(Describe(world.observer));
  CHECK_FALSE(world.Exists("default/plain"));
  CHECK(world.NodeOf("default/guarded") == "n");
  // Whichever urgent pod came second found only the NonPreemptible pod below it.
  const bool first_bound = world.NodeOf("default/urgent-1") == "n";
  const std::string pending = first_bound ? "default/urgent-2" : "default/urgent-1";
  CHECK(world.NodeOf(pending).empty());
  CHECK(world.observer.messages[pending] ==
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 "
        "NonPreemptible pods cannot be preempted..");

  // At the override priority exactly, the annotation no longer protects it.
  world.Add(PodBuilder("critical").Container({{"cpu", "2"}}).Priority(kOverride).Build());
  world.Run();
  CHECK_FALSE(world.Exists("default/guarded"));
  CHECK(world.NodeOf("default/critical") == "n");
}

TEST_CASE("a preemptor with preemptionPolicy Never preempts nobody", "[preemption][simulation]") {
  World world;
  world.Add(CpuNode("n1", "2"));
  world.Add(CpuNode("n2", "2"));
  for (int i = 0; i < 4; ++i) {
    world.Add(PodBuilder(absl::StrCat("low-", i)).Container({{"cpu", "1"}}).Priority(0).Build());
  }
  world.Run();
  REQUIRE(world.BoundWithPrefix("default/low-").size() == 4);

  api::Pod polite = PodBuilder("polite").Container({{"cpu", "1"}}).Priority(1000).Build();
  polite.spec.preemption_policy = api::PreemptionPolicy::kNever;
  world.Add(polite);
  world.Run();
  // Time passes and cluster events come; it still preempts nobody.
  for (int i = 0; i < 5; ++i) {
    world.clock.Advance(absl::Minutes(1));
    world.scheduler->Housekeep();
    world.Add(CpuNode(absl::StrCat("full-", i), "0"));
    world.Run();
  }
  CHECK(world.NodeOf("default/polite").empty());
  CHECK(world.observer.preemptions.empty());
  CHECK(world.observer.evicted.empty());
  CHECK(world.BoundWithPrefix("default/low-").size() == 4);
  CHECK_THAT(world.observer.messages["default/polite"],
             Catch::EndsWith(" preemption: not eligible due to preemptionPolicy=Never.."));

  // The same pod allowed to preempt gets its room at once.
  api::Pod eager = PodBuilder("eager").Container({{"cpu", "1"}}).Priority(1000).Build();
  eager.spec.preemption_policy = api::PreemptionPolicy::kPreemptLowerPriority;
  world.Add(eager);
  world.Run();
  CHECK(world.observer.preemptions.size() == 1);
  CHECK_FALSE(world.NodeOf("default/eager").empty());
}

TEST_CASE("the preemptor binds to its nominated node after its victims are gone",
          "[preemption][simulation]") {
  World world;
  world.Add(CpuNode("a", "4"));
  world.Add(CpuNode("b", "4"));
  // a: three pods below the preemptor; b: pods above it, which it cannot touch.
  world.Add(PodBuilder("p1").Container({{"cpu", "1"}}).Priority(1).NodeName("a").Build());
  world.Add(PodBuilder("p2").Container({{"cpu", "1"}}).Priority(2).NodeName("a").Build());
  world.Add(PodBuilder("p3").Container({{"cpu", "2"}}).Priority(3).NodeName("a").Build());
  world.Add(PodBuilder("q1").Container({{"cpu", "2"}}).Priority(100).NodeName("b").Build());
  world.Add(PodBuilder("q2").Container({{"cpu", "2"}}).Priority(100).NodeName("b").Build());
  world.Add(PodBuilder("preemptor").Container({{"cpu", "2"}}).Priority(50).Build());
  world.Run();
  const Observer& observer = world.observer;
  INFO(Describe(observer));

  // Everything goes, then the most important pods come back while the preemptor still fits: p3
  // (2 cpu) stays, p2 and p1 go, most important first.
  REQUIRE(observer.preemptions.size() == 1);
  CHECK(observer.preemptions[0].preemptor == "default/preemptor");
  CHECK(observer.preemptions[0].node == "a");
  CHECK(observer.preemptions[0].victims == std::vector<std::string>{"default/p2", "default/p1"});
  CHECK(world.NodeOf("default/preemptor") == "a");
  CHECK(world.NodeOf("default/p3") == "a");
  CHECK_FALSE(world.Exists("default/p1"));
  CHECK_FALSE(world.Exists("default/p2"));
  CHECK(world.NodeOf("default/q1") == "b");
  CHECK(world.NodeOf("default/q2") == "b");
  CHECK(observer.evicted ==
        std::map<std::string, std::string>{{"default/p1", "default/preemptor"},
                                           {"default/p2", "default/preemptor"}});
  CHECK(observer.victims_alive_at_bind.empty());
  CHECK(observer.log ==
        std::vector<std::string>{"default/preemptor preempts default/p2,default/p1 on a",
                                 "evicted default/p2", "evicted default/p1",
                                 "bound default/preemptor to a"});
}

TEST_CASE("a nominated preemptor keeps its room from pods of lower priority",
          "[preemption][simulation]") {
  World world;
  world.Add(CpuNode("a", "2"));
  world.Add(PodBuilder("low").Container({{"cpu", "2"}}).Priority(0).NodeName("a").Build());
  world.Run();
  // The preemptor and a mid-priority pod arrive together; the preemptor goes first and wins the
  // room; the mid pod, which fits once `low` is gone, must not take it.
  world.Add(PodBuilder("high").Container({{"cpu", "2"}}).Priority(100).Build());
  world.Add(PodBuilder("mid").Container({{"cpu", "2"}}).Priority(10).Build());
  world.Run();
  INFO(Describe(world.observer));
  CHECK(world.NodeOf("default/high") == "a");
  CHECK(world.NodeOf("default/mid").empty());
  CHECK_FALSE(world.Exists("default/low"));
  REQUIRE(world.observer.preemptions.size() == 1);
  CHECK(world.observer.preemptions[0].preemptor == "default/high");
}

TEST_CASE("a higher-priority preemptor takes over a lower one's nomination",
          "[preemption][simulation]") {
  World world;
  world.Add(CpuNode("a", "4"));
  world.Add(PodBuilder("low-1").Container({{"cpu", "2"}}).Priority(0).NodeName("a").Build());
  world.Add(PodBuilder("low-2").Container({{"cpu", "2"}}).Priority(0).NodeName("a").Build());
  // One cycle: mid preempts one low pod and is nominated to a; it waits out its backoff.
  world.Add(PodBuilder("mid").Container({{"cpu", "2"}}).Priority(10).Build());
  world.cluster.DeliverEvents();
  REQUIRE(world.scheduler->ScheduleOne());
  world.binds.RunPending();
  world.cluster.DeliverEvents();
  REQUIRE(world.observer.preemptions.size() == 1);
  // Equal priorities and no start times: the key breaks the tie, low-1 being more important.
  REQUIRE(world.observer.preemptions[0].victims == std::vector<std::string>{"default/low-2"});
  REQUIRE(world.scheduler->queue().NominatedPodsForNode("a").size() == 1);

  // high needs the whole node: mid's nomination does not count against it (lower priority), so
  // it preempts low-1 only, and mid loses its nomination to a.
  world.Add(PodBuilder("high").Container({{"cpu", "4"}}).Priority(100).Build());
  world.Run();
  INFO(Describe(world.observer));
  REQUIRE(world.observer.preemptions.size() == 2);
  CHECK(world.observer.preemptions[1].preemptor == "default/high");
  CHECK(world.observer.preemptions[1].victims == std::vector<std::string>{"default/low-1"});
  CHECK(world.observer.nominations_cleared == std::vector<std::string>{"default/mid"});
  CHECK(world.NodeOf("default/high") == "a");
  CHECK(world.NodeOf("default/mid").empty());
  CHECK_FALSE(world.Exists("default/low-1"));
  CHECK_FALSE(world.Exists("default/low-2"));
  CHECK(world.scheduler->queue().NominatedPodsForNode("a").empty());
}

TEST_CASE("a preemption that finds no candidate clears the pod's earlier nomination",
          "[preemption][simulation]") {
  World world;
  world.Add(CpuNode("a", "4"));
  world.Add(PodBuilder("low-1").Container({{"cpu", "2"}}).Priority(0).NodeName("a").Build());
  world.Add(PodBuilder("low-2").Container({{"cpu", "2"}}).Priority(0).NodeName("a").Build());
  world.Add(PodBuilder("mid").Container({{"cpu", "2"}}).Priority(10).Build());
  world.cluster.DeliverEvents();
  REQUIRE(world.scheduler->ScheduleOne());
  world.binds.RunPending();
  world.cluster.DeliverEvents();
  REQUIRE(world.observer.preemptions.size() == 1);
  REQUIRE(world.scheduler->queue().NominatedNodeOf("default/mid") == "a");

  // Before mid comes back, the room goes to a pod of higher priority placed by someone else: no
  // node has anything mid may preempt, so its nomination to a no longer holds.
  REQUIRE(world.cluster.DeletePod("default", "low-1").ok());
  world.Add(PodBuilder("system").Container({{"cpu", "4"}}).Priority(1000).NodeName("a").Build());
  world.Run();
  INFO(Describe(world.observer));
  CHECK(world.observer.preemptions.size() == 1);
  CHECK(world.observer.nominations_cleared == std::vector<std::string>{"default/mid"});
  CHECK(world.scheduler->queue().NominatedNodeOf("default/mid").empty());
  CHECK(world.scheduler->queue().NominatedPodsForNode("a").empty());
  CHECK(world.NodeOf("default/mid").empty());
  // Upstream's text, double full stop included.
  CHECK(world.observer.messages.at("default/mid") ==
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No "
        "preemption victims found for incoming pod..");
}

TEST_CASE("simulate reports the preemptions and leaves the victims out of the cluster",
          "[preemption][simulation]") {
  const testing::TempFile cluster(R"(apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: training}
value: 1000
---
apiVersion: v1
kind: Node
metadata: {name: gpu-0}
status:
  allocatable: {cpu: "4", memory: 16Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata: {name: batch-0, namespace: default}
spec:
  nodeName: gpu-0
  priority: 0
  containers: [{name: c, resources: {requests: {cpu: "2"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: batch-1, namespace: default}
spec:
  nodeName: gpu-0
  priority: 0
  containers: [{name: c, resources: {requests: {cpu: "2"}}}]
)",
                                  "cluster.yaml");
  const testing::TempFile workload(R"(apiVersion: v1
kind: Pod
metadata: {name: train, namespace: default}
spec:
  schedulerName: kubesched
  priorityClassName: training
  containers: [{name: c, resources: {requests: {cpu: "3"}}}]
)",
                                   "workload.yaml");
  auto report = RunSimulation({cluster.path(), workload.path()}, config::DefaultConfiguration());
  REQUIRE(report.ok());
  CHECK(report->scheduled == 1);
  CHECK(report->preempted == 2);
  REQUIRE(report->preemptions.size() == 1);
  CHECK(report->preemptions[0].preemptor == "default/train");
  CHECK(report->preemptions[0].node == "gpu-0");
  CHECK(report->preemptions[0].victims ==
        std::vector<std::string>{"default/batch-0", "default/batch-1"});
  REQUIRE(report->pod_results.size() == 1);
  CHECK(report->pod_results[0].node == "gpu-0");
  REQUIRE(report->nodes.size() == 1);
  CHECK(report->nodes[0].pods == 1);
  CHECK(report->nodes[0].requested.Get(api::kCpu) == 3000);
}

// ---------------------------------------------------------------------------------------------
// Randomized

struct PodFacts {
  int32_t priority = 0;
  bool non_preemptible = false;
  bool never = false;
  std::string cpu, memory;
};

struct ClassFacts {
  int32_t value;
  bool non_preemptible;
};

const std::map<std::string, ClassFacts>& Classes() {
  static const auto* classes = new std::map<std::string, ClassFacts>{
      {"batch", {0, false}},
      {"training", {1000, true}},
      {"online", {10000, false}},
      {"online-np", {10000, true}},
      {"below-override", {kOverride - 1, false}},
      {"system-cluster-critical", {kOverride, false}},
      {"system-node-critical", {kSystemNodeCritical, false}},
  };
  return *classes;
}

template <typename T>
const T& Pick(std::mt19937_64& rng, const std::vector<T>& choices) {
  return choices[std::uniform_int_distribution<size_t>(0, choices.size() - 1)(rng)];
}

bool Chance(std::mt19937_64& rng, double p) { return std::bernoulli_distribution(p)(rng); }

// A pod whose priority comes from one of `classes`, or from spec.priority (one of `priorities`);
// NonPreemptible through its class or its own annotation; sometimes preemptionPolicy Never.
api::Pod RandomPod(std::mt19937_64& rng, const std::string& name,
                   const std::vector<std::string>& classes, const std::vector<int32_t>& priorities,
                   PodFacts* facts) {
  facts->cpu = Pick(rng, std::vector<std::string>{"250m", "500m", "1", "1500m", "2"});
  facts->memory = Pick(rng, std::vector<std::string>{"128Mi", "512Mi", "1Gi", "2Gi"});
  api::Pod pod =
      PodBuilder(name).Container({{"cpu", facts->cpu}, {"memory", facts->memory}}).Build();
  if (!classes.empty() && Chance(rng, 0.5)) {
    const std::string& class_name = Pick(rng, classes);
    pod.spec.priority_class_name = class_name;
    facts->priority = Classes().at(class_name).value;
    facts->non_preemptible = Classes().at(class_name).non_preemptible;
  } else {
    facts->priority = Pick(rng, priorities);
    pod.spec.priority = facts->priority;
  }
  if (Chance(rng, 0.2)) {
    pod.meta.annotations[framework::kPreemptionPolicyAnnotation] = framework::kNonPreemptible;
    facts->non_preemptible = true;
  }
  if (Chance(rng, 0.1)) {
    pod.spec.preemption_policy = api::PreemptionPolicy::kNever;
    facts->never = true;
  }
  return pod;
}

struct NodeFacts {
  int64_t milli_cpu;
  int64_t memory;
  int64_t pods;
};

// Totals over the seeds, to show the randomized runs reach every path they check.
struct Coverage {
  int preemptions = 0;
  int victims = 0;
  int non_preemptible_victims = 0;  // by preemptors at or above the override
  int blocked_by_non_preemptible = 0;
  int never_pending = 0;
};

void CheckInvariants(const World& world, const std::map<std::string, PodFacts>& pods,
                     const std::map<std::string, NodeFacts>& nodes, Coverage* coverage) {
  const Observer& observer = world.observer;
  // No node over-committed, in the scheduler's cache ...
  framework::Snapshot snapshot;
  world.scheduler->cache().UpdateSnapshot(&snapshot);
  REQUIRE(snapshot.nodes().size() == nodes.size());
  for (const framework::NodeInfo* node : snapshot.nodes()) {
    INFO("node " << node->name());
    CHECK(node->requested().Get(api::kCpu) <= node->allocatable().Get(api::kCpu));
    CHECK(node->requested().Get(api::kMemory) <= node->allocatable().Get(api::kMemory));
    CHECK(static_cast<int64_t>(node->pods().size()) <= node->allocatable().Get(api::kPods));
  }
  // ... nor in the cluster itself.
  std::map<std::string, NodeFacts> used;
  for (const auto& [key, facts] : pods) {
    const auto pod = world.cluster.GetPod(key);
    if (pod == nullptr || pod->spec.node_name.empty()) continue;
    NodeFacts& node = used[pod->spec.node_name];
    node.milli_cpu += pod->spec.containers[0].requests.Get(api::kCpu);
    node.memory += pod->spec.containers[0].requests.Get(api::kMemory);
    node.pods += 1;
  }
  for (const auto& [name, total] : used) {
    INFO("node " << name);
    REQUIRE(nodes.contains(name));
    CHECK(total.milli_cpu <= nodes.at(name).milli_cpu);
    CHECK(total.memory <= nodes.at(name).memory);
    CHECK(total.pods <= nodes.at(name).pods);
  }

  // Every victim was below its preemptor, and NonPreemptible ones only fell to the override.
  for (const Preemption& preemption : observer.preemptions) {
    const PodFacts& preemptor = pods.at(preemption.preemptor);
    INFO("preemptor " << preemption.preemptor << " (" << preemptor.priority << ") on "
                      << preemption.node);
    CHECK_FALSE(preemptor.never);
    CHECK_FALSE(preemption.victims.empty());
    for (const std::string& key : preemption.victims) {
      const PodFacts& victim = pods.at(key);
      INFO("victim " << key << " (" << victim.priority
                     << (victim.non_preemptible ? ", NonPreemptible)" : ")"));
      CHECK(victim.priority < preemptor.priority);
      if (victim.non_preemptible) CHECK(preemptor.priority >= kOverride);
    }
  }
  // The scheduler saw the priorities and the NonPreemptible marks as they were created.
  for (const auto& [key, seen] : observer.victim_infos) {
    INFO("victim " << key);
    CHECK(seen.priority == pods.at(key).priority);
    CHECK(seen.non_preemptible == pods.at(key).non_preemptible);
  }
  for (const auto& [key, seen] : observer.preemptor_infos) {
    INFO("preemptor " << key);
    CHECK(seen.priority == pods.at(key).priority);
  }
  // Every pod that is gone was a victim, deleted for a preemptor of higher priority that had
  // chosen it.
  for (const auto& [key, facts] : pods) {
    if (world.Exists(key)) continue;
    INFO("deleted pod " << key << " (" << facts.priority << ")");
    const auto evicted = observer.evicted.find(key);
    REQUIRE(evicted != observer.evicted.end());
    const std::vector<std::string> preemptors = observer.PreemptorsOf(key);
    CHECK(std::find(preemptors.begin(), preemptors.end(), evicted->second) != preemptors.end());
    CHECK(facts.priority < pods.at(evicted->second).priority);
  }
  // Nothing was evicted that still exists.
  for (const auto& [key, preemptor] : observer.evicted) CHECK_FALSE(world.Exists(key));

  coverage->preemptions = static_cast<int>(observer.preemptions.size());
  coverage->victims = static_cast<int>(observer.evicted.size());
  coverage->non_preemptible_victims = 0;
  for (const auto& [key, preemptor] : observer.evicted) {
    if (pods.at(key).non_preemptible) ++coverage->non_preemptible_victims;
  }
  coverage->blocked_by_non_preemptible = 0;
  coverage->never_pending = 0;
  for (const auto& [key, message] : observer.messages) {
    if (!world.Exists(key)) continue;
    if (absl::StrContains(message, kNonPreemptibleReason)) ++coverage->blocked_by_non_preemptible;
    if (pods.at(key).never && world.NodeOf(key).empty()) ++coverage->never_pending;
  }
}

TEST_CASE("randomized: preemption never breaks its invariants", "[preemption][simulation]") {
  Coverage total;
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    INFO("seed " << seed);
    std::mt19937_64 rng(seed);
    World world;
    for (const auto& [name, facts] : Classes()) {
      world.Add(Class(name, facts.value, facts.non_preemptible));
    }
    std::map<std::string, NodeFacts> nodes;
    const int node_count = std::uniform_int_distribution<int>(3, 8)(rng);
    int64_t total_milli_cpu = 0;
    for (int i = 0; i < node_count; ++i) {
      const int cpu = Pick(rng, std::vector<int>{2, 4, 8});
      const int memory_gi = Pick(rng, std::vector<int>{4, 8, 16});
      const int max_pods = std::uniform_int_distribution<int>(3, 12)(rng);
      const std::string name = absl::StrCat("node-", i);
      world.Add(NodeBuilder(name)
                    .Capacity({{"cpu", absl::StrCat(cpu)},
                               {"memory", absl::StrCat(memory_gi, "Gi")},
                               {"pods", absl::StrCat(max_pods)}})
                    .Build());
      nodes[name] = {cpu * 1000LL, memory_gi * 1024LL * 1024 * 1024, max_pods};
      total_milli_cpu += cpu * 1000LL;
    }

    std::map<std::string, PodFacts> pods;
    // Fill the cluster past its capacity with low and middle priorities.
    int64_t requested = 0;
    for (int i = 0; requested < total_milli_cpu * 13 / 10; ++i) {
      PodFacts facts;
      const std::string name = absl::StrCat("fill-", i);
      world.Add(RandomPod(rng, name, {"batch", "training"}, {0, 10, 100, 500, 1000}, &facts));
      requested += api::CanonicalAmount(api::kCpu, *api::Quantity::Parse(facts.cpu));
      pods[absl::StrCat("default/", name)] = facts;
    }
    world.Run();
    Coverage coverage;
    CheckInvariants(world, pods, nodes, &coverage);

    // Waves of higher priority, the last reaching the override and above.
    const std::vector<std::vector<std::string>> wave_classes = {
        {"training", "online"},
        {"online", "online-np", "below-override"},
        {"online-np", "below-override", "system-cluster-critical", "system-node-critical"}};
    const std::vector<std::vector<int32_t>> wave_priorities = {
        {500, 1000, 5000},
        {5000, 10000, 50000, kOverride - 1},
        {10000, kOverride - 1, kOverride, kSystemNodeCritical}};
    for (size_t wave = 0; wave < wave_classes.size(); ++wave) {
      INFO("wave " << wave);
      const int count = std::uniform_int_distribution<int>(node_count, 3 * node_count)(rng);
      for (int i = 0; i < count; ++i) {
        PodFacts facts;
        const std::string name = absl::StrCat("wave", wave, "-", i);
        world.Add(RandomPod(rng, name, wave_classes[wave], wave_priorities[wave], &facts));
        pods[absl::StrCat("default/", name)] = facts;
      }
      world.Run();
      CheckInvariants(world, pods, nodes, &coverage);
    }
    total.preemptions += coverage.preemptions;
    total.victims += coverage.victims;
    total.non_preemptible_victims += coverage.non_preemptible_victims;
    total.blocked_by_non_preemptible += coverage.blocked_by_non_preemptible;
    total.never_pending += coverage.never_pending;
    CHECK(coverage.preemptions > 0);
  }
  INFO("preemptions " << total.preemptions << ", victims " << total.victims
                      << ", NonPreemptible victims " << total.non_preemptible_victims
                      << ", blocked by NonPreemptible " << total.blocked_by_non_preemptible
                      << ", Never pods pending " << total.never_pending);
  CHECK(total.non_preemptible_victims > 0);
  CHECK(total.blocked_by_non_preemptible > 0);
  CHECK(total.never_pending > 0);
}

}  // namespace
}  // namespace kubesched::scheduler
