// Permit's Wait through the scheduler on simulate's virtual clock: a pod held at Permit keeps its
// room (reserved and assumed) but is not bound until every waiting plugin allows it; a rejection,
// a timeout or a deletion gives the room back.

#include "scheduler/core/waiting_pods.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "plugins/registry/registry.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/simulate/simulation.h"
#include "tests/testing/builders.h"

namespace kubesched::scheduler {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;

// Holds pods labelled pair=<v> until a second pod of the same pair arrives at Permit; a pod
// labelled veto=yes rejects every waiting pod instead.
class HoldInPairs : public framework::PermitPlugin {
 public:
  static constexpr std::string_view kName = "HoldInPairs";
  explicit HoldInPairs(framework::WaitingPods* waiting) : waiting_(waiting) {}
  std::string_view Name() const override { return kName; }
  framework::Status Permit(framework::CycleState&, const framework::PodInfo& pod, std::string_view,
                           absl::Duration* timeout) override {
    const auto& labels = pod.get().meta.labels;
    if (labels.Get(api::Intern("veto")).has_value()) {
      std::vector<std::string> keys;
      waiting_->ForEach(
          [&](const framework::PodInfo& held, std::string_view) { keys.push_back(held.key); });
      for (const auto& key : keys) waiting_->Reject(key, kName, "vetoed by " + pod.key);
      return framework::Status();
    }
    const auto pair = labels.Get(api::Intern("pair"));
    if (!pair.has_value()) return framework::Status();
    std::string partner;
    waiting_->ForEach([&](const framework::PodInfo& held, std::string_view) {
      if (held.get().meta.labels.Get(api::Intern("pair")) == pair) partner = held.key;
    });
    if (!partner.empty()) {
      CHECK(waiting_->Allow(partner, kName));
      CHECK_FALSE(waiting_->Allow(partner, kName));  // allowed once
      return framework::Status();
    }
    *timeout = absl::Seconds(10);
    return framework::Status::Wait();
  }

 private:
  framework::WaitingPods* waiting_;
};

class Messages : public SchedulingObserver {
 public:
  void OnUnschedulable(const framework::PodInfo& pod, const std::string& message, int) override {
    last[pod.key] = message;
    all[pod.key].push_back(message);
  }
  std::map<std::string, std::string> last;
  std::map<std::string, std::vector<std::string>> all;
};

struct Harness {
  Harness() {
    registry[HoldInPairs::kName] = [](const config::PluginArgs&,
                                      const plugins::PluginHandle& handle)
        -> absl::StatusOr<std::unique_ptr<framework::Plugin>> {
      REQUIRE(handle.waiting_pods != nullptr);
      return std::make_unique<HoldInPairs>(handle.waiting_pods);
    };
    auto configuration = config::DefaultConfiguration();
    configuration.profiles[0].plugins.permit.enabled = {{std::string(HoldInPairs::kName), 0}};
    SchedulerDeps deps{&clock, &cluster, &binds, &messages, 1, 1};
    deps.deleter = &cluster;
    deps.registry = &registry;
    auto created = Scheduler::Create(configuration, deps);
    REQUIRE(created.ok());
    scheduler = std::move(*created);
    cluster.Watch(scheduler.get());
    REQUIRE(cluster
                .Create(NodeBuilder("n1")
                            .Capacity({{"cpu", "2"}, {"memory", "8Gi"}, {"pods", "110"}})
                            .Build())
                .ok());
  }
  void Add(const std::string& name, const std::string& label = "", const std::string& value = "",
           const std::string& cpu = "1") {
    PodBuilder pod(name);
    pod.Container({{"cpu", cpu}});
    if (!label.empty()) pod.Label(label, value);
    REQUIRE(cluster.Create(pod.Build()).ok());
  }
  // Schedules what can be scheduled now, without moving the clock.
  void Step() {
    for (;;) {
      cluster.DeliverEvents();
      if (scheduler->ScheduleOne()) {
        binds.RunPending();
        continue;
      }
      if (binds.RunPending() > 0 || cluster.HasPendingEvents()) continue;
      return;
    }
  }
  void RunToQuiescence() { DriveToQuiescence(cluster, *scheduler, binds, clock); }
  std::string NodeOf(const std::string& name) {
    return cluster.GetPod("default/" + name)->spec.node_name;
  }

