// The scheduling cycle's extension points as the framework runs them.

#include <algorithm>
#include <catch2/catch.hpp>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "plugins/registry/registry.h"
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

// One node for each way the default filters and scores judge a cpu-and-memory pod: too small, no
// room for another pod, cordoned, an untolerated taint, a PreferNoSchedule taint, room.
void AddNodeOfEachVerdict(framework::SnapshotBuilder& builder) {
  std::vector<testing::NodeBuilder> nodes;
  nodes.emplace_back("small").Capacity({{"cpu", "1"}, {"memory", "1Gi"}, {"pods", "110"}});
  nodes.emplace_back("full").Capacity({{"cpu", "8"}, {"memory", "8Gi"}, {"pods", "0"}});
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
}

// The Filter and Score phases hand row-taking plugins the snapshot's table row instead of letting
// them find it through the NodeInfo: their verdicts and scores must be each plugin's own.
TEST_CASE("filters and scores given the snapshot's rows agree with each plugin's own calls",
          "[runtime]") {
  auto fw = Framework::Create(DefaultProfile(), {});
  REQUIRE(fw.ok());
  framework::Snapshot snapshot;
  framework::SnapshotBuilder builder(&snapshot);
  AddNodeOfEachVerdict(builder);
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

  // The Score phase calls each plugin once per chunk of nodes: the same scores.
  std::vector<const framework::NodeRow*> rows;
  for (const framework::NodeRow& row : snapshot.rows()) rows.push_back(&row);
  const auto& plugins = (*fw)->score_plugins();
  std::set<int64_t> taint_scores;
  for (size_t k = 0; k < plugins.size(); ++k) {
    if (score.skip_score[k]) continue;
    INFO(plugins[k].plugin->Name());
    std::vector<int64_t> chunk(rows.size(), -1);
    (*fw)->RunScoreChunk(k, state, *pod, snapshot.nodes(), rows.data(), chunk.data());
    for (size_t i = 0; i < rows.size(); ++i) {
      CHECK(chunk[i] == plugins[k].plugin->Score(state, *pod, *snapshot.nodes()[i]));
      if (plugins[k].plugin->Name() == "TaintToleration") taint_scores.insert(chunk[i]);
    }
  }
  CHECK(taint_scores == std::set<int64_t>{0, 1});  // the PreferNoSchedule taint counts
}

