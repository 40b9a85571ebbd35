// PreFilter's sure rejections (TooFewDevices): the nodes whose devices could not serve the pod's
// claim even if no claim held any, kept true to the cluster as nodes and slices change, and never
// a node the Filter would let through.

#include "plugins/dynamic_resources/too_few_devices.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/plugins/dynamic_resources/dra_world.h"

namespace kubesched {
namespace {

using plugin_testing::AllocatedOn;
using plugin_testing::ClaimPod;
using plugin_testing::DraNode;
using plugin_testing::DraWorld;
using plugin_testing::GpuClaim;
using plugin_testing::GpuSlice;

using Names = std::vector<std::string>;

// The nodes PreFilter names as sure rejections for a pod with claim `claim`, sorted; each of them
// is checked against the Filter's verdict.
Names SureRejections(DraWorld& world, const std::string& claim) {
  const framework::PodInfoPtr pod = ClaimPod("p", {{"gpu", "claim:" + claim}});
  const framework::Snapshot& snapshot = world.Snapshot();
  framework::CycleState state;
  const framework::PreFilterOutcome outcome = world.plugin().PreFilter(state, *pod, snapshot);
  REQUIRE(outcome.status.IsSuccess());
  Names names;
  const auto& rejected = outcome.result.sure_rejections;
  if (rejected == nullptr) return names;
  REQUIRE(rejected->size() == snapshot.nodes().size());
  for (size_t i = 0; i < snapshot.nodes().size(); ++i) {
    if (!rejected->Contains(i)) continue;
    const framework::NodeInfo& node = *snapshot.nodes()[i];
    INFO(node.name());
    CHECK(world.plugin().Filter(state, *pod, node).code() ==
          framework::Code::kUnschedulableAndUnresolvable);
    names.push_back(node.name());
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Filter on every node once, so that the selectors' verdicts on the devices are known.
void Filter(DraWorld& world, const std::string& claim) {
  world.Judge(*ClaimPod("p", {{"gpu", "claim:" + claim}}));
}

TEST_CASE("PreFilter names the nodes whose devices can never serve the claim", "[dra]") {
  DraWorld world(plugin_testing::TwoGpuNodes("A100", "H100") + DraNode("node-3", "z3") +
                 GpuClaim("a100", 1, "A100") + GpuClaim("three", 3) +
                 GpuClaim("other", 1, "A100", AllocatedOn("node-1", "gpu-0")) +
                 GpuClaim("two-a100", 2, "A100"));
  // Before any device was judged, only the node without devices is sure.
  CHECK(SureRejections(world, "a100") == Names{"node-3"});
  Filter(world, "a100");
  CHECK(SureRejections(world, "a100") == Names{"node-2", "node-3"});
  Filter(world, "three");
  CHECK(SureRejections(world, "three") == Names{"node-1", "node-2", "node-3"});
  // node-1 has two A100s, one of them held: preemption may free it, so it is not named.
  Filter(world, "two-a100");
  CHECK(SureRejections(world, "two-a100") == Names{"node-2", "node-3"});

  // node-2's slice now offers A100s: the nodes stay where they were, node-2 is judged again.
  world.Add(GpuSlice("node-2", "nodeName: node-2", {{"gpu-0", "A100"}, {"gpu-1", "A100"}}));
  CHECK(SureRejections(world, "a100") == Names{"node-3"});
  // A new node without devices moves the positions; node-3 gets one A100.
  world.Add(DraNode("node-4", "z4") + GpuSlice("node-3", "nodeName: node-3", {{"gpu-0", "A100"}}));
  CHECK(SureRejections(world, "a100") == Names{"node-4"});
  CHECK(SureRejections(world, "two-a100") == Names{"node-3", "node-4"});
}

TEST_CASE("no node is named where slices offer devices to several nodes", "[dra]") {
  DraWorld world(plugin_testing::TwoGpuNodes("A100", "H100") + DraNode("node-3", "z3") +
                 GpuSlice("everywhere", "allNodes: true", {{"fabric-0", "FABRIC"}}) +
                 GpuClaim("a100", 1, "A100"));
  Filter(world, "a100");
  CHECK(SureRejections(world, "a100").empty());
}

}  // namespace
}  // namespace kubesched
