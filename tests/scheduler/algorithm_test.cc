#include "scheduler/algorithm.h"

#include <catch2/catch.hpp>
#include <string>
#include <variant>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "scheduler/runtime/framework.h"
#include "scheduler/util/parallel.h"
#include "tests/testing/builders.h"

namespace kubesched::scheduler {
namespace {

TEST_CASE("the number of feasible nodes to find follows upstream's adaptive rule", "[scheduler]") {
  struct Case {
    int percentage;
    int nodes;
    int expected;
  };
  const Case cases[] = {
      {0, 10, 10},        // below 100 nodes: all of them
      {0, 99, 99},        //
      {0, 100, 100},      // 50 - 0 = 50% of 100 = 50, but never fewer than 100
      {0, 500, 230},      // 46%
      {0, 5000, 500},     // 10%
      {0, 15000, 750},    // floored at 5%
      {30, 1000, 300},    // explicit percentage
      {100, 5000, 5000},  // everything
      {1, 1000, 100},     // at least 100
  };
  for (const auto& c : cases) {
    INFO("percentage " << c.percentage << ", nodes " << c.nodes);
    CHECK(NumFeasibleNodesToFind(c.percentage, c.nodes) == c.expected);
  }
}

// Upstream's evaluateNominatedNode: the node a pod is nominated to is tried alone first.
TEST_CASE("Schedule tries the pod's nominated node first", "[scheduler]") {
  auto fw = runtime::Framework::Create(config::DefaultConfiguration().profiles.at(0), {});
  REQUIRE(fw.ok());
  framework::Snapshot snapshot;
  framework::SnapshotBuilder builder(&snapshot);
  int64_t generation = 0;
  for (int i = 0; i < 200; ++i) {
    testing::NodeBuilder node(absl::StrCat("n", i));
    node.Capacity({{"cpu", i == 7 ? "1" : "4"}, {"memory", "64Gi"}, {"pods", "110"}});
    builder.Upsert(node.Ptr()->meta.name)->SetNode(node.Ptr(), ++generation);
  }
  builder.RebuildLists();
  builder.RecomputeClusterTotals();
  util::WorkerPool pool(2);
  ScheduleAlgorithm algorithm(&pool, 0, 1);
  const auto schedule = [&](const std::string& cpu, std::string_view nominated_node) {
    const auto pod =
        framework::MakePodInfo(testing::PodBuilder("p").Container({{"cpu", cpu}}).Ptr(), 0);
    framework::CycleState state;
    return algorithm.Schedule(**fw, state, *pod, snapshot, nullptr, nominated_node);
  };

  const auto chosen = schedule("500m", "n42");
  REQUIRE(std::holds_alternative<ScheduleSuccess>(chosen));
  CHECK(std::get<ScheduleSuccess>(chosen).node->name() == "n42");
  CHECK(std::get<ScheduleSuccess>(chosen).evaluated_nodes == 1);

  // It does not fit there (n7 has 1 cpu): every node is searched, and another is chosen.
  const auto elsewhere = schedule("2", "n7");
  REQUIRE(std::holds_alternative<ScheduleSuccess>(elsewhere));
  CHECK(std::get<ScheduleSuccess>(elsewhere).node->name() != "n7");
  CHECK(std::get<ScheduleSuccess>(elsewhere).evaluated_nodes > 1);

  // A nominated node that no longer exists is no obstacle.
  const auto gone = schedule("500m", "n999");
  REQUIRE(std::holds_alternative<ScheduleSuccess>(gone));
  CHECK(std::get<ScheduleSuccess>(gone).evaluated_nodes > 1);
}

}  // namespace
}  // namespace kubesched::scheduler
