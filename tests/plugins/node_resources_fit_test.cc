// NodeResourcesFit: filter reasons and codes, ignored resources, and the three scoring
// strategies (several numbers checked against upstream's own test vectors).

#include "plugins/node_resources_fit/node_resources_fit.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "config/config.h"
#include "tests/plugins/plugin_fixture.h"

namespace kubesched {
namespace {

using framework::Code;
using framework::CycleState;
using plugin_testing::Cluster;
using plugin_testing::Info;
using plugin_testing::NodeBuilder;
using plugin_testing::PodBuilder;
using plugin_testing::Unwrap;
using plugin_testing::Verdict;
using Requests = std::vector<std::pair<std::string, std::string>>;

std::unique_ptr<plugins::NodeResourcesFit> MakeFit(config::NodeResourcesFitArgs args = {}) {
  return Unwrap<plugins::NodeResourcesFit>(plugins::NewNodeResourcesFit(args, {}));
}

// The node of upstream's TestEnoughRequests: cpu 10m, memory 20, pods 32, example.com/aaa 5,
// ephemeral-storage 20, hugepages-2Mi 5.
NodeBuilder SmallNode(const std::string& pods = "32") {
  return NodeBuilder("node1").Capacity({{"cpu", "10m"},
                                        {"memory", "20"},
                                        {"pods", pods},
                                        {"example.com/aaa", "5"},
                                        {"ephemeral-storage", "20"},
                                        {"hugepages-2Mi", "5"}});
}

framework::Status RunFilter(plugins::NodeResourcesFit& plugin, const framework::Snapshot& snapshot,
                            const PodBuilder& pod) {
  const auto info = Info(pod);
  CycleState state;
  const auto outcome = plugin.PreFilter(state, *info, snapshot);
  REQUIRE(outcome.status.IsSuccess());
  return plugin.Filter(state, *info, *snapshot.Get("node1"));
}

config::NodeResourcesFitArgs Ignoring(std::vector<std::string> resources,
                                      std::vector<std::string> groups) {
  config::NodeResourcesFitArgs args;
  args.ignored_resources = std::move(resources);
  args.ignored_resource_groups = std::move(groups);
  return args;
}

struct FilterCase {
  std::string name;
  Requests existing;  // requests of one pod already on node1 (none when empty)
  PodBuilder pod;
  std::vector<std::string> verdict;
  Code code = Code::kSuccess;
  config::NodeResourcesFitArgs args = {};
};

TEST_CASE("fit filter reports upstream's reasons and codes", "[plugins][noderesourcesfit]") {
  const std::vector<FilterCase> cases = {
      {"a pod that requests nothing fits",
       {{"cpu", "10m"}, {"memory", "20"}},
       PodBuilder("p"),
       {"pass"}},
      {"requests within the free capacity fit",
       {{"cpu", "5m"}, {"memory", "10"}},
       PodBuilder("p").Container({{"cpu", "5m"}, {"memory", "10"}}),
       {"pass"}},
      {"several missing resources are all reported, cpu before memory",
       {{"cpu", "10m"}, {"memory", "20"}},
       PodBuilder("p").Container({{"cpu", "1m"}, {"memory", "1"}}),
       {"Insufficient cpu", "Insufficient memory"},
       Code::kUnschedulable},
      {"a request larger than the whole node is unresolvable",
       {},
       PodBuilder("p").Container({{"cpu", "11m"}}),
       {"Insufficient cpu"},
       Code::kUnschedulableAndUnresolvable},
      {"the largest init container counts, not the sum",
       {{"cpu", "5m"}},
       PodBuilder("p").InitContainer({{"cpu", "5m"}}).Container({{"cpu", "3m"}}),
       {"pass"}},
      {"an init container larger than the free cpu does not fit",
       {{"cpu", "5m"}},
       PodBuilder("p").InitContainer({{"cpu", "6m"}}).Container({{"cpu", "1m"}}),
       {"Insufficient cpu"},
       Code::kUnschedulable},
      {"sidecar init containers add to the containers",
       {{"memory", "10"}},
       PodBuilder("p")
           .InitContainer({{"memory", "6"}}, /*sidecar=*/true)
           .Container({{"memory", "5"}}),
       {"Insufficient memory"},
       Code::kUnschedulable},
      {"extended resources are checked",
       {{"example.com/aaa", "5"}},
       PodBuilder("p").Container({{"example.com/aaa", "1"}}),
       {"Insufficient example.com/aaa"},
       Code::kUnschedulable},
      {"an extended resource the node lacks is unresolvable",
       {},
       PodBuilder("p").Container({{"example.com/bbb", "1"}}),
       {"Insufficient example.com/bbb"},
       Code::kUnschedulableAndUnresolvable},
      {"hugepages are checked",
       {},
       PodBuilder("p").Container({{"hugepages-2Mi", "6"}}),
       {"Insufficient hugepages-2Mi"},
       Code::kUnschedulableAndUnresolvable},
      {"ephemeral storage is checked",
       {{"ephemeral-storage", "15"}},
       PodBuilder("p").Container({{"ephemeral-storage", "6"}}),
       {"Insufficient ephemeral-storage"},
       Code::kUnschedulable},
      {"ignoredResources skips an extended resource",
       {},
       PodBuilder("p").Container({{"example.com/bbb", "1"}}),
       {"pass"},
       Code::kSuccess,
       Ignoring({"example.com/bbb"}, {})},
      {"ignoredResourceGroups skip extended resources but not kubernetes.io ones",
       {},
       PodBuilder("p").Container({{"example.com/bbb", "1"}, {"kubernetes.io/something", "1"}}),
       {"Insufficient kubernetes.io/something"},
       Code::kUnschedulableAndUnresolvable,
       Ignoring({}, {"example.com", "kubernetes.io"})},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      Cluster cluster;
      cluster.Node(SmallNode());
      if (!c.existing.empty()) cluster.Pod("node1", PodBuilder("existing").Container(c.existing));
      const auto& snapshot = cluster.Build();
      auto plugin = MakeFit(c.args);
      const auto status = RunFilter(*plugin, snapshot, c.pod);
      CHECK(Verdict(status) == c.verdict);
      CHECK(status.code() == c.code);
    }
  }
}

TEST_CASE("fit filter counts pods against the node's pod capacity", "[plugins][noderesourcesfit]") {
  SECTION("a full node is unschedulable, even for a pod without requests") {
    Cluster cluster;
    const auto& snapshot = cluster.Node(SmallNode("1")).Pod("node1", PodBuilder("e")).Build();
    const auto status = RunFilter(*MakeFit(), snapshot, PodBuilder("p"));
    CHECK(Verdict(status) == std::vector<std::string>{"Too many pods"});
    CHECK(status.code() == Code::kUnschedulable);
  }
  SECTION("too many pods comes before the resource reasons") {
    Cluster cluster;
    const auto& snapshot = cluster.Node(SmallNode("1"))
                               .Pod("node1", PodBuilder("e").Container({{"cpu", "10m"}}))
                               .Build();
    const auto status = RunFilter(*MakeFit(), snapshot, PodBuilder("p").Container({{"cpu", "1m"}}));
    CHECK(Verdict(status) == std::vector<std::string>{"Too many pods", "Insufficient cpu"});
    CHECK(status.code() == Code::kUnschedulable);
  }
  SECTION("a node that takes no pods at all is unresolvable") {
    Cluster cluster;
    const auto& snapshot = cluster.Node(SmallNode("0")).Build();
    const auto status = RunFilter(*MakeFit(), snapshot, PodBuilder("p"));
    CHECK(Verdict(status) == std::vector<std::string>{"Too many pods"});
    CHECK(status.code() == Code::kUnschedulableAndUnresolvable);
  }
}

// Preemption judges what-if nodes through FilterRequests: on given sums it answers as Filter on a
// node holding exactly those pods.
TEST_CASE("fit FilterRequests on given sums equals Filter on a node with those pods",
          "[plugins][noderesourcesfit]") {
  const auto fit = MakeFit();
  const PodBuilder incoming = PodBuilder("p").Container({{"cpu", "4m"}, {"example.com/aaa", "2"}});
  const auto info = Info(incoming);
  const Requests big = {{"cpu", "6m"}, {"example.com/aaa", "3"}};
  const Requests small = {{"cpu", "3m"}, {"example.com/aaa", "1"}};
  // One node per subset of {big, small}; FilterRequests is asked on the empty node with the
  // subset's sums.
  Cluster empty_cluster;
  const auto& empty = empty_cluster.Node(SmallNode("2")).Build();
  CycleState state;
  REQUIRE(fit->PreFilter(state, *info, empty).status.IsSuccess());
  for (int subset = 0; subset < 4; ++subset) {
    Cluster cluster;
    cluster.Node(SmallNode("2"));
    api::ResourceList sums;
    int64_t pods = 0;
    for (int i = 0; i < 2; ++i) {
      if ((subset & (1 << i)) == 0) continue;
      const PodBuilder pod = PodBuilder(i == 0 ? "big" : "small").Container(i == 0 ? big : small);
      cluster.Pod("node1", pod);
      sums.Add(Info(pod)->requests);
      ++pods;
    }
    const auto& snapshot = cluster.Build();
    const auto filtered = fit->Filter(state, *info, *snapshot.Get("node1"));
    const auto judged = fit->FilterRequests(state, *info, *empty.Get("node1"), sums, pods);
    INFO("subset " << subset);
    CHECK(Verdict(judged) == Verdict(filtered));
    CHECK(judged.code() == filtered.code());
  }
  // The subsets cover fitting, one reason and all three.
  CHECK(fit->FilterRequests(state, *info, *empty.Get("node1"), {}, 0).IsSuccess());
  api::ResourceList both = Info(PodBuilder("x").Container(big))->requests;
  both.Add(Info(PodBuilder("y").Container(small))->requests);
  CHECK(Verdict(fit->FilterRequests(state, *info, *empty.Get("node1"), both, 2)) ==
        std::vector<std::string>{"Too many pods", "Insufficient cpu",
                                 "Insufficient example.com/aaa"});
}

TEST_CASE("fit filter lists scalar resources in ascending resource id order",
          "[plugins][noderesourcesfit]") {
  // Interned here first, so "zz" gets the lower id although it sorts after "aa" by name.
  api::InternResource("fit-order.test/zz");
  api::InternResource("fit-order.test/aa");
  Cluster cluster;
  const auto& snapshot = cluster.Node(SmallNode()).Build();
  const auto status = RunFilter(
      *MakeFit(), snapshot,
      PodBuilder("p").Container({{"fit-order.test/aa", "1"}, {"fit-order.test/zz", "1"}}));
  CHECK(Verdict(status) == std::vector<std::string>{"Insufficient fit-order.test/zz",
                                                    "Insufficient fit-order.test/aa"});
}

TEST_CASE("fit filter reasons are built once per resource", "[plugins][noderesourcesfit]") {
  Cluster cluster;
  const auto& snapshot = cluster.Node(SmallNode()).Build();
  auto plugin = MakeFit();
  const auto pod = PodBuilder("p").Container({{"example.com/ccc", "1"}});
  const auto first = RunFilter(*plugin, snapshot, pod);
  const auto second = RunFilter(*plugin, snapshot, pod);
  REQUIRE(first.reasons().size() == 1);
  REQUIRE(second.reasons().size() == 1);
  CHECK(first.reasons()[0].data() == second.reasons()[0].data());
}

TEST_CASE("fit filter without its PreFilter state is an error", "[plugins][noderesourcesfit]") {
  Cluster cluster;
  const auto& snapshot = cluster.Node(SmallNode()).Build();
  CycleState state;
  const auto pod = Info(PodBuilder("p"));
  CHECK(MakeFit()->Filter(state, *pod, *snapshot.Get("node1")).code() == Code::kError);
}

// --- Scoring -------------------------------------------------------------------------------

config::NodeResourcesFitArgs Strategy(config::ScoringStrategyType type,
                                      std::vector<config::ResourceWeight> resources,
                                      std::vector<config::UtilizationShapePoint> shape = {}) {
  config::NodeResourcesFitArgs args;
  args.scoring_strategy.type = type;
  args.scoring_strategy.resources = std::move(resources);
  args.scoring_strategy.shape = std::move(shape);
  return args;
}

NodeBuilder Sized(const std::string& name, const std::string& cpu, const std::string& memory,
                  Requests extra = {}) {
  Requests capacity = {{"pods", "32"}, {"cpu", cpu}, {"memory", memory}};
  capacity.insert(capacity.end(), extra.begin(), extra.end());
  return NodeBuilder(name).Capacity(capacity);
}

// The incoming pod of several upstream scoring cases.
PodBuilder TwoContainers() {
  return PodBuilder("p")
      .Container({{"cpu", "1000"}, {"memory", "2000"}})
      .Container({{"cpu", "2000"}, {"memory", "3000"}});
}

using Scores = std::map<std::string, int64_t>;

Scores Score(const config::NodeResourcesFitArgs& args, Cluster& cluster, const PodBuilder& pod) {
  auto plugin = MakeFit(args);
  const auto scores = plugin_testing::ScoreAll(*plugin, cluster.Build(), *Info(pod));
  REQUIRE(scores.has_value());
  return *scores;
}

TEST_CASE("least allocated prefers the emptier node", "[plugins][noderesourcesfit]") {
  using config::ScoringStrategyType::kLeastAllocated;
  SECTION("equal weights (upstream: 37 and 50)") {
    Cluster cluster;
    cluster.Node(Sized("node1", "4000", "10000")).Node(Sized("node2", "6000", "10000"));
    CHECK(Score(Strategy(kLeastAllocated, {{"cpu", 1}, {"memory", 1}}), cluster, TwoContainers()) ==
          Scores{{"node1", 37}, {"node2", 50}});
  }
  SECTION("memory weighted twice (upstream: 41 and 50)") {
    Cluster cluster;
    cluster.Node(Sized("node1", "4000", "10000")).Node(Sized("node2", "6000", "10000"));
    CHECK(Score(Strategy(kLeastAllocated, {{"memory", 2}, {"cpu", 1}}), cluster, TwoContainers()) ==
          Scores{{"node1", 41}, {"node2", 50}});
  }
  SECTION("a node with no memory, or no cpu, is scored on the other by its weight alone") {
    Cluster cluster;
    cluster.Node(Sized("node1", "4000", "0")).Node(Sized("node2", "0", "10000"));
    CHECK(Score(Strategy(kLeastAllocated, {{"memory", 2}, {"cpu", 1}}), cluster, TwoContainers()) ==
          Scores{{"node1", 25}, {"node2", 50}});  // (4000 - 3000) / 4000 and (10000 - 5000) / 10000
  }
  SECTION("existing pods count, with explicit zero memory staying zero (upstream: 70 and 57)") {
    Cluster cluster;
    cluster.Node(Sized("node1", "10000", "20000"))
        .Node(Sized("node2", "10000", "20000"))
        .Pod("node1", PodBuilder("a").Container({{"cpu", "3000"}, {"memory", "0"}}))
        .Pod("node1", PodBuilder("b").Container({{"cpu", "3000"}, {"memory", "0"}}))
        .Pod("node2", PodBuilder("c").Container({{"cpu", "3000"}, {"memory", "0"}}))
        .Pod("node2", PodBuilder("d").Container({{"cpu", "3000"}, {"memory", "5000"}}));
    CHECK(Score({}, cluster, PodBuilder("p")) == Scores{{"node1", 70}, {"node2", 57}});
  }
}

TEST_CASE("most allocated prefers the fuller node", "[plugins][noderesourcesfit]") {
  using config::ScoringStrategyType::kMostAllocated;
  SECTION("memory weighted twice (upstream: 58 and 50)") {
    Cluster cluster;
    cluster.Node(Sized("node1", "4000", "10000")).Node(Sized("node2", "6000", "10000"));
    CHECK(Score(Strategy(kMostAllocated, {{"memory", 2}, {"cpu", 1}}), cluster, TwoContainers()) ==
          Scores{{"node1", 58}, {"node2", 50}});
  }
  SECTION("containers without requests count the non-zero defaults (upstream: 80 and 30)") {
    Cluster cluster;
    cluster.Node(Sized("node1", "250m", "1000Mi"))
        .Node(Sized("node2", "250m", "1000Mi"))
        .Pod("node1", PodBuilder("a").Container({}))
        .Pod("node1", PodBuilder("b").Container({}));
    CHECK(Score(Strategy(kMostAllocated, {{"cpu", 1}, {"memory", 1}}), cluster,
                PodBuilder("p").Container({})) == Scores{{"node1", 80}, {"node2", 30}});
  }
  SECTION("an extended resource the pod does not request is left out (upstream: 50 and 50)") {
    Cluster cluster;
    cluster.Node(Sized("node1", "6000", "10000"))
        .Node(Sized("node2", "6000", "10000", {{"abc.com/xyz", "4"}}));
    const auto args = Strategy(kMostAllocated, {{"cpu", 1}, {"memory", 1}, {"abc.com/xyz", 1}});
    CHECK(Score(args, cluster, TwoContainers()) == Scores{{"node1", 50}, {"node2", 50}});
  }
  SECTION("an extended resource the pod requests counts (upstream: 50 and 40)") {
    Cluster cluster;
    cluster.Node(Sized("node1", "6000", "10000", {{"abc.com/xyz", "4"}}))
        .Node(Sized("node2", "6000", "10000", {{"abc.com/xyz", "10"}}));
    const auto args = Strategy(kMostAllocated, {{"cpu", 1}, {"memory", 1}, {"abc.com/xyz", 1}});
    const auto pod =
        PodBuilder("p").Container({{"cpu", "3000"}, {"memory", "5000"}, {"abc.com/xyz", "2"}});
    CHECK(Score(args, cluster, pod) == Scores{{"node1", 50}, {"node2", 40}});
  }
}

TEST_CASE("requested to capacity ratio follows the configured shape",
          "[plugins][noderesourcesfit]") {
  using config::ScoringStrategyType::kRequestedToCapacityRatio;
  SECTION("a falling shape spreads (upstream: 38 and 50, rounded)") {
    Cluster cluster;
    cluster.Node(Sized("node1", "4000", "10000"))
        .Node(Sized("node2", "6000", "10000"))
        .Pod("node1", PodBuilder("a").Container({{"cpu", "3000"}, {"memory", "5000"}}))
        .Pod("node2", PodBuilder("b").Container({{"cpu", "3000"}, {"memory", "5000"}}));
    const auto args =
        Strategy(kRequestedToCapacityRatio, {{"cpu", 1}, {"memory", 1}}, {{0, 10}, {100, 0}});
    CHECK(Score(args, cluster, PodBuilder("p")) == Scores{{"node1", 38}, {"node2", 50}});
  }
  SECTION("a rising shape over weighted extended resources packs (upstream: 4 and 3)") {
    Cluster cluster;
    cluster
        .Node(Sized("node1", "4000m", "10485760000",
                    {{"intel.com/foo", "8"}, {"intel.com/bar", "4"}}))
        .Node(Sized("node2", "4000m", "10485760000",
                    {{"intel.com/foo", "4"}, {"intel.com/bar", "8"}}));
    const auto args = Strategy(kRequestedToCapacityRatio,
                               {{"intel.com/foo", 3}, {"intel.com/bar", 5}}, {{0, 0}, {100, 1}});
    const auto pod = PodBuilder("p").Container({{"intel.com/foo", "2"}, {"intel.com/bar", "2"}});
    CHECK(Score(args, cluster, pod) == Scores{{"node1", 4}, {"node2", 3}});
  }
  SECTION("a resource scoring zero is left out of the weighted mean") {
    // cpu at 50% scores 0 on this shape; memory at 100% scores 100. Only memory counts.
    Cluster cluster;
    cluster.Node(Sized("node1", "2", "100"));
    const auto args =
        Strategy(kRequestedToCapacityRatio, {{"cpu", 1}, {"memory", 1}}, {{50, 0}, {100, 10}});
    CHECK(Score(args, cluster, PodBuilder("p").Container({{"cpu", "1"}, {"memory", "100"}})) ==
          Scores{{"node1", 100}});
  }
}

TEST_CASE("fit score works when PreScore did not run", "[plugins][noderesourcesfit]") {
  Cluster cluster;
  const auto& snapshot =
      cluster.Node(Sized("node1", "4000", "10000")).Node(Sized("node2", "6000", "10000")).Build();
  auto plugin = MakeFit();
  CycleState state;
  const auto pod = Info(TwoContainers());
  CHECK(plugin->Score(state, *pod, *snapshot.Get("node1")) == 37);
  CHECK(plugin->Score(state, *pod, *snapshot.Get("node2")) == 50);
}

// --- Args ----------------------------------------------------------------------------------

TEST_CASE("fit args are validated with the field named", "[plugins][noderesourcesfit]") {
  using config::ScoringStrategyType;
  struct Case {
    std::string name;
    config::PluginArgs args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"zero weight", Strategy(ScoringStrategyType::kLeastAllocated, {{"cpu", 0}}),
       "NodeResourcesFit: scoringStrategy.resources[0].weight: must be in 1..100"},
      {"weight above 100",
       Strategy(ScoringStrategyType::kMostAllocated, {{"cpu", 1}, {"memory", 101}}),
       "NodeResourcesFit: scoringStrategy.resources[1].weight: must be in 1..100"},
      {"duplicate resource",
       Strategy(ScoringStrategyType::kLeastAllocated, {{"cpu", 1}, {"cpu", 2}}),
       "NodeResourcesFit: scoringStrategy.resources[1].name: duplicate resource cpu"},
      {"ratio without a shape",
       Strategy(ScoringStrategyType::kRequestedToCapacityRatio, {{"cpu", 1}}),
       "NodeResourcesFit: scoringStrategy.requestedToCapacityRatio.shape: must have at least one "
       "point"},
      {"shape score above 10",
       Strategy(ScoringStrategyType::kRequestedToCapacityRatio, {{"cpu", 1}}, {{0, 11}}),
       "NodeResourcesFit: scoringStrategy.requestedToCapacityRatio.shape[0].score: must be in "
       "0..10"},
      {"shape not increasing",
       Strategy(ScoringStrategyType::kRequestedToCapacityRatio, {{"cpu", 1}}, {{50, 1}, {50, 2}}),
       "NodeResourcesFit: scoringStrategy.requestedToCapacityRatio.shape[1].utilization: must be "
       "greater than the previous point's"},
      {"resource group with a slash", Ignoring({}, {"example.com/x"}),
       "NodeResourcesFit: ignoredResourceGroups[0]: must not contain '/'"},
      {"args of another plugin", config::BalancedAllocationArgs{},
       "NodeResourcesFit: args: wrong args type for this plugin"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      const auto made = plugins::NewNodeResourcesFit(c.args, {});
      REQUIRE_FALSE(made.ok());
      CHECK(made.status().code() == absl::StatusCode::kInvalidArgument);
      CHECK(std::string(made.status().message()) == c.message);
    }
  }
}

