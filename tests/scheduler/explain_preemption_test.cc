// explain shows what preemption would do for a pod no node fits, and says when NonPreemptible
// pods are what stand in the way.

#include <catch2/catch.hpp>

#include "config/config.h"
#include "scheduler/report_output.h"
#include "scheduler/simulation.h"
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