// Where most nodes fit, the Filter loop lets the filters judge a chunk's rows together and
// filters one by one only the nodes they clear: a flag left set must be a node RunFilter passes.
// The default filters clear exactly the nodes they reject, so that no node is judged twice.
TEST_CASE("filters judging rows together clear exactly the nodes they reject", "[runtime]") {
  auto fw = Framework::Create(DefaultProfile(), {});
  REQUIRE(fw.ok());
  framework::Snapshot snapshot;
  framework::SnapshotBuilder builder(&snapshot);
  AddNodeOfEachVerdict(builder);
  // Its pods ask for more cpu than it has: a pod that asks for none still fits there.
  testing::NodeBuilder over("overcommitted");
  over.Capacity({{"cpu", "1"}, {"memory", "8Gi"}, {"pods", "110"}});
  framework::NodeInfo* overcommitted = builder.Upsert("overcommitted");
  overcommitted->SetNode(over.Ptr(), 100);
  overcommitted->AddPod(
      framework::MakePodInfo(
          testing::PodBuilder("static").NodeName("overcommitted").Container({{"cpu", "2"}}).Ptr(),
          0),
      101);
  builder.RebuildLists();
  const absl::Span<const framework::NodeRow> rows = snapshot.rows();
  REQUIRE(rows.size() == 7);

  const std::vector<std::pair<std::string, testing::PodBuilder>> pods = {
      {"cpu and memory", testing::PodBuilder("a").Container({{"cpu", "2"}, {"memory", "2Gi"}})},
      {"memory beyond one node's",
       testing::PodBuilder("b").Container({{"cpu", "1"}, {"memory", "6Gi"}})},
      {"memory alone", testing::PodBuilder("c").Container({{"memory", "3Gi"}})},
      {"cpu alone", testing::PodBuilder("d").Container({{"cpu", "500m"}})},
      {"nothing", testing::PodBuilder("e").Container({})},
      {"tolerating every taint",
       testing::PodBuilder("f")
           .Container({{"cpu", "1"}})
           .Toleration("", "", api::TaintEffect::kNone, api::TolerationOperator::kExists)},
  };
  std::set<std::vector<uint8_t>> distinct;
  for (const auto& [what, builder_of_pod] : pods) {
    INFO(what);
    const auto pod = framework::MakePodInfo(builder_of_pod.Ptr(), 0);
    framework::CycleState state;
    const auto pre = (*fw)->RunPreFilter(state, *pod, snapshot);
    REQUIRE(pre.status.IsSuccess());
    REQUIRE((*fw)->FiltersReadOnlyRows(state, *pod, pre.skip_filter));
    std::vector<uint8_t> whole(rows.size(), 7);
    (*fw)->ClearFailingRows(state, *pod, pre.skip_filter, rows, whole.data());
    // A chunk that wraps around the table is judged in two runs.
    std::vector<uint8_t> split(rows.size(), 7);
    (*fw)->ClearFailingRows(state, *pod, pre.skip_filter, rows.subspan(0, 3), split.data());
    (*fw)->ClearFailingRows(state, *pod, pre.skip_filter, rows.subspan(3), split.data() + 3);
    CHECK(split == whole);
    for (size_t i = 0; i < rows.size(); ++i) {
      INFO(snapshot.nodes()[i]->name());
      CHECK(whole[i] ==
            ((*fw)->RunFilter(state, *pod, *snapshot.nodes()[i], pre.skip_filter).IsSuccess() ? 1
                                                                                              : 0));
    }
    distinct.insert(whole);
  }
  CHECK(distinct.size() == pods.size());  // each pod is rejected by a different set of nodes
}

// The Filter loop leaves the NodeInfos out of the cache when the filters say they read only the
// rows: then the rows alone must give every verdict, which an empty NodeInfo beside each row shows.
TEST_CASE("filters that read only the rows judge every node from its row alone", "[runtime]") {
  auto fw = Framework::Create(DefaultProfile(), {});
  REQUIRE(fw.ok());
  framework::Snapshot snapshot;
  framework::SnapshotBuilder builder(&snapshot);
  AddNodeOfEachVerdict(builder);
  const auto pre_filter = [&](const testing::PodBuilder& pod, framework::CycleState& state) {
    const auto info = framework::MakePodInfo(pod.Ptr(), 0);
    const auto pre = (*fw)->RunPreFilter(state, *info, snapshot);
    REQUIRE(pre.status.IsSuccess());
    return std::pair{info, pre.skip_filter};
  };

  framework::CycleState state;
  const auto [pod, skip] =
      pre_filter(testing::PodBuilder("p").Container({{"cpu", "2"}, {"memory", "2Gi"}}), state);
  REQUIRE((*fw)->FiltersReadOnlyRows(state, *pod, skip));
  const framework::NodeInfo nothing;
  std::vector<std::string> verdicts;
  for (size_t i = 0; i < snapshot.nodes().size(); ++i) {
    const framework::NodeInfo& node = *snapshot.nodes()[i];
    framework::Status from_row;
    (*fw)->RunFilterInto(state, *pod, nothing, snapshot.rows()[i], skip, from_row);
    const framework::Status own = (*fw)->RunFilter(state, *pod, node, skip);
    CHECK(from_row.code() == own.code());
    CHECK(from_row.Message() == own.Message());
    verdicts.push_back(node.name() + ": " + std::string(own.plugin()));
  }
  std::sort(verdicts.begin(), verdicts.end());
  CHECK(verdicts == std::vector<std::string>{"cordoned: NodeUnschedulable",
                                             "full: NodeResourcesFit",
                                             "preferred: ", "roomy: ", "small: NodeResourcesFit",
                                             "tainted: TaintToleration"});

  // A resource the row does not hold, or a filter without rows (NodePorts), needs the NodeInfo.
  framework::CycleState storage_state;
  const auto [storage, storage_skip] =
      pre_filter(testing::PodBuilder("s").Container({{"cpu", "1"}, {"ephemeral-storage", "1Gi"}}),
                 storage_state);
  CHECK_FALSE((*fw)->FiltersReadOnlyRows(storage_state, *storage, storage_skip));
  framework::CycleState port_state;
  const auto [port, port_skip] =
      pre_filter(testing::PodBuilder("h").Container({{"cpu", "1"}}).HostPort(8080), port_state);
  CHECK_FALSE((*fw)->FiltersReadOnlyRows(port_state, *port, port_skip));
  // Without their PreFilter state the plugins cannot tell.
  CHECK_FALSE((*fw)->FiltersReadOnlyRows(framework::CycleState(), *pod, skip));
}

