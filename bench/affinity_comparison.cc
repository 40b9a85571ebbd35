#include "bench/affinity_comparison.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "plugins/inter_pod_affinity/inter_pod_affinity.h"
#include "scheduler/framework/cycle_state.h"
#include "scheduler/framework/snapshot.h"

namespace kubesched::bench {
namespace {

using framework::NodeInfo;
using framework::PodInfoPtr;

constexpr int kNodes = 300;
constexpr int kZones = 3;
constexpr int kExistingPods = 15000;

api::Symbol HostnameKey() { return api::Intern("kubernetes.io/hostname"); }
api::Symbol ZoneKey() { return api::Intern("topology.kubernetes.io/zone"); }

std::shared_ptr<const api::Node> MakeNode(int index) {
  auto node = std::make_shared<api::Node>();
  node->meta.name = absl::StrCat("node-", index);
  node->meta.labels =
      api::LabelSet::FromPairs({{HostnameKey(), api::Intern(node->meta.name)},
                                {ZoneKey(), api::Intern(absl::StrCat("zone-", index % kZones))}});
  return node;
}

// The application's preferred anti-affinity: away from its own pods by hostname and by zone.
api::Affinity SpreadAffinity() {
  api::PodAffinity anti;
  for (api::Symbol key : {HostnameKey(), ZoneKey()}) {
    api::WeightedPodAffinityTerm weighted;
    weighted.weight = 1;
    weighted.term.label_selector = api::LabelSelector{
        {api::Requirement{.key = api::Intern("app"), .values = {api::Intern("spread")}}}};
    weighted.term.topology_key = key;
    anti.preferred.push_back(std::move(weighted));
  }
  api::Affinity affinity;
  affinity.pod_anti_affinity = std::move(anti);
  return affinity;
}

PodInfoPtr MakePod(const std::string& name, bool in_group, const std::string& node_name) {
  auto pod = std::make_shared<api::Pod>();
  pod->meta.name = name;
  pod->meta.namespace_name = "default";
  pod->meta.namespace_symbol = api::Intern("default");
  pod->meta.labels =
      api::LabelSet::FromPairs({{api::Intern("app"), api::Intern(in_group ? "spread" : "other")}});
  if (in_group) pod->spec.affinity = SpreadAffinity();
  pod->spec.node_name = node_name;
  return framework::MakePodInfo(std::move(pod), 0);
}

struct Cluster {
  framework::Snapshot snapshot;
  std::vector<std::pair<PodInfoPtr, const api::Node*>> placed;  // for the straightforward loop
};

// 300 nodes in 3 zones; 15,000 existing pods round-robin, the first `group_size` of them
// belonging to the application.
std::unique_ptr<Cluster> BuildCluster(int group_size) {
  auto cluster = std::make_unique<Cluster>();
  framework::SnapshotBuilder builder(&cluster->snapshot);
  std::vector<std::shared_ptr<const api::Node>> nodes;
  int64_t generation = 0;
  for (int i = 0; i < kNodes; ++i) {
    nodes.push_back(MakeNode(i));
    builder.Upsert(nodes.back()->meta.name)->SetNode(nodes.back(), ++generation);
  }
  for (int i = 0; i < kExistingPods; ++i) {
    const api::Node& node = *nodes[i % kNodes];
    PodInfoPtr pod = MakePod(absl::StrCat("existing-", i), i < group_size, node.meta.name);
    builder.Upsert(node.meta.name)->AddPod(pod, ++generation);
    cluster->placed.emplace_back(std::move(pod), &node);
  }
  builder.RebuildLists();
  return cluster;
}

bool SameDomain(const api::Node& a, const api::Node& b, api::Symbol key) {
  const auto value = a.meta.labels.Get(key);
  return value.has_value() && value == b.meta.labels.Get(key);
}

// The per-node loop the two-phase score replaces: for every node, every existing pod and every
// term, in both directions.
std::vector<int64_t> StraightforwardScores(const Cluster& cluster, const framework::PodInfo& pod) {
  std::vector<int64_t> scores;
  for (const NodeInfo* candidate : cluster.snapshot.nodes()) {
    int64_t score = 0;
    for (const auto& [existing, node] : cluster.placed) {
      for (const auto& t : pod.preferred_anti_affinity()) {
        if (SameDomain(*candidate->node(), *node, t.term.topology_key) &&
            t.term.Matches(existing->get(), nullptr)) {
          score -= t.weight;
        }
      }
      for (const auto& t : existing->preferred_anti_affinity()) {
        if (SameDomain(*candidate->node(), *node, t.term.topology_key) &&
            t.term.Matches(pod.get(), nullptr)) {
          score -= t.weight;
        }
      }
    }
    scores.push_back(score);
  }
  return scores;
}

std::vector<int64_t> TwoPhaseScores(framework::Plugin& plugin, const Cluster& cluster,
                                    const framework::PodInfo& pod) {
  auto& pre_score = dynamic_cast<framework::PreScorePlugin&>(plugin);
  auto& score = dynamic_cast<framework::ScorePlugin&>(plugin);
  framework::CycleState state;
  std::vector<int64_t> scores;
  if (!pre_score.PreScore(state, pod, cluster.snapshot, cluster.snapshot.nodes()).IsSuccess()) {
    return scores;
  }
  for (const NodeInfo* node : cluster.snapshot.nodes()) {
    scores.push_back(score.Score(state, pod, *node));
  }
  return scores;
}

// Mean wall time of `fn` in microseconds over `repeats` calls.
template <typename Fn>
double MeanMicros(int repeats, Fn&& fn) {
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < repeats; ++i) fn();
  const std::chrono::duration<double, std::micro> elapsed =
      std::chrono::steady_clock::now() - start;
  return elapsed.count() / repeats;
}

}  // namespace

int RunAffinityComparison() {
  auto plugin = plugins::NewInterPodAffinity(std::monostate{}, plugins::PluginHandle{});
  if (!plugin.ok()) {
    std::fprintf(stderr, "InterPodAffinity: %s\n", std::string(plugin.status().message()).c_str());
    return 1;
  }
  const PodInfoPtr incoming = MakePod("incoming", /*in_group=*/true, "");
  std::printf(
      "InterPodAffinity preferred anti-affinity (hostname + zone) score for one pod: "
      "%d nodes, %d existing pods\n\n",
      kNodes, kExistingPods);
  std::printf("%12s %22s %18s %8s\n", "group pods", "per-node loop (us)", "two-phase (us)",
              "ratio");
  for (int group_size : {10, 100, 1000, 10000}) {
    const auto cluster = BuildCluster(group_size);
    const std::vector<int64_t> expected = StraightforwardScores(*cluster, *incoming);
    if (TwoPhaseScores(**plugin, *cluster, *incoming) != expected) {
      std::fprintf(stderr, "group %d: the two scores disagree\n", group_size);
      return 1;
    }
    const double straightforward =
        MeanMicros(3, [&] { (void)StraightforwardScores(*cluster, *incoming); });
    const double two_phase =
        MeanMicros(200, [&] { (void)TwoPhaseScores(**plugin, *cluster, *incoming); });
    std::printf("%12d %22.0f %18.1f %7.0fx\n", group_size, straightforward, two_phase,
                straightforward / two_phase);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace kubesched::bench
