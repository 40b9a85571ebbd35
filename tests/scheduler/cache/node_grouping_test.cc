// The cache's per-group sums for the Watermark strategy: nodes grouped by hard taints, cordon and
// pool labels, kept exact through node and pod changes without a scan.

#include "scheduler/cache/node_grouping.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "scheduler/cache/cache.h"
#include "scheduler/util/clock.h"
#include "tests/testing/builders.h"

namespace kubesched {
namespace {

using api::TaintEffect;
using cache::Cache;
using framework::MakePodInfo;
using framework::NodeGroup;
using framework::NodeGroups;
using testing::NodeBuilder;
using testing::PodBuilder;

framework::PodInfoPtr Pod(const std::string& name, const std::string& node,
                          const std::string& cpu) {
  return MakePodInfo(PodBuilder(name).NodeName(node).Container({{"cpu", cpu}}).Ptr(), 0);
}

NodeBuilder Node(const std::string& name, const std::string& cpu = "10") {
  return std::move(NodeBuilder(name).Capacity({{"cpu", cpu}, {"pods", "110"}}));
}

NodeBuilder GpuNode(const std::string& name) {
  return std::move(Node(name, "40")
                       .Label("pool", "gpu")
                       .Taint("nvidia.com/gpu", "present", TaintEffect::kNoSchedule));
}

// The group holding `taint_key` (or the untainted one for ""); fails the test when absent.
const NodeGroup& GroupWith(const NodeGroups& groups, const std::string& taint_key) {
  for (const NodeGroup& group : groups) {
    const bool untainted = group.taints.empty();
    if (taint_key.empty() ? untainted : (!untainted && group.taints[0].key == taint_key)) {
      return group;
    }
  }
  FAIL("no group with taint " << taint_key);
  static const NodeGroup none;
  return none;
}

int64_t Cpu(const api::ResourceList& list) { return list.Get(api::kCpu); }

struct Fixture {
  Fixture() {
    cache.EnableNodeGroups({"pool"});
    cache.AddNode(Node("cpu-1").Label("pool", "cpu").Ptr());
    cache.AddNode(Node("cpu-2").Label("pool", "cpu").Ptr());
    cache.AddNode(GpuNode("gpu-1").Ptr());
  }
  std::shared_ptr<const NodeGroups> Groups() const { return cache.NodeGroups(); }