// A PreFilter that names, as sure rejections, the nodes at the positions it was made with.
class NamesPositions final : public framework::PreFilterPlugin {
 public:
  NamesPositions(std::string_view name, std::vector<size_t> positions)
      : name_(name), positions_(std::move(positions)) {}
  std::string_view Name() const override { return name_; }
  framework::PreFilterOutcome PreFilter(framework::CycleState&, const framework::PodInfo&,
                                        const framework::Snapshot& snapshot) override {
    framework::PreFilterOutcome outcome;
    if (positions_.empty()) return outcome;
    auto named = std::make_shared<framework::NodePositions>();
    named->Reset(snapshot.nodes().size());
    for (const size_t position : positions_) named->Add(position);
    outcome.result.sure_rejections = std::move(named);
    return outcome;
  }

 private:
  std::string_view name_;
  std::vector<size_t> positions_;
};

TEST_CASE("the PreFilter phase hands on the union of the plugins' sure rejections", "[runtime]") {
  plugins::RegistryMap registry = plugins::Registry();
  const std::vector<std::pair<std::string_view, std::vector<size_t>>> namers = {
      {"NamesNone", {}}, {"NamesOneAndTwo", {1, 2}}, {"NamesTwoAndFive", {2, 5}}};
  for (const auto& [name, positions] : namers) {
    registry[name] =
        [name = name, positions = positions](
            const config::PluginArgs&,
            const plugins::PluginHandle&) -> absl::StatusOr<std::unique_ptr<framework::Plugin>> {
      return std::make_unique<NamesPositions>(name, positions);
    };
  }
  framework::Snapshot snapshot;
  framework::SnapshotBuilder builder(&snapshot);
  for (int i = 0; i < 7; ++i) {
    testing::NodeBuilder node("n" + std::to_string(i));
    builder.Upsert(node.Ptr()->meta.name)->SetNode(node.Ptr(), i + 1);
  }
  builder.RebuildLists();
  const auto pod = framework::MakePodInfo(testing::PodBuilder("p").Ptr(), 0);
  const auto named_by = [&](const std::vector<std::string>& enabled) {
    auto profile = DefaultProfile();
    for (const std::string& name : enabled) profile.plugins.pre_filter.enabled.push_back({name, 0});
    auto fw = Framework::Create(profile, {}, registry);
    REQUIRE(fw.ok());
    framework::CycleState state;
    const PreFilterSummary summary = (*fw)->RunPreFilter(state, *pod, snapshot);
    REQUIRE(summary.status.IsSuccess());
    std::vector<size_t> named;
    if (summary.sure_rejections == nullptr) return named;
    REQUIRE(summary.sure_rejections->size() == snapshot.nodes().size());
    for (size_t i = 0; i < snapshot.nodes().size(); ++i) {
      if (summary.sure_rejections->Contains(i)) named.push_back(i);
    }
    return named;
  };
  CHECK(named_by({}).empty());
  CHECK(named_by({"NamesNone"}).empty());
  CHECK(named_by({"NamesOneAndTwo"}) == std::vector<size_t>{1, 2});
  CHECK(named_by({"NamesNone", "NamesTwoAndFive"}) == std::vector<size_t>{2, 5});
  CHECK(named_by({"NamesOneAndTwo", "NamesTwoAndFive"}) == std::vector<size_t>{1, 2, 5});
}

}  // namespace
}  // namespace kubesched::runtime
