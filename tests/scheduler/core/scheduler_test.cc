#include "scheduler/core/scheduler.h"

#include <catch2/catch.hpp>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "plugins/registry/registry.h"
#include "scheduler/simulate/simulation.h"
#include "tests/testing/builders.h"

namespace kubesched::scheduler {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;

// Remembers the last message and bind result per pod.
class Recorder : public SchedulingObserver {
 public:
  void OnUnschedulable(const framework::PodInfo& pod, const std::string& message,
                       int attempts) override {
    messages[pod.key] = message;
    attempts_of[pod.key] = attempts;
  }
  void OnBound(const framework::PodInfo& pod, const std::string& node, int attempts) override {
    bound[pod.key] = node;
    attempts_of[pod.key] = attempts;
  }
  void OnBindFailed(const framework::PodInfo& pod, const std::string&,
                    const std::string& message) override {
    bind_failures[pod.key]++;
  }
  void OnPreempted(const framework::PodInfo& pod, const std::string& node,
                   const std::vector<std::string>& victims) override {
    preemptions.push_back(pod.key + " on " + node + " evicts " + victims.at(0));
  }
  std::vector<std::string> preemptions;
  std::map<std::string, std::string> messages, bound;
  std::map<std::string, int> attempts_of, bind_failures;
};

// A binder that fails the first `failures` binds, then delegates to the cluster.
class FlakyBinder : public framework::PodBinder {
 public:
  FlakyBinder(cluster::EmbeddedCluster* cluster, int failures)
      : cluster_(cluster), failures_(failures) {}
  void FailNext(int failures) { failures_ = failures; }
  framework::Status BindPod(const api::Pod& pod, std::string_view node) override {
    if (failures_ > 0) {
      --failures_;
      return framework::Status::Error("injected bind failure");
    }
    return cluster_->BindPod(pod, node);
  }

 private:
  cluster::EmbeddedCluster* cluster_;
  int failures_;
};

// A PostFilter plugin for tests: on the first rejected node, evicts every pod of lower priority
// than the incoming one and nominates that node. (DefaultPreemption proper chooses with care.)
class EvictLowerPriority : public framework::PostFilterPlugin {
 public:
  static constexpr std::string_view kName = "EvictLowerPriority";
  std::string_view Name() const override { return kName; }
  framework::PostFilterOutcome PostFilter(framework::CycleState&, const framework::PodInfo& pod,
                                          const framework::Snapshot&,
                                          absl::Span<const framework::NodeStatus> filtered,
                                          const framework::PostFilterHost&) override {
    framework::PostFilterOutcome outcome;
    for (const auto& node_status : filtered) {
      if (node_status.node == nullptr) continue;
      for (const auto& victim : node_status.node->pods()) {
        if (victim->priority < pod.priority) outcome.victims.push_back(victim->key);
      }
      if (outcome.victims.empty()) continue;
      outcome.nominated_node = node_status.node->name();
      return outcome;
    }
    outcome.status = framework::Status::Unschedulable("preemption: no lower-priority pods");
    return outcome;
  }
};

plugins::RegistryMap RegistryWithEviction() {
  plugins::RegistryMap registry = plugins::Registry();
  registry[EvictLowerPriority::kName] =
      [](const config::PluginArgs&,
         const plugins::PluginHandle&) -> absl::StatusOr<std::unique_ptr<framework::Plugin>> {
    return std::make_unique<EvictLowerPriority>();
  };
  return registry;
}

config::Configuration ConfigWithEviction() {
  auto configuration = config::DefaultConfiguration();
  configuration.profiles[0].plugins.post_filter.enabled = {
      {std::string(EvictLowerPriority::kName), 0}};
  return configuration;
}

// An embedded cluster with a scheduler watching it.
struct Harness {
  explicit Harness(int bind_failures = 0, bool with_eviction = false)
      : binder(&cluster, bind_failures) {
    SchedulerDeps deps{&clock, &binder, &binds, &recorder, 1, 2};
    deps.deleter = &cluster;
    deps.registry = &registry;
    auto created = Scheduler::Create(
        with_eviction ? ConfigWithEviction() : config::DefaultConfiguration(), deps);
    REQUIRE(created.ok());
    scheduler = std::move(*created);
    cluster.Watch(scheduler.get());
  }
  void Run() { DriveToQuiescence(cluster, *scheduler, binds, clock); }
  std::string NodeOf(const std::string& key) { return cluster.GetPod(key)->spec.node_name; }