TEST_CASE("fit with an empty resource list scores cpu and memory", "[plugins][noderesourcesfit]") {
  Cluster cluster;
  cluster.Node(Sized("node1", "4000", "10000")).Node(Sized("node2", "6000", "10000"));
  CHECK(Score(Strategy(config::ScoringStrategyType::kLeastAllocated, {}), cluster,
              TwoContainers()) == Scores{{"node1", 37}, {"node2", 50}});
}

// --- Watermark -----------------------------------------------------------------------------

config::NodeResourcesFitArgs Watermark(double high, double low,
                                       std::vector<config::ResourceWeight> resources = {
                                           {"cpu", 1}, {"memory", 1}}) {
  auto args = Strategy(config::ScoringStrategyType::kWatermark, std::move(resources));
  args.scoring_strategy.watermark = {high, low};
  return args;
}

TEST_CASE("watermark hysteresis: stack from high on, spread again below low",
          "[plugins][noderesourcesfit][watermark]") {
  using Mode = plugins::NodeResourcesFit::WatermarkMode;
  const config::WatermarkThresholds t{0.85, 0.80};
  CHECK(plugins::NodeResourcesFit::NextMode(Mode::kSpread, 0.84, t) == Mode::kSpread);
  CHECK(plugins::NodeResourcesFit::NextMode(Mode::kSpread, 0.85, t) == Mode::kStack);
  CHECK(plugins::NodeResourcesFit::NextMode(Mode::kStack, 0.82, t) == Mode::kStack);
  CHECK(plugins::NodeResourcesFit::NextMode(Mode::kStack, 0.80, t) == Mode::kStack);
  CHECK(plugins::NodeResourcesFit::NextMode(Mode::kStack, 0.79, t) == Mode::kSpread);
  CHECK(plugins::NodeResourcesFit::NextMode(Mode::kSpread, 0.82, t) == Mode::kSpread);
}

