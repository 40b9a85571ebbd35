// PodTopologySpread keeps its domain counts from one cycle to the next for each pod template
// (spread_counts.h). On a cluster that changes as the cache changes snapshots, a plugin that has
// seen every step must judge exactly as a fresh plugin, which counts every node; and a what-if
// (preemption's AddPod on a cloned state) must change neither the kept counts nor the state it
// was cloned from.

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "plugins/pod_topology_spread/pod_topology_spread.h"
#include "scheduler/framework/snapshot.h"
#include "scheduler/util/parallel.h"
#include "tests/plugins/changing_cluster.h"
#include "tests/plugins/plugin_fixture.h"
#include "tests/testing/builders.h"

namespace kubesched {
namespace {

using api::NodeInclusionPolicy;
using framework::CycleState;
using framework::PodInfoPtr;
using plugin_testing::ChangingCluster;
using plugin_testing::Draw;
using plugin_testing::Unwrap;
using testing::NodeBuilder;
using testing::PodBuilder;

constexpr char kHostname[] = "kubernetes.io/hostname";
constexpr char kZone[] = "zone";

api::TopologySpreadConstraint Hard(int32_t max_skew, const std::string& key,
                                   const std::string& color) {
  api::TopologySpreadConstraint c;
  c.max_skew = max_skew;
  c.topology_key = api::Intern(key);
  c.when_unsatisfiable = api::UnsatisfiableConstraintAction::kDoNotSchedule;
  c.label_selector = api::LabelSelector{
      {api::Requirement{.key = api::Intern("color"), .values = {api::Intern(color)}}}};
  return c;
}

PodInfoPtr Info(const PodBuilder& builder, std::vector<api::TopologySpreadConstraint> spread) {
  api::Pod pod = builder.Build();
  pod.spec.topology_spread_constraints = std::move(spread);
  return framework::MakePodInfo(std::make_shared<const api::Pod>(std::move(pod)), 0);
}

// The incoming pods: by zone, by hostname with a nodeSelector, honoring taints, with minDomains.
std::vector<PodInfoPtr> Incoming() {
  std::vector<PodInfoPtr> pods;
  pods.push_back(Info(PodBuilder("zone").Label("color", "blue"), {Hard(1, kZone, "blue")}));
  pods.push_back(Info(PodBuilder("host").Label("color", "blue").NodeSelector("disk", "ssd"),
                      {Hard(1, kHostname, "blue"), Hard(2, kZone, "red")}));
  auto taints = Hard(1, kZone, "red");
  taints.node_taints_policy = NodeInclusionPolicy::kHonor;
  pods.push_back(Info(PodBuilder("tainted").Label("color", "red"), {taints}));
  pods.push_back(Info(PodBuilder("tolerant")
                          .Label("color", "red")
                          .Toleration("dedicated", "batch", api::TaintEffect::kNoSchedule),
                      {taints}));
  auto domains = Hard(1, kZone, "blue");
  domains.min_domains = 4;
  pods.push_back(Info(PodBuilder("domains", "other").Label("color", "blue"), {domains}));
  return pods;
}

NodeBuilder Node(const std::string& name, const std::string& zone, bool ssd, bool tainted) {
  NodeBuilder node(name);
  node.Label(kHostname, name).Label(kZone, zone);
  if (ssd) node.Label("disk", "ssd");
  if (tainted) node.Taint("dedicated", "batch", api::TaintEffect::kNoSchedule);
  return node;
}

std::unique_ptr<plugins::PodTopologySpread> MakePlugin(util::WorkerPool* pool = nullptr) {
  plugins::PluginHandle handle;
  handle.pool = pool;
  return Unwrap<plugins::PodTopologySpread>(plugins::NewPodTopologySpread({}, handle));
}

// PreFilter's code and each node's Filter verdict.
std::vector<std::string> Judge(plugins::PodTopologySpread& plugin,
                               const framework::Snapshot& snapshot, const framework::PodInfo& pod,
                               CycleState& state) {
  const auto pre = plugin.PreFilter(state, pod, snapshot);
  std::vector<std::string> out{pre.status.IsSuccess() ? "run" : "not run"};
  if (!pre.status.IsSuccess()) return out;
  for (const auto* node : snapshot.nodes()) {
    const auto status = plugin.Filter(state, pod, *node);
    out.push_back(status.IsSuccess() ? "pass" : status.Message());
  }
  return out;
}

std::vector<std::string> Judge(plugins::PodTopologySpread& plugin,
                               const framework::Snapshot& snapshot, const framework::PodInfo& pod) {
  CycleState state;
  return Judge(plugin, snapshot, pod, state);
}

TEST_CASE("PodTopologySpread's kept counts equal counting afresh as the cluster changes",
          "[pod_topology_spread]") {
  ChangingCluster cluster;
  for (int i = 0; i < 10; ++i) {
    cluster.Node(
        Node("node-" + std::to_string(i), "zone-" + std::to_string(i % 3), i % 2 == 0, i == 4));
  }
  cluster.Start();
  const std::vector<PodInfoPtr> incoming = Incoming();
  util::WorkerPool pool(2);
  auto kept = MakePlugin(&pool);
  std::vector<std::pair<std::string, PodInfoPtr>> placed;
  Draw draw(3);
  for (int step = 0; step < 80; ++step) {
    const size_t action = draw.Below(10);
    const size_t index = draw.Below(cluster.node_names().size());
    const std::string& node = cluster.node_names()[index];
    if (action < 6 || placed.empty()) {
      const char* color = draw.Below(2) == 0 ? "blue" : "red";
      const char* ns = draw.Below(4) == 0 ? "other" : "default";
      const std::string name = "pod-" + std::to_string(step);
      placed.emplace_back(node, cluster.AddPod(node, PodBuilder(name, ns).Label("color", color)));
    } else if (action < 9) {
      const size_t victim = draw.Below(placed.size());
      cluster.RemovePod(placed[victim].first, *placed[victim].second);
      placed.erase(placed.begin() + static_cast<std::ptrdiff_t>(victim));
    } else {
      // The node changes zone, disk and taint, keeping its pods.
      cluster.ReplaceNode(
          Node(node, "zone-" + std::to_string(step % 4), step % 3 == 0, step % 5 == 0));
    }
    for (const PodInfoPtr& pod : incoming) {
      INFO("step " << step << ", incoming " << pod->key);
      const auto fresh = MakePlugin();
      REQUIRE(Judge(*kept, cluster.snapshot(), *pod) == Judge(*fresh, cluster.snapshot(), *pod));
    }
  }
}

TEST_CASE(
    "a what-if on a kept PodTopologySpread state changes neither the kept counts nor its origin",
    "[pod_topology_spread]") {
  ChangingCluster cluster;
  for (int i = 0; i < 3; ++i) {
    cluster.Node(Node("node-" + std::to_string(i), "zone-" + std::to_string(i), false, false));
  }
  cluster.Start();
  cluster.AddPod("node-0", PodBuilder("first").Label("color", "blue"));
  const PodInfoPtr pod = Incoming().front();
  auto plugin = MakePlugin();
  CycleState state;
  const std::vector<std::string> before = Judge(*plugin, cluster.snapshot(), *pod, state);
  // zone-0 holds one pod: the pod may go to the two empty zones only.
  REQUIRE(before == std::vector<std::string>{
                        "run", std::string(plugins::kReasonTopologySpreadConstraintsNotMatch),
                        "pass", "pass"});

  const std::unique_ptr<CycleState> what_if = state.Clone();
  const PodInfoPtr added = framework::MakePodInfo(
      PodBuilder("added").Label("color", "blue").NodeName("node-1").Ptr(), 0);
  REQUIRE(plugin->AddPod(*what_if, *pod, *added, *cluster.snapshot().nodes()[1]).IsSuccess());
  CHECK(plugin->Filter(*what_if, *pod, *cluster.snapshot().nodes()[2]).IsSuccess());
  CHECK_FALSE(plugin->Filter(*what_if, *pod, *cluster.snapshot().nodes()[1]).IsSuccess());
  // The origin and the next pod's counts still see node-1 empty.
  CHECK(plugin->Filter(state, *pod, *cluster.snapshot().nodes()[1]).IsSuccess());
  CHECK(Judge(*plugin, cluster.snapshot(), *pod) == before);
}

}  // namespace
}  // namespace kubesched
