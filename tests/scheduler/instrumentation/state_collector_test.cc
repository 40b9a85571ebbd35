// The gauges read from the scheduler when scraped: kubesched_pod_groups by phase, and the queue
// state (pending pods per queue, budget resets, typed limits matching no node).

#include "scheduler/instrumentation/state_collector.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "scheduler/cluster/embedded_cluster.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/metrics/metrics_server.h"
#include "scheduler/metrics/scheduler_metrics.h"
#include "tests/testing/builders.h"
#include "tests/testing/scrape.h"

namespace kubesched::metrics {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;

constexpr const char* kPhases[] = {"Pending", "Scheduling", "Scheduled",
                                   "Running", "Finished",   "Failed"};

// The real scheduler on the embedded cluster, driven one cycle at a time, and a collector.
struct World {
  cluster::EmbeddedCluster cluster;
  util::FakeClock clock{absl::FromUnixSeconds(1'700'000'000)};
  scheduler::DeferredBindExecutor binds;
  std::unique_ptr<scheduler::Scheduler> scheduler;
  SchedulerMetrics metrics;
  std::shared_ptr<StateCollector> collector =
      std::make_shared<StateCollector>(std::vector<std::string>{"kubesched"}, &metrics);

  explicit World(const config::Configuration& config = config::DefaultConfiguration()) {
    scheduler::SchedulerDeps deps{&clock, &cluster, &binds, nullptr, /*seed=*/1, /*threads=*/1};
    auto created = scheduler::Scheduler::Create(config, deps);
    REQUIRE(created.ok());
    scheduler = std::move(*created);
    collector->AttachScheduler(scheduler.get());
    cluster.Watch(scheduler.get());
  }
  ~World() { collector->AttachScheduler(nullptr); }

  void Add(const api::Object& object) { REQUIRE(cluster.Create(object).ok()); }
  // One scheduling cycle, and the binds it started.
  void Cycle() {
    cluster.DeliverEvents();
    REQUIRE(scheduler->ScheduleOne());
    binds.RunPending();
    cluster.DeliverEvents();
  }
  testing::Scrape Scrape() const {
    auto scrape = testing::Scrape::Parse(ScrapeText({collector}));
    REQUIRE(scrape.ok());
    return *scrape;
  }
  double Groups(const std::string& phase) const {
    return Scrape().Value(kPodGroups, {{"phase", phase}});
  }
};

api::PodGroup Group(const std::string& name, int min_member, const std::string& phase = "") {
  api::PodGroup group;
  group.meta.name = name;
  group.meta.namespace_name = "default";
  group.meta.namespace_symbol = api::Intern("default");
  group.min_member = min_member;
  group.status.phase = phase;
  return group;
}

api::Pod Member(const std::string& name, const std::string& group, int min_member) {
  return PodBuilder(name)
      .Container({{"cpu", "1"}})
      .Annotation(framework::kPodGroupAnnotation, group)
      .Annotation(framework::kPodGroupMinMemberAnnotation, std::to_string(min_member))
      .Build();
}

TEST_CASE("metrics: every pod group phase is exported, at zero when no group is in it",
          "[metrics][gang]") {
  World world;
  world.cluster.DeliverEvents();
  const testing::Scrape scrape = world.Scrape();
  CHECK(scrape.Type(kPodGroups) == "gauge");
  for (const char* phase : kPhases) {
    INFO(phase);
    CHECK(scrape.Has(kPodGroups, {{"phase", phase}}));
    CHECK(scrape.Value(kPodGroups, {{"phase", phase}}) == 0);
  }
}

TEST_CASE("metrics: pod groups are counted by the phase their placed members give them",
          "[metrics][gang]") {
  World world;
  world.Add(NodeBuilder("n1").Capacity({{"cpu", "2"}, {"pods", "110"}}).Build());
  // PodGroups: one without members, and three whose controller moved them on.
  world.Add(Group("idle", 2));
  world.Add(Group("training", 1, "Running"));
  world.Add(Group("done", 1, "Finished"));
  world.Add(Group("crashed", 1, "Failed"));
  // An implicit group of three on a node with room for two: two members wait at Permit.
  for (const char* name : {"a", "b", "c"}) world.Add(Member(name, "job", 3));
  // A pod naming a PodGroup that does not exist forms no group.
  world.Add(PodBuilder("lost").Label(framework::kPodGroupLabel, "ghost").Build());
  world.cluster.DeliverEvents();
  CHECK(world.Groups("Pending") == 2);  // idle, job
  world.Cycle();
  world.Cycle();
  REQUIRE(world.scheduler->waiting_pods().size() == 2);
  CHECK(world.Groups("Pending") == 1);
  CHECK(world.Groups("Scheduling") == 1);
  CHECK(world.Groups("Scheduled") == 0);
  CHECK(world.Groups("Running") == 1);
  CHECK(world.Groups("Finished") == 1);
  CHECK(world.Groups("Failed") == 1);
  // The third member fits nowhere: the group gives back what it held and is pending again.
  world.Cycle();
  world.scheduler->SettleWaitingPods();
  CHECK(world.scheduler->waiting_pods().size() == 0);
  CHECK(world.Groups("Scheduling") == 0);
  CHECK(world.Groups("Pending") == 2);
}

TEST_CASE("metrics: a group with minMember members placed is scheduled, and goes with its pods",
          "[metrics][gang]") {
  World world;
  world.Add(NodeBuilder("n1").Capacity({{"cpu", "4"}, {"pods", "110"}}).Build());
  world.Add(Member("a", "pair", 2));
  world.Add(Member("b", "pair", 2));
  world.Cycle();
  world.Cycle();
  CHECK(world.Groups("Scheduled") == 1);
  CHECK(world.Groups("Pending") == 0);
  REQUIRE(world.cluster.DeletePod("default", "a").ok());
  REQUIRE(world.cluster.DeletePod("default", "b").ok());
  world.cluster.DeliverEvents();
  for (const char* phase : kPhases) {
    INFO(phase);
    CHECK(world.Groups(phase) == 0);
  }
}

config::Configuration QueueConfig() {
  config::Configuration config = config::DefaultConfiguration();
  auto queues = config::ParseQueuesDocument(
      "models: {H100: [NVIDIA-H100-*]}\n"
      "tree: [{name: team, max: {cpu: '2', nvidia.com/gpu.H100: '1'},\n"
      "        budget: {cpu: 10h, alignTo: month}}]\n");
  REQUIRE(queues.ok());
  config.queues = *queues;
  return config;
}

api::Pod TeamPod(const std::string& name, const std::string& cpu) {
  return PodBuilder(name)
      .Container({{"cpu", cpu}})
      .Label("kubesched.io/queue", "root.team")
      .Build();
}

TEST_CASE("metrics: pending pods per queue with the next budget reset and unmatched typed limits",
          "[metrics][quota]") {
  World world(QueueConfig());
  world.Add(NodeBuilder("n1").Capacity({{"cpu", "8"}, {"memory", "8Gi"}, {"pods", "10"}}).Build());
  world.Add(TeamPod("a", "2"));
  world.Add(TeamPod("b", "1"));
  world.Cycle();
  world.Cycle();  // b waits: root.team's 2 CPUs are used
  testing::Scrape scrape = world.Scrape();
  CHECK(scrape.Type(kQueuePendingPods) == "gauge");
  CHECK(scrape.Value(kQueuePendingPods, {{"queue", "root.team"}}) == 1);
  CHECK(scrape.Has(kQueuePendingPods, {{"queue", "root"}}));
  // The clock is at 2023-11-14: the month-aligned budget resets on 2023-12-01.
  CHECK(scrape.Value(kQueueBudgetNextReset, {{"queue", "root.team"}, {"resource", "cpu"}}) ==
        1'701'388'800);
  CHECK(scrape.Value(kQueueTypedLimitsMatchingNoNode,
                     {{"queue", "root.team"}, {"resource", "nvidia.com/gpu.H100"}}) == 1);
  // An H100 node joins: the limit matches, and the series goes.
  world.Add(NodeBuilder("h1")
                .Capacity({{"cpu", "8"}, {"memory", "8Gi"}, {"pods", "10"}})
                .Label("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3")
                .Build());
  world.cluster.DeliverEvents();
  scrape = world.Scrape();
  CHECK_FALSE(scrape.Has(kQueueTypedLimitsMatchingNoNode));
}

}  // namespace
}  // namespace kubesched::metrics
