#include "scheduler/core/algorithm.h"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>
#include <variant>

#include "absl/strings/match.h"
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
      // Fits nowhere: a FitError with every node once, each with its own verdict. Twice: after a
      // pod that fit (or none), the search does not keep the verdicts and finds them again; after
      // one that fit nowhere, it keeps them as it goes.
      const auto nowhere_pod = pod_asking("16");
      const auto expected = verdicts(*nowhere_pod);
      for (int again = 0; again < 2; ++again) {
        INFO("attempt " << again);
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
      }

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

// Each chunk of the Filter phase lists the nodes that fit; the search must still stop right after
// the node that completes it, as a node-by-node reading does, even where later nodes of that chunk
// were rejected: that stop is the next pod's start and the count of nodes evaluated.
TEST_CASE("the search stops right after the node that completes it in the middle of a chunk",
          "[scheduler]") {
  auto fw = runtime::Framework::Create(config::DefaultConfiguration().profiles.at(0), {});
  REQUIRE(fw.ok());
  constexpr size_t kNodes = 1000;  // 420 feasible nodes wanted
  framework::Snapshot snapshot;
  BuildNodes(snapshot, kNodes, [](int i) -> std::string { return i % 2 == 0 ? "4" : "1"; });
  const auto pod =
      framework::MakePodInfo(testing::PodBuilder("p").Container({{"cpu", "3"}}).Ptr(), 0);
  std::vector<bool> fits;
  {
    framework::CycleState state;
    const auto pre = (*fw)->RunPreFilter(state, *pod, snapshot);
    for (const auto* node : snapshot.nodes()) {
      fits.push_back((*fw)->RunFilter(state, *pod, *node, pre.skip_filter).IsSuccess());
    }
  }
  for (const int threads : {1, 2, 3}) {
    util::WorkerPool pool(threads);
    ScheduleAlgorithm algorithm(&pool, 0, 1);
    size_t start = 0;
    for (int attempt = 0; attempt < 4; ++attempt) {
      INFO(threads << " threads, attempt " << attempt);
      size_t evaluated = 0;
      for (size_t found = 0; found < 420; ++evaluated) {
        if (fits[(start + evaluated) % kNodes]) ++found;
      }
      REQUIRE(!fits[(start + evaluated) % kNodes]);  // the chunk goes on with a rejected node
      framework::CycleState state;
      const auto outcome = algorithm.Schedule(**fw, state, *pod, snapshot);
      REQUIRE(std::holds_alternative<ScheduleSuccess>(outcome));
      CHECK(std::get<ScheduleSuccess>(outcome).feasible_nodes == 420);
      CHECK(std::get<ScheduleSuccess>(outcome).evaluated_nodes == static_cast<int>(evaluated));
      start = (start + evaluated) % kNodes;
    }
  }
}

// Upstream's reservoir sampling over the nodes as Explain reports them, with `draw` as the
// generator: the node kept, the final best's ties and the draws made before that best appeared.
struct ReservoirChoice {
  const framework::NodeInfo* node = nullptr;
  uint64_t ties = 0;
  uint64_t draws_before_best = 0;
};
template <typename Draw>
ReservoirChoice Reservoir(const Explanation& explained, Draw& draw) {
  ReservoirChoice choice;
  int64_t best = 0;
  uint64_t draws = 0;
  for (const NodeExplanation& node : explained.nodes) {
    REQUIRE(node.feasible);
    if (choice.node == nullptr || node.total > best) {
      choice = {node.node, 1, draws};
      best = node.total;
    } else if (node.total == best) {
      ++choice.ties;
      ++draws;
      if (draw() % choice.ties == 0) choice.node = node.node;
    }
  }
  return choice;
}