TEST_CASE("watermark allocated ratio weighs the listed resources over the cluster sums",
          "[plugins][noderesourcesfit][watermark]") {
  Cluster cluster;
  // cpu: 6 of 10 requested (0.6); gpu: 3 of 4 (0.75); memory is not listed.
  cluster.Node(Sized("node1", "4", "10Gi", {{"nvidia.com/gpu", "4"}}))
      .Node(Sized("node2", "6", "10Gi"))
      .Pod("node1", PodBuilder("a").Container({{"cpu", "2"}, {"nvidia.com/gpu", "3"}}))
      .Pod("node2", PodBuilder("b").Container({{"cpu", "4"}, {"memory", "9Gi"}}));
  const auto& snapshot = cluster.Build();
  auto plugin = MakeFit(Watermark(0.85, 0.8, {{"cpu", 1}, {"nvidia.com/gpu", 3}, {"pods", 5}}));
  // (1 * 0.6 + 3 * 0.75) / 4; `pods` is left out as in scoring.
  CHECK(plugin->AllocatedRatio(snapshot) == Approx((0.6 + 3 * 0.75) / 4));
  // A resource the cluster has none of is left out of the weights too.
  auto no_such = MakeFit(Watermark(0.85, 0.8, {{"cpu", 1}, {"example.com/none", 7}}));
  CHECK(no_such->AllocatedRatio(snapshot) == Approx(0.6));
  // Other strategies keep no watermark state.
  CHECK_FALSE(MakeFit()->ObserveWatermark(snapshot).has_value());
}

