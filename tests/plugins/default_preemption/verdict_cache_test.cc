// DefaultPreemption's kept dry-run verdicts (plugins/default_preemption/verdict_cache.h): the
// cache on its own, and preemption with kept verdicts against preemption that judges every node
// afresh, on a cluster that changes between preemptors.

#include "plugins/default_preemption/verdict_cache.h"

#include <catch2/catch.hpp>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/plugins/default_preemption/preemption_harness.h"

namespace kubesched::plugins::preemption {
namespace {

using preemption_testing::Harness;
using preemption_testing::MakePod;
using preemption_testing::P;
using preemption_testing::Result;
using preemption_testing::WithArgs;

// A snapshot of one node with two pods, that records what changes, as the cache writes it.
struct OneNode {
  framework::Snapshot snapshot;
  framework::SnapshotBuilder builder{&snapshot};
  std::vector<framework::PodInfoPtr> pods;
  int64_t generation = 0;

  OneNode() {
    framework::NodeInfo& info = *builder.Upsert("n1");
    info.SetNode(testing::NodeBuilder("n1").Capacity({{"cpu", "4"}}).Ptr(), ++generation);
    for (const char* name : {"a", "b"}) {
      pods.push_back(MakePod({name, "2", 1}, "n1"));
      info.AddPod(pods.back(), ++generation);
    }
    builder.RebuildLists();
    Commit({});
  }
  const framework::NodeInfo* node() const { return snapshot.nodes().front(); }
  void Commit(const std::vector<framework::NodeInfo*>& changed) {
    builder.set_generation(generation);
    builder.RecordChanges(generation, changed);
  }
};

const framework::VerdictScope kScope{&kScope, 0b101};

TEST_CASE("A kept verdict serves only a preemptor alike on the node as it was judged",
          "[plugins][preemption]") {
  OneNode n;
  const framework::PodInfoPtr judged = MakePod({"p", "2", 10});
  VerdictCache cache;
  cache.Begin(*judged, kScope, n.snapshot);
  CHECK_FALSE(cache.Find(0, n.node(), 0).has_value());
  cache.Keep(0, *n.node(), 0, false, {n.pods[1].get()}, VictimSummary{1, 7, 1, 3});

  // The same template under another name.
  const framework::PodInfoPtr alike = MakePod({"other-name", "2", 10});
  cache.Begin(*alike, kScope, n.snapshot);
  const auto kept = cache.Find(0, n.node(), 0);
  REQUIRE(kept.has_value());
  CHECK_FALSE(kept->screened_out);
  REQUIRE(kept->candidate != nullptr);
  CHECK(kept->candidate->victims == absl::InlinedVector<uint32_t, 4>{1});
  CHECK(kept->candidate->summary.shifted_priority_sum == 7);

  SECTION("other nominations") { CHECK_FALSE(cache.Find(0, n.node(), 5).has_value()); }
  SECTION("the node changed") {
    framework::NodeInfo* node = n.builder.Find("n1");
    node->AddPod(MakePod({"c", "0", 1}, "n1"), ++n.generation);
    n.Commit({node});
    cache.Begin(*alike, kScope, n.snapshot);
    CHECK_FALSE(cache.Find(0, n.node(), 0).has_value());
  }
  SECTION("another node changed: this one's verdict stays") {
    framework::NodeInfo& other = *n.builder.Upsert("n2");
    other.SetNode(testing::NodeBuilder("n2").Capacity({{"cpu", "4"}}).Ptr(), ++n.generation);
    n.builder.RebuildLists();
    n.Commit({});
    other.AddPod(MakePod({"c", "0", 1}, "n2"), ++n.generation);
    n.Commit({&other});
    // Adding a node moved the positions: nothing kept before it serves.
    cache.Begin(*alike, kScope, n.snapshot);
    CHECK_FALSE(cache.Find(0, n.node(), 0).has_value());
    cache.Keep(0, *n.node(), 0, true, {}, {});
    other.AddPod(MakePod({"d", "0", 1}, "n2"), ++n.generation);
    n.Commit({&other});
    cache.Begin(*alike, kScope, n.snapshot);
    const auto screened = cache.Find(0, n.node(), 0);
    REQUIRE(screened.has_value());
    CHECK(screened->screened_out);
  }
  SECTION("another snapshot") {
    OneNode other;
    cache.Begin(*alike, kScope, other.snapshot);
    CHECK_FALSE(cache.Find(0, n.node(), 0).has_value());
    CHECK_FALSE(cache.Find(0, other.node(), 0).has_value());
  }
  SECTION("another node object at the same position") {
    OneNode other;
    CHECK_FALSE(cache.Find(0, other.node(), 0).has_value());
  }
  const std::map<std::string, std::function<void(api::Pod&)>> unlike = {
      {"requests", [](api::Pod& pod) { pod.spec.containers.push_back({}); }},
      {"tolerations", [](api::Pod& pod) { pod.spec.tolerations.push_back({}); }},
      {"node selector",
       [](api::Pod& pod) { pod.spec.node_selector.Set(api::Intern("zone"), api::Intern("a")); }},
      {"labels", [](api::Pod& pod) { pod.meta.labels.Set(api::Intern("app"), api::Intern("x")); }},
      {"annotations", [](api::Pod& pod) { pod.meta.annotations["team"] = "x"; }},
      {"namespace", [](api::Pod& pod) { pod.meta.namespace_name = "other"; }},
  };
  for (const auto& [what, edit] : unlike) {
    DYNAMIC_SECTION("a preemptor with other " << what << " is judged afresh") {
      cache.Begin(*MakePod({"q", "2", 10, {}, {}, false, false, edit}), kScope, n.snapshot);
      CHECK_FALSE(cache.Find(0, n.node(), 0).has_value());
      // Its own verdicts replace the first pod's.
      cache.Begin(*alike, kScope, n.snapshot);
      CHECK_FALSE(cache.Find(0, n.node(), 0).has_value());
    }
  }
  SECTION("another priority") {
    cache.Begin(*MakePod({"q", "2", 11}), kScope, n.snapshot);
    CHECK_FALSE(cache.Find(0, n.node(), 0).has_value());
  }
  SECTION("another scope") {
    cache.Begin(*alike, framework::VerdictScope{&kScope, 0b111}, n.snapshot);
    CHECK_FALSE(cache.Find(0, n.node(), 0).has_value());
  }
}

// Two copies of one cluster of full nodes (cpu 4, pods of cpu 1 or 2): preemptors alike and
// unlike, and between them the changes a cluster sees (preemptions acted on, pods replaced,
// nominations).
class Mirrored {
 public:
  explicit Mirrored(uint32_t seed) : random_(seed) {
    fresh_.KeepingNoVerdicts();
    for (int n = 0; n < kNodes; ++n) {
      const std::string node = absl::StrCat("n", n);
      Each([&](Harness& h) { h.Node(node, "4"); });
      Fill(node);
    }
  }

