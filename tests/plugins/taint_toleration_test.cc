// TaintToleration: NoSchedule/NoExecute filtering and PreferNoSchedule scoring.

#include "plugins/taint_toleration/taint_toleration.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "tests/plugins/plugin_fixture.h"

namespace kubesched {
namespace {

using api::TaintEffect;
using api::TolerationOperator;
using framework::Code;
using framework::CycleState;
using plugin_testing::Cluster;
using plugin_testing::Info;
using plugin_testing::NodeBuilder;
using plugin_testing::PodBuilder;
using plugin_testing::Unwrap;
using plugin_testing::Verdict;
using plugins::TaintToleration;

std::unique_ptr<TaintToleration> MakeTaints() {
  return Unwrap<TaintToleration>(plugins::NewTaintToleration(std::monostate{}, {}));
}

const std::string kUntolerated(TaintToleration::kReason);

TEST_CASE("taint toleration filter rejects untolerated NoSchedule and NoExecute taints",
          "[plugins][tainttoleration]") {
  struct Case {
    std::string name;
    NodeBuilder node;
    PodBuilder pod;
    std::string verdict;
  };
  const std::vector<Case> cases = {
      {"a node without taints takes any pod", NodeBuilder("n"), PodBuilder("p"), "pass"},
      {"a matching toleration passes",
       NodeBuilder("n").Taint("dedicated", "user1", TaintEffect::kNoSchedule),
       PodBuilder("p").Toleration("dedicated", "user1", TaintEffect::kNoSchedule), "pass"},
      {"a toleration with another value fails",
       NodeBuilder("n").Taint("dedicated", "user1", TaintEffect::kNoSchedule),
       PodBuilder("p").Toleration("dedicated", "user2", TaintEffect::kNoSchedule), kUntolerated},
      {"a toleration with another effect fails",
       NodeBuilder("n").Taint("foo", "bar", TaintEffect::kNoSchedule),
       PodBuilder("p").Toleration("foo", "bar", TaintEffect::kPreferNoSchedule), kUntolerated},
      {"a toleration with no effect tolerates every effect",
       NodeBuilder("n").Taint("foo", "bar", TaintEffect::kNoSchedule),
       PodBuilder("p").Toleration("foo", "bar", TaintEffect::kNone), "pass"},
      {"Exists with an empty key tolerates everything",
       NodeBuilder("n")
           .Taint("a", "1", TaintEffect::kNoSchedule)
           .Taint("b", "2", TaintEffect::kNoExecute),
       PodBuilder("p").Toleration("", "", TaintEffect::kNone, TolerationOperator::kExists), "pass"},
      {"NoExecute taints are checked too",
       NodeBuilder("n").Taint("evict", "", TaintEffect::kNoExecute), PodBuilder("p"), kUntolerated},
      {"PreferNoSchedule taints never filter",
       NodeBuilder("n").Taint("dedicated", "user1", TaintEffect::kPreferNoSchedule),
       PodBuilder("p"), "pass"},
      {"one untolerated taint among tolerated ones fails",
       NodeBuilder("n")
           .Taint("a", "1", TaintEffect::kNoSchedule)
           .Taint("b", "2", TaintEffect::kNoSchedule),
       PodBuilder("p").Toleration("a", "1", TaintEffect::kNoSchedule), kUntolerated},
  };
  for (const auto& c : cases) {
    SECTION(c.name) {
      Cluster cluster;
      const auto& snapshot = cluster.Node(c.node).Build();
      const auto plugin = MakeTaints();
      const auto pod = Info(c.pod);
      // Without PreFilter the node's taints are judged; with it, the pod's verdict per taint set.
      CycleState direct;
      CycleState judged;
      REQUIRE(plugin->PreFilter(judged, *pod, snapshot).status.IsSuccess());
      for (const CycleState* state : {&direct, &judged}) {
        const auto status = plugin->Filter(*state, *pod, *snapshot.Get("n"));
        CHECK(Verdict(status) == std::vector<std::string>{c.verdict});
        if (!status.IsSuccess()) CHECK(status.code() == Code::kUnschedulableAndUnresolvable);
      }
    }
  }
}

using Scores = std::map<std::string, int64_t>;

TEST_CASE("taint toleration scores fewer intolerable PreferNoSchedule taints higher",
          "[plugins][tainttoleration]") {
  SECTION("more intolerable taints score lower (upstream: 100, 50, 0)") {
    Cluster cluster;
    cluster.Node(NodeBuilder("nodeA"))
        .Node(NodeBuilder("nodeB").Taint("cpu-type", "arm64", TaintEffect::kPreferNoSchedule))
        .Node(NodeBuilder("nodeC")
                  .Taint("cpu-type", "arm64", TaintEffect::kPreferNoSchedule)
                  .Taint("disk-type", "ssd", TaintEffect::kPreferNoSchedule));
    const auto pod = PodBuilder("p").Toleration("foo", "bar", TaintEffect::kPreferNoSchedule);
    CHECK(plugin_testing::ScoreAll(*MakeTaints(), cluster.Build(), *Info(pod)) ==
          Scores{{"nodeA", 100}, {"nodeB", 50}, {"nodeC", 0}});
  }
  SECTION("tolerations with another effect do not count for scoring") {
    Cluster cluster;
    cluster.Node(NodeBuilder("plain"))
        .Node(NodeBuilder("tainted").Taint("gpu", "yes", TaintEffect::kPreferNoSchedule));
    const auto no_schedule_only =
        PodBuilder("p").Toleration("gpu", "yes", TaintEffect::kNoSchedule);
    CHECK(plugin_testing::ScoreAll(*MakeTaints(), cluster.Build(), *Info(no_schedule_only)) ==
          Scores{{"plain", 100}, {"tainted", 0}});
    const auto any_effect = PodBuilder("p").Toleration("gpu", "yes", TaintEffect::kNone);
    CHECK(plugin_testing::ScoreAll(*MakeTaints(), cluster.Build(), *Info(any_effect)) ==
          Scores{{"plain", 100}, {"tainted", 100}});
  }
  SECTION("NoSchedule taints do not lower the score") {
    Cluster cluster;
    cluster.Node(NodeBuilder("a")).Node(NodeBuilder("b").Taint("x", "", TaintEffect::kNoSchedule));
    CHECK(plugin_testing::ScoreAll(*MakeTaints(), cluster.Build(), *Info(PodBuilder("p"))) ==
          Scores{{"a", 100}, {"b", 100}});
  }
}

TEST_CASE("taint toleration score without PreScore counts the same taints",
          "[plugins][tainttoleration]") {
  Cluster cluster;
  const auto& snapshot = cluster
                             .Node(NodeBuilder("n")
                                       .Taint("a", "1", TaintEffect::kPreferNoSchedule)
                                       .Taint("b", "2", TaintEffect::kPreferNoSchedule))
                             .Build();
  CycleState state;
  const auto pod = Info(PodBuilder("p").Toleration("a", "1", TaintEffect::kPreferNoSchedule));
  CHECK(MakeTaints()->Score(state, *pod, *snapshot.Get("n")) == 1);
}

TEST_CASE("taint toleration judged per taint set scores as the node's taints do",
          "[plugins][tainttoleration]") {
  Cluster cluster;
  cluster.Node(NodeBuilder("plain"))
      .Node(NodeBuilder("spot").Taint("spot", "yes", TaintEffect::kPreferNoSchedule))
      .Node(NodeBuilder("spot-gpu")
                .Taint("spot", "yes", TaintEffect::kPreferNoSchedule)
                .Taint("gpu", "", TaintEffect::kNoSchedule)
                .Taint("arm", "", TaintEffect::kPreferNoSchedule))
      .Node(NodeBuilder("spot-2").Taint("spot", "yes", TaintEffect::kPreferNoSchedule));
  const auto& snapshot = cluster.Build();
  const auto plugin = MakeTaints();
  const auto pod = Info(PodBuilder("p").Toleration("spot", "yes", TaintEffect::kNone));
  CycleState direct;
  REQUIRE(plugin->PreScore(direct, *pod, snapshot, snapshot.nodes()).IsSuccess());
  CycleState judged;
  REQUIRE(plugin->PreFilter(judged, *pod, snapshot).status.IsSuccess());
  REQUIRE(plugin->PreScore(judged, *pod, snapshot, snapshot.nodes()).IsSuccess());
  std::vector<int64_t> expected = {0, 0, 1, 0};
  for (size_t i = 0; i < snapshot.nodes().size(); ++i) {
    INFO(snapshot.nodes()[i]->name());
    CHECK(plugin->Score(direct, *pod, *snapshot.nodes()[i]) == expected[i]);
    CHECK(plugin->Score(judged, *pod, *snapshot.nodes()[i]) == expected[i]);
  }
  CHECK_FALSE(plugin->Filter(judged, *pod, *snapshot.Get("spot-gpu")).IsSuccess());
  CHECK(plugin->Filter(judged, *pod, *snapshot.Get("spot-2")).IsSuccess());
}

TEST_CASE("taint toleration takes no args", "[plugins][tainttoleration]") {
  CHECK(plugins::NewTaintToleration(config::NodeAffinityArgs{}, {}).status().code() ==
        absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kubesched