TEST_CASE("watermark spreads below high and stacks above it, with hysteresis",
          "[plugins][noderesourcesfit][watermark]") {
  auto plugin = MakeFit(Watermark(0.6, 0.4, {{"cpu", 1}}));
  const auto pod = Info(PodBuilder("p").Container({{"cpu", "1"}}));
  // Two 10-cpu nodes; node1 holds `on_node1` cpus, node2 `on_node2`.
  auto scores = [&](const std::string& on_node1, const std::string& on_node2) {
    Cluster cluster;
    cluster.Node(Sized("node1", "10", "10Gi")).Node(Sized("node2", "10", "10Gi"));
    if (on_node1 != "0") cluster.Pod("node1", PodBuilder("a").Container({{"cpu", on_node1}}));
    if (on_node2 != "0") cluster.Pod("node2", PodBuilder("b").Container({{"cpu", on_node2}}));
    const auto result = plugin_testing::ScoreAll(*plugin, cluster.Build(), *pod);
    REQUIRE(result.has_value());
    return *result;
  };
  using Mode = plugins::NodeResourcesFit::WatermarkMode;
  auto mode = [&] {
    Cluster empty;
    return plugin->ObserveWatermark(empty.Node(Sized("n", "10", "10Gi")).Build())->mode;
  };
  // Ratio 0.5: below high, spread (least allocated: the emptier node2 wins).
  CHECK(scores("8", "2") == Scores{{"node1", 10}, {"node2", 70}});
  // Ratio 0.6 = high: stack (most allocated: the fuller node1 wins).
  CHECK(scores("9", "3") == Scores{{"node1", 100}, {"node2", 40}});
  // Ratio 0.5, between low and high: still stacking.
  CHECK(scores("8", "2") == Scores{{"node1", 90}, {"node2", 30}});
  // Ratio 0.35, below low: spread again.
  CHECK(scores("5", "2") == Scores{{"node1", 40}, {"node2", 70}});
  CHECK(scores("8", "2") == Scores{{"node1", 10}, {"node2", 70}});
  // An empty cluster (ratio 0) always spreads.
  CHECK(mode() == Mode::kSpread);
}

