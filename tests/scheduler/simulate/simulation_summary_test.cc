#include "scheduler/simulate/simulation_summary.h"

#include <catch2/catch.hpp>

namespace kubesched::scheduler {
namespace {

PodResult Pending(std::string name, std::string message, std::optional<std::string> queue = {}) {
  PodResult pod;
  pod.namespace_name = "default";
  pod.name = std::move(name);
  pod.message = std::move(message);
  pod.queue = std::move(queue);
  return pod;
}

TEST_CASE("unschedulable reasons drop the node counts and count each pod once", "[simulate]") {
  std::vector<PodResult> pods = {
      Pending("a",
              "0/5 nodes are available: 3 Insufficient cpu, 2 node(s) had untolerated "
              "taint(s). preemption: 0/5 nodes are available: 5 Preemption is not helpful."),
      Pending("b", "0/5 nodes are available: 5 Insufficient cpu."),
      Pending("c", "pod group ml/job cannot be placed whole")};
  PodResult placed = Pending("d", "");
  placed.node = "n";
  pods.push_back(placed);
  const std::vector<ReasonCount> reasons = UnschedulableReasons(pods);
  REQUIRE(reasons.size() == 3);
  CHECK(reasons[0].reason == "Insufficient cpu");
  CHECK(reasons[0].pods == 2);
  CHECK(reasons[1].reason == "node(s) had untolerated taint(s)");
  CHECK(reasons[1].pods == 1);
  CHECK(reasons[2].reason == "pod group ml/job cannot be placed whole");
}

TEST_CASE("queue counts split scheduled and pending pods", "[simulate]") {
  PodResult placed = Pending("a", "", "root.ml");
  placed.node = "n";
  const auto counts = QueueCounts({placed, Pending("b", "x", "root.ml"), Pending("c", "x")});
  REQUIRE(counts.size() == 2);
  CHECK(counts[0].queue == "-");
  CHECK(counts[1].queue == "root.ml");
  CHECK(counts[1].pods == 2);
  CHECK(counts[1].scheduled == 1);
  CHECK(counts[1].pending == 1);
  CHECK_THAT(SimulationSummaryTable(SimulationReport{.pod_results = {placed}}),
             Catch::Contains("root.ml  1     1          0"));
}

TEST_CASE("the pods output accepts all, pending and none only", "[simulate]") {
  CHECK(ParsePodsOutput("all") == PodsOutput::kAll);
  CHECK(ParsePodsOutput("pending") == PodsOutput::kPending);
  CHECK(ParsePodsOutput("none") == PodsOutput::kNone);
  CHECK_FALSE(ParsePodsOutput("some").has_value());
}

}  // namespace
}  // namespace kubesched::scheduler
