// NodePorts: host-port conflicts by port, protocol and address, and which containers count.

#include "plugins/node_ports/node_ports.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "tests/plugins/plugin_fixture.h"

namespace kubesched {
namespace {

using api::Protocol;
using framework::Code;
using framework::CycleState;
using plugin_testing::Cluster;
using plugin_testing::Info;
using plugin_testing::NodeBuilder;
using plugin_testing::PodBuilder;
using plugin_testing::Unwrap;
using plugin_testing::Verdict;
using plugins::NodePorts;

std::unique_ptr<NodePorts> MakePorts() {
  return Unwrap<NodePorts>(plugins::NewNodePorts(std::monostate{}, {}));
}

const std::string kConflict(NodePorts::kReason);

// A node "n" hosting one pod that holds TCP 8080 on 10.0.0.1 and UDP 53 on every address.
const framework::Snapshot& BusyNode(Cluster& cluster) {
  return cluster.Node(NodeBuilder("n"))
      .Pod("n", PodBuilder("holder").HostPort(8080, "10.0.0.1").HostPort(53, "", Protocol::kUDP))
      .Build();
}

TEST_CASE("node ports filter rejects ports already taken on the node", "[plugins][nodeports]") {
  struct Case {
    std::string name;
    PodBuilder pod;
    std::string verdict;
  };
  const std::vector<Case> cases = {
      {"a free port passes", PodBuilder("p").HostPort(9090), "pass"},
      {"the same port, protocol and address conflicts", PodBuilder("p").HostPort(8080, "10.0.0.1"),
       kConflict},
      {"the same port on every address conflicts with a specific one",
       PodBuilder("p").HostPort(8080), kConflict},
      {"0.0.0.0 is every address", PodBuilder("p").HostPort(8080, "0.0.0.0"), kConflict},
      {"the same port on another address passes", PodBuilder("p").HostPort(8080, "10.0.0.2"),
       "pass"},
      {"the same port with another protocol passes",
       PodBuilder("p").HostPort(8080, "10.0.0.1", Protocol::kUDP), "pass"},
      {"a port held on every address conflicts with any address",
       PodBuilder("p").HostPort(53, "10.0.0.9", Protocol::kUDP), kConflict},
      {"one conflicting port among free ones fails",
       PodBuilder("p").HostPort(9090).HostPort(8080, "10.0.0.1"), kConflict},
  };
  Cluster cluster;
  const auto& snapshot = BusyNode(cluster);
  for (const auto& c : cases) {
    SECTION(c.name) {
      auto plugin = MakePorts();
      const auto pod = Info(c.pod);
      CycleState state;
      REQUIRE(plugin->PreFilter(state, *pod, snapshot).status.IsSuccess());
      const auto status = plugin->Filter(state, *pod, *snapshot.Get("n"));
      CHECK(Verdict(status) == std::vector<std::string>{c.verdict});
      if (!status.IsSuccess()) CHECK(status.code() == Code::kUnschedulable);
    }
  }
}

framework::PodInfoPtr WithInitPort(bool sidecar) {
  api::Pod pod = PodBuilder("p").InitContainer({}, sidecar).Container({}).Build();
  pod.spec.init_containers[0].ports.push_back({8080, 8080, "10.0.0.1", Protocol::kTCP});
  return framework::MakePodInfo(std::make_shared<const api::Pod>(std::move(pod)), 0);
}

TEST_CASE("node ports counts sidecar init containers only", "[plugins][nodeports]") {
  Cluster cluster;
  const auto& snapshot = BusyNode(cluster);
  auto plugin = MakePorts();
  SECTION("a sidecar's host port is checked") {
    CycleState state;
    const auto pod = WithInitPort(/*sidecar=*/true);
    REQUIRE(plugin->PreFilter(state, *pod, snapshot).status.IsSuccess());
    CHECK(plugin->Filter(state, *pod, *snapshot.Get("n")).code() == Code::kUnschedulable);
  }
  SECTION("an ordinary init container's port is not held, so PreFilter skips") {
    CycleState state;
    CHECK(plugin->PreFilter(state, *WithInitPort(/*sidecar=*/false), snapshot).status.IsSkip());
  }
}

TEST_CASE("node ports skips pods without host ports", "[plugins][nodeports]") {
  Cluster cluster;
  const auto& snapshot = BusyNode(cluster);
  CycleState state;
  auto no_host_port = PodBuilder("p").Build();
  no_host_port.spec.containers.push_back({});
  no_host_port.spec.containers[0].ports.push_back({8080, 0, "", Protocol::kTCP});
  const auto pod = framework::MakePodInfo(std::make_shared<const api::Pod>(no_host_port), 0);
  CHECK(MakePorts()->PreFilter(state, *pod, snapshot).status.IsSkip());
}

TEST_CASE("node ports filter without its PreFilter state is an error", "[plugins][nodeports]") {
  Cluster cluster;
  const auto& snapshot = BusyNode(cluster);
  CycleState state;
  CHECK(MakePorts()->Filter(state, *Info(PodBuilder("p").HostPort(1)), *snapshot.Get("n")).code() ==
        Code::kError);
}

}  // namespace
}  // namespace kubesched