TEST_CASE("watermark Score without PreScore uses the kept mode",
          "[plugins][noderesourcesfit][watermark]") {
  auto plugin = MakeFit(Watermark(0.5, 0.5, {{"cpu", 1}}));
  Cluster cluster;
  cluster.Node(Sized("node1", "10", "10Gi"))
      .Node(Sized("node2", "10", "10Gi"))
      .Pod("node1", PodBuilder("a").Container({{"cpu", "8"}}))
      .Pod("node2", PodBuilder("b").Container({{"cpu", "2"}}));
  const auto& snapshot = cluster.Build();
  const auto pod = Info(PodBuilder("p").Container({{"cpu", "1"}}));
  CycleState state;
  CHECK(plugin->Score(state, *pod, *snapshot.Get("node1")) == 10);  // spread before any cycle
  REQUIRE(plugin->ObserveWatermark(snapshot)->mode ==
          plugins::NodeResourcesFit::WatermarkMode::kStack);
  CHECK(plugin->Score(state, *pod, *snapshot.Get("node1")) == 90);
}

TEST_CASE("watermark args are validated with the field named",
          "[plugins][noderesourcesfit][watermark]") {
  struct Case {
    std::string name;
    config::NodeResourcesFitArgs args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"high above 1", Watermark(1.5, 0.8),
       "NodeResourcesFit: scoringStrategy.watermark.high: must be in (0, 1]"},
      {"high zero", Watermark(0, 0),
       "NodeResourcesFit: scoringStrategy.watermark.high: must be in (0, 1]"},
      {"low above high", Watermark(0.8, 0.85),
       "NodeResourcesFit: scoringStrategy.watermark.low: must be in (0, high]"},
      {"low zero", Watermark(0.8, 0),
       "NodeResourcesFit: scoringStrategy.watermark.low: must be in (0, high]"},
      {"low NaN", Watermark(0.8, std::nan("")),
       "NodeResourcesFit: scoringStrategy.watermark.low: must be in (0, high]"},
      {"bad resource", Watermark(0.9, 0.8, {{"cpu", 0}}),
       "NodeResourcesFit: scoringStrategy.resources[0].weight: must be in 1..100"},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      const auto made = plugins::NewNodeResourcesFit(c.args, {});
      REQUIRE_FALSE(made.ok());
      CHECK(std::string(made.status().message()) == c.message);
    }
  }
  SECTION("low equal to high is a plain threshold") {
    CHECK(plugins::NewNodeResourcesFit(Watermark(0.9, 0.9), {}).ok());
  }
}

