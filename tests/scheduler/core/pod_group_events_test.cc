// The core's PodGroup events: a group reaches the plugins' snapshot, and pods a plugin rejected
// for their group are retried when the group comes or its spec changes, not when only its status
// does (the scheduler's own status writes must not retry every waiting pod).

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "plugins/registry/registry.h"
#include "scheduler/api/symbol.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/simulate/simulation.h"
#include "tests/testing/builders.h"

namespace kubesched::scheduler {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;

// Admits a pod only when its PodGroup is in the snapshot with minMember 1.
class WaitsForGroup : public framework::PreFilterPlugin {
 public:
  static constexpr std::string_view kName = "WaitsForGroup";
  std::string_view Name() const override { return kName; }
  framework::ClusterEventSet EventsToRegister() const override {
    return framework::EventBit(framework::ClusterEvent::kPodGroupChanged);
  }
  framework::PreFilterOutcome PreFilter(framework::CycleState&, const framework::PodInfo& pod,
                                        const framework::Snapshot& snapshot) override {
    const api::PodGroup* group = snapshot.gangs().Find(pod.gang.key);
    if (group == nullptr) return {framework::Status::Unresolvable("no PodGroup"), {}};
    if (group->min_member != 1) return {framework::Status::Unresolvable("minMember is not 1"), {}};
    return {framework::Status::Success(), {}};
  }
};

struct Harness {
  Harness() {
    registry[WaitsForGroup::kName] =
        [](const config::PluginArgs&,
           const plugins::PluginHandle&) -> absl::StatusOr<std::unique_ptr<framework::Plugin>> {
      return std::make_unique<WaitsForGroup>();
    };
    config::Configuration configuration = config::DefaultConfiguration();
    configuration.profiles[0].plugins.pre_filter.enabled.push_back(
        {std::string(WaitsForGroup::kName), 0});
    SchedulerDeps deps{&clock, &cluster, &binds, nullptr, 1, 1};
    deps.registry = &registry;
    deps.pod_group_status = &cluster;
    auto created = Scheduler::Create(configuration, deps);
    REQUIRE(created.ok());
    scheduler = std::move(*created);
    cluster.Watch(scheduler.get());
    REQUIRE(cluster
                .Create(NodeBuilder("n1")
                            .Capacity({{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "110"}})
                            .Build())
                .ok());
    REQUIRE(
        cluster
            .Create(
                PodBuilder("worker", "ml").Label("scheduling.x-k8s.io/pod-group", "train").Build())
            .ok());
    Run();
  }
  void Run() { DriveToQuiescence(cluster, *scheduler, binds, clock); }
  // Delivers a PodGroup event to the scheduler as an informer would.
  void Deliver(client::EventType type, std::shared_ptr<const api::PodGroup> old_group,
               std::shared_ptr<const api::PodGroup> group) {
    scheduler->OnPodGroup({type, std::move(old_group), std::move(group)});
    clock.Advance(absl::Minutes(1));  // past any backoff
    Run();
  }
  std::string NodeOfWorker() { return cluster.GetPod("ml/worker")->spec.node_name; }
  // Pods a PodGroup event moved to activeQ or backoffQ so far.
  uint64_t PodGroupMoves() {
    const auto incoming = scheduler->queue().Incoming();
    const auto event = static_cast<size_t>(queue::IncomingEvent::kPodGroupChange);
    return incoming[0][event] + incoming[1][event];
  }

  cluster::EmbeddedCluster cluster;
  util::FakeClock clock;
  DeferredBindExecutor binds;
  plugins::RegistryMap registry = plugins::Registry();
  std::unique_ptr<Scheduler> scheduler;
};

std::shared_ptr<const api::PodGroup> Train(int32_t min_member, const std::string& phase = "") {
  auto group = std::make_shared<api::PodGroup>();
  group->meta.namespace_name = "ml";
  group->meta.name = "train";
  group->min_member = min_member;
  group->status.phase = phase;
  return group;
}

TEST_CASE("a pod waiting for its PodGroup is scheduled once the group arrives", "[scheduler]") {
  Harness h;
  CHECK(h.NodeOfWorker().empty());
  h.Deliver(client::EventType::kAdded, nullptr, Train(1));
  CHECK(h.PodGroupMoves() == 1);
  CHECK(h.NodeOfWorker() == "n1");
}

TEST_CASE("a PodGroup status update retries no waiting pod, and a spec change does",
          "[scheduler]") {
  Harness h;
  const auto two = Train(2);
  h.Deliver(client::EventType::kAdded, nullptr, two);
  REQUIRE(h.NodeOfWorker().empty());
  REQUIRE(h.PodGroupMoves() == 1);  // the group's arrival

  const auto scheduling = Train(2, "Scheduling");
  h.Deliver(client::EventType::kModified, two, scheduling);
  CHECK(h.PodGroupMoves() == 1);
  CHECK(h.NodeOfWorker().empty());

  h.Deliver(client::EventType::kModified, scheduling, Train(1, "Scheduling"));
  CHECK(h.NodeOfWorker() == "n1");
}

}  // namespace
}  // namespace kubesched::scheduler