// Upstream breaks ties by reservoir sampling: a draw for each node that ties the best so far, the
// node kept when the ties so far divide the draw. The choice must be that one, draw for draw, with
// the generator's state carried from one pod to the next, however the draws are made.
TEST_CASE("ties are broken as reservoir sampling over the seeded generator's draws",
          "[scheduler]") {
  auto fw = runtime::Framework::Create(config::DefaultConfiguration().profiles.at(0), {});
  REQUIRE(fw.ok());
  framework::Snapshot snapshot;
  bool best_beaten = false;  // the shape's final best comes after draws for an earlier best
  SECTION("a best tied many times, then beaten and tied again, among lesser nodes") {
    BuildNodes(snapshot, 90, [](int i) -> std::string {
      if (i < 40) return i % 2 == 0 ? "8" : "4";
      return i % 3 == 0 ? "32" : "8";
    });
    best_beaten = true;
  }
  SECTION("every node alike: the first node judged is one of the ties") {
    BuildNodes(snapshot, 90, [](int) -> std::string { return "8"; });
  }
  const auto pod =
      framework::MakePodInfo(testing::PodBuilder("p").Container({{"cpu", "1"}}).Ptr(), 0);
  util::WorkerPool pool(2);
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    ScheduleAlgorithm algorithm(&pool, 100, seed);
    uint64_t state = seed;  // splitmix64, as the algorithm's
    const auto draw = [&state] {
      uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
      return z ^ (z >> 31);
    };
    for (int pod_number = 0; pod_number < 3; ++pod_number) {
      INFO("seed " << seed << ", pod " << pod_number);
      framework::CycleState cycle;
      const Explanation explained = algorithm.Explain(**fw, cycle, *pod, snapshot);
      REQUIRE(explained.selected != nullptr);
      const ReservoirChoice expected = Reservoir(explained, draw);
      CHECK((expected.draws_before_best > 0) == best_beaten);
      REQUIRE(expected.ties > 2);
      CHECK(explained.selected == expected.node);
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
    // Every node is searched, n555 among them: the attempt is that Error, whether the search
    // keeps its verdicts (after a pod that fit nowhere) or finds them again (the first pod).
    for (int again = 0; again < 2; ++again) {
      INFO("attempt " << again);
      const auto nowhere = schedule("nowhere");
      REQUIRE(std::holds_alternative<framework::Status>(nowhere));
      CHECK(std::get<framework::Status>(nowhere).code() == framework::Code::kError);
      CHECK(std::get<framework::Status>(nowhere).Message() == "broken on n555");
      CHECK(std::get<framework::Status>(nowhere).plugin() == ErrOnNode::kName);
    }
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

// Rejects the nodes whose number is not a multiple of 3 ("wrong model") and, for pods named
// "hinted-...", says so in PreFilter as sure rejections. Counts its Filter calls on those nodes.
class RejectsTwoInThree : public framework::PreFilterPlugin, public framework::FilterPlugin {
 public:
  static constexpr std::string_view kName = "RejectsTwoInThree";
  std::string_view Name() const override { return kName; }
  framework::PreFilterOutcome PreFilter(framework::CycleState&, const framework::PodInfo& pod,
                                        const framework::Snapshot& snapshot) override {
    framework::PreFilterOutcome outcome;
    if (!pod.get().meta.name.starts_with("hinted")) return outcome;
    auto rejected = std::make_shared<framework::NodePositions>();
    rejected->Reset(snapshot.nodes().size());
    for (size_t i = 0; i < snapshot.nodes().size(); ++i) {
      if (Rejects(*snapshot.nodes()[i])) rejected->Add(i);
    }
    outcome.result.sure_rejections = std::move(rejected);
    return outcome;
  }
  framework::Status Filter(const framework::CycleState&, const framework::PodInfo&,
                           const framework::NodeInfo& node) const override {
    if (!Rejects(node)) return framework::Status();
    calls_on_rejected.fetch_add(1);
    return framework::Status::Unresolvable("wrong model");
  }
  static bool Rejects(const framework::NodeInfo& node) {
    return std::stoi(node.name().substr(1)) % 3 != 0;
  }
  mutable std::atomic<int> calls_on_rejected{0};
};

// What a pod's attempt came to, for comparing a hinted pod's with a plain one's.
std::string Outcome(ScheduleOutcome& outcome, ScheduleAlgorithm& algorithm) {
  if (auto* success = std::get_if<ScheduleSuccess>(&outcome)) {
    return absl::StrCat(success->node->name(), " ", success->feasible_nodes, "/",
                        success->evaluated_nodes);
  }
  FitError& error = std::get<FitError>(outcome);
  std::string text = error.Message();
  for (const auto& entry : error.node_statuses) {
    absl::StrAppend(&text, "\n", entry.node->name(), " ", std::string(entry.status.plugin()), ": ",
                    entry.status.Message());
  }
  algorithm.Recycle(std::move(error.node_statuses));
  return text;
}

// PreFilter's sure rejections save the filters' work on those nodes while feasible ones are
// looked for, and change nothing else: the same nodes are chosen after the same number of nodes
// evaluated, and a pod that fits nowhere reports for each node the first filter that rejects it
// (here NodeResourcesFit's, which runs before the plugin that named the node).
TEST_CASE("nodes a PreFilter is sure its Filter rejects are passed over, with the same outcome",
          "[scheduler]") {
  plugins::RegistryMap registry = plugins::Registry();
  RejectsTwoInThree* plugin = nullptr;
  registry[RejectsTwoInThree::kName] =
      [&plugin](
          const config::PluginArgs&,
          const plugins::PluginHandle&) -> absl::StatusOr<std::unique_ptr<framework::Plugin>> {
    auto made = std::make_unique<RejectsTwoInThree>();
    plugin = made.get();
    return made;
  };
  config::Profile profile = config::DefaultConfiguration().profiles.at(0);
  profile.plugins.pre_filter.enabled.push_back({std::string(RejectsTwoInThree::kName), 0});
  profile.plugins.filter.enabled.push_back({std::string(RejectsTwoInThree::kName), 0});
  auto fw = runtime::Framework::Create(profile, {}, registry);
  REQUIRE(fw.ok());
  REQUIRE(plugin != nullptr);
  framework::Snapshot snapshot;
  // From n900 on, 6 cpus on the nodes the plugin accepts and 8 on the others; before, 1.
  BuildNodes(snapshot, 1000, [](int i) -> std::string {
    if (i < 900) return "1";
    return i % 3 == 0 ? "6" : "8";
  });
  for (const int threads : {1, 2}) {
    INFO(threads << " threads");
    util::WorkerPool pool(threads);
    ScheduleAlgorithm plain(&pool, 0, 3);
    ScheduleAlgorithm hinted(&pool, 0, 3);
    const auto attempt = [&](ScheduleAlgorithm& algorithm, const std::string& name,
                             const std::string& cpu) {
      plugin->calls_on_rejected = 0;
      const auto pod =
          framework::MakePodInfo(testing::PodBuilder(name).Container({{"cpu", cpu}}).Ptr(), 0);
      framework::CycleState state;
      auto outcome = algorithm.Schedule(**fw, state, *pod, snapshot);
      return Outcome(outcome, algorithm);
    };
    for (const std::string cpu : {"100m", "4", "500m", "2", "100m"}) {
      INFO("cpu " << cpu);
      const std::string expected = attempt(plain, "plain", cpu);
      CHECK(plugin->calls_on_rejected > 0);
      CHECK(attempt(hinted, "hinted", cpu) == expected);
      CHECK(plugin->calls_on_rejected == 0);
    }
    // Fits nowhere, and NodeResourcesFit rejects every node first.
    const std::string too_big = attempt(plain, "plain", "16");
    CHECK(absl::StrContains(too_big, "\nn1 NodeResourcesFit: Insufficient cpu"));
    CHECK(attempt(hinted, "hinted", "16") == too_big);
    // Fits nowhere: where the cpus suffice, the plugin rejects. The nodes passed over were
    // filtered after all, for their verdicts.
    const std::string wrong_model = attempt(plain, "plain", "7");
    CHECK(absl::StrContains(wrong_model, "\nn901 RejectsTwoInThree: wrong model"));
    CHECK(attempt(hinted, "hinted", "7") == wrong_model);
    CHECK(plugin->calls_on_rejected == 66);
  }
}

}  // namespace
}  // namespace kubesched::scheduler