TEST_CASE("watermark args decode from the configuration",
          "[plugins][noderesourcesfit][watermark]") {
  SECTION("thresholds and resources") {
    const auto args = config::ParsePluginArgs(
        "NodeResourcesFit",
        "{scoringStrategy: {type: Watermark, resources: [{name: nvidia.com/gpu, weight: 3}], "
        "watermark: {high: 0.9, low: 0.7}}}");
    REQUIRE(args.ok());
    const auto& strategy = std::get<config::NodeResourcesFitArgs>(*args).scoring_strategy;
    CHECK(strategy.type == config::ScoringStrategyType::kWatermark);
    CHECK(strategy.watermark.high == 0.9);
    CHECK(strategy.watermark.low == 0.7);
    REQUIRE(strategy.resources.size() == 1);
    CHECK(strategy.resources[0].weight == 3);
  }
  SECTION("defaults: high 0.85, low 0.80") {
    const auto args =
        config::ParsePluginArgs("NodeResourcesFit", "{scoringStrategy: {type: Watermark}}");
    REQUIRE(args.ok());
    const auto& strategy = std::get<config::NodeResourcesFitArgs>(*args).scoring_strategy;
    CHECK(strategy.watermark.high == 0.85);
    CHECK(strategy.watermark.low == 0.80);
  }
  SECTION("errors name the field") {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"{scoringStrategy: {type: Watermark, watermark: {high: 0.8, low: 0.9}}}",
         "scoringStrategy.watermark.low: must be in (0, high]"},
        {"{scoringStrategy: {type: Watermark, watermark: {high: 2}}}",
         "scoringStrategy.watermark.high: must be in (0, 1]"},
        {"{scoringStrategy: {type: Watermark, watermark: {high: \"x\"}}}",
         "scoringStrategy.watermark.high: must be a number"},
        {"{scoringStrategy: {type: Watermark, watermark: {hi: 0.9}}}", "scoringStrategy.watermark"},
        {"{scoringStrategy: {type: MostAllocated, watermark: {high: 0.9}}}",
         "scoringStrategy.watermark: must not be set unless type is Watermark"},
    };
    for (const auto& [text, message] : cases) {
      INFO(text);
      const auto args = config::ParsePluginArgs("NodeResourcesFit", text);
      REQUIRE_FALSE(args.ok());
      CHECK_THAT(std::string(args.status().message()), Catch::Contains(message));
    }
  }
}

}  // namespace
}  // namespace kubesched