  // Both preempt for `preemptor`; their outcomes.
  std::pair<Result, Result> Preempt(const P& preemptor) {
    return {kept_.Preempt(preemptor, kept_plugin_.get()),
            fresh_.Preempt(preemptor, fresh_plugin_.get())};
  }
  // What the scheduler does next: the victims go and the preemptor takes their room.
  void ActOn(const Result& result, const P& preemptor) {
    if (result.node.empty()) return;
    auto& pods = pods_[result.node];
    for (const std::string& victim : result.victims) {
      const std::string name = victim.substr(victim.find('/') + 1);
      Each([&](Harness& h) { h.RemovePod(result.node, name); });
      std::erase_if(pods, [&](const Pod& pod) { return pod.name == name; });
    }
    Add(result.node, {preemptor.name, std::stoi(preemptor.cpu), preemptor.priority});
    Fill(result.node);
  }
  // A random change: a pod replaced by another, a nomination made or cleared, or none.
  void Change() {
    const std::string node = absl::StrCat("n", Draw(kNodes));
    switch (Draw(4)) {
      case 0: {
        auto& pods = pods_[node];
        const Pod gone = pods[Draw(static_cast<int>(pods.size()))];
        Each([&](Harness& h) { h.RemovePod(node, gone.name); });
        std::erase_if(pods, [&](const Pod& pod) { return pod.name == gone.name; });
        Fill(node);
        break;
      }
      case 1: {
        const P nominated{absl::StrCat("nominated-", ++count_), "1", 1 + 10 * Draw(2)};
        Each([&](Harness& h) { h.Nominate(node, nominated); });
        break;
      }
      case 2:
        Each([](Harness& h) { h.ClearNominations(); });
        break;
      default:
        break;
    }
  }
  int Draw(int n) { return std::uniform_int_distribution<int>(0, n - 1)(random_); }
  size_t kept_calls() const { return kept_.host_calls(); }
  size_t fresh_calls() const { return fresh_.host_calls(); }

