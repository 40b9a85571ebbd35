// PodTopologySpread PreScore/Score/NormalizeScore: ScheduleAnyway constraints. PreScore sums the
// matching pods per domain of the feasible nodes once; Score weighs the node's domains; fewer
// matching pods normalize to a higher score.

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "plugins/pod_topology_spread/common.h"
#include "plugins/pod_topology_spread/pod_topology_spread.h"
#include "scheduler/util/strings.h"

namespace kubesched::plugins {
namespace {

using framework::CycleState;
using framework::NodeInfo;
using framework::PodInfo;
using framework::Snapshot;
using framework::Status;
using pod_topology_spread::Constraint;

api::Symbol HostnameKey() {
  static const api::Symbol key = api::Intern("kubernetes.io/hostname");
  return key;
}

struct PreScoreState final : framework::StateData {
  std::vector<Constraint> constraints;
  // Per constraint: matching pods per topology value, only for the values of feasible nodes.
  // Empty for hostname constraints, whose domain is the node itself (counted in Score).
  std::vector<absl::flat_hash_map<api::Symbol, int64_t>> counts;
  // Per constraint: log(number of domains + 2), so that a count in a topology with few domains
  // is not watered down by one with many.
  std::vector<double> weights;
  std::vector<bool> is_hostname;
  // Nodes lacking any topology key are not scored (they normalize to 0).
  bool require_all_topologies = true;
  api::Symbol namespace_symbol = api::kEmptySymbol;

  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

CycleState::Key PreScoreKey() {
  static const CycleState::Key key = CycleState::AllocateKey("PreScorePodTopologySpread");
  return key;
}

// A missing key reads as the empty value, as a Go map does: only reachable when not every key is
// required (system defaulting), where upstream pools such nodes under "".
api::Symbol ValueOrEmpty(const api::LabelSet& labels, api::Symbol key) {
  return labels.Get(key).value_or(api::kEmptySymbol);
}

bool Ignored(const PreScoreState& state, const api::LabelSet& labels) {
  return state.require_all_topologies && !HasAllTopologyKeys(labels, state.constraints);
}

// The domains of the feasible nodes and each constraint's normalizing weight.
void InitDomains(absl::Span<const NodeInfo* const> feasible, PreScoreState& state) {
  const size_t n = state.constraints.size();
  std::vector<int64_t> domains(n, 0);
  int64_t scored_nodes = 0;
  for (const NodeInfo* node : feasible) {
    if (node->node() == nullptr) continue;
    const api::LabelSet& labels = node->node()->meta.labels;
    if (Ignored(state, labels)) continue;
    ++scored_nodes;
    for (size_t i = 0; i < n; ++i) {
      if (state.is_hostname[i]) continue;
      const api::Symbol value = ValueOrEmpty(labels, state.constraints[i].topology_key);
      if (state.counts[i].try_emplace(value, 0).second) ++domains[i];
    }
  }
  state.weights.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t size = state.is_hostname[i] ? scored_nodes : domains[i];
    state.weights[i] = std::log(static_cast<double>(size + 2));
  }
}

// Adds the matching pods of every eligible node of the cluster (feasible or not) to the domains
// found in InitDomains.
void CountDomains(const api::Pod& pod, const Snapshot& snapshot, PreScoreState& state) {
  const pod_topology_spread::RequiredNodeAffinity affinity(pod);
  std::vector<pod_topology_spread::SelectorMemo> memos(state.constraints.size());
  for (const NodeInfo* node : snapshot.nodes()) {
    const api::Node* n = node->node();
    if (n == nullptr || Ignored(state, n->meta.labels)) continue;
    for (size_t i = 0; i < state.constraints.size(); ++i) {
      const Constraint& c = state.constraints[i];
      if (state.is_hostname[i] || !MatchesInclusionPolicies(c, pod, *n, affinity)) continue;
      const auto it = state.counts[i].find(ValueOrEmpty(n->meta.labels, c.topology_key));
      if (it == state.counts[i].end()) continue;
      it->second += CountMatchingPods(*node, c, state.namespace_symbol, &memos[i]);
    }
  }
}

}  // namespace

Status PodTopologySpread::PreScore(CycleState& state, const PodInfo& pod, const Snapshot& snapshot,
                                   absl::Span<const NodeInfo* const> feasible) {
  if (snapshot.nodes().empty()) return Status::Skip();
  absl::StatusOr<std::vector<Constraint>> constraints = pod_topology_spread::PodConstraints(
      pod.get(), default_constraints_, api::UnsatisfiableConstraintAction::kScheduleAnyway);
  if (!constraints.ok()) return Status::Error(util::Std(constraints.status().message()));
  if (constraints->empty()) return Status::Skip();

  auto data = std::make_unique<PreScoreState>();
  data->constraints = *std::move(constraints);
  data->counts.resize(data->constraints.size());
  for (const Constraint& c : data->constraints) {
    data->is_hostname.push_back(c.topology_key == HostnameKey());
  }
  // Only the pod's own constraints require every key: with system defaults, nodes without a
  // zone label still get hostname spreading.
  data->require_all_topologies =
      !pod.get().spec.topology_spread_constraints.empty() || !system_defaulted_;
  data->namespace_symbol = pod.get().meta.namespace_symbol;
  InitDomains(feasible, *data);
  CountDomains(pod.get(), snapshot, *data);
  state.Write(PreScoreKey(), std::move(data));
  return Status::Success();
}

int64_t PodTopologySpread::Score(const CycleState& state, const PodInfo& pod,
                                 const NodeInfo& node) const {
  const auto* data = state.Read<PreScoreState>(PreScoreKey());
  if (data == nullptr || node.node() == nullptr) return 0;
  const api::LabelSet& labels = node.node()->meta.labels;
  if (Ignored(*data, labels)) return kIgnoredNode;
  double score = 0;
  for (size_t i = 0; i < data->constraints.size(); ++i) {
    const Constraint& c = data->constraints[i];
    const std::optional<api::Symbol> value = labels.Get(c.topology_key);
    if (!value) continue;
    int64_t count = 0;
    if (data->is_hostname[i]) {
      count = CountMatchingPods(node, c, data->namespace_symbol, nullptr);
    } else if (const auto it = data->counts[i].find(*value); it != data->counts[i].end()) {
      count = it->second;
    }
    // maxSkew - 1 is added so that small differences between domains are tolerated.
    score += static_cast<double>(count) * data->weights[i] + static_cast<double>(c.max_skew - 1);
  }
  return static_cast<int64_t>(std::round(score));
}

void PodTopologySpread::NormalizeScore(const CycleState& state, const PodInfo& pod,
                                       absl::Span<int64_t> scores) const {
  if (state.Read<PreScoreState>(PreScoreKey()) == nullptr) return;
  int64_t min = std::numeric_limits<int64_t>::max();
  int64_t max = 0;
  for (const int64_t score : scores) {
    if (score == kIgnoredNode) continue;
    min = std::min(min, score);
    max = std::max(max, score);
  }
  for (int64_t& score : scores) {
    if (score == kIgnoredNode) {
      score = 0;
    } else if (max == 0) {
      score = framework::kMaxNodeScore;
    } else {
      score = framework::kMaxNodeScore * (max + min - score) / max;
    }
  }
}

}  // namespace kubesched::plugins
