// The scheduling cycle's extension points as the framework runs them.

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config/config.h"
#include "scheduler/runtime/framework.h"
#include "tests/testing/builders.h"

namespace kubesched::runtime {
namespace {

config::Profile DefaultProfile() { return config::DefaultConfiguration().profiles.at(0); }

// The Filter phase reuses its slots from pod to pod: what a slot held must never show through.
TEST_CASE("RunFilterInto overwrites whatever the slot held with RunFilter's verdict", "[runtime]") {
  auto fw = Framework::Create(DefaultProfile(), {});
  REQUIRE(fw.ok());
  framework::Snapshot snapshot;
  framework::SnapshotBuilder builder(&snapshot);
  testing::NodeBuilder small("small");
  small.Capacity({{"cpu", "1"}, {"memory", "1Gi"}, {"pods", "110"}});
  testing::NodeBuilder tainted("tainted");
  tainted.Capacity({{"cpu", "8"}, {"memory", "8Gi"}, {"pods", "110"}})
      .Taint("gpu", "true", api::TaintEffect::kNoSchedule);
  testing::NodeBuilder roomy("roomy");
  roomy.Capacity({{"cpu", "8"}, {"memory", "8Gi"}, {"pods", "110"}});
  int64_t generation = 0;
  for (auto* node : {&small, &tainted, &roomy}) {
    builder.Upsert(node->Ptr()->meta.name)->SetNode(node->Ptr(), ++generation);
  }
  builder.RebuildLists();
  const auto pod = framework::MakePodInfo(
      testing::PodBuilder("p").Container({{"cpu", "2"}, {"memory", "2Gi"}}).Ptr(), 0);
  framework::CycleState state;
  const auto pre = (*fw)->RunPreFilter(state, *pod, snapshot);
  REQUIRE(pre.status.IsSuccess());

  std::vector<std::string> verdicts;
  for (const auto* node : snapshot.nodes()) {
    framework::Status slot = framework::Status::Unresolvable("stale");
    slot.AddReason("older");
    slot.set_plugin("Stale");
    (*fw)->RunFilterInto(state, *pod, *node, pre.skip_filter, slot);
    const framework::Status direct = (*fw)->RunFilter(state, *pod, *node, pre.skip_filter);
    CHECK(slot.code() == direct.code());
    CHECK(slot.plugin() == direct.plugin());
    CHECK(slot.Message() == direct.Message());
    verdicts.push_back(node->name() + ": " + std::string(slot.plugin()) + " " + slot.Message());
  }
  std::sort(verdicts.begin(), verdicts.end());
  CHECK(verdicts == std::vector<std::string>{
                        "roomy:  ",
                        "small: NodeResourcesFit Insufficient cpu, Insufficient memory",
                        "tainted: TaintToleration node(s) had untolerated taint(s)",
                    });

  // No filter runs: the slot is a success, not what it held.
  runtime::FilterSkips skip_all(pre.skip_filter.size());
  for (size_t i = 0; i < skip_all.size(); ++i) skip_all.Set(i, true);
  framework::Status slot = framework::Status::Unschedulable("stale");
  (*fw)->RunFilterInto(state, *pod, *snapshot.nodes().front(), skip_all, slot);
  CHECK(slot.IsSuccess());
  CHECK(slot.reasons().empty());
}

// The Filter and Score phases hand row-taking plugins the snapshot's table row instead of letting
// them find it through the NodeInfo: their verdicts and scores must be each plugin's own.
TEST_CASE("filters and scores given the snapshot's rows agree with each plugin's own calls",
          "[runtime]") {
  auto fw = Framework::Create(DefaultProfile(), {});
  REQUIRE(fw.ok());
  framework::Snapshot snapshot;
  framework::SnapshotBuilder builder(&snapshot);
  std::vector<testing::NodeBuilder> nodes;
  nodes.emplace_back("small").Capacity({{"cpu", "1"}, {"memory", "1Gi"}, {"pods", "110"}});
  nodes.emplace_back("cordoned").Capacity({{"cpu", "8"}, {"memory", "8Gi"}, {"pods", "110"}});
  nodes.back().Unschedulable();
  nodes.emplace_back("tainted").Capacity({{"cpu", "8"}, {"memory", "8Gi"}, {"pods", "110"}});
  nodes.back().Taint("gpu", "true", api::TaintEffect::kNoSchedule);
  nodes.emplace_back("preferred").Capacity({{"cpu", "8"}, {"memory", "4Gi"}, {"pods", "110"}});
  nodes.back().Taint("spot", "true", api::TaintEffect::kPreferNoSchedule);
  nodes.emplace_back("roomy").Capacity({{"cpu", "8"}, {"memory", "8Gi"}, {"pods", "110"}});
  int64_t generation = 0;
  for (auto& node : nodes) builder.Upsert(node.Ptr()->meta.name)->SetNode(node.Ptr(), ++generation);
  builder.RebuildLists();
  const auto pod = framework::MakePodInfo(
      testing::PodBuilder("p").Container({{"cpu", "2"}, {"memory", "2Gi"}}).Ptr(), 0);
  framework::CycleState state;
  const auto pre = (*fw)->RunPreFilter(state, *pod, snapshot);
  REQUIRE(pre.status.IsSuccess());
  const auto score = (*fw)->RunPreScore(state, *pod, snapshot, snapshot.nodes());
  REQUIRE(score.status.IsSuccess());

  for (size_t i = 0; i < snapshot.nodes().size(); ++i) {
    const framework::NodeInfo& node = *snapshot.nodes()[i];
    const framework::NodeRow& row = snapshot.rows()[i];
    INFO(node.name());
    CHECK(&row == &node.row());
    framework::Status by_row;
    (*fw)->RunFilterInto(state, *pod, node, row, pre.skip_filter, by_row);
    std::vector<framework::Status> each;  // every plugin's own Filter
    const framework::Status own = (*fw)->RunFilter(state, *pod, node, pre.skip_filter, &each);
    CHECK(by_row.code() == own.code());
    CHECK(by_row.plugin() == own.plugin());
    CHECK(by_row.Message() == own.Message());
    const auto& plugins = (*fw)->score_plugins();
    for (size_t k = 0; k < plugins.size(); ++k) {
      if (score.skip_score[k]) continue;
      INFO(plugins[k].plugin->Name());
      CHECK((*fw)->RunScore(k, state, *pod, node, row) ==
            plugins[k].plugin->Score(state, *pod, node));
    }
  }
}

}  // namespace
}  // namespace kubesched::runtime
