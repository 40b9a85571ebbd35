// simulate --compare: the same input under LeastAllocated and MostAllocated moves the pods the
// two strategies place differently; --pods-output and the summary bound what is printed.

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "scheduler/simulate/compare.h"
#include "scheduler/simulate/report_output.h"
#include "scheduler/simulate/simulation.h"
#include "scheduler/simulate/simulation_summary.h"
#include "tests/testing/builders.h"

namespace kubesched::scheduler {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;

config::Configuration Strategy(const std::string& type) {
  auto config = config::ParseConfiguration(absl::StrCat(R"(
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: kubesched
  pluginConfig:
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: )",
                                                        type, "\n"));
  REQUIRE(config.ok());
  return *config;
}

// node-a half full, node-b empty; one pending pod that fits either, one that fits neither.
SimulationInput Input() {
  SimulationInput input;
  input.cluster_objects = std::vector<api::Object>{
      NodeBuilder("node-a").Capacity({{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "10"}}).Build(),
      NodeBuilder("node-b").Capacity({{"cpu", "4"}, {"memory", "8Gi"}, {"pods", "10"}}).Build(),
      PodBuilder("busy").Container({{"cpu", "2"}}).NodeName("node-a").Build(),
      PodBuilder("new").Container({{"cpu", "1"}}).Build(),
      PodBuilder("huge").Container({{"cpu", "16"}}).Build()};
  return input;
}

TEST_CASE("compare moves the pod that LeastAllocated and MostAllocated place apart",
          "[simulate][compare]") {
  auto least = RunSimulation(Input(), Strategy("LeastAllocated"));
  auto most = RunSimulation(Input(), Strategy("MostAllocated"));
  REQUIRE(least.ok());
  REQUIRE(most.ok());
  const SimulationComparison comparison = CompareSimulations(*least, *most);
  REQUIRE(comparison.moved.size() == 1);
  CHECK(comparison.moved[0].pod == "default/new");
  CHECK(comparison.moved[0].before == "node-b");
  CHECK(comparison.moved[0].after == "node-a");
  CHECK(comparison.now_schedulable.empty());
  CHECK(comparison.now_unschedulable.empty());
  REQUIRE(comparison.nodes.size() == 2);
  CHECK(comparison.nodes[0].pods_before + comparison.nodes[1].pods_before ==
        comparison.nodes[0].pods_after + comparison.nodes[1].pods_after);
  CHECK_THAT(ComparisonTable(comparison), Catch::Contains("default/new  node-b  node-a"));
  CHECK_THAT(ComparisonJson(comparison), Catch::Contains("\"moved\""));

  // The same configuration twice changes nothing.
  const SimulationComparison same = CompareSimulations(*least, *least);
  CHECK(same.moved.empty());
  CHECK(same.nodes.empty());
}

TEST_CASE("compare reports pods that become schedulable and unschedulable", "[simulate][compare]") {
  // Without NodeResourcesFit nothing checks requests: the huge pod fits.
  auto unchecked = config::ParseConfiguration(R"(
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: kubesched
  plugins:
    multiPoint:
      disabled:
      - name: NodeResourcesFit
)");
  REQUIRE(unchecked.ok());
  auto checked = RunSimulation(Input(), Strategy("LeastAllocated"));
  auto loose = RunSimulation(Input(), *unchecked);
  REQUIRE(checked.ok());
  REQUIRE(loose.ok());
  const SimulationComparison forward = CompareSimulations(*checked, *loose);
  REQUIRE(forward.now_schedulable.size() == 1);
  CHECK(forward.now_schedulable[0].pod == "default/huge");
  CHECK_FALSE(forward.now_schedulable[0].before.has_value());
  const SimulationComparison backward = CompareSimulations(*loose, *checked);
  REQUIRE(backward.now_unschedulable.size() == 1);
  CHECK(backward.now_unschedulable[0].pod == "default/huge");
  CHECK_THAT(ComparisonTable(backward), Catch::Contains("Pods that become unschedulable (1)"));
}

TEST_CASE("pods output none prints no pod lines but keeps the summary", "[simulate]") {
  auto report = RunSimulation(Input(), config::DefaultConfiguration());
  REQUIRE(report.ok());
  const std::string summary = SimulationSummaryTable(*report);
  CHECK_THAT(summary, Catch::Contains("1     Insufficient cpu"));
  SimulationReport none = *report;
  LimitPodResults(PodsOutput::kNone, &none);
  const std::string table = SimulationTable(none) + summary;
  INFO(table);
  CHECK_THAT(table, !Catch::Contains("huge"));  // no pod line
  CHECK_THAT(table, !Catch::Contains("NAMESPACE"));
  CHECK_THAT(table, Catch::Contains("2 pods: 1 scheduled, 1 unschedulable"));

  SimulationReport pending = *report;
  LimitPodResults(PodsOutput::kPending, &pending);
  REQUIRE(pending.pod_results.size() == 1);
  CHECK(pending.pod_results[0].name == "huge");
}

}  // namespace
}  // namespace kubesched::scheduler
