// DefaultPreemption: upstream's cases (node ordering, eligibility, nominated pods, candidate
// counts) and the NonPreemptible scenario of the source, through the real default profile: the
// Filter phase of ScheduleAlgorithm gives the rejected nodes, and CycleFilterHost runs the
// profile's filters on the what-if nodes. The victims on one node:
// default_preemption/victims_test.cc.

#include "plugins/default_preemption/default_preemption.h"

#include <catch2/catch.hpp>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "config/config.h"
#include "plugins/names.h"
#include "scheduler/core/algorithm.h"
#include "scheduler/core/nominated_pods.h"
#include "scheduler/runtime/framework.h"
#include "scheduler/util/parallel.h"
#include "tests/plugins/default_preemption/preemption_harness.h"
#include "tests/plugins/plugin_fixture.h"

namespace kubesched::plugins {
namespace {

using testing::NodeBuilder;

using preemption_testing::Harness;
using preemption_testing::kEpoch;
using preemption_testing::kSystemNodeCritical;
using preemption_testing::MakePod;
using preemption_testing::P;
using preemption_testing::Pdb;
using preemption_testing::Result;
using preemption_testing::WithArgs;

// ---------------------------------------------------------------------------------------------
// Choosing the node

TEST_CASE("DefaultPreemption picks the node by upstream's tie-breakers", "[plugins][preemption]") {
  constexpr int32_t kMin = std::numeric_limits<int32_t>::min();
  struct Case {
    std::string name;
    std::vector<P> n1, n2;  // every node has cpu 2; the preemptor needs all of it
    std::string want;
  };
  const std::vector<Case> cases = {
      {"lowest highest-victim priority",
       {{"a", "1", 5, 1}, {"b", "1", 1, 1}},
       {{"c", "1", 3, 1}, {"d", "1", 3, 1}},
       "n2"},
      {"same highest priority: smallest priority sum",
       {{"a", "1", 5, 1}, {"b", "1", 4, 1}},
       {{"c", "1", 5, 1}, {"d", "1", 1, 1}},
       "n2"},
      {"sums are of priorities shifted by 2^31, so fewer negative pods win",
       {{"a", "1", -10, 1}, {"b", "1", -10, 1}},
       {{"c", "2", -10, 1}},
       "n2"},
      {"same highest and shifted sum: fewest victims",
       {{"a", "1", 5, 1}, {"b", "1", kMin, 1}},
       {{"c", "2", 5, 1}},
       "n2"},
      {"all else equal: the latest start among the highest-priority victims",
       {{"a", "1", 5, 10}, {"b", "1", 1, 50}},
       {{"c", "1", 5, 20}, {"d", "1", 1, 1}},
       "n2"},
      {"the earliest of the highest-priority victims is what counts",
       {{"a", "1", 5, 30}, {"b", "1", 5, 5}},
       {{"c", "1", 5, 20}, {"d", "1", 5, 10}},
       "n2"},
      {"a victim that has not started is the latest", {{"a", "2", 5}}, {{"c", "2", 5, 20}}, "n1"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      Harness h;
      h.Node("n1", "2").Node("n2", "2");
      for (const P& pod : c.n1) h.Pod("n1", pod);
      for (const P& pod : c.n2) h.Pod("n2", pod);
      const Result result = h.Preempt({"p", "2", 10});
      CHECK(result.node == c.want);
      CHECK(result.victims.size() == (c.want == "n1" ? c.n1.size() : c.n2.size()));
    }
  }
}

TEST_CASE("DefaultPreemption skips nodes that removing pods cannot fix", "[plugins][preemption]") {
  const auto taint = [](NodeBuilder& node) {
    node.Taint("dedicated", "gpu", api::TaintEffect::kNoSchedule);
  };
  SECTION("an unresolvable node is not tried even with cheaper victims") {
    Harness h;
    h.Node("tainted", "1", taint)
        .Node("n2", "1")
        .Pod("tainted", {"cheap", "1", 0, 1})
        .Pod("n2", {"dearer", "1", 5, 1});
    std::set<std::string> tried;
    const Result result = h.Preempt({"p", "1", 10}, nullptr, &tried);
    CHECK(result.node == "n2");
    CHECK(tried == std::set<std::string>{"n2"});
  }
  SECTION("when no node can be helped, every node is 'not helpful'") {
    Harness h;
    h.Node("t1", "1", taint).Node("t2", "1", taint).Pod("t1", {"low", "1", 0, 1});
    const Result result = h.Preempt({"p", "1", 10});
    CHECK(result.node.empty());
    CHECK(result.message ==
          "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.");
  }
  SECTION("tried and untried nodes together give upstream's histogram") {
    Harness h;
    h.Node("t1", "1", taint).Node("n2", "1").Node("n3", "1");
    h.Pod("t1", {"low", "1", 0, 1}).Pod("n2", {"peer", "1", 10, 1}).Pod("n3", {"top", "1", 99});
    const Result result = h.Preempt({"p", "1", 10});
    CHECK(result.message ==
          "preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No "
          "preemption victims found for incoming pod.");
  }
  SECTION("a queue-quota rejection is not fixed by removing pods from a node") {
    Harness h;
    h.Node("n1", "1").Pod("n1", {"low", "1", 0, 1});
    const auto& snapshot = h.snapshot();
    framework::Status quota = framework::Status::Unschedulable("queue root.ml is over its max");
    quota.set_plugin(names::kQueueQuota);
    const std::vector<framework::NodeStatus> rejected = {{snapshot.nodes().front(), quota}};
    DefaultPreemption plugin{config::DefaultPreemptionArgs{}};
    struct NeverCalled final : framework::PostFilterHost {
      framework::Status RunFilters(const framework::CycleState&, const framework::PodInfo&,
                                   const framework::NodeInfo&,
                                   const framework::NodeInfo&) const override {
        FAIL("filters run for a quota rejection");
        return framework::Status::Success();
      }
    } host;
    framework::CycleState state;
    const auto outcome =
        plugin.PostFilter(state, *MakePod({"p", "1", 10}), snapshot, rejected, host);
    CHECK(outcome.status.Message() ==
          "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.");
  }
}

// ---------------------------------------------------------------------------------------------
// Eligibility and nominated pods

TEST_CASE("DefaultPreemption: who may preempt", "[plugins][preemption]") {
  SECTION("preemptionPolicy Never preempts nobody") {
    Harness h;
    h.Node("n1", "1").Pod("n1", {"low", "1", 0, 1});
    P never{"p", "1", 10};
    never.edit = [](api::Pod& pod) { pod.spec.preemption_policy = api::PreemptionPolicy::kNever; };
    const Result result = h.Preempt(never);
    CHECK(result.node.empty());
    CHECK(result.victims.empty());
    CHECK(result.code == framework::Code::kUnschedulable);
    CHECK(result.message == "preemption: not eligible due to preemptionPolicy=Never.");
  }
  SECTION("PreemptLowerPriority is the default") {
    Harness h;
    h.Node("n1", "1").Pod("n1", {"low", "1", 0, 1});
    P lower{"p", "1", 10};
    lower.edit = [](api::Pod& pod) {
      pod.spec.preemption_policy = api::PreemptionPolicy::kPreemptLowerPriority;
    };
    CHECK(h.Preempt(lower).victims == std::vector<std::string>{"default/low"});
  }
  const auto terminating = [](api::Pod& pod) { pod.meta.deletion_timestamp = kEpoch; };
  const auto nominated_to_n1 = [](api::Pod& pod) { pod.status.nominated_node_name = "n1"; };
  SECTION("a preemptor waits while lower pods on its nominated node terminate") {
    Harness h;
    h.Node("n1", "2").Node("n2", "1");
    h.Pod("n1", {"leaving", "1", 1, 1, {}, false, false, terminating});
    h.Pod("n1", {"peer", "1", 10, 1}).Pod("n2", {"low", "1", 0, 1});
    const Result result = h.Preempt({"p", "1", 10, {}, {}, false, false, nominated_to_n1});
    CHECK(result.victims.empty());
    CHECK(result.message ==
          "preemption: not eligible due to a terminating pod on the nominated node.");
  }
  SECTION("a terminating pod of higher priority does not hold it back") {
    Harness h;
    h.Node("n1", "2");
    h.Pod("n1", {"leaving", "1", 50, 1, {}, false, false, terminating});
    h.Pod("n1", {"low", "1", 0, 1});
    const Result result = h.Preempt({"p", "1", 10, {}, {}, false, false, nominated_to_n1});
    CHECK(result.victims == std::vector<std::string>{"default/low"});
  }
  SECTION("nor does one on a nominated node that is now unresolvable") {
    Harness h;
    h.Node("n1", "2",
           [](NodeBuilder& node) { node.Taint("gone", "", api::TaintEffect::kNoSchedule); });
    h.Node("n2", "1");
    h.Pod("n1", {"leaving", "1", 1, 1, {}, false, false, terminating});
    h.Pod("n2", {"low", "1", 0, 1});
    const Result result = h.Preempt({"p", "1", 10, {}, {}, false, false, nominated_to_n1});
    CHECK(result.node == "n2");
  }
}

TEST_CASE("DefaultPreemption counts pods nominated to a node", "[plugins][preemption]") {
  SECTION("a nominated pod of higher priority keeps its room") {
    Harness h;
    h.Node("n1", "2").Pod("n1", {"low", "1", 0, 1}).Nominate("n1", {"waiting", "1", 20});
    const Result result = h.Preempt({"p", "1500m", 10});
    CHECK(result.node.empty());
    CHECK(result.message == "preemption: 0/1 nodes are available: 1 Insufficient cpu.");
  }
  SECTION("a nominated pod of lower priority does not") {
    Harness h;
    h.Node("n1", "2").Pod("n1", {"low", "1", 0, 1}).Nominate("n1", {"waiting", "1", 5});
    CHECK(h.Preempt({"p", "1500m", 10}).victims == std::vector<std::string>{"default/low"});
  }
}

TEST_CASE("Nominated pods: the node copy kept between cycles follows the node and the pods",
          "[plugins][preemption]") {
  auto fw = runtime::Framework::Create(config::DefaultConfiguration().profiles.at(0), {});
  REQUIRE(fw.ok());
  framework::Snapshot snapshot;
  framework::SnapshotBuilder builder(&snapshot);
  int64_t generation = 0;
  NodeBuilder node_builder("n1");
  node_builder.Capacity({{"cpu", "4"}, {"memory", "64Gi"}, {"pods", "110"}});
  builder.Upsert("n1")->SetNode(node_builder.Ptr(), ++generation);
  builder.Upsert("n1")->AddPod(MakePod({"a", "1", 0, 1}, "n1"), ++generation);
  builder.RebuildLists();
  builder.RecomputeClusterTotals();
  const framework::NodeInfo* n1 = snapshot.Get("n1");
  REQUIRE(n1 != nullptr);

  const framework::PodInfoPtr waiting = MakePod({"waiting", "2", 20});
  const framework::PodInfoPtr pod = MakePod({"p", "1", 10});
  scheduler::NominatedPods nominated;
  // The Filter phase on n1 (the snapshot's node) and on a copy of it (preemption's what-if).
  const auto fits = [&](const framework::PodInfo& p) {
    framework::CycleState state;
    const auto pre = (*fw)->RunPreFilter(state, p, snapshot);
    REQUIRE(pre.status.IsSuccess());
    const bool on_node =
        scheduler::RunFiltersWithNominated(**fw, state, p, *n1, pre.skip_filter, nominated.For(n1))
            .IsSuccess();
    const framework::NodeInfo copy = *n1;
    const bool on_copy = scheduler::RunFiltersWithNominated(**fw, state, p, copy, pre.skip_filter,
                                                            nominated.ForName("n1"))
                             .IsSuccess();
    CHECK(on_node == on_copy);
    return on_node;
  };

  nominated.Reset({{"n1", {waiting}}}, snapshot);
  CHECK(fits(*pod));  // a (1) + waiting (2) + p (1) = 4
  // The node changes: the next cycle's copy has the new pod.
  builder.Upsert("n1")->AddPod(MakePod({"b", "1", 0, 1}, "n1"), ++generation);
  CHECK_FALSE(fits(*pod));  // before Reset: the kept copy is out of date and not used
  nominated.Reset({{"n1", {waiting}}}, snapshot);
  CHECK_FALSE(fits(*pod));
  // Other nominations: the copy follows them.
  nominated.Reset({{"n1", {MakePod({"small", "1", 20})}}}, snapshot);
  CHECK(fits(*pod));
  // A pod of lower priority, or the pod itself, does not count.
  nominated.Reset({{"n1", {waiting, MakePod({"p", "1", 10})}}}, snapshot);
  CHECK_FALSE(fits(*pod));
  CHECK(fits(*MakePod({"p", "1", 30})));  // waiting ranks below it
  nominated.Reset({{"n1", {MakePod({"p", "2", 10})}}}, snapshot);
  CHECK(fits(*pod));
  nominated.Reset({}, snapshot);
  CHECK(nominated.empty());
  CHECK(fits(*pod));
}

// ---------------------------------------------------------------------------------------------
// Candidate counts (args)

TEST_CASE("DefaultPreemption's candidate count is upstream's calculateNumCandidates",
          "[plugins][preemption]") {
  struct Case {
    int32_t percentage, absolute, nodes, want;
  };
  for (const Case& c : std::vector<Case>{{10, 100, 50, 50},
                                         {10, 100, 1000, 100},
                                         {10, 100, 5000, 500},
                                         {40, 1, 10, 4},
                                         {0, 3, 10, 3},
                                         {100, 0, 7, 7},
                                         {100, 100, 0, 0}}) {
    CAPTURE(c.percentage, c.absolute, c.nodes);
    const auto plugin = WithArgs({c.percentage, c.absolute});
    CHECK(plugin->NumCandidates(c.nodes) == c.want);
  }
}

TEST_CASE("DefaultPreemption dry-runs only as many nodes as it needs", "[plugins][preemption]") {
  const auto cluster = [](Harness& h) {
    for (const char* node : {"n1", "n2", "n3", "n4"}) {
      h.Node(node, "1").Pod(node, {std::string("low-") + node, "1", 0, 1, {{"app", node}}});
    }
  };
  SECTION("by default, every node of a small cluster") {
    Harness h;
    cluster(h);
    std::set<std::string> tried;
    CHECK_FALSE(h.Preempt({"p", "1", 10}, nullptr, &tried).node.empty());
    CHECK(tried.size() == 4);
  }
  SECTION("minCandidateNodesAbsolute 1: the first candidate found") {
    Harness h;
    cluster(h);
    const auto plugin = WithArgs({0, 1});
    std::set<std::string> tried;
    const Result result = h.Preempt({"p", "1", 10}, plugin.get(), &tried);
    CHECK(tried.size() == 1);
    CHECK(tried.count(result.node) == 1);
  }
  SECTION("but on until one candidate violates no PDB") {
    Harness h;
    cluster(h);
    h.Pdbs({Pdb("default", "n1", 0), Pdb("default", "n2", 0), Pdb("default", "n4", 0)});
    const auto plugin = WithArgs({0, 1});
    for (int attempt = 0; attempt < 4; ++attempt) {  // whatever node the offset starts at
      CHECK(h.Preempt({"p", "1", 10}, plugin.get()).node == "n3");
    }
  }
  SECTION("the same sequence of calls chooses the same nodes") {
    std::vector<std::string> first, second;
    for (auto* out : {&first, &second}) {
      Harness h;
      cluster(h);
      const auto plugin = WithArgs({0, 1});
      for (int i = 0; i < 6; ++i) out->push_back(h.Preempt({"p", "1", 10}, plugin.get()).node);
    }
    CHECK(first == second);
    CHECK(std::set<std::string>(first.begin(), first.end()).size() > 1);
  }
}

TEST_CASE("DefaultPreemption chooses the same whatever the number of threads",
          "[plugins][preemption]") {
  // 48 nodes of 4 cpu, each with four 1-cpu pods of mixed priorities, start times and apps; PDBs
  // on two apps (so some candidates violate them and the dry run must go on); some nodes tainted
  // (not tried), some with a pod of the preemptor's priority (tried, no room), some with a pod
  // nominated to them. The candidate counts make the dry run stop part way, at a point that
  // depends on the order in which nodes are read.
  const auto cluster = [](Harness& h) {
    const char* apps[] = {"db", "web", "batch"};
    for (int n = 0; n < 48; ++n) {
      const std::string node = "n" + std::to_string(n);
      h.Node(node, "4", [n](NodeBuilder& b) {
        if (n % 11 == 5) b.Taint("dedicated", "gpu", api::TaintEffect::kNoSchedule);
      });
      for (int k = 0; k < 4; ++k) {
        const int32_t priority = (n % 7 == 3 && k == 0) ? 10 : (n * 5 + k * 3) % 9;
        h.Pod(node, {node + "-p" + std::to_string(k),
                     "1",
                     priority,
                     (n * 13 + k * 7) % 17,
                     {{"app", apps[(n + k) % 3]}}});
      }
      if (n % 13 == 8) h.Nominate(node, {node + "-waiting", "2", 20});
    }
    h.Pdbs({Pdb("default", "db", 3), Pdb("default", "web", 0)});
  };
  const std::vector<config::DefaultPreemptionArgs> args = {{10, 100}, {0, 1},  {0, 3},
                                                           {10, 2},   {50, 0}, {100, 0}};
  // What each preemption gave, and the nodes it dry-ran.
  const auto run = [&](int threads, const config::DefaultPreemptionArgs& a) {
    Harness h(threads);
    cluster(h);
    const auto plugin = WithArgs(a);
    std::vector<
        std::tuple<std::string, std::vector<std::string>, std::string, std::set<std::string>>>
        out;
    for (const char* cpu : {"2", "3", "1", "4", "2", "3", "2", "1"}) {
      std::set<std::string> tried;
      const Result result = h.Preempt({"p", cpu, 10}, plugin.get(), &tried);
      out.emplace_back(result.node, result.victims, result.message, std::move(tried));
    }
    return out;
  };
  for (const auto& a : args) {
    CAPTURE(a.min_candidate_nodes_percentage, a.min_candidate_nodes_absolute);
    const auto one = run(1, a);
    const auto four = run(4, a);
    CHECK(one == four);
    // The cluster is built so that the preemptions succeed.
    for (const auto& [node, victims, message, tried] : one) {
      CHECK_FALSE(node.empty());
      CHECK_FALSE(victims.empty());
    }
  }
}

TEST_CASE("DefaultPreemption args are validated by its factory", "[plugins][preemption]") {
  struct Case {
    config::DefaultPreemptionArgs args;
    std::string error;
  };
  const std::vector<Case> cases = {
      {{101, 100},
       "DefaultPreemption: minCandidateNodesPercentage: Invalid value: 101: not in valid range "
       "[0, 100]"},
      {{10, -1},
       "DefaultPreemption: minCandidateNodesAbsolute: Invalid value: -1: not in valid range "
       "[0, inf)"},
      {{0, 0},
       "DefaultPreemption: minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the "
       "same time as minCandidateNodesAbsolute"},
      {{10, 100, -1},
       "DefaultPreemption: nonPreemptibleOverridePriority: must not be negative, "
       "got -1"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.error);
    const auto made = NewDefaultPreemption(c.args, {});
    REQUIRE_FALSE(made.ok());
    CHECK(made.status().message() == c.error);
  }
  CHECK(NewDefaultPreemption(std::monostate(), {}).ok());
  CHECK_FALSE(NewDefaultPreemption(config::InterPodAffinityArgs(), {}).ok());
}

// ---------------------------------------------------------------------------------------------
// NonPreemptible (the source's GPU platform)

TEST_CASE("NonPreemptible training jobs are never victims below the override",
          "[plugins][preemption]") {
  const P online{"online", "2", 10000};
  P training{"training-new", "2", 1000};
  training.class_non_preemptible = true;
  const auto batch = [](const std::string& name) { return P{name, "1", 0, 1}; };
  const auto running_training = [](const std::string& name) {
    P pod{name, "2", 1000, 1};
    pod.non_preemptible = true;
    return pod;
  };
  // A node full of batch pods, another full of training.
  const auto full_cluster = [&](Harness& h) {
    h.Node("batch-node", "4").Node("training-node", "4");
    for (const char* name : {"batch-1", "batch-2", "batch-3", "batch-4"}) {
      h.Pod("batch-node", batch(name));
    }
    h.Pod("training-node", running_training("train-1"));
    h.Pod("training-node", running_training("train-2"));
  };

  SECTION("training preempts batch") {
    Harness h;
    full_cluster(h);
    const Result result = h.Preempt(training);
    CHECK(result.node == "batch-node");
    CHECK(result.victims.size() == 2);
  }
  SECTION("online preempts batch, never training") {
    Harness h;
    full_cluster(h);
    const Result result = h.Preempt(online);
    CHECK(result.node == "batch-node");
    for (const std::string& victim : result.victims)
      CHECK(victim.find("batch") != std::string::npos);
  }
  SECTION("online cannot preempt training: the message says NonPreemptible pods are in the way") {
    Harness h;
    h.Node("training-node", "4");
    h.Pod("training-node", running_training("train-1"));
    h.Pod("training-node", running_training("train-2"));
    const Result result = h.Preempt(online);
    CHECK(result.node.empty());
    CHECK(result.message ==
          "preemption: 0/1 nodes are available: 1 NonPreemptible pods cannot be preempted.");
  }
  SECTION("batch alongside training: what batch frees is used, training stays") {
    Harness h;
    h.Node("mixed", "4")
        .Pod("mixed", running_training("train-1"))
        .Pod("mixed", batch("batch-1"))
        .Pod("mixed", batch("batch-2"));
    CHECK(h.Preempt(online).victims ==
          std::vector<std::string>{"default/batch-1", "default/batch-2"});
    // More than batch can free: training is what stands in the way.
    const Result result = h.Preempt({"big", "3", 10000});
    CHECK(result.victims.empty());
    CHECK(result.message ==
          "preemption: 0/1 nodes are available: 1 NonPreemptible pods cannot be preempted.");
  }
  SECTION("removing the NonPreemptible pods would not help either: upstream's reasons") {
    Harness h;
    h.Node("mixed", "5")
        .Pod("mixed", running_training("train-1"))
        .Pod("mixed", {"peer", "2", 20000});
    CHECK(h.Preempt({"wide", "4", 10000}).message ==
          "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.");
    h.Pod("mixed", batch("batch-1"));
    CHECK(h.Preempt({"wide", "4", 10000}).message ==
          "preemption: 0/1 nodes are available: 1 Insufficient cpu.");
  }
  SECTION("a system-node-critical pod (a DaemonSet's) can preempt training") {
    Harness h;
    h.Node("training-node", "4");
    h.Pod("training-node", running_training("train-1"));
    h.Pod("training-node", running_training("train-2"));
    const Result result = h.Preempt({"daemon", "1", kSystemNodeCritical});
    CHECK(result.node == "training-node");
    CHECK(result.victims.size() == 1);
  }
  SECTION("the override priority is configurable") {
    Harness h;
    h.Node("training-node", "4");
    h.Pod("training-node", running_training("train-1"));
    h.Pod("training-node", running_training("train-2"));
    const auto plugin = WithArgs({10, 100, 10000});
    CHECK(h.Preempt(online, plugin.get()).victims.size() == 1);
    CHECK(h.Preempt({"below", "2", 9999}, plugin.get()).victims.empty());
  }
}

}  // namespace
}  // namespace kubesched::plugins
