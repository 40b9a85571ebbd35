#include "scheduler/core/algorithm.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>
#include <variant>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "plugins/registry/registry.h"
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

// A snapshot of `count` nodes where node i has cpu_of(i) cpus.
template <typename CpuOf>
void BuildNodes(framework::Snapshot& snapshot, int count, CpuOf cpu_of) {
  framework::SnapshotBuilder builder(&snapshot);
  int64_t generation = 0;
  for (int i = 0; i < count; ++i) {
    testing::NodeBuilder node(absl::StrCat("n", i));
    node.Capacity({{"cpu", cpu_of(i)}, {"memory", "64Gi"}, {"pods", "110"}});
    builder.Upsert(node.Ptr()->meta.name)->SetNode(node.Ptr(), ++generation);
  }
  builder.RebuildLists();
  builder.RecomputeClusterTotals();
}

// The Filter phase writes each verdict where it stays and hands a pod that fits nowhere the whole
// buffer: every node must still be reported once, with its own verdict, whatever the threads, the
// rounds and the buffers given back before.
TEST_CASE("Schedule reports every node's own verdict, whatever the rounds and reused buffers",
          "[scheduler]") {
  auto fw = runtime::Framework::Create(config::DefaultConfiguration().profiles.at(0), {});
  REQUIRE(fw.ok());
  constexpr int kNodes = 1000;  // 420 feasible nodes wanted: several rounds and chunks
  framework::Snapshot snapshot;
  // Nodes 0..899 have 1 cpu; from 900 on, 8; every 97th has 4.
  BuildNodes(snapshot, kNodes, [](int i) -> std::string {
    if (i >= 900) return "8";
    return i % 97 == 0 ? "4" : "1";
  });
  const auto pod_asking = [](const std::string& cpu) {
    return framework::MakePodInfo(testing::PodBuilder("p").Container({{"cpu", cpu}}).Ptr(), 0);
  };
  // Every node's RunFilter verdict, by name, as the reference.
  const auto verdicts = [&](const framework::PodInfo& pod) {
    framework::CycleState state;
    const auto pre = (*fw)->RunPreFilter(state, pod, snapshot);
    std::map<std::string, framework::Status> out;
    for (const auto* node : snapshot.nodes()) {
      out[node->name()] = (*fw)->RunFilter(state, pod, *node, pre.skip_filter);
    }
    return out;
  };

  for (const int threads : {1, 2, 3}) {
    util::WorkerPool pool(threads);
    ScheduleAlgorithm algorithm(&pool, 0, 1);
    const auto schedule = [&](const framework::PodInfo& pod) {
      framework::CycleState state;
      return algorithm.Schedule(**fw, state, pod, snapshot);
    };
    for (int repeat = 0; repeat < 3; ++repeat) {
      INFO(threads << " threads, repeat " << repeat);
      // Fits nowhere: a FitError with every node once, each with its own verdict.
      const auto nowhere_pod = pod_asking("16");
      const auto expected = verdicts(*nowhere_pod);
      auto nowhere = schedule(*nowhere_pod);
      REQUIRE(std::holds_alternative<FitError>(nowhere));
      FitError& error = std::get<FitError>(nowhere);
      REQUIRE(error.node_statuses.size() == static_cast<size_t>(kNodes));
      std::set<std::string> seen;
      for (const auto& entry : error.node_statuses) {
        REQUIRE(entry.node != nullptr);
        CHECK(seen.insert(entry.node->name()).second);
        const framework::Status& want = expected.at(entry.node->name());
        CHECK(entry.status.code() == want.code());
        CHECK(entry.status.plugin() == want.plugin());
        CHECK(std::vector<std::string_view>(entry.status.reasons().begin(),
                                            entry.status.reasons().end()) ==
              std::vector<std::string_view>(want.reasons().begin(), want.reasons().end()));
      }
      CHECK(error.Message() == "0/1000 nodes are available: 1000 Insufficient cpu.");
      algorithm.Recycle(std::move(error.node_statuses));

      // Fits only on the sparse 4-cpu nodes and the last hundred: all of them are found, and
      // every other node is reported as rejected.
      const auto sparse = schedule(*pod_asking("3"));
      REQUIRE(std::holds_alternative<ScheduleSuccess>(sparse));
      CHECK(std::get<ScheduleSuccess>(sparse).feasible_nodes == 110);
      CHECK(std::get<ScheduleSuccess>(sparse).evaluated_nodes == kNodes);

      // Fits only on the last hundred.
      const auto late = schedule(*pod_asking("6"));
      REQUIRE(std::holds_alternative<ScheduleSuccess>(late));
      CHECK(std::get<ScheduleSuccess>(late).node->name() >= "n900");
      CHECK(std::get<ScheduleSuccess>(late).feasible_nodes == 100);
      CHECK(std::get<ScheduleSuccess>(late).evaluated_nodes == kNodes);

      // Fits everywhere: the search stops at the number wanted.
      const auto anywhere = schedule(*pod_asking("100m"));
      REQUIRE(std::holds_alternative<ScheduleSuccess>(anywhere));
      CHECK(std::get<ScheduleSuccess>(anywhere).feasible_nodes == 420);
      CHECK(std::get<ScheduleSuccess>(anywhere).evaluated_nodes == 420);
    }
  }
}