  cluster::EmbeddedCluster cluster;
  util::FakeClock clock;
  DeferredBindExecutor binds;
  Recorder recorder;
  FlakyBinder binder;
  plugins::RegistryMap registry = RegistryWithEviction();
  std::unique_ptr<Scheduler> scheduler;
};

api::Node CpuNode(const std::string& name, const std::string& cpu) {
  return NodeBuilder(name).Capacity({{"cpu", cpu}, {"memory", "8Gi"}, {"pods", "110"}}).Build();
}

TEST_CASE("pods are bound where they fit and the rest get upstream's message", "[scheduler]") {
  Harness h;
  REQUIRE(h.cluster.Create(CpuNode("n1", "1")).ok());
  REQUIRE(h.cluster.Create(CpuNode("n2", "1")).ok());
  for (const char* name : {"a", "b", "c"}) {
    REQUIRE(h.cluster.Create(PodBuilder(name).Container({{"cpu", "600m"}}).Build()).ok());
  }
  h.Run();
  CHECK(h.NodeOf("default/a") != h.NodeOf("default/b"));
  CHECK_FALSE(h.NodeOf("default/a").empty());
  CHECK_FALSE(h.NodeOf("default/b").empty());
  CHECK(h.NodeOf("default/c").empty());
  CHECK(h.recorder.messages["default/c"] ==
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No "
        "preemption victims found for incoming pod..");
  CHECK(h.scheduler->queue().UnschedulableCount() == 1);
}

TEST_CASE("pods of other schedulers are left alone", "[scheduler]") {
  Harness h;
  REQUIRE(h.cluster.Create(CpuNode("n1", "4")).ok());
  REQUIRE(h.cluster.Create(PodBuilder("theirs").SchedulerName("default-scheduler").Build()).ok());
  h.Run();
  CHECK(h.NodeOf("default/theirs").empty());
  CHECK(h.recorder.attempts_of.count("default/theirs") == 0);
}

TEST_CASE("higher priority pods are scheduled first", "[scheduler]") {
  Harness h;
  REQUIRE(h.cluster.Create(CpuNode("n1", "1")).ok());
  REQUIRE(
      h.cluster.Create(PodBuilder("low").Container({{"cpu", "800m"}}).Priority(1).Build()).ok());
  REQUIRE(
      h.cluster.Create(PodBuilder("high").Container({{"cpu", "800m"}}).Priority(9).Build()).ok());
  h.Run();
  CHECK(h.NodeOf("default/high") == "n1");
  CHECK(h.NodeOf("default/low").empty());
}

TEST_CASE("a failed bind releases the node and the pod is retried after backoff", "[scheduler]") {
  Harness h(/*bind_failures=*/2);
  REQUIRE(h.cluster.Create(CpuNode("n1", "1")).ok());
  REQUIRE(h.cluster.Create(PodBuilder("a").Container({{"cpu", "600m"}}).Build()).ok());
  const absl::Time start = h.clock.Now();
  h.Run();
  CHECK(h.recorder.bind_failures["default/a"] == 2);
  CHECK(h.NodeOf("default/a") == "n1");
  CHECK(h.recorder.attempts_of["default/a"] == 3);
  // Two backoffs (1 s, then 2 s) passed on the virtual clock, not on the wall clock.
  CHECK(h.clock.Now() - start >= absl::Seconds(3));
  CHECK_FALSE(h.scheduler->cache().IsAssumed("default/a"));
}

TEST_CASE("an unschedulable pod is scheduled once a node that fits is added", "[scheduler]") {
  Harness h;
  REQUIRE(h.cluster.Create(CpuNode("small", "1")).ok());
  REQUIRE(h.cluster.Create(PodBuilder("big").Container({{"cpu", "3"}}).Build()).ok());
  h.Run();
  REQUIRE(h.NodeOf("default/big").empty());
  REQUIRE(h.cluster.Create(CpuNode("large", "4")).ok());
  h.Run();
  CHECK(h.NodeOf("default/big") == "large");
}

TEST_CASE("an unschedulable pod is retried when a pod on its node is deleted", "[scheduler]") {
  Harness h;
  REQUIRE(h.cluster.Create(CpuNode("n1", "1")).ok());
  REQUIRE(
      h.cluster.Create(PodBuilder("old").Container({{"cpu", "800m"}}).NodeName("n1").Build()).ok());
  REQUIRE(h.cluster.Create(PodBuilder("new").Container({{"cpu", "800m"}}).Build()).ok());
  h.Run();
  REQUIRE(h.NodeOf("default/new").empty());
  REQUIRE(h.cluster.DeletePod("default", "old").ok());
  h.Run();
  CHECK(h.NodeOf("default/new") == "n1");
}

TEST_CASE("a deleted node takes no more pods and leaves the count", "[scheduler]") {
  Harness h;
  REQUIRE(h.cluster.Create(CpuNode("small", "1")).ok());
  REQUIRE(h.cluster.Create(CpuNode("large", "4")).ok());
  h.cluster.DeliverEvents();
  REQUIRE(h.cluster.DeleteNode("large").ok());
  REQUIRE(h.cluster.Create(PodBuilder("big").Container({{"cpu", "2"}}).Build()).ok());
  h.Run();
  CHECK(h.NodeOf("default/big").empty());
  CHECK(h.recorder.messages["default/big"] ==
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 "
        "Preemption is not helpful for scheduling..");
}

TEST_CASE("finished pods take no room on their node", "[scheduler]") {
  Harness h;
  REQUIRE(h.cluster.Create(CpuNode("n1", "1")).ok());
  REQUIRE(h.cluster
              .Create(PodBuilder("done")
                          .Container({{"cpu", "1"}})
                          .NodeName("n1")
                          .Phase(api::PodPhase::kSucceeded)
                          .Build())
              .ok());
  REQUIRE(h.cluster.Create(PodBuilder("a").Container({{"cpu", "1"}}).Build()).ok());
  h.Run();
  CHECK(h.NodeOf("default/a") == "n1");
}

TEST_CASE("a pending pod deleted before its turn is never scheduled", "[scheduler]") {
  Harness h;
  REQUIRE(h.cluster.Create(CpuNode("n1", "1")).ok());
  REQUIRE(h.cluster.Create(PodBuilder("a").Build()).ok());
  h.cluster.DeliverEvents();
  REQUIRE(h.cluster.DeletePod("default", "a").ok());
  h.Run();
  CHECK(h.recorder.attempts_of.count("default/a") == 0);
  CHECK(h.scheduler->queue().ActiveCount() == 0);
}

TEST_CASE("a PostFilter plugin's victims are deleted and the pod gets their room", "[scheduler]") {
  Harness h(0, /*with_eviction=*/true);
  REQUIRE(h.cluster.Create(CpuNode("n1", "1")).ok());
  REQUIRE(
      h.cluster
          .Create(PodBuilder("low").Container({{"cpu", "800m"}}).Priority(1).NodeName("n1").Build())
          .ok());
  REQUIRE(
      h.cluster.Create(PodBuilder("high").Container({{"cpu", "800m"}}).Priority(9).Build()).ok());
  h.Run();
  CHECK(h.cluster.GetPod("default/low") == nullptr);
  CHECK(h.NodeOf("default/high") == "n1");
  CHECK(h.recorder.preemptions ==
        std::vector<std::string>{"default/high on n1 evicts default/low"});
}

TEST_CASE("a preemptor whose victims are still being deleted waits instead of preempting again",
          "[scheduler]") {
  Harness h;  // DefaultPreemption
  for (const char* node : {"n1", "n2"}) {
    REQUIRE(h.cluster.Create(CpuNode(node, "2")).ok());
    for (int i = 0; i < 2; ++i) {
      REQUIRE(h.cluster
                  .Create(PodBuilder(absl::StrCat("low-", node, "-", i))
                              .Container({{"cpu", "1"}})
                              .Priority(1)
                              .NodeName(node)
                              .Build())
                  .ok());
    }
  }
  REQUIRE(h.cluster.Create(PodBuilder("high").Container({{"cpu", "2"}}).Priority(9).Build()).ok());
  h.cluster.DeliverEvents();
  REQUIRE(h.scheduler->ScheduleOne());
  REQUIRE(h.recorder.preemptions.size() == 1);

  // The deletions wait on the bind executor. The periodic flush of unschedulable pods sends it
  // back to be tried while its victims are still there: it must wait for them, not take two more.
  for (int i = 0; i < 2; ++i) {
    h.clock.Advance(absl::Minutes(6));
    h.scheduler->Housekeep();
  }
  h.cluster.DeliverEvents();
  REQUIRE(h.scheduler->ScheduleOne());
  CHECK(h.recorder.preemptions.size() == 1);
  CHECK(absl::StrContains(h.recorder.messages["default/high"],
                          "not eligible due to a terminating pod on the nominated node"));

  h.Run();
  int low_left = 0;
  for (const char* node : {"n1", "n2"}) {
    for (int i = 0; i < 2; ++i) {
      low_left += h.cluster.GetPod(absl::StrCat("default/low-", node, "-", i)) != nullptr;
    }
  }
  CHECK(low_left == 2);
  CHECK(h.recorder.preemptions.size() == 1);
  CHECK_FALSE(h.NodeOf("default/high").empty());
}

TEST_CASE("a preemptor whose binding fails keeps the room its victim made", "[scheduler]") {
  Harness h;  // DefaultPreemption
  REQUIRE(h.cluster.Create(CpuNode("n1", "1")).ok());
  REQUIRE(
      h.cluster.Create(PodBuilder("low").Container({{"cpu", "800m"}}).Priority(1).Build()).ok());
  h.Run();
  REQUIRE(h.NodeOf("default/low") == "n1");
  // The preemptor evicts the low pod; a pod of its priority comes after it and finds the room
  // promised to it. The preemptor's first bind fails: the room must stay promised, not go to
  // the pod behind it (which would leave the preemptor to preempt again).
  h.binder.FailNext(1);
  REQUIRE(
      h.cluster.Create(PodBuilder("high").Container({{"cpu", "800m"}}).Priority(9).Build()).ok());
  REQUIRE(
      h.cluster.Create(PodBuilder("peer").Container({{"cpu", "800m"}}).Priority(9).Build()).ok());
  h.Run();
  CHECK(h.recorder.preemptions ==
        std::vector<std::string>{"default/high on n1 evicts default/low"});
  CHECK(h.recorder.bind_failures["default/high"] == 1);
  CHECK(h.NodeOf("default/high") == "n1");
  CHECK(h.NodeOf("default/peer").empty());
  CHECK(h.scheduler->queue().NominatedNodeOf("default/high").empty());
}

// The watch may show a pod's own earlier write (its nominatedNodeName) after the pod was assumed,
// while it binds or once bound but before the watch shows the bind. Upstream ignores updates of
// an assumed pod: taken as news, such an update would nominate the pod to a node whose room it
// already holds, so that the pods nominated there find the room gone and preempt again.
TEST_CASE("an update the watch shows while the pod binds neither nominates nor requeues it",
          "[scheduler]") {
  Harness h;
  REQUIRE(h.cluster.Create(CpuNode("n1", "2")).ok());
  REQUIRE(h.cluster.Create(PodBuilder("high").Container({{"cpu", "1"}}).Priority(9).Build()).ok());
  h.cluster.DeliverEvents();
  const std::shared_ptr<const api::Pod> pending = h.cluster.GetPod("default/high");
  REQUIRE(h.scheduler->ScheduleOne());  // assumed on n1; the bind waits on the executor
  auto echoed = std::make_shared<api::Pod>(*pending);
  echoed->status.nominated_node_name = "n1";
  echoed->meta.resource_version = "echo";
  const auto deliver_echo = [&] {
    h.scheduler->OnPod({client::EventType::kModified, pending, echoed});
    CHECK(h.scheduler->queue().NominatedNodeOf("default/high").empty());
    CHECK(h.scheduler->queue().PendingPods().empty());
  };
  deliver_echo();  // while the bind is in flight
  h.binds.RunPending();
  deliver_echo();  // bound, the watch has not shown it yet
  h.Run();
  CHECK(h.NodeOf("default/high") == "n1");
  CHECK(h.scheduler->queue().NominatedNodeOf("default/high").empty());
  CHECK(h.recorder.attempts_of["default/high"] == 1);
}

TEST_CASE("a PostFilter rejection joins the FailedScheduling message", "[scheduler]") {
  Harness h(0, /*with_eviction=*/true);
  REQUIRE(h.cluster.Create(CpuNode("n1", "1")).ok());
  REQUIRE(
      h.cluster
          .Create(
              PodBuilder("peer").Container({{"cpu", "800m"}}).Priority(9).NodeName("n1").Build())
          .ok());
  REQUIRE(
      h.cluster.Create(PodBuilder("high").Container({{"cpu", "800m"}}).Priority(9).Build()).ok());
  h.Run();
  CHECK(h.NodeOf("default/high").empty());
  // Every PostFilter plugin that rejected the pod adds its reasons (upstream).
  CHECK(h.recorder.messages["default/high"] ==
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No "
        "preemption victims found for incoming pod., preemption: no lower-priority pods.");
  CHECK(h.cluster.GetPod("default/peer") != nullptr);
}

TEST_CASE("a gated pod is never tried, and is scheduled once an update removes its last gate",
          "[scheduler][gates]") {
  Harness h;
  REQUIRE(h.cluster.Create(CpuNode("n1", "4")).ok());
  auto gated = [](std::vector<std::string> gates) {
    return PodBuilder("gated").Container({{"cpu", "1"}}).SchedulingGates(std::move(gates)).Build();
  };
  REQUIRE(h.cluster.Create(gated({"a", "b"})).ok());
  REQUIRE(h.cluster.Create(PodBuilder("free").Container({{"cpu", "1"}}).Build()).ok());
  h.Run();
  CHECK(h.NodeOf("default/free") == "n1");
  CHECK(h.NodeOf("default/gated").empty());
  CHECK(h.recorder.attempts_of.count("default/gated") == 0);
  CHECK(h.scheduler->queue().GatedCount() == 1);

  // One gate left: still held.
  REQUIRE(h.cluster.UpdatePod(gated({"b"})).ok());
  h.Run();
  CHECK(h.scheduler->queue().GatedCount() == 1);
  REQUIRE(h.cluster.UpdatePod(gated({})).ok());
  h.Run();
  CHECK(h.NodeOf("default/gated") == "n1");
  CHECK(h.recorder.attempts_of["default/gated"] == 1);
  CHECK(h.scheduler->queue().GatedCount() == 0);
}

TEST_CASE("explain of a gated pod gives the gate as the reason and no node verdicts",
          "[scheduler][gates]") {
  Harness h;
  REQUIRE(h.cluster.Create(CpuNode("n1", "4")).ok());
  h.cluster.DeliverEvents();
  const Explanation explanation =
      h.scheduler->Explain(PodBuilder("gated").SchedulingGates({"example.com/foo"}).Build());
  CHECK(explanation.message == "waiting for scheduling gates: [example.com/foo]");
  CHECK(explanation.nodes.empty());
  CHECK(explanation.selected == nullptr);
}

}  // namespace
}  // namespace kubesched::scheduler
