// explain shows what preemption would do for a pod no node fits, and says when NonPreemptible
// pods are what stand in the way.

#include <catch2/catch.hpp>

#include "config/config.h"
#include "scheduler/cluster/embedded_cluster.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/simulate/report_output.h"
#include "scheduler/simulate/simulation.h"
#include "tests/testing/builders.h"

namespace kubesched::scheduler {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;

std::vector<api::Object> FullNode(bool training_non_preemptible) {
  PodBuilder training("training");
  training.Container({{"cpu", "3"}}).NodeName("n").Priority(1000);
  if (training_non_preemptible)
    training.Annotation("kubesched.io/preemption-policy", "NonPreemptible");
  return {NodeBuilder("n").Capacity({{"cpu", "4"}, {"pods", "10"}}).Build(), training.Build()};
}

TEST_CASE("explain names the victims preemption would choose", "[explain][preemption]") {
  const api::Pod online = PodBuilder("online").Container({{"cpu", "2"}}).Priority(10000).Build();
  auto report = ExplainObjects(FullNode(false), online, config::DefaultConfiguration());
  REQUIRE(report.ok());
  CHECK_FALSE(report->selected.has_value());
  REQUIRE(report->preemption_node.has_value());
  CHECK(*report->preemption_node == "n");
  CHECK(report->preemption_victims == std::vector<std::string>{"default/training"});
  CHECK_THAT(ExplainTable(*report),
             Catch::Contains("preemption would nominate n and evict default/training"));
  CHECK_THAT(ExplainJson(*report), Catch::Contains("\"victims\""));
}

TEST_CASE("explain says when NonPreemptible pods stand in the way", "[explain][preemption]") {
  const api::Pod online = PodBuilder("online").Container({{"cpu", "2"}}).Priority(10000).Build();
  auto report = ExplainObjects(FullNode(true), online, config::DefaultConfiguration());
  REQUIRE(report.ok());
  CHECK_FALSE(report->preemption_node.has_value());
  REQUIRE(report->message.has_value());
  CHECK(*report->message ==
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 "
        "NonPreemptible pods cannot be preempted..");

  // The system classes' priority overrides it.
  const api::Pod critical =
      PodBuilder("critical").Container({{"cpu", "2"}}).Priority(2000001000).Build();
  auto overridden = ExplainObjects(FullNode(true), critical, config::DefaultConfiguration());
  REQUIRE(overridden.ok());
  CHECK(overridden->preemption_node == "n");
}

}  // namespace
}  // namespace kubesched::scheduler

namespace kubesched::scheduler {
namespace {

TEST_CASE("a PriorityClass with preemptionPolicy Never preempts nobody", "[explain][preemption]") {
  api::PriorityClass polite;
  polite.meta.name = "polite";
  polite.value = 10000;
  polite.preemption_policy = api::PreemptionPolicy::kNever;
  std::vector<api::Object> cluster = FullNode(false);
  cluster.push_back(polite);
  const api::Pod pod = PodBuilder("p").Container({{"cpu", "2"}}).Build();
  api::Pod with_class = pod;
  with_class.spec.priority_class_name = "polite";
  auto report = ExplainObjects(cluster, with_class, config::DefaultConfiguration());
  REQUIRE(report.ok());
  CHECK_FALSE(report->preemption_node.has_value());
  REQUIRE(report->message.has_value());
  CHECK_THAT(*report->message,
             Catch::EndsWith("preemption: not eligible due to preemptionPolicy=Never.."));
  // The pod's own policy wins over the class's.
  with_class.spec.preemption_policy = api::PreemptionPolicy::kPreemptLowerPriority;
  auto own = ExplainObjects(cluster, with_class, config::DefaultConfiguration());
  REQUIRE(own.ok());
  CHECK(own->preemption_node == "n");
}

}  // namespace
}  // namespace kubesched::scheduler

namespace kubesched::scheduler {
namespace {

TEST_CASE("annotating a PriorityClass NonPreemptible protects pods already running with it",
          "[preemption][scheduler]") {
  cluster::EmbeddedCluster cluster;
  util::FakeClock clock(absl::FromUnixSeconds(1'700'000'000));
  DeferredBindExecutor binds;
  SchedulerDeps deps{&clock, &cluster, &binds, nullptr, 1, 1};
  deps.deleter = &cluster;
  auto created = Scheduler::Create(config::DefaultConfiguration(), deps);
  REQUIRE(created.ok());
  Scheduler& scheduler = **created;
  cluster.Watch(&scheduler);
  api::PriorityClass training;
  training.meta.name = "training";
  training.value = 1000;
  REQUIRE(cluster.Create(training).ok());
  REQUIRE(cluster.Create(NodeBuilder("n").Capacity({{"cpu", "2"}, {"pods", "10"}}).Build()).ok());
  api::Pod train = PodBuilder("train").Container({{"cpu", "2"}}).Build();
  train.spec.priority_class_name = "training";
  REQUIRE(cluster.Create(train).ok());
  DriveToQuiescence(cluster, scheduler, binds, clock);
  REQUIRE(cluster.GetPod("default/train")->spec.node_name == "n");

  training.meta.annotations["kubesched.io/preemption-policy"] = "NonPreemptible";
  scheduler.OnPriorityClass({client::EventType::kModified, nullptr,
                             std::make_shared<const api::PriorityClass>(training)});
  REQUIRE(
      cluster.Create(PodBuilder("online").Container({{"cpu", "2"}}).Priority(10000).Build()).ok());
  DriveToQuiescence(cluster, scheduler, binds, clock);
  CHECK(cluster.GetPod("default/train") != nullptr);
  CHECK(cluster.GetPod("default/online")->spec.node_name.empty());
}

}  // namespace
}  // namespace kubesched::scheduler
