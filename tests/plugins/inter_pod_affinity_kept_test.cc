// InterPodAffinity keeps its counts and sums from one cycle to the next for each pod template
// (required_counts.h, preferred_scores.h). On a cluster that changes as the cache changes
// snapshots, a plugin that has seen every step must judge and score exactly as a fresh plugin,
// which counts every node.

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "plugins/inter_pod_affinity/inter_pod_affinity.h"
#include "scheduler/framework/snapshot.h"
#include "tests/plugins/changing_cluster.h"
#include "tests/testing/builders.h"

namespace kubesched {
namespace {

using framework::CycleState;
using framework::PodInfoPtr;
using plugin_testing::ChangingCluster;
using plugin_testing::Draw;
using testing::NodeBuilder;
using testing::PodBuilder;

constexpr char kHostname[] = "kubernetes.io/hostname";
constexpr char kZone[] = "topology.kubernetes.io/zone";

api::PodAffinityTerm Term(const std::string& color, const std::string& key) {
  api::PodAffinityTerm term;
  api::Requirement requirement;
  requirement.key = api::Intern("color");
  requirement.values = {api::Intern(color)};
  term.label_selector = api::LabelSelector{{requirement}};
  term.topology_key = api::Intern(key);
  return term;
}

// Pods of a few templates, with every kind of term in both directions.
constexpr size_t kTemplates = 5;
PodBuilder Template(size_t kind, const std::string& name) {
  api::Affinity affinity;
  switch (kind) {
    case 0:
      affinity.pod_anti_affinity.emplace().required.push_back(Term("green", kHostname));
      return PodBuilder(name).Label("color", "green").Affinity(affinity);
    case 1:
      affinity.pod_affinity.emplace().required.push_back(Term("blue", kZone));
      return PodBuilder(name).Label("color", "blue").Affinity(affinity);
    case 2:
      affinity.pod_affinity.emplace().preferred.push_back({3, Term("red", kHostname)});
      affinity.pod_anti_affinity.emplace().preferred.push_back({2, Term("green", kZone)});
      return PodBuilder(name).Label("color", "red").Affinity(affinity);
    case 3: {
      api::PodAffinityTerm by_namespace = Term("blue", kZone);
      by_namespace.namespace_selector = api::LabelSelector{
          {api::Requirement{.key = api::Intern("team"), .values = {api::Intern("a")}}}};
      affinity.pod_anti_affinity.emplace().required.push_back(by_namespace);
      return PodBuilder(name, "other").Label("color", "yellow").Affinity(affinity);
    }
    default:
      return PodBuilder(name).Label("color", "blue");
  }
}

std::unique_ptr<plugins::InterPodAffinity> MakePlugin() {
  auto made = plugins::NewInterPodAffinity(config::InterPodAffinityArgs{}, plugins::PluginHandle{});
  REQUIRE(made.ok());
  auto* concrete = dynamic_cast<plugins::InterPodAffinity*>(made->get());
  REQUIRE(concrete != nullptr);
  made->release();
  return std::unique_ptr<plugins::InterPodAffinity>(concrete);
}

// Every verdict and score the plugin gives `pod`: PreFilter's code, each node's Filter message,
// PreScore's code and the normalized scores.
std::vector<std::string> Judge(plugins::InterPodAffinity& plugin,
                               const framework::Snapshot& snapshot, const framework::PodInfo& pod) {
  std::vector<std::string> out;
  CycleState state;
  const auto pre = plugin.PreFilter(state, pod, snapshot);
  out.push_back(pre.status.IsSkip() ? "prefilter skip" : "prefilter run");
  for (const auto* node : snapshot.nodes()) {
    if (pre.status.IsSkip()) break;
    const auto status = plugin.Filter(state, pod, *node);
    out.push_back(status.IsSuccess() ? "pass" : status.Message());
  }
  const auto scored = plugin.PreScore(state, pod, snapshot, snapshot.nodes());
  out.push_back(scored.IsSkip() ? "prescore skip" : "prescore run");
  if (scored.IsSkip()) return out;
  std::vector<int64_t> scores;
  for (const auto* node : snapshot.nodes()) scores.push_back(plugin.Score(state, pod, *node));
  plugin.NormalizeScore(state, pod, absl::MakeSpan(scores));
  for (const int64_t score : scores) out.push_back(std::to_string(score));
  return out;
}

TEST_CASE("InterPodAffinity's kept counts and sums equal counting afresh as the cluster changes",
          "[plugins][interpodaffinity]") {
  ChangingCluster cluster;
  for (int i = 0; i < 9; ++i) {
    const std::string name = "node-" + std::to_string(i);
    cluster.Node(
        NodeBuilder(name).Label(kHostname, name).Label(kZone, "zone-" + std::to_string(i % 3)));
  }
  cluster.Namespace("default", "team", "a").Namespace("other", "team", "b");
  cluster.Start();
  std::vector<PodInfoPtr> incoming;
  for (size_t kind = 0; kind < kTemplates; ++kind) {
    incoming.push_back(framework::MakePodInfo(Template(kind, "incoming").Ptr(), 0));
  }

  auto kept = MakePlugin();
  std::vector<std::pair<std::string, PodInfoPtr>> placed;
  Draw draw(7);
  for (int step = 0; step < 80; ++step) {
    const size_t action = draw.Below(10);
    const std::string node = cluster.node_names()[draw.Below(cluster.node_names().size())];
    if (action < 6 || placed.empty()) {
      const PodBuilder pod = Template(draw.Below(kTemplates), "pod-" + std::to_string(step));
      placed.emplace_back(node, cluster.AddPod(node, pod));
    } else if (action < 9) {
      const size_t victim = draw.Below(placed.size());
      cluster.RemovePod(placed[victim].first, *placed[victim].second);
      placed.erase(placed.begin() + static_cast<std::ptrdiff_t>(victim));
    } else if (action == 9 && step % 2 == 0) {
      // The node moves to another zone, with its pods.
      cluster.ReplaceNode(NodeBuilder(node).Label(kHostname, node).Label(kZone, "zone-moved"));
    } else {
      cluster.Relabel("default", "team", step % 4 == 1 ? "b" : "a");
    }
    for (const PodInfoPtr& pod : incoming) {
      INFO("step " << step << ", incoming " << pod->key);
      const auto fresh = MakePlugin();
      REQUIRE(Judge(*kept, cluster.snapshot(), *pod) == Judge(*fresh, cluster.snapshot(), *pod));
    }
  }
}

TEST_CASE(
    "a what-if on a kept InterPodAffinity state changes neither the kept counts nor its origin",
    "[plugins][interpodaffinity]") {
  ChangingCluster cluster;
  for (int i = 0; i < 2; ++i) {
    const std::string name = "node-" + std::to_string(i);
    cluster.Node(NodeBuilder(name).Label(kHostname, name).Label(kZone, "zone"));
  }
  cluster.Start();
  const PodInfoPtr pod = framework::MakePodInfo(Template(0, "incoming").Ptr(), 0);
  auto plugin = MakePlugin();
  CycleState state;
  REQUIRE(plugin->PreFilter(state, *pod, cluster.snapshot()).status.IsSuccess());
  const framework::NodeInfo& node = *cluster.snapshot().nodes()[1];
  REQUIRE(plugin->Filter(state, *pod, node).IsSuccess());

  const std::unique_ptr<CycleState> what_if = state.Clone();
  const PodInfoPtr added = framework::MakePodInfo(Template(0, "added").NodeName("node-1").Ptr(), 0);
  REQUIRE(plugin->AddPod(*what_if, *pod, *added, node).IsSuccess());
  CHECK_FALSE(plugin->Filter(*what_if, *pod, node).IsSuccess());
  // The origin and the next pod's counts still see node-1 without green pods.
  CHECK(plugin->Filter(state, *pod, node).IsSuccess());
  CycleState next;
  REQUIRE(plugin->PreFilter(next, *pod, cluster.snapshot()).status.IsSuccess());
  CHECK(plugin->Filter(next, *pod, node).IsSuccess());
}

}  // namespace
}  // namespace kubesched
