// explain's default table stays short on a large cluster, and a bound pod is judged as if it were
// still pending.

#include <catch2/catch.hpp>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "config/config.h"
#include "scheduler/simulate/report_output.h"
#include "scheduler/simulate/simulation.h"
#include "tests/testing/builders.h"

namespace kubesched::scheduler {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;

// 40 nodes with room for a 2-CPU pod and 60 without.
std::vector<api::Object> GeneratedCluster() {
  std::vector<api::Object> objects;
  for (int i = 0; i < 100; ++i) {
    const std::string cpu = i < 40 ? "8" : "1";
    objects.push_back(NodeBuilder(absl::StrCat("node-", i))
                          .Capacity({{"cpu", cpu}, {"memory", "16Gi"}, {"pods", "110"}})
                          .Build());
  }
  return objects;
}

int CountLines(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

TEST_CASE("explain's summary lists the top nodes and groups the failed ones", "[explain]") {
  const api::Pod pod = PodBuilder("web").Container({{"cpu", "2"}}).Build();
  auto report = ExplainObjects(GeneratedCluster(), pod, config::DefaultConfiguration());
  REQUIRE(report.ok());
  const std::string summary = ExplainSummaryTable(*report, 5);
  INFO(summary);
  CHECK_THAT(summary, Catch::Contains("40/100 nodes are available: 60 Insufficient cpu."));
  CHECK_THAT(summary, Catch::Contains("Top 5 of 40 feasible node(s)"));
  CHECK_THAT(summary, Catch::Contains("NodeResourcesFit"));  // a column per score plugin
  CHECK_THAT(summary, Catch::Contains("60     NodeResourcesFit: Insufficient cpu"));
  CHECK_THAT(summary, Catch::Contains("(+55 more)"));
  CHECK_THAT(summary, Catch::Contains("selected: " + *report->selected));
  CHECK(CountLines(summary) < 20);
  // Every node, one line each, is still there when asked for.
  CHECK(CountLines(ExplainTable(*report)) > 100);
}

TEST_CASE("explain's nodes come best first", "[explain]") {
  const api::Pod pod = PodBuilder("web").Container({{"cpu", "2"}}).Build();
  auto report = ExplainObjects(GeneratedCluster(), pod, config::DefaultConfiguration());
  REQUIRE(report.ok());
  REQUIRE(report->nodes.size() == 100);
  for (size_t i = 1; i < report->nodes.size(); ++i) {
    const auto& a = report->nodes[i - 1];
    const auto& b = report->nodes[i];
    CHECK((a.feasible > b.feasible || (a.feasible == b.feasible && a.total >= b.total)));
  }
  CHECK(report->nodes.front().feasible);
  CHECK_FALSE(report->nodes.back().feasible);
}

TEST_CASE("explain judges a bound pod as if it were pending", "[explain]") {
  // The pod fills its node: counted twice, it would fit nowhere.
  std::vector<api::Object> cluster = {
      NodeBuilder("a").Capacity({{"cpu", "4"}, {"pods", "10"}}).Build(),
      NodeBuilder("b").Capacity({{"cpu", "2"}, {"pods", "10"}}).Build()};
  const api::Pod bound = PodBuilder("big").Container({{"cpu", "3"}}).NodeName("a").Build();
  cluster.push_back(bound);
  auto report = ExplainObjects(cluster, bound, config::DefaultConfiguration());
  REQUIRE(report.ok());
  INFO(ExplainSummaryTable(*report, 10));
  CHECK(report->selected == "a");
  CHECK(ExplainHistogram(*report) == "1/2 nodes are available: 1 Insufficient cpu.");

  // A pod file naming a node the cluster does not hold is judged the same way.
  auto alone = ExplainObjects({cluster[0], cluster[1]}, bound, config::DefaultConfiguration());
  REQUIRE(alone.ok());
  CHECK(alone->selected == "a");
}

}  // namespace
}  // namespace kubesched::scheduler