// The round-robin start and the search's stopping point do not depend on the number of threads:
// the same pods on the same nodes land on the same nodes.
TEST_CASE("Schedule chooses the same nodes with one thread as with several", "[scheduler]") {
  auto fw = runtime::Framework::Create(config::DefaultConfiguration().profiles.at(0), {});
  REQUIRE(fw.ok());
  framework::Snapshot snapshot;
  BuildNodes(snapshot, 700, [](int i) -> std::string { return i % 5 == 0 ? "8" : "2"; });
  const auto run = [&](int threads) {
    util::WorkerPool pool(threads);
    ScheduleAlgorithm algorithm(&pool, 0, 7);
    std::vector<std::string> chosen;
    for (int i = 0; i < 60; ++i) {
      const std::string cpu = i % 3 == 0 ? "4" : (i % 3 == 1 ? "1" : "16");
      const auto pod =
          framework::MakePodInfo(testing::PodBuilder("p").Container({{"cpu", cpu}}).Ptr(), 0);
      framework::CycleState state;
      auto outcome = algorithm.Schedule(**fw, state, *pod, snapshot);
      if (auto* success = std::get_if<ScheduleSuccess>(&outcome)) {
        chosen.push_back(absl::StrCat(success->node->name(), "/", success->evaluated_nodes));
      } else if (auto* error = std::get_if<FitError>(&outcome)) {
        chosen.push_back(absl::StrCat("none/", error->node_statuses.size()));
        algorithm.Recycle(std::move(error->node_statuses));
      }
    }
    return chosen;
  };
  const auto one = run(1);
  CHECK(std::count(one.begin(), one.end(), "none/700") == 20);
  CHECK(run(2) == one);
  CHECK(run(4) == one);
}

// A filter that errs on one node and rejects every other node whose name is not in `fits`.
class ErrOnNode : public framework::FilterPlugin {
 public:
  static constexpr std::string_view kName = "ErrOnNode";
  std::string_view Name() const override { return kName; }
  framework::Status Filter(const framework::CycleState&, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) const override {
    if (node.name() == "n555") return framework::Status::Error("broken on n555");
    // Pods named "anywhere" fit every other node; the rest fit none.
    if (pod.get().meta.name == "anywhere") return framework::Status();
    return framework::Status::Unschedulable("no");
  }
};

TEST_CASE("an Error from a filter on a node that was searched fails the attempt", "[scheduler]") {
  plugins::RegistryMap registry = plugins::Registry();
  registry[ErrOnNode::kName] =
      [](const config::PluginArgs&,
         const plugins::PluginHandle&) -> absl::StatusOr<std::unique_ptr<framework::Plugin>> {
    return std::make_unique<ErrOnNode>();
  };
  config::Profile profile = config::DefaultConfiguration().profiles.at(0);
  profile.plugins.filter.enabled.push_back({std::string(ErrOnNode::kName), 0});
  auto fw = runtime::Framework::Create(profile, {}, registry);
  REQUIRE(fw.ok());
  framework::Snapshot snapshot;
  BuildNodes(snapshot, 1000, [](int) -> std::string { return "4"; });
  for (const int threads : {1, 2}) {
    INFO(threads << " threads");
    util::WorkerPool pool(threads);
    ScheduleAlgorithm algorithm(&pool, 0, 1);
    const auto schedule = [&](const std::string& name) {
      const auto pod = framework::MakePodInfo(testing::PodBuilder(name).Ptr(), 0);
      framework::CycleState state;
      return algorithm.Schedule(**fw, state, *pod, snapshot);
    };
    // Every node is searched, n555 among them: the attempt is that Error.
    const auto nowhere = schedule("nowhere");
    REQUIRE(std::holds_alternative<framework::Status>(nowhere));
    CHECK(std::get<framework::Status>(nowhere).code() == framework::Code::kError);
    CHECK(std::get<framework::Status>(nowhere).Message() == "broken on n555");
    CHECK(std::get<framework::Status>(nowhere).plugin() == ErrOnNode::kName);
    // 420 feasible nodes are found before n555 (the search starts at n0 after the full pass):
    // n555 is not among the nodes used, so its Error does not count.
    const auto anywhere = schedule("anywhere");
    REQUIRE(std::holds_alternative<ScheduleSuccess>(anywhere));
    CHECK(std::get<ScheduleSuccess>(anywhere).evaluated_nodes == 420);
    // The next search starts at n420 and passes n555: the Error counts again.
    const auto past = schedule("anywhere");
    REQUIRE(std::holds_alternative<framework::Status>(past));
    CHECK(std::get<framework::Status>(past).code() == framework::Code::kError);
  }
}

}  // namespace
}  // namespace kubesched::scheduler
