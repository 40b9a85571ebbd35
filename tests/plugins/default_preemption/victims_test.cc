// DefaultPreemption's work on one node (plugins/default_preemption/victims.cc): which pods go,
// in which order they are reprieved, PodDisruptionBudgets, the same victims found by requests as on
// node copies, and the PreFilter state followed on what-if nodes (anti-affinity, topology spread),
// through the real default profile.

#include "plugins/default_preemption/victims.h"

#include <catch2/catch.hpp>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/plugins/default_preemption/preemption_harness.h"

namespace kubesched::plugins {
namespace {

using preemption_testing::Harness;
using preemption_testing::kSystemNodeCritical;
using preemption_testing::P;
using preemption_testing::Pdb;
using preemption_testing::Result;
using preemption_testing::WithArgs;
using testing::NodeBuilder;

// ---------------------------------------------------------------------------------------------
// Victims on one node

TEST_CASE("DefaultPreemption chooses the fewest, least important victims on a node",
          "[plugins][preemption]") {
  struct Case {
    std::string name;
    std::vector<P> pods;  // on n1 (cpu 3)
    P preemptor;
    std::vector<std::string> victims;  // empty: no candidate
    std::string message = "";
  };
  const std::vector<Case> cases = {
      {"lower-priority pods make room",
       {{"a", "1", 1}, {"b", "1", 1}, {"c", "1", 1}},
       {"p", "1", 10},
       {"default/c"}},
      {"the medium-priority pod goes; the small lower one stays",
       {{"high", "1", 20}, {"mid", "1500m", 5}, {"low", "500m", 1}},
       {"p", "1500m", 10},
       {"default/mid"}},
      {"mixed priorities: the most important are reprieved first",
       {{"a", "1", 5, 1}, {"b", "1", 4, 1}, {"c", "1", 3, 1}},
       {"p", "1500m", 10},
       {"default/b", "default/c"}},
      {"equal priority: the pod that started later is the victim",
       {{"old", "1500m", 1, 10}, {"new", "1500m", 1, 20}},
       {"p", "1500m", 10},
       {"default/new"}},
      {"a pod that has not started counts as the latest",
       {{"unstarted", "1500m", 1}, {"started", "1500m", 1, 20}},
       {"p", "1500m", 10},
       {"default/unstarted"}},
      {"pods of equal or higher priority are never victims",
       {{"peer", "1500m", 10}, {"above", "1500m", 11}},
       {"p", "1", 10},
       {},
       "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."},
      {"removing every lower pod is not enough: the filter's reason",
       {{"peer", "2", 10}, {"low", "1", 1}},
       {"p", "1500m", 10},
       {},
       "preemption: 0/1 nodes are available: 1 Insufficient cpu."},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) {
      Harness h;
      h.Node("n1", "3");
      for (const P& pod : c.pods) h.Pod("n1", pod);
      const Result result = h.Preempt(c.preemptor);
      CHECK(result.victims == c.victims);
      if (c.victims.empty()) {
        CHECK(result.code == framework::Code::kUnschedulable);
        CHECK(result.node.empty());
        CHECK(result.message == c.message);
      } else {
        CHECK(result.node == "n1");
        CHECK(result.code == framework::Code::kSuccess);
      }
    }
  }
}

TEST_CASE("DefaultPreemption honours PodDisruptionBudgets", "[plugins][preemption]") {
  SECTION("PDB-violating pods are reprieved first, even over more important ones") {
    // Without the PDB, `guarded` (priority 1) would be the victim.
    Harness h;
    h.Node("n1", "2")
        .Pod("n1", {"guarded", "1", 1, 1, {{"app", "db"}}})
        .Pod("n1", {"free", "1", 5, 1})
        .Pdbs({Pdb("default", "db", 0)});
    const Result result = h.Preempt({"p", "1", 10});
    CHECK(result.node == "n1");
    CHECK(result.victims == std::vector<std::string>{"default/free"});
  }
  SECTION("a node whose victims violate no PDB wins over a cheaper one that does") {
    Harness h;
    h.Node("n1", "1")
        .Node("n2", "1")
        .Pod("n1", {"guarded", "1", 1, 1, {{"app", "db"}}})
        .Pod("n2", {"free", "1", 5, 1})
        .Pdbs({Pdb("default", "db", 0)});
    CHECK(h.Preempt({"p", "1", 10}).node == "n2");
  }
  SECTION("each victim counts against the budget: the second one over it violates") {
    Harness h;
    h.Node("n1", "2")
        .Node("n2", "2")
        .Pod("n1", {"db-1", "1", 1, 1, {{"app", "db"}}})
        .Pod("n1", {"db-2", "1", 1, 2, {{"app", "db"}}})
        .Pod("n2", {"web-1", "1", 3, 1, {{"app", "web"}}})
        .Pod("n2", {"web-2", "1", 3, 2, {{"app", "web"}}})
        .Pdbs({Pdb("default", "db", 1), Pdb("default", "web", 2)});
    // n1's victims (priority 1) are cheaper but one of them violates its PDB.
    const Result result = h.Preempt({"p", "2", 10});
    CHECK(result.node == "n2");
    CHECK(result.victims == std::vector<std::string>{"default/web-1", "default/web-2"});
  }
  SECTION("a pod the PDB lists as disrupted already is no new violation") {
    Harness h;
    h.Node("n1", "1")
        .Node("n2", "1")
        .Pod("n1", {"guarded", "1", 1, 1, {{"app", "db"}}})
        .Pod("n2", {"free", "1", 5, 1})
        .Pdbs({Pdb("default", "db", 0, {"guarded"})});
    CHECK(h.Preempt({"p", "1", 10}).node == "n1");
  }
  SECTION("a PDB of another namespace does not guard the pod") {
    Harness h;
    h.Node("n1", "1")
        .Node("n2", "1")
        .Pod("n1", {"guarded", "1", 1, 1, {{"app", "db"}}})
        .Pod("n2", {"free", "1", 5, 1})
        .Pdbs({Pdb("other", "db", 0)});
    CHECK(h.Preempt({"p", "1", 10}).node == "n1");
  }
  SECTION("when every candidate violates a PDB, the one with fewer violations wins") {
    Harness h;
    h.Node("n1", "2")
        .Node("n2", "2")
        .Pod("n1", {"db-1", "1", 1, 1, {{"app", "db"}}})
        .Pod("n1", {"db-2", "1", 1, 1, {{"app", "db"}}})
        .Pod("n2", {"web-1", "1", 5, 1, {{"app", "web"}}})
        .Pod("n2", {"other", "1", 5, 1})
        .Pdbs({Pdb("default", "db", 0), Pdb("default", "web", 0)});
    CHECK(h.Preempt({"p", "2", 10}).node == "n2");
  }
}

// The dry run judges a node by its pods' summed requests when the filters allow it, and on a copy
// of the node otherwise: over random clusters (priorities, start times, NonPreemptible pods, PDBs,
// nominations, preemptors at and below the override), both ways choose the same node and victims
// and give the same message.
TEST_CASE("DefaultPreemption finds the same victims by requests as on node copies",
          "[plugins][preemption]") {
  std::mt19937 random(7);
  const auto pick = [&](int n) { return static_cast<int>(random() % static_cast<uint32_t>(n)); };
  int nominated = 0;
  int failed = 0;
  int skipped = 0;
  for (int round = 0; round < 300; ++round) {
    Harness by_requests;
    Harness copying;
    copying.Copying();
    std::vector<std::shared_ptr<const api::PodDisruptionBudget>> pdbs;
    if (pick(3) == 0) pdbs.push_back(Pdb("default", "a", pick(3)));
    if (pick(3) == 0) pdbs.push_back(Pdb("default", "b", pick(2), {"p0-1"}));
    for (Harness* h : {&by_requests, &copying}) h->Pdbs(pdbs);
    const int nodes = 1 + pick(5);
    for (int n = 0; n < nodes; ++n) {
      const std::string node = absl::StrCat("n", n);
      const std::string cpu = absl::StrCat(2 + pick(4));
      std::vector<P> pods;
      for (int i = 0, count = pick(6); i < count; ++i) {
        P pod{absl::StrCat("p", n, "-", i), absl::StrCat(250 * (1 + pick(6)), "m"),
              static_cast<int32_t>(pick(4) * 100)};
        if (pick(2) == 0) pod.started = pick(5);
        if (pick(2) == 0) pod.labels = {{"app", pick(2) == 0 ? "a" : "b"}};
        pod.non_preemptible = pick(6) == 0;
        pods.push_back(std::move(pod));
      }
      for (Harness* h : {&by_requests, &copying}) {
        h->Node(node, cpu);
        for (const P& pod : pods) h->Pod(node, pod);
      }
      if (pick(4) == 0) {
        const P waiting{absl::StrCat("w", n), absl::StrCat(500 * (1 + pick(3)), "m"),
                        static_cast<int32_t>(pick(5) * 100)};
        for (Harness* h : {&by_requests, &copying}) h->Nominate(node, waiting);
      }
    }
    const P preemptor{
        "incoming", absl::StrCat(500 * (1 + pick(6)), "m"),
        pick(8) == 0 ? kSystemNodeCritical : static_cast<int32_t>(100 + pick(3) * 100)};
    const bool fits = by_requests.FitsSomewhere(preemptor);
    REQUIRE(copying.FitsSomewhere(preemptor) == fits);
    if (fits) {
      ++skipped;
      continue;
    }
    auto plugin_a = WithArgs({});
    auto plugin_b = WithArgs({});
    const Result a = by_requests.Preempt(preemptor, plugin_a.get());
    const Result b = copying.Preempt(preemptor, plugin_b.get());
    INFO("round " << round << ": " << a.message << " / " << b.message);
    CHECK(a.node == b.node);
    CHECK(a.victims == b.victims);
    CHECK(a.message == b.message);
    CHECK(a.code == b.code);
    (a.node.empty() ? failed : nominated) += 1;
  }
  // Both outcomes occur, so the comparison covered each.
  INFO("nominated " << nominated << ", failed " << failed << ", fitting " << skipped);
  CHECK(nominated > 40);
  CHECK(failed > 20);
}

// app=<value>, as a selector.
api::LabelSelector AppIs(const std::string& value) {
  api::Requirement requirement;
  requirement.key = api::Intern("app");
  requirement.op = api::SelectorOperator::kIn;
  requirement.values = {api::Intern(value)};
  return api::LabelSelector{{requirement}};
}

// A required (anti-)affinity term on `key` selecting app=<value>.
std::function<void(api::Pod&)> AntiAffinityTo(const std::string& value, const std::string& key) {
  return [value, key](api::Pod& pod) {
    api::PodAffinityTerm term;
    term.label_selector = AppIs(value);
    term.topology_key = api::Intern(key);
    pod.spec.affinity.emplace().pod_anti_affinity.emplace().required.push_back(std::move(term));
  };
}

// Upstream's PreFilter extensions: removing victims from a what-if node must be seen by the state
// InterPodAffinity and PodTopologySpread computed once for the whole cluster.
TEST_CASE("DefaultPreemption removes pods that stand in the way of pod anti-affinity",
          "[plugins][preemption]") {
  SECTION("the preemptor's own anti-affinity") {
    Harness h;
    h.Node("n1", "4", [](NodeBuilder& n) { n.Label("kubernetes.io/hostname", "n1"); })
        .Pod("n1", {"x", "1", 0, 1, {{"app", "x"}}})
        .Pod("n1", {"other", "1", 0, 1, {{"app", "y"}}});
    const Result result = h.Preempt(
        {"p", "1", 10, {}, {}, false, false, AntiAffinityTo("x", "kubernetes.io/hostname")});
    CHECK(result.node == "n1");
    CHECK(result.victims == std::vector<std::string>{"default/x"});
  }
  SECTION("an existing pod's anti-affinity against the preemptor") {
    Harness h;
    h.Node("n1", "4", [](NodeBuilder& n) { n.Label("kubernetes.io/hostname", "n1"); })
        .Pod("n1", {"guard",
                    "1",
                    0,
                    1,
                    {{"app", "guard"}},
                    false,
                    false,
                    AntiAffinityTo("p", "kubernetes.io/hostname")});
    const Result result = h.Preempt({"p", "1", 10, {}, {{"app", "p"}}});
    CHECK(result.victims == std::vector<std::string>{"default/guard"});
  }
  SECTION("a higher-priority pod in the way is not removed") {
    Harness h;
    h.Node("n1", "4", [](NodeBuilder& n) {
       n.Label("kubernetes.io/hostname", "n1");
     }).Pod("n1", {"x", "1", 20, 1, {{"app", "x"}}});
    const Result result = h.Preempt(
        {"p", "1", 10, {}, {}, false, false, AntiAffinityTo("x", "kubernetes.io/hostname")});
    CHECK(result.victims.empty());
    CHECK(result.message ==
          "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.");
  }
}

TEST_CASE("DefaultPreemption removes pods that skew a topology spread constraint",
          "[plugins][preemption]") {
  // Two zones of one node each: zone a holds two matching pods of low priority, zone b is full with
  // one matching pod of high priority. Placing the preemptor in a skews 2 + 1 - 1 > 1; with one
  // matching pod of a removed it is 1 + 1 - 1, within maxSkew.
  Harness h;
  h.Node("a1", "8", [](NodeBuilder& n) { n.Label("zone", "a"); })
      .Pod("a1", {"m1", "1", 0, 1, {{"app", "web"}}})
      .Pod("a1", {"m2", "1", 0, 2, {{"app", "web"}}})
      .Node("b1", "1", [](NodeBuilder& n) { n.Label("zone", "b"); })
      .Pod("b1", {"filler", "1", 100, 1, {{"app", "web"}}});
  const auto spread = [](api::Pod& pod) {
    api::TopologySpreadConstraint c;
    c.max_skew = 1;
    c.topology_key = api::Intern("zone");
    c.when_unsatisfiable = api::UnsatisfiableConstraintAction::kDoNotSchedule;
    c.label_selector = AppIs("web");
    pod.spec.topology_spread_constraints.push_back(std::move(c));
  };
  const Result result = h.Preempt({"p", "1", 10, {}, {{"app", "web"}}, false, false, spread});
  CHECK(result.node == "a1");
  // One victim is enough; the reprieve keeps the more important (earlier started) m1.
  CHECK(result.victims == std::vector<std::string>{"default/m2"});
}

}  // namespace
}  // namespace kubesched::plugins
