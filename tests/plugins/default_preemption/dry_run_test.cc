// DefaultPreemption's dry run (plugins/default_preemption/dry_run.h): the nodes where preemption
// might help, found with their snapshot positions, and the victims of a candidate whose verdict
// was kept.

#include "plugins/default_preemption/dry_run.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "plugins/names.h"
#include "tests/plugins/default_preemption/preemption_harness.h"

namespace kubesched::plugins::preemption {
namespace {

using framework::NodeStatus;
using framework::Status;
using preemption_testing::MakePod;

// A snapshot of `n` nodes, n0 to n(n-1), each with two pods.
struct Nodes {
  framework::Snapshot snapshot;
  framework::SnapshotBuilder builder{&snapshot};

  explicit Nodes(int n) {
    int64_t generation = 0;
    for (int i = 0; i < n; ++i) {
      const std::string name = absl::StrCat("n", i);
      framework::NodeInfo& info = *builder.Upsert(name);
      info.SetNode(testing::NodeBuilder(name).Capacity({{"cpu", "4"}}).Ptr(), ++generation);
      for (const char* pod : {"a", "b"}) {
        info.AddPod(MakePod({absl::StrCat(pod, i), "2", 1}, name), ++generation);
      }
    }
    builder.RebuildLists();
  }
  const framework::NodeInfo* At(size_t position) const { return snapshot.nodes()[position]; }
};

Status RejectedBy(std::string_view plugin, Status status = Status::Unschedulable("no room")) {
  status.set_plugin(plugin);
  return status;
}

std::vector<uint32_t> PositionsOf(const std::vector<const framework::NodeInfo*>& nodes) {
  std::vector<uint32_t> positions;
  for (const framework::NodeInfo* node : nodes) positions.push_back(node->snapshot_position());
  return positions;
}

TEST_CASE("the nodes where preemption might help come with their snapshot positions",
          "[plugins][preemption]") {
  const Nodes nodes(6);
  std::vector<NodeStatus> filtered;
  SECTION("listed from where the Filter phase started, wrapping around") {
    for (const size_t position : {4U, 5U, 0U, 1U, 2U, 3U}) {
      filtered.push_back({nodes.At(position), RejectedBy(names::kNodeResourcesFit)});
    }
  }
  SECTION("listed out of order, with an entry of no node") {
    for (const size_t position : {2U, 5U, 3U, 0U, 1U, 4U}) {
      filtered.push_back({nodes.At(position), RejectedBy(names::kNodeResourcesFit)});
    }
    filtered.insert(filtered.begin() + 2, NodeStatus{nullptr, Status::Unschedulable("gone")});
  }
  const PotentialNodes potential =
      NodesWherePreemptionMightHelp(filtered, /*quota_aware=*/false, nodes.snapshot);
  REQUIRE(potential.nodes.size() == 6);
  CHECK(potential.positions == PositionsOf(potential.nodes));
  for (size_t i = 0; i < potential.nodes.size(); ++i) {
    CHECK(nodes.At(potential.positions[i]) == potential.nodes[i]);
  }
}

TEST_CASE("only rejections that removing pods may fix are potential nodes",
          "[plugins][preemption]") {
  const Nodes nodes(5);
  const std::vector<NodeStatus> filtered = {
      {nodes.At(1), RejectedBy(names::kNodeResourcesFit)},
      {nodes.At(2), RejectedBy(names::kNodeAffinity, Status::Unresolvable("no match"))},
      {nodes.At(3), RejectedBy(names::kQueueQuota)},
      {nodes.At(4), RejectedBy(names::kCoscheduling)},
      {nodes.At(0), RejectedBy(names::kNodeResourcesFit)},
  };
  const PotentialNodes plain = NodesWherePreemptionMightHelp(filtered, false, nodes.snapshot);
  CHECK(plain.positions == std::vector<uint32_t>{1, 0});
  CHECK(plain.nodes == std::vector<const framework::NodeInfo*>{nodes.At(1), nodes.At(0)});
  const PotentialNodes quota = NodesWherePreemptionMightHelp(filtered, true, nodes.snapshot);
  CHECK(quota.positions == std::vector<uint32_t>{1, 3, 4, 0});
}

TEST_CASE("a kept candidate's victims are read from its node when asked for",
          "[plugins][preemption]") {
  const Nodes nodes(2);
  KeptVerdict kept;
  kept.victims = {1, 0};
  DryRun run;
  run.victim_pool = {nodes.At(0)->pods()[0].get()};
  run.candidates.push_back({nodes.At(0), 0, 1, 0, {}});
  run.kept.push_back(nullptr);
  run.candidates.push_back({nodes.At(1), 1, 1, 0, {}});
  run.kept.push_back(&kept);

  std::vector<const framework::PodInfo*> scratch;
  const auto judged = run.VictimsOf(0, &scratch);
  REQUIRE(judged.size() == 1);
  CHECK(judged[0] == nodes.At(0)->pods()[0].get());
  CHECK(scratch.empty());
  const auto from_kept = run.VictimsOf(1, &scratch);
  REQUIRE(from_kept.size() == 2);
  CHECK(from_kept[0] == nodes.At(1)->pods()[1].get());
  CHECK(from_kept[1] == nodes.At(1)->pods()[0].get());
}

}  // namespace
}  // namespace kubesched::plugins::preemption
