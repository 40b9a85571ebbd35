// InterPodAffinity PreScore/Score/NormalizeScore, two-phase: PreScore visits the pods that matter
// once and sums term weights per topology pair; Score only looks up the node's topology labels.
// Cost: O(visited pods x terms + scored nodes x topology keys), never nodes x pods.

#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

#include "plugins/inter_pod_affinity/inter_pod_affinity.h"
#include "plugins/inter_pod_affinity/topology.h"

namespace kubesched::plugins {
namespace {

using framework::CycleState;
using framework::NodeInfo;
using framework::PodInfo;
using framework::Snapshot;
using framework::Status;
using inter_pod_affinity::AddToDomain;
using inter_pod_affinity::NodeLabels;
using inter_pod_affinity::PackPair;
using inter_pod_affinity::ResolvedTerms;
using inter_pod_affinity::TermMatches;
using inter_pod_affinity::TopologyMap;

struct PreScoreState final : framework::StateData {
  TopologyMap topology_score;              // summed weights per (key, value)
  std::vector<api::Symbol> topology_keys;  // distinct keys of topology_score, for Score

  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

CycleState::Key PreScoreKey() {
  static const CycleState::Key key = CycleState::AllocateKey("PreScoreInterPodAffinity");
  return key;
}

// Phase 1: the weights contributed by each existing pod, added to its node's domains.
class WeightAccumulator {
 public:
  WeightAccumulator(const PodInfo& pod, const Snapshot& snapshot,
                    const config::InterPodAffinityArgs& args)
      : pod_(pod.get()),
        namespace_labels_(snapshot.NamespaceLabels(pod.get().meta.namespace_symbol)),
        args_(args) {
    for (const auto& t : pod.preferred_affinity) preferred_.Add(t.term, t.weight, snapshot);
    for (const auto& t : pod.preferred_anti_affinity) {
      preferred_anti_.Add(t.term, t.weight, snapshot);
    }
  }

  void AddExistingPod(const PodInfo& existing, const api::LabelSet& node_labels);

  // Whether any term matched on a node that has its topology key. Upstream skips scoring
  // otherwise, even if the contributions cancel out to zero.
  bool contributed() const { return contributed_; }
  std::unique_ptr<PreScoreState> TakeState();

 private:
  // Existing pod's terms that select the incoming pod.
  void AddSymmetric(const framework::AffinityTerm& term, int64_t weight,
                    const api::LabelSet& node_labels) {
    if (TermMatches(term, pod_, namespace_labels_)) Add(term, weight, node_labels);
  }
  void Add(const framework::AffinityTerm& term, int64_t weight, const api::LabelSet& labels) {
    contributed_ |= AddToDomain(scores_, labels, term.topology_key, weight);
  }

  const api::Pod& pod_;
  const api::LabelSet* namespace_labels_;  // of the incoming pod's namespace; null if unknown
  const config::InterPodAffinityArgs& args_;
  ResolvedTerms preferred_;
  ResolvedTerms preferred_anti_;
  TopologyMap scores_;
  bool contributed_ = false;
};

void WeightAccumulator::AddExistingPod(const PodInfo& existing, const api::LabelSet& node_labels) {
  // The incoming pod's preferences towards the existing pod.
  for (size_t i = 0; i < preferred_.terms().size(); ++i) {
    const auto& t = preferred_.terms()[i];
    if (preferred_.Matches(i, existing.get())) Add(*t.term, t.weight, node_labels);
  }
  for (size_t i = 0; i < preferred_anti_.terms().size(); ++i) {
    const auto& t = preferred_anti_.terms()[i];
    if (preferred_anti_.Matches(i, existing.get())) Add(*t.term, -t.weight, node_labels);
  }
  // Symmetry: the existing pod's terms towards the incoming pod. Its required affinity counts
  // as a preference of hardPodAffinityWeight, so pods that need each other attract.
  if (args_.hard_pod_affinity_weight > 0) {
    for (const auto& term : existing.required_affinity) {
      AddSymmetric(term, args_.hard_pod_affinity_weight, node_labels);
    }
  }
  if (args_.ignore_preferred_terms_of_existing_pods) return;
  for (const auto& t : existing.preferred_affinity) AddSymmetric(t.term, t.weight, node_labels);
  for (const auto& t : existing.preferred_anti_affinity) {
    AddSymmetric(t.term, -t.weight, node_labels);
  }
}

std::unique_ptr<PreScoreState> WeightAccumulator::TakeState() {
  auto state = std::make_unique<PreScoreState>();
  for (const auto& entry : scores_) {
    const auto key = static_cast<api::Symbol>(entry.first >> 32);
    if (std::find(state->topology_keys.begin(), state->topology_keys.end(), key) ==
        state->topology_keys.end()) {
      state->topology_keys.push_back(key);
    }
  }
  state->topology_score = std::move(scores_);
  return state;
}

}  // namespace

Status InterPodAffinity::PreScore(CycleState& state, const PodInfo& pod, const Snapshot& snapshot,
                                  absl::Span<const NodeInfo* const> feasible) {
  if (feasible.empty()) return Status::Skip();
  const bool has_preferred =
      !pod.preferred_affinity.empty() || !pod.preferred_anti_affinity.empty();
  if (args_.ignore_preferred_terms_of_existing_pods && !has_preferred) return Status::Skip();

  // Without preferred terms of its own, only pods carrying terms can contribute.
  const auto& nodes = has_preferred ? snapshot.nodes() : snapshot.nodes_with_affinity_pods();
  WeightAccumulator accumulator(pod, snapshot, args_);
  for (const NodeInfo* node : nodes) {
    const api::LabelSet& labels = NodeLabels(*node);
    if (labels.empty()) continue;  // no topology domain: nothing to add (and no Node object)
    const auto& pods = has_preferred ? node->pods() : node->pods_with_affinity();
    for (const framework::PodInfoPtr& existing : pods) {
      accumulator.AddExistingPod(*existing, labels);
    }
  }
  if (!accumulator.contributed()) return Status::Skip();
  state.Write(PreScoreKey(), accumulator.TakeState());
  return Status::Success();
}

int64_t InterPodAffinity::Score(const CycleState& state, const PodInfo& pod,
                                const NodeInfo& node) const {
  const auto* data = state.Read<PreScoreState>(PreScoreKey());
  if (data == nullptr) return 0;
  const api::LabelSet& labels = NodeLabels(node);
  int64_t score = 0;
  for (const api::Symbol key : data->topology_keys) {
    const std::optional<api::Symbol> value = labels.Get(key);
    if (!value) continue;
    const auto it = data->topology_score.find(PackPair(key, *value));
    if (it != data->topology_score.end()) score += it->second;
  }
  return score;
}

void InterPodAffinity::NormalizeScore(const CycleState& state, const PodInfo& pod,
                                      absl::Span<int64_t> scores) const {
  const auto* data = state.Read<PreScoreState>(PreScoreKey());
  if (data == nullptr || data->topology_score.empty() || scores.empty()) return;
  const auto [min_it, max_it] = std::minmax_element(scores.begin(), scores.end());
  const int64_t min = *min_it;
  const int64_t diff = *max_it - min;
  for (int64_t& score : scores) {
    // Same floating-point expression as upstream, so truncation agrees to the unit.
    double scaled = 0;
    if (diff > 0) {
      scaled = static_cast<double>(framework::kMaxNodeScore) *
               (static_cast<double>(score - min) / static_cast<double>(diff));
    }
    score = static_cast<int64_t>(scaled);
  }
}

}  // namespace kubesched::plugins
