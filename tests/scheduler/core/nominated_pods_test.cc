// NominatedPods kept in step with the queue in proportion to what changed, and the host's resource
// screen that lets preemption pass over nodes without a dry run.

#include "scheduler/core/nominated_pods.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "scheduler/queue/scheduling_queue.h"
#include "scheduler/runtime/framework.h"
#include "scheduler/util/clock.h"
#include "tests/testing/builders.h"

namespace kubesched::scheduler {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;

framework::PodInfoPtr Pod(const std::string& name, const std::string& cpu, int32_t priority,
                          const std::string& node = "") {
  PodBuilder builder(name);
  builder.Container({{"cpu", cpu}}).Priority(priority);
  if (!node.empty()) builder.NodeName(node);
  return framework::MakePodInfo(builder.Ptr(), priority);
}

// A snapshot of `n` nodes named n0..n(n-1), written as the cache writes it.
struct World {
  framework::Snapshot snapshot;
  framework::SnapshotBuilder builder{&snapshot};
  int64_t generation = 0;

  explicit World(int n, const std::string& cpu = "4", const std::string& pods = "110") {
    for (int i = 0; i < n; ++i) {
      NodeBuilder node(absl::StrCat("n", i));
      node.Capacity({{"cpu", cpu}, {"memory", "64Gi"}, {"pods", pods}});
      builder.Upsert(node.Ptr()->meta.name)->SetNode(node.Ptr(), ++generation);
    }
    builder.RebuildLists();
    builder.RecomputeClusterTotals();
    builder.set_generation(generation);
  }
  framework::NodeInfo* Node(int i) { return builder.Find(absl::StrCat("n", i)); }
};

// The pod keys an entry lists, or none for no entry.
std::multiset<std::string> Keys(const NominatedPods::Entry* entry) {
  std::multiset<std::string> keys;
  if (entry == nullptr) return keys;
  for (const auto& pod : entry->pods) keys.insert(pod->key);
  return keys;
}

TEST_CASE("NominatedPods::Sync follows the queue's changes as a full Reset would", "[nominated]") {
  World world(12);
  util::FakeClock clock;
  queue::SchedulingQueue queue{&clock, queue::QueueOptions{}};
  NominatedPods synced;
  std::mt19937 random(7);
  std::vector<framework::PodInfoPtr> pods;
  for (int i = 0; i < 40; ++i) pods.push_back(Pod(absl::StrCat("p", i), "1", i % 5));

  for (int step = 0; step < 600; ++step) {
    std::vector<const framework::NodeInfo*> refreshed;
    const int action = static_cast<int>(random() % 4);
    const auto& pod = pods[random() % pods.size()];
    const int node = static_cast<int>(random() % 12);
    if (action <= 1) {
      queue.AddNominatedPod(pod, absl::StrCat("n", node));
    } else if (action == 2) {
      queue.DeleteNominatedPod(pod->key);
    } else {
      // The node changes (a pod lands on it): its copy with the nominated pods must follow.
      world.Node(node)->AddPod(Pod(absl::StrCat("bound", step), "100m", 0, absl::StrCat("n", node)),
                               ++world.generation);
      world.builder.set_generation(world.generation);
      refreshed.push_back(world.Node(node));
    }
    synced.Sync(queue.NominationsSince(synced.version()), world.snapshot, refreshed,
                /*node_set_changed=*/false);
    NominatedPods reference;
    reference.Reset(queue.AllNominatedPods(), world.snapshot);
    for (int i = 0; i < 12; ++i) {
      const framework::NodeInfo* info = world.snapshot.Get(absl::StrCat("n", i));
      const NominatedPods::Entry* got = synced.For(info);
      INFO("step " << step << " node n" << i);
      CHECK(Keys(got) == Keys(reference.For(info)));
      // The stamp read without the entry is the entry's.
      CHECK(synced.StampAt(info->snapshot_position()) == (got != nullptr ? got->stamp : 0));
      if (got != nullptr) {
        REQUIRE(got->with_all != nullptr);
        CHECK(got->with_all->generation() == info->generation());
        CHECK(got->with_all->pods().size() == info->pods().size() + got->pods.size());
      }
    }
    CHECK(synced.empty() == reference.empty());
    for (const auto& some : pods) {
      INFO("step " << step << " pod " << some->key);
      CHECK(synced.MayHold(*some) == !queue.NominatedNodeOf(some->key).empty());
    }
  }
}

TEST_CASE("NominationsSince: a reader too far behind gets every nomination", "[nominated]") {
  util::FakeClock clock;
  queue::SchedulingQueue queue{&clock, queue::QueueOptions{}};
  const auto kept = Pod("kept", "1", 1);
  queue.AddNominatedPod(kept, "n1");
  const auto first = queue.NominationsSince(0);
  CHECK(first.complete);
  REQUIRE(first.nodes.size() == 1);
  CHECK(queue.NominationsSince(first.version).nodes.empty());

  const auto churn = Pod("churn", "1", 1);
  for (int i = 0; i < 5000; ++i) queue.AddNominatedPod(churn, absl::StrCat("m", i % 3));
  queue.DeleteNominatedPod(churn->key);
  const auto late = queue.NominationsSince(first.version);
  CHECK(late.complete);
  REQUIRE(late.nodes.size() == 1);  // only n1 still has a nomination
  CHECK(late.nodes.front().first == "n1");

  queue.AddNominatedPod(churn, "m0");
  const auto recent = queue.NominationsSince(late.version);
  CHECK_FALSE(recent.complete);
  REQUIRE(recent.nodes.size() == 1);
  CHECK(recent.nodes.front().first == "m0");
  CHECK(queue.NominatedNodeOf(churn->key) == "m0");
  CHECK(queue.NominatedNodeOf("default/nobody").empty());
}

TEST_CASE("NominatedPods::Sync looks nodes up again when the node set changes", "[nominated]") {
  World world(3);
  util::FakeClock clock;
  queue::SchedulingQueue queue{&clock, queue::QueueOptions{}};
  NominatedPods nominated;
  queue.AddNominatedPod(Pod("a", "1", 1), "n2");
  queue.AddNominatedPod(Pod("b", "1", 1), "later");
  nominated.Sync(queue.NominationsSince(nominated.version()), world.snapshot, {}, false);
  CHECK(Keys(nominated.For(world.snapshot.Get("n2"))) == std::multiset<std::string>{"default/a"});

  world.builder.Remove("n2");
  NodeBuilder later("later");
  later.Capacity({{"cpu", "4"}, {"memory", "64Gi"}, {"pods", "110"}});
  world.builder.Upsert("later")->SetNode(later.Ptr(), ++world.generation);
  world.builder.RebuildLists();
  nominated.Sync(queue.NominationsSince(nominated.version()), world.snapshot, {}, true);
  const framework::NodeInfo* added = world.snapshot.Get("later");
  REQUIRE(added != nullptr);
  CHECK(Keys(nominated.For(added)) == std::multiset<std::string>{"default/b"});
  CHECK(nominated.ForName("n2") != nullptr);  // still nominated, to a node that is gone
  CHECK(nominated.ForName("n2")->node == nullptr);
}

// Required anti-affinity to pods labelled app=x on the same host.
api::Affinity AntiAffinityToAppX() {
  api::Requirement app_x;
  app_x.key = api::Intern("app");
  app_x.op = api::SelectorOperator::kIn;
  app_x.values = {api::Intern("x")};
  api::PodAffinityTerm term;
  term.label_selector = api::LabelSelector{{app_x}};
  term.topology_key = api::Intern("kubernetes.io/hostname");
  api::Affinity affinity;
  affinity.pod_anti_affinity.emplace().required.push_back(term);
  return affinity;
}

// Up to two pods of random priority and cpu nominated to n0, as the queue lists them.
NominatedPods RandomNominations(std::mt19937& random, const framework::Snapshot& snapshot) {
  util::FakeClock clock;
  queue::SchedulingQueue queue{&clock, queue::QueueOptions{}};
  for (int i = 0, n = static_cast<int>(random() % 3); i < n; ++i) {
    queue.AddNominatedPod(Pod(absl::StrCat("w", i), absl::StrCat(1 + random() % 2),
                              static_cast<int32_t>(random() % 4)),
                          "n0");
  }
  NominatedPods nominated;
  nominated.Sync(queue.NominationsSince(0), snapshot, {}, false);
  return nominated;
}

// The screen may only pass over nodes the filters would reject: over random nodes, nominations
// and sets of pods removed, whenever it says "cannot fit", the filters on the what-if copy agree.
TEST_CASE("CycleFilterHost::CannotFitWithout never passes over a node that would fit",
          "[nominated][preemption]") {
  auto fw = runtime::Framework::Create(config::DefaultConfiguration().profiles.at(0), {});
  REQUIRE(fw.ok());
  std::mt19937 random(11);
  int screened = 0;
  int kept = 0;
  for (int round = 0; round < 300; ++round) {
    World world(1, absl::StrCat(2 + random() % 6), absl::StrCat(2 + random() % 4));
    framework::NodeInfo* node = world.Node(0);
    const int on_node = static_cast<int>(random() % 5);
    for (int i = 0; i < on_node; ++i) {
      node->AddPod(Pod(absl::StrCat("r", i), absl::StrCat(500 * (1 + random() % 4), "m"),
                       static_cast<int32_t>(random() % 3), "n0"),
                   ++world.generation);
    }
    const NominatedPods nominated = RandomNominations(random, world.snapshot);

    const auto pod = Pod("incoming", absl::StrCat(500 * (1 + random() % 4), "m"), 2);
    framework::CycleState state;
    const auto pre = (*fw)->RunPreFilter(state, *pod, world.snapshot);
    REQUIRE(pre.status.IsSuccess());
    const CycleFilterHost host(**fw, pre.skip_filter, nominated);
    // Remove a random subset of the pods below the incoming pod.
    framework::NodeInfo what_if = *node;
    api::ResourceList freed;
    size_t freed_pods = 0;
    for (const auto& other : node->pods()) {
      if (other->priority >= pod->priority || random() % 2 == 0) continue;
      REQUIRE(what_if.RemovePod(*other, what_if.generation()).ok());
      freed.Add(other->requests);
      ++freed_pods;
    }
    const bool cannot = host.CannotFitWithout(state, *pod, *node, freed, freed_pods);
    const bool fits = host.RunFilters(state, *pod, what_if, *node).IsSuccess();
    INFO("round " << round);
    if (cannot) CHECK_FALSE(fits);
    (cannot ? screened : kept) += 1;
  }
  // Both verdicts occur, so the property above was exercised both ways.
  CHECK(screened > 20);
  CHECK(kept > 20);
}

// Preemption judges what-if nodes by arithmetic when every filter that runs reads the pods only
// through their summed requests: over random nodes (some tainted or cordoned, some near their pod
// limit), nominations and subsets of pods removed, RunFiltersWithout gives exactly the status
// (code, reasons, plugin) that RunFilters gives on the what-if copy.
// Node "n0" with random capacity, now and then tainted or cordoned.
NodeBuilder RandomNode(std::mt19937& random) {
  NodeBuilder spec("n0");
  spec.Capacity({{"cpu", absl::StrCat(2 + random() % 6)},
                 {"memory", absl::StrCat(2 + random() % 6, "Gi")},
                 {"pods", absl::StrCat(1 + random() % 5)}});
  if (random() % 8 == 0) spec.Taint("dedicated", "gpu", api::TaintEffect::kNoSchedule);
  if (random() % 8 == 0) spec.Taint("slow", "yes", api::TaintEffect::kPreferNoSchedule);
  if (random() % 10 == 0) spec.Unschedulable();
  return spec;
}

TEST_CASE("CycleFilterHost::RunFiltersWithout equals RunFilters on the what-if copy",
          "[nominated][preemption]") {
  auto fw = runtime::Framework::Create(config::DefaultConfiguration().profiles.at(0), {});
  REQUIRE(fw.ok());
  std::mt19937 random(29);
  std::multiset<std::string> outcomes;
  for (int round = 0; round < 400; ++round) {
    World world(0);
    world.builder.Upsert("n0")->SetNode(RandomNode(random).Ptr(), ++world.generation);
    framework::NodeInfo* node = world.Node(0);
    for (int i = 0, n = static_cast<int>(random() % 5); i < n; ++i) {
      PodBuilder pod(absl::StrCat("r", i));
      pod.Container({{"cpu", absl::StrCat(500 * (1 + random() % 4), "m")},
                     {"memory", absl::StrCat(1 + random() % 2, "Gi")}})
          .Priority(static_cast<int32_t>(random() % 3))
          .NodeName("n0");
      node->AddPod(framework::MakePodInfo(pod.Ptr(), static_cast<int32_t>(random() % 3)),
                   ++world.generation);
    }
    world.builder.RebuildLists();
    const NominatedPods nominated = RandomNominations(random, world.snapshot);

    PodBuilder incoming("incoming");
    incoming
        .Container({{"cpu", absl::StrCat(500 * (1 + random() % 4), "m")},
                    {"memory", absl::StrCat(random() % 3, "Gi")}})
        .Priority(2);
    const auto pod = framework::MakePodInfo(incoming.Ptr(), 2);
    framework::CycleState state;
    const auto pre = (*fw)->RunPreFilter(state, *pod, world.snapshot);
    REQUIRE(pre.status.IsSuccess());
    const CycleFilterHost host(**fw, pre.skip_filter, nominated);
    REQUIRE(host.JudgesByRequests());
    framework::NodeInfo what_if = *node;
    api::ResourceList freed;
    size_t freed_pods = 0;
    for (const auto& other : node->pods()) {
      if (random() % 2 == 0) continue;
      REQUIRE(what_if.RemovePod(*other, what_if.generation()).ok());
      freed.Add(other->requests);
      ++freed_pods;
    }
    const framework::Status copied = host.RunFilters(state, *pod, what_if, *node);
    const framework::Status judged = host.RunFiltersWithout(state, *pod, *node, freed, freed_pods);
    INFO("round " << round << ": " << copied.Message() << " / " << judged.Message());
    CHECK(judged.code() == copied.code());
    CHECK(judged.plugin() == copied.plugin());
    CHECK(std::vector<std::string_view>(judged.reasons().begin(), judged.reasons().end()) ==
          std::vector<std::string_view>(copied.reasons().begin(), copied.reasons().end()));
    outcomes.insert(copied.IsSuccess() ? std::string("fits") : copied.Message());
  }
  // The verdicts cover fitting, each resource, the pod count, taints and cordons.
  CHECK(outcomes.count("fits") > 20);
  CHECK(outcomes.count("Insufficient cpu") > 10);
  CHECK(outcomes.count("Too many pods") > 5);
  CHECK(outcomes.count("node(s) had untolerated taint(s)") +
            outcomes.count("node(s) were unschedulable") >
        10);
}

// The Filter phase judges a node whose nominated pods all count on the entry's sums when the
// filters judge by requests: the verdict must be the one the copy with those pods gives.
TEST_CASE("Filtering with nominated pods by their sums gives the copy's verdict", "[nominated]") {
  auto fw = runtime::Framework::Create(config::DefaultConfiguration().profiles.at(0), {});
  REQUIRE(fw.ok());
  std::mt19937 random(41);
  std::multiset<std::string> outcomes;
  int by_sums = 0;
  for (int round = 0; round < 400; ++round) {
    World world(0);
    world.builder.Upsert("n0")->SetNode(RandomNode(random).Ptr(), ++world.generation);
    for (int i = 0, n = static_cast<int>(random() % 4); i < n; ++i) {
      world.Node(0)->AddPod(
          Pod(absl::StrCat("r", i), absl::StrCat(500 * (1 + random() % 3), "m"), 0, "n0"),
          ++world.generation);
    }
    world.builder.RebuildLists();
    const NominatedPods nominated = RandomNominations(random, world.snapshot);
    const framework::NodeInfo& node = *world.snapshot.nodes().front();
    const NominatedPods::Entry* entry = nominated.For(&node);

    const auto pod = Pod("incoming", absl::StrCat(500 * (1 + random() % 4), "m"),
                         static_cast<int32_t>(random() % 3));
    framework::CycleState state;
    const auto pre = (*fw)->RunPreFilter(state, *pod, world.snapshot);
    REQUIRE(pre.status.IsSuccess());
    REQUIRE(NominatedFiltersJudgeByRequests(**fw, pre.skip_filter));
    framework::Status on_copy;
    RunFiltersWithNominatedInto(**fw, state, *pod, node, pre.skip_filter, entry, on_copy, false);
    framework::Status on_sums = framework::Status::Unschedulable("stale");
    RunFiltersWithNominatedInto(**fw, state, *pod, node, pre.skip_filter, entry, on_sums, true);
    INFO("round " << round << ": " << on_copy.Message() << " / " << on_sums.Message());
    CHECK(on_sums.code() == on_copy.code());
    CHECK(on_sums.plugin() == on_copy.plugin());
    CHECK(std::vector<std::string_view>(on_sums.reasons().begin(), on_sums.reasons().end()) ==
          std::vector<std::string_view>(on_copy.reasons().begin(), on_copy.reasons().end()));
    if (entry != nullptr && entry->min_priority >= pod->priority) {
      ++by_sums;
      // The node alone fits where the nominated pods make the difference.
      if (!on_copy.IsSuccess() &&
          (*fw)->RunFilter(state, *pod, node, pre.skip_filter).IsSuccess()) {
        outcomes.insert("fits without the nominated pods");
      }
    }
    outcomes.insert(on_copy.IsSuccess() ? std::string("fits") : on_copy.Message());
  }
  CHECK(by_sums > 50);
  CHECK(outcomes.count("fits") > 20);
  CHECK(outcomes.count("fits without the nominated pods") > 5);
  CHECK(outcomes.count("Insufficient cpu") > 10);
  CHECK(outcomes.count("Too many pods") > 5);
}

// A filter that reads pods in other ways than their requests (NodePorts for a pod with a host port,
// InterPodAffinity for a pod with anti-affinity) rules the arithmetic out: preemption then copies.
TEST_CASE("CycleFilterHost judges by requests only when every running filter allows it",
          "[nominated][preemption]") {
  auto fw = runtime::Framework::Create(config::DefaultConfiguration().profiles.at(0), {});
  REQUIRE(fw.ok());
  World world(1);
  NominatedPods nominated;
  const auto judges = [&](PodBuilder builder) {
    const auto pod = framework::MakePodInfo(builder.Ptr(), 0);
    framework::CycleState state;
    const auto pre = (*fw)->RunPreFilter(state, *pod, world.snapshot);
    REQUIRE(pre.status.IsSuccess());
    return CycleFilterHost(**fw, pre.skip_filter, nominated).JudgesByRequests();
  };
  PodBuilder plain("plain");
  plain.Container({{"cpu", "1"}});
  CHECK(judges(plain));
  PodBuilder with_port("with-port");
  with_port.Container({{"cpu", "1"}}).HostPort(8080);
  CHECK_FALSE(judges(with_port));
  PodBuilder anti("anti");
  anti.Container({{"cpu", "1"}}).Affinity(AntiAffinityToAppX());
  CHECK_FALSE(judges(anti));
}

// Upstream's addGENominatedPods: the PreFilter state sees the nominated pods too, so a pod whose
// anti-affinity selects a pod nominated to the node does not fit there.
TEST_CASE("Nominated pods are seen by InterPodAffinity's PreFilter state", "[nominated]") {
  auto fw = runtime::Framework::Create(config::DefaultConfiguration().profiles.at(0), {});
  REQUIRE(fw.ok());
  framework::Snapshot snapshot;
  framework::SnapshotBuilder builder(&snapshot);
  NodeBuilder node("n1");
  node.Capacity({{"cpu", "4"}, {"memory", "64Gi"}, {"pods", "110"}})
      .Label("kubernetes.io/hostname", "n1");
  builder.Upsert("n1")->SetNode(node.Ptr(), 1);
  builder.RebuildLists();
  builder.RecomputeClusterTotals();
  const framework::NodeInfo* n1 = snapshot.Get("n1");

  const auto pod = framework::MakePodInfo(
      PodBuilder("p").Container({{"cpu", "1"}}).Priority(1).Affinity(AntiAffinityToAppX()).Ptr(),
      1);
  const auto waiting = framework::MakePodInfo(
      PodBuilder("w").Container({{"cpu", "1"}}).Priority(5).Label("app", "x").Ptr(), 5);

  framework::CycleState state;
  const auto pre = (*fw)->RunPreFilter(state, *pod, snapshot);
  REQUIRE(pre.status.IsSuccess());
  NominatedPods nominated;
  CHECK(RunFiltersWithNominated(**fw, state, *pod, *n1, pre.skip_filter, nullptr).IsSuccess());
  nominated.Reset({{"n1", {waiting}}}, snapshot);
  const framework::Status status =
      RunFiltersWithNominated(**fw, state, *pod, *n1, pre.skip_filter, nominated.For(n1));
  CHECK(status.code() == framework::Code::kUnschedulable);
  CHECK(status.Message() == "node(s) didn't match pod anti-affinity rules");
  // The cycle's own state is untouched: without the nomination the node fits again.
  CHECK(RunFiltersWithNominated(**fw, state, *pod, *n1, pre.skip_filter, nullptr).IsSuccess());
}

}  // namespace
}  // namespace kubesched::scheduler
