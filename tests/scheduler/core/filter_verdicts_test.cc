// The Filter phase's verdicts kept for the next pod alike: given back only while the pod is alike,
// the node unchanged and its nominations the same, and a search that takes them reports what the
// filters say.

#include "scheduler/core/filter_verdicts.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "scheduler/core/algorithm.h"
#include "scheduler/queue/scheduling_queue.h"
#include "scheduler/util/clock.h"
#include "scheduler/util/parallel.h"
#include "tests/testing/builders.h"

namespace kubesched::scheduler {
namespace {

using framework::Status;

framework::PodInfoPtr Pod(const std::string& name, const std::string& cpu, int32_t priority = 0) {
  return framework::MakePodInfo(
      testing::PodBuilder(name).Container({{"cpu", cpu}}).Priority(priority).Ptr(), priority);
}

// A snapshot of `n` nodes (node i has 1 + i % 4 cpus) that records what changes, as the cache
// writes it.
struct World {
  framework::Snapshot snapshot;
  framework::SnapshotBuilder builder{&snapshot};
  int64_t generation = 0;

  explicit World(int n) {
    for (int i = 0; i < n; ++i) {
      testing::NodeBuilder node(absl::StrCat("n", i));
      node.Capacity({{"cpu", std::to_string(1 + i % 4)}, {"memory", "64Gi"}, {"pods", "110"}});
      builder.Upsert(node.Ptr()->meta.name)->SetNode(node.Ptr(), ++generation);
    }
    builder.RebuildLists();
    builder.RecomputeClusterTotals();
    Commit({});
  }
  framework::NodeInfo* Node(int i) { return builder.Find(absl::StrCat("n", i)); }
  // A pod of `cpu` lands on node i.
  void Bind(int i, const std::string& cpu, int step) {
    framework::PodInfoPtr pod = framework::MakePodInfo(
        testing::PodBuilder(absl::StrCat("bound-", step)).Container({{"cpu", cpu}}).Ptr(), 0);
    Node(i)->AddPod(pod, ++generation);
    builder.RefreshRow(Node(i));
    Commit({Node(i)});
  }
  void Commit(const std::vector<framework::NodeInfo*>& changed) {
    builder.set_generation(generation);
    builder.RecordChanges(generation, changed);
  }
};

struct Judge {
  FilterVerdicts& kept;
  const framework::Snapshot& snapshot;
  int filtered = 0;
  // The verdict at `position` with nominations `stamp`, counting the filters' runs.
  Status At(size_t position, uint64_t stamp, Status verdict = Status::Unschedulable("no room")) {
    framework::NodeStatus out;
    const bool fits = kept.JudgeInto(position, snapshot.nodes()[position], stamp,
                                     /*in_place=*/false, out, [&] {
                                       ++filtered;
                                       out.status = verdict;
                                     });
    CHECK(out.node == snapshot.nodes()[position]);
    CHECK(fits == out.status.IsSuccess());
    return out.status;
  }
};

// Runs `pod`'s PreFilter on `snapshot` and begins its search; `record_metrics` as RunPreFilter
// sets it for a sampled cycle.
bool BeginSearch(FilterVerdicts& kept, const runtime::Framework& fw,
                 const framework::Snapshot& snapshot, const framework::PodInfo& pod,
                 const NominatedPods* nominated = nullptr, bool record_metrics = false) {
  framework::CycleState state;
  const auto pre = fw.RunPreFilter(state, pod, snapshot);
  state.set_record_plugin_metrics(record_metrics);
  return kept.Begin(fw, state, pod, pre.skip_filter, snapshot, nominated);
}

TEST_CASE("FilterVerdicts gives a verdict back only while pod, node and nominations are the same",
          "[filter_verdicts]") {
  auto fw = runtime::Framework::Create(config::DefaultConfiguration().profiles.at(0), {});
  REQUIRE(fw.ok());
  World world(4);
  FilterVerdicts kept;
  Judge judge{kept, world.snapshot};
  const auto begin = [&](const framework::PodInfo& pod) {
    return BeginSearch(kept, **fw, world.snapshot, pod);
  };

  REQUIRE(begin(*Pod("first", "8")));
  CHECK(judge.At(0, 0).reasons().front() == "no room");
  CHECK(judge.At(1, 0).IsRejected());
  CHECK(judge.filtered == 2);
  CHECK(judge.At(0, 0).reasons().front() == "no room");  // kept
  CHECK(judge.filtered == 2);
  CHECK(judge.At(0, 5).IsRejected());  // other nominations
  CHECK(judge.filtered == 3);

  // A pod alike (another name, the same spec) takes the verdicts; a changed node is judged again.
  world.Bind(0, "100m", 1);
  REQUIRE(begin(*Pod("second", "8")));
  judge.At(1, 0);
  CHECK(judge.filtered == 3);
  judge.At(0, 5);
  CHECK(judge.filtered == 4);

  // An error is never kept.
  judge.At(2, 0, Status::Error("broken"));
  CHECK(judge.At(2, 0, Status::Error("broken")).code() == framework::Code::kError);
  CHECK(judge.filtered == 6);

  // A pod that is not alike drops them all.
  REQUIRE(begin(*Pod("smaller", "4")));
  judge.At(1, 0);
  CHECK(judge.filtered == 7);

  // Another snapshot: nothing kept for the first holds.
  World other(4);
  REQUIRE(BeginSearch(kept, **fw, other.snapshot, *Pod("smaller-again", "4")));
  judge.At(1, 0);
  CHECK(judge.filtered == 8);
}

TEST_CASE("FilterVerdicts writes nothing where the verdict kept is in place already",
          "[filter_verdicts]") {
  auto fw = runtime::Framework::Create(config::DefaultConfiguration().profiles.at(0), {});
  REQUIRE(fw.ok());
  World world(4);
  FilterVerdicts kept;
  int filtered = 0;
  // Judges node 0 into `out` (in place or not) with nominations `stamp`; returns whether it fits.
  const auto judge = [&](framework::NodeStatus& out, bool in_place, uint64_t stamp,
                         const Status& verdict) {
    return kept.JudgeInto(0, world.snapshot.nodes()[0], stamp, in_place, out, [&] {
      ++filtered;
      out.status = verdict;
    });
  };
  REQUIRE(BeginSearch(kept, **fw, world.snapshot, *Pod("first", "8")));
  framework::NodeStatus entry;
  CHECK_FALSE(judge(entry, false, 0, Status::Unschedulable("no room")));
  CHECK(filtered == 1);

  // In place, the entry is left as it is (here marked, to see that nothing wrote it).
  entry.status = Status::Unschedulable("marked");
  CHECK_FALSE(judge(entry, true, 0, Status::Unschedulable("no room")));
  CHECK(entry.status.reasons().front() == "marked");
  CHECK(filtered == 1);
  // Not in place, the kept verdict is written.
  CHECK_FALSE(judge(entry, false, 0, Status::Unschedulable("no room")));
  CHECK(entry.status.reasons().front() == "no room");
  CHECK(filtered == 1);

  // Other nominations, or a changed node, are judged and written, in place or not.
  entry.status = Status::Unschedulable("marked");
  CHECK(judge(entry, true, 7, Status()));
  CHECK(entry.status.IsSuccess());
  CHECK(filtered == 2);
  world.Bind(0, "100m", 1);
  REQUIRE(BeginSearch(kept, **fw, world.snapshot, *Pod("second", "8")));
  entry.status = Status::Unschedulable("marked");
  CHECK_FALSE(judge(entry, true, 7, Status::Unschedulable("no room")));
  CHECK(entry.status.reasons().front() == "no room");
  CHECK(filtered == 3);
}

TEST_CASE("FilterVerdicts serves no pod whose verdicts depend on more than pod and node",
          "[filter_verdicts]") {
  auto fw = runtime::Framework::Create(config::DefaultConfiguration().profiles.at(0), {});
  REQUIRE(fw.ok());
  World world(4);
  FilterVerdicts kept;
  const auto begin = [&](const framework::PodInfo& pod, const NominatedPods* nominated,
                         bool record_metrics) {
    return BeginSearch(kept, **fw, world.snapshot, pod, nominated, record_metrics);
  };
  CHECK(begin(*Pod("plain", "8"), nullptr, false));
  // Its durations are recorded node by node this cycle.
  CHECK_FALSE(begin(*Pod("plain", "8"), nullptr, true));

  // Required pod affinity: InterPodAffinity's verdict reads other nodes' pods.
  api::Affinity affinity;
  api::PodAffinityTerm term;
  term.label_selector = api::LabelSelector{};
  term.topology_key = api::Intern("kubernetes.io/hostname");
  affinity.pod_affinity.emplace().required.push_back(term);
  const auto with_affinity = framework::MakePodInfo(
      testing::PodBuilder("near-db").Container({{"cpu", "8"}}).Affinity(affinity).Ptr(), 0);
  CHECK_FALSE(begin(*with_affinity, nullptr, false));

  // The pod is itself nominated somewhere: the filters leave it out on that node only.
  util::FakeClock clock;
  queue::SchedulingQueue queue{&clock, queue::QueueOptions{}};
  const auto nominated_pod = Pod("nominated", "8");
  queue.AddNominatedPod(nominated_pod, "n1");
  NominatedPods nominated;
  nominated.Reset(queue.AllNominatedPods(), world.snapshot);
  CHECK_FALSE(begin(*nominated_pod, &nominated, false));
  CHECK(begin(*Pod("not-nominated", "8"), &nominated, false));
}

// Every node's verdict for `pod` with the nominations counted, by name: the reference.
std::map<std::string, Status> Verdicts(const runtime::Framework& fw, const framework::PodInfo& pod,
                                       const framework::Snapshot& snapshot,
                                       const NominatedPods& nominated) {
  framework::CycleState state;
  const auto pre = fw.RunPreFilter(state, pod, snapshot);
  std::map<std::string, Status> out;
  for (const auto* node : snapshot.nodes()) {
    out[node->name()] =
        RunFiltersWithNominated(fw, state, pod, *node, pre.skip_filter, nominated.For(node));
  }
  return out;
}

std::vector<std::string_view> Reasons(const Status& status) {
  return {status.reasons().begin(), status.reasons().end()};
}

TEST_CASE("a search with kept verdicts reports what the filters say as the cluster changes",
          "[filter_verdicts]") {
  auto fw = runtime::Framework::Create(config::DefaultConfiguration().profiles.at(0), {});
  REQUIRE(fw.ok());
  constexpr int kNodes = 96;
  World world(kNodes);
  util::FakeClock clock;
  queue::SchedulingQueue queue{&clock, queue::QueueOptions{}};
  NominatedPods nominated;
  util::WorkerPool pool(2);
  ScheduleAlgorithm algorithm(&pool, 0, 3);
  std::mt19937 random(11);
  // Pods nominated to nodes, half of them counted for the pods searched (priority >= 10).
  std::vector<framework::PodInfoPtr> waiting(12);
  for (size_t i = 0; i < waiting.size(); ++i) {
    waiting[i] = Pod(absl::StrCat("w", i), "1", i % 2 == 0 ? 5 : 20);
  }
  int fit_errors = 0;
  for (int step = 0; step < 400; ++step) {
    std::vector<const framework::NodeInfo*> refreshed;
    const int action = static_cast<int>(random() % 6);
    const int node = static_cast<int>(random() % kNodes);
    if (action == 0) {
      world.Bind(node, "500m", step);
      refreshed.push_back(world.Node(node));
    } else if (action == 1) {
      queue.AddNominatedPod(waiting[random() % waiting.size()], absl::StrCat("n", node));
    } else if (action == 2) {
      queue.DeleteNominatedPod(waiting[random() % waiting.size()]->key);
    }
    nominated.Sync(queue.NominationsSince(nominated.version()), world.snapshot, refreshed,
                   /*node_set_changed=*/false);
    // Pods of two templates, most of which fit nowhere (at most 4 cpus a node).
    const auto pod = Pod(absl::StrCat("p", step), random() % 4 == 0 ? "3500m" : "5", 10);
    const auto want = Verdicts(**fw, *pod, world.snapshot, nominated);
    framework::CycleState state;
    auto outcome = algorithm.Schedule(**fw, state, *pod, world.snapshot, &nominated);
    INFO("step " << step);
    if (auto* error = std::get_if<FitError>(&outcome)) {
      ++fit_errors;
      REQUIRE(error->node_statuses.size() == static_cast<size_t>(kNodes));
      for (const auto& entry : error->node_statuses) {
        const Status& expected = want.at(entry.node->name());
        INFO("node " << entry.node->name());
        CHECK(entry.status.code() == expected.code());
        CHECK(entry.status.plugin() == expected.plugin());
        CHECK(Reasons(entry.status) == Reasons(expected));
      }
      algorithm.Recycle(std::move(error->node_statuses));
    } else {
      REQUIRE(std::holds_alternative<ScheduleSuccess>(outcome));
      CHECK(want.at(std::get<ScheduleSuccess>(outcome).node->name()).IsSuccess());
    }
  }
  CHECK(fit_errors > 200);
}

TEST_CASE("a search whose last buffer did not come back writes the kept verdicts out again",
          "[filter_verdicts]") {
  auto fw = runtime::Framework::Create(config::DefaultConfiguration().profiles.at(0), {});
  REQUIRE(fw.ok());
  constexpr int kNodes = 8;
  World world(kNodes);
  NominatedPods nominated;
  util::WorkerPool pool(2);
  ScheduleAlgorithm algorithm(&pool, 0, 3);
  // Every node's verdict in `error` is the filters' for `pod`.
  const auto check_verdicts = [&](const FitError& error, const framework::PodInfo& pod) {
    const auto want = Verdicts(**fw, pod, world.snapshot, nominated);
    REQUIRE(error.node_statuses.size() == static_cast<size_t>(kNodes));
    for (const auto& entry : error.node_statuses) {
      REQUIRE(entry.node != nullptr);
      INFO(pod.key << " on " << entry.node->name());
      CHECK(Reasons(entry.status) == Reasons(want.at(entry.node->name())));
    }
  };
  // Each search fits nowhere and reports every node's verdict as the filters give it.
  const auto search = [&](const framework::PodInfoPtr& pod) {
    framework::CycleState state;
    auto outcome = algorithm.Schedule(**fw, state, *pod, world.snapshot, &nominated);
    REQUIRE(std::holds_alternative<FitError>(outcome));
    FitError error = std::move(std::get<FitError>(outcome));
    check_verdicts(error, *pod);
    return error;
  };
  // Short of cpu and memory everywhere: its entries hold two reasons a node.
  algorithm.Recycle(std::move(
      search(
          framework::MakePodInfo(
              testing::PodBuilder("large").Container({{"cpu", "5"}, {"memory", "100Gi"}}).Ptr(), 0))
          .node_statuses));
  // Two pods alike, short of cpu only: the third search's verdicts are all kept ones. The
  // second's entries are not given back (a FitError kept elsewhere), so the third writes its
  // verdicts into another buffer, which may hold the first search's.
  const auto second = Pod("second", "5");
  const FitError held = search(second);
  search(Pod("third", "5"));
  // Nor did the third search write into the FitError held.
  check_verdicts(held, *second);
}

}  // namespace
}  // namespace kubesched::scheduler