  util::FakeClock clock;
  Cache cache{&clock};
};

TEST_CASE("alike nodes share a group and its sums", "[cache][watermark]") {
  Fixture f;
  const auto groups = f.Groups();
  REQUIRE(groups->size() == 2);
  const NodeGroup& cpu = GroupWith(*groups, "");
  CHECK(cpu.nodes == 2);
  CHECK(Cpu(cpu.allocatable) == 20000);
  CHECK(cpu.pool_labels.Get(api::Intern("pool")) == api::Intern("cpu"));
  const NodeGroup& gpu = GroupWith(*groups, "nvidia.com/gpu");
  CHECK(gpu.nodes == 1);
  CHECK(Cpu(gpu.allocatable) == 40000);
  REQUIRE(gpu.taints.size() == 1);
  CHECK(gpu.taints[0].effect == TaintEffect::kNoSchedule);
}

TEST_CASE("pods added, assumed, forgotten and removed move their node's group sums",
          "[cache][watermark]") {
  Fixture f;
  REQUIRE(f.cache.AddPod(Pod("a", "cpu-1", "3")).ok());
  REQUIRE(f.cache.AssumePod(Pod("b", "cpu-2", "2")).ok());
  REQUIRE(f.cache.AddPod(Pod("g", "gpu-1", "5")).ok());
  CHECK(Cpu(GroupWith(*f.Groups(), "").requested) == 5000);
  CHECK(Cpu(GroupWith(*f.Groups(), "nvidia.com/gpu").requested) == 5000);

  REQUIRE(f.cache.ForgetPod("default/b", "default-b-uid").ok());
  REQUIRE(f.cache.RemovePod("default/g").ok());
  CHECK(Cpu(GroupWith(*f.Groups(), "").requested) == 3000);
  CHECK(Cpu(GroupWith(*f.Groups(), "nvidia.com/gpu").requested) == 0);
  // A pod moved by an update leaves its sums with the new node's group.
  auto moved = MakePodInfo(PodBuilder("a").NodeName("gpu-1").Container({{"cpu", "3"}}).Ptr(), 0);
  REQUIRE(f.cache.UpdatePod(moved).ok());
  CHECK(Cpu(GroupWith(*f.Groups(), "").requested) == 0);
  CHECK(Cpu(GroupWith(*f.Groups(), "nvidia.com/gpu").requested) == 3000);
}

TEST_CASE("a node whose taints change moves to the matching group with its pods",
          "[cache][watermark]") {
  Fixture f;
  REQUIRE(f.cache.AddPod(Pod("a", "cpu-1", "4")).ok());
  f.cache.UpdateNode(Node("cpu-1")
                         .Label("pool", "cpu")
                         .Taint("dedicated", "infra", TaintEffect::kNoExecute)
                         .Ptr());
  const auto groups = f.Groups();
  REQUIRE(groups->size() == 3);
  CHECK(GroupWith(*groups, "").nodes == 1);
  CHECK(Cpu(GroupWith(*groups, "").requested) == 0);
  CHECK(Cpu(GroupWith(*groups, "dedicated").requested) == 4000);
  // PreferNoSchedule keeps no pod off a node: such a node stays with the untainted ones.
  f.cache.UpdateNode(
      Node("cpu-1").Label("pool", "cpu").Taint("soft", "x", TaintEffect::kPreferNoSchedule).Ptr());
  REQUIRE(f.Groups()->size() == 2);  // the empty "dedicated" group is not published
  CHECK(GroupWith(*f.Groups(), "").nodes == 2);
  CHECK(Cpu(GroupWith(*f.Groups(), "").requested) == 4000);
}

TEST_CASE("a cordoned node counts as tainted node.kubernetes.io/unschedulable",
          "[cache][watermark]") {
  Fixture f;
  f.cache.UpdateNode(Node("cpu-2").Label("pool", "cpu").Unschedulable().Ptr());
  const NodeGroup& cordoned = GroupWith(*f.Groups(), "node.kubernetes.io/unschedulable");
  CHECK(cordoned.nodes == 1);
  CHECK(cordoned.taints[0].effect == TaintEffect::kNoSchedule);
  CHECK(GroupWith(*f.Groups(), "").nodes == 1);
  f.cache.UpdateNode(Node("cpu-2").Label("pool", "cpu").Ptr());  // uncordoned
  CHECK(GroupWith(*f.Groups(), "").nodes == 2);
}

TEST_CASE("pool label values split groups, other labels do not", "[cache][watermark]") {
  Fixture f;
  f.cache.AddNode(Node("cpu-3").Label("pool", "batch").Label("zone", "a").Ptr());
  f.cache.AddNode(Node("cpu-4").Label("pool", "cpu").Label("zone", "b").Ptr());
  const auto groups = f.Groups();
  REQUIRE(groups->size() == 3);
  int untainted = 0;
  for (const NodeGroup& group : *groups) {
    if (!group.taints.empty()) continue;
    ++untainted;
    const bool batch = group.pool_labels.Get(api::Intern("pool")) == api::Intern("batch");
    CHECK(group.nodes == (batch ? 1 : 3));
    CHECK_FALSE(group.pool_labels.Has(api::Intern("zone")));
  }
  CHECK(untainted == 2);
}

TEST_CASE("a removed node leaves its group, and an emptied group is not published",
          "[cache][watermark]") {
  Fixture f;
  REQUIRE(f.cache.AddPod(Pod("g", "gpu-1", "5")).ok());
  f.cache.RemoveNode("gpu-1");
  const auto groups = f.Groups();
  REQUIRE(groups->size() == 1);
  CHECK(groups->front().taints.empty());
  // Its pod, still known, counts nowhere until the node comes back.
  f.cache.AddNode(GpuNode("gpu-1").Ptr());
  CHECK(Cpu(GroupWith(*f.Groups(), "nvidia.com/gpu").requested) == 5000);
}

TEST_CASE("groups enabled after nodes exist count them, and snapshots carry them",
          "[cache][watermark]") {
  util::FakeClock clock;
  Cache cache(&clock);
  cache.AddNode(Node("a").Ptr());
  REQUIRE(cache.AddPod(Pod("p", "a", "2")).ok());
  framework::Snapshot snapshot;
  cache.UpdateSnapshot(&snapshot);
  CHECK(snapshot.node_groups().empty());  // off by default: no cost without a Watermark profile
  cache.EnableNodeGroups({});
  cache.AddNode(GpuNode("g").Ptr());
  cache.UpdateSnapshot(&snapshot);
  REQUIRE(snapshot.node_groups().size() == 2);
  CHECK(Cpu(GroupWith(snapshot.node_groups(), "").requested) == 2000);
  // A fresh snapshot gets the groups too, though nothing changed since the last one.
  framework::Snapshot fresh;
  cache.UpdateSnapshot(&fresh);
  CHECK(fresh.node_groups().size() == 2);
}

TEST_CASE("group sums equal a scan of the nodes after a run of changes", "[cache][watermark]") {
  Fixture f;
  for (int i = 0; i < 30; ++i) {
    const std::string node = i % 3 == 0 ? "gpu-1" : (i % 3 == 1 ? "cpu-1" : "cpu-2");
    REQUIRE(f.cache.AddPod(Pod("p" + std::to_string(i), node, "1")).ok());
    if (i % 4 == 0) REQUIRE(f.cache.RemovePod("default/p" + std::to_string(i)).ok());
    if (i == 10) f.cache.UpdateNode(Node("cpu-2").Unschedulable().Ptr());
    if (i == 20) f.cache.UpdateNode(Node("cpu-2").Label("pool", "cpu").Ptr());
  }
  framework::Snapshot snapshot;
  f.cache.UpdateSnapshot(&snapshot);
  int64_t grouped = 0;
  for (const NodeGroup& group : snapshot.node_groups()) grouped += Cpu(group.requested);
  int64_t scanned = 0;
  for (const framework::NodeInfo* info : snapshot.nodes()) scanned += Cpu(info->requested());
  CHECK(grouped == scanned);
  CHECK(grouped == Cpu(f.cache.Totals().requested));
}

}  // namespace
}  // namespace kubesched
