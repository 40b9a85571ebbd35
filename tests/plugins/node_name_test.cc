// NodeName: a pod that names its node fits only that node.

#include "plugins/node_name/node_name.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

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
using plugins::NodeName;

TEST_CASE("node name filter passes only the named node", "[plugins][nodename]") {
  struct Case {
    std::string name;
    std::string wanted;  // spec.nodeName
    std::string node;
    std::string verdict;
  };
  const std::vector<Case> cases = {
      {"the named node passes", "a", "a", "pass"},
      {"another node fails", "a", "b", std::string(NodeName::kReason)},
  };
  Cluster cluster;
  const auto& snapshot = cluster.Node(NodeBuilder("a")).Node(NodeBuilder("b")).Build();
  auto plugin = Unwrap<NodeName>(plugins::NewNodeName(std::monostate{}, {}));
  for (const auto& c : cases) {
    SECTION(c.name) {
      const auto pod = Info(PodBuilder("p").NodeName(c.wanted));
      CycleState state;
      REQUIRE(plugin->PreFilter(state, *pod, snapshot).status.IsSuccess());
      const auto status = plugin->Filter(state, *pod, *snapshot.Get(c.node));
      CHECK(Verdict(status) == std::vector<std::string>{c.verdict});
      if (!status.IsSuccess()) CHECK(status.code() == Code::kUnschedulableAndUnresolvable);
    }
  }
}

TEST_CASE("node name PreFilter skips pods that name no node", "[plugins][nodename]") {
  Cluster cluster;
  const auto& snapshot = cluster.Node(NodeBuilder("a")).Build();
  CycleState state;
  auto plugin = Unwrap<NodeName>(plugins::NewNodeName(std::monostate{}, {}));
  CHECK(plugin->PreFilter(state, *Info(PodBuilder("p")), snapshot).status.IsSkip());
}

TEST_CASE("node name takes no args", "[plugins][nodename]") {
  CHECK(plugins::NewNodeName(config::NodeAffinityArgs{}, {}).status().code() ==
        absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kubesched