 private:
  static constexpr int kNodes = 40;
  struct Pod {
    std::string name;
    int cpu = 1;
    int32_t priority = 1;
  };

  void Each(const std::function<void(Harness&)>& change) {
    change(kept_);
    change(fresh_);
  }
  void Add(const std::string& node, const Pod& pod) {
    pods_[node].push_back(pod);
    const P p{pod.name, std::to_string(pod.cpu), pod.priority, Draw(100)};
    Each([&](Harness& h) { h.Pod(node, p); });
  }
  // Low-priority pods until the node's cpu is taken.
  void Fill(const std::string& node) {
    int used = 0;
    for (const Pod& pod : pods_[node]) used += pod.cpu;
    while (used < 4) {
      const int cpu = std::min(4 - used, 1 + Draw(2));
      Add(node, {absl::StrCat("low-", ++count_), cpu, 1 + Draw(3)});
      used += cpu;
    }
  }

  std::mt19937 random_;
  Harness kept_{2};
  Harness fresh_{2};
  std::unique_ptr<DefaultPreemption> kept_plugin_ =
      WithArgs({.min_candidate_nodes_percentage = 10, .min_candidate_nodes_absolute = 15});
  std::unique_ptr<DefaultPreemption> fresh_plugin_ =
      WithArgs({.min_candidate_nodes_percentage = 10, .min_candidate_nodes_absolute = 15});
  std::map<std::string, std::vector<Pod>> pods_;
  int count_ = 0;
};

TEST_CASE("Preemption with kept verdicts chooses as preemption that judges every node afresh",
          "[plugins][preemption]") {
  for (const uint32_t seed : {1U, 2U, 3U}) {
    Mirrored cluster(seed);
    for (int step = 0; step < 150; ++step) {
      // Runs of one template, as a workload's preemptors come, and now and then another.
      const std::vector<P> templates = {{"p", "2", 10}, {"q", "3", 10}, {"r", "1", 3}};
      P preemptor = templates[cluster.Draw(8) == 0 ? 1 + cluster.Draw(2) : (step / 30) % 3];
      preemptor.name = absl::StrCat(preemptor.name, "-", step);
      const auto [kept, fresh] = cluster.Preempt(preemptor);
      INFO("seed " << seed << ", step " << step << ", " << preemptor.name);
      REQUIRE(kept.node == fresh.node);
      REQUIRE(kept.victims == fresh.victims);
      REQUIRE(kept.message == fresh.message);
      if (cluster.Draw(2) == 0) cluster.ActOn(kept, preemptor);
      cluster.Change();
    }
    // The kept verdicts were used: the dry runs asked the host about far fewer nodes.
    CHECK(cluster.kept_calls() * 2 < cluster.fresh_calls());
  }
}

}  // namespace
}  // namespace kubesched::plugins::preemption