  plugins::RegistryMap registry = plugins::Registry();
  cluster::EmbeddedCluster cluster;
  util::FakeClock clock{absl::FromUnixSeconds(1'000'000)};
  DeferredBindExecutor binds;
  Messages messages;
  std::unique_ptr<Scheduler> scheduler;
};

TEST_CASE("a pod waiting at Permit keeps its room and binds once allowed", "[scheduler][permit]") {
  Harness h;
  h.Add("a", "pair", "x");
  h.Step();
  CHECK(h.NodeOf("a").empty());
  CHECK(h.scheduler->waiting_pods().IsWaiting("default/a"));
  // The waiting pod holds 1 of the node's 2 cpus: a 2-cpu pod does not fit meanwhile.
  PodBuilder big("big");
  big.Container({{"cpu", "2"}});
  REQUIRE(h.cluster.Create(big.Build()).ok());
  h.Step();
  CHECK(h.NodeOf("big").empty());
  REQUIRE(h.cluster.DeletePod("default", "big").ok());
  h.Add("b", "pair", "x");
  h.Step();
  CHECK(h.NodeOf("a") == "n1");
  CHECK(h.NodeOf("b") == "n1");
  CHECK(h.scheduler->waiting_pods().size() == 0);
}

TEST_CASE("a pod waiting past its Permit timeout is rejected and gives its room back",
          "[scheduler][permit]") {
  Harness h;
  h.Add("lonely", "pair", "y");
  h.Step();
  REQUIRE(h.scheduler->NextPermitDeadline() == h.clock.Now() + absl::Seconds(10));
  h.Add("plain");  // takes the other cpu
  h.Step();
  REQUIRE(h.NodeOf("plain") == "n1");
  h.Add("late");  // no room until the lonely pod lets go
  h.RunToQuiescence();
  CHECK(h.NodeOf("lonely").empty());
  REQUIRE_FALSE(h.messages.all["default/lonely"].empty());
  CHECK(h.messages.all["default/lonely"].front() ==
        "rejected due to timeout after waiting 10s at plugin HoldInPairs");
  // Its room went to the pod that waited for it; retried after that, it finds none.
  CHECK(h.NodeOf("late") == "n1");
  CHECK(h.messages.last["default/lonely"].rfind("0/1 nodes are available: 1 Insufficient cpu.",
                                                0) == 0);
  CHECK(h.scheduler->waiting_pods().size() == 0);
  // The rejected pod waits for cluster events, not for a timer: the simulation ended.
  CHECK(h.scheduler->queue().UnschedulableCount() >= 1);
}

TEST_CASE("a plugin's rejection undoes every pod it rejects", "[scheduler][permit]") {
  Harness h;
  h.Add("a", "pair", "p");
  h.Add("b", "pair", "q");
  h.Step();
  REQUIRE(h.scheduler->waiting_pods().size() == 2);
  h.Add("vetoer", "veto", "yes", "0");
  h.Step();
  CHECK(h.scheduler->waiting_pods().size() == 0);
  CHECK(h.NodeOf("a").empty());
  CHECK(h.NodeOf("b").empty());
  CHECK(h.NodeOf("vetoer") == "n1");
  CHECK(h.messages.last["default/a"] == "vetoed by default/vetoer");
  CHECK(h.messages.last["default/b"] == "vetoed by default/vetoer");
}

TEST_CASE("a pod deleted while it waits is undone and never bound", "[scheduler][permit]") {
  Harness h;
  h.Add("gone", "pair", "z");
  h.Add("filler");
  h.Step();
  REQUIRE(h.scheduler->waiting_pods().IsWaiting("default/gone"));
  h.Add("next");  // no room: gone and filler hold both cpus
  h.Step();
  REQUIRE(h.NodeOf("next").empty());
  REQUIRE(h.cluster.DeletePod("default", "gone").ok());
  h.RunToQuiescence();
  CHECK(h.scheduler->waiting_pods().size() == 0);
  CHECK(h.messages.last.count("default/gone") == 0);
  CHECK(h.NodeOf("next") == "n1");
}

TEST_CASE("the registry settles allowed and rejected pods once", "[scheduler][permit]") {
  WaitingPodRegistry registry;
  const absl::Time now = absl::FromUnixSeconds(100);
  auto make = [&](const std::string& name, std::vector<std::string> plugins) {
    WaitingPod pod;
    pod.assumed = framework::MakePodInfo(PodBuilder(name).Ptr(), 0);
    pod.queued.pod_info = pod.assumed;
    pod.node = "n1";
    pod.timeout = absl::Seconds(5);
    pod.deadline = now + pod.timeout;
    for (auto& plugin : plugins) pod.waiting_on.insert(plugin);
    registry.Add(std::move(pod));
  };
  make("two", {"A", "B"});
  make("one", {"A"});
  CHECK(registry.Allow("default/two", "A"));
  CHECK_FALSE(registry.Allow("default/two", "C"));
  CHECK(registry.TakeSettled(now).empty());  // two still waits on B
  CHECK(registry.Allow("default/two", "B"));
  CHECK_FALSE(registry.Reject("default/two", "A", "too late"));  // already allowed
  auto settled = registry.TakeSettled(now);
  REQUIRE(settled.size() == 1);
  CHECK(settled[0].assumed->key == "default/two");
  CHECK_FALSE(settled[0].rejection.has_value());
  CHECK(registry.NextDeadline() == now + absl::Seconds(5));
  settled = registry.TakeSettled(now + absl::Seconds(5));
  REQUIRE(settled.size() == 1);
  CHECK(settled[0].rejection->first == "A");
  CHECK(settled[0].rejection->second == "rejected due to timeout after waiting 5s at plugin A");
  CHECK_FALSE(registry.NextDeadline().has_value());
  CHECK_FALSE(registry.Allow("default/one", "A"));
}

}  // namespace
}  // namespace kubesched::scheduler
