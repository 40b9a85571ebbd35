// NodeUnschedulable: cordoned nodes take only pods that tolerate the unschedulable taint.

#include "plugins/node_unschedulable/node_unschedulable.h"

#include <catch2/catch.hpp>
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
using plugins::NodeUnschedulable;

TEST_CASE("node unschedulable filter rejects cordoned nodes unless tolerated",
          "[plugins][nodeunschedulable]") {
  const std::string key(NodeUnschedulable::kTaintKey);
  struct Case {
    std::string name;
    bool cordoned;
    PodBuilder pod;
    std::string verdict;
  };
  const std::vector<Case> cases = {
      {"a schedulable node takes any pod", false, PodBuilder("p"), "pass"},
      {"a cordoned node rejects a pod without tolerations", true, PodBuilder("p"),
       std::string(NodeUnschedulable::kReason)},
      {"a pod tolerating the unschedulable taint passes", true,
       PodBuilder("p").Toleration(key, "", TaintEffect::kNoSchedule, TolerationOperator::kExists),
       "pass"},
      {"a toleration of every taint passes", true,
       PodBuilder("p").Toleration("", "", TaintEffect::kNone, TolerationOperator::kExists), "pass"},
      {"a toleration with another effect does not help", true,
       PodBuilder("p").Toleration(key, "", TaintEffect::kNoExecute, TolerationOperator::kExists),
       std::string(NodeUnschedulable::kReason)},
  };
  auto plugin = Unwrap<NodeUnschedulable>(plugins::NewNodeUnschedulable(std::monostate{}, {}));
  for (const auto& c : cases) {
    SECTION(c.name) {
      Cluster cluster;
      const auto& snapshot = cluster.Node(NodeBuilder("n").Unschedulable(c.cordoned)).Build();
      CycleState state;
      const auto status = plugin->Filter(state, *Info(c.pod), *snapshot.Get("n"));
      CHECK(Verdict(status) == std::vector<std::string>{c.verdict});
      if (!status.IsSuccess()) CHECK(status.code() == Code::kUnschedulableAndUnresolvable);
    }
  }
}

}  // namespace
}  // namespace kubesched
