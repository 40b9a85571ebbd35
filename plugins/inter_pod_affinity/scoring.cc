// InterPodAffinity PreScore/Score/NormalizeScore, two-phase: PreScore visits the pods that matter
// once, as their nodes' groups, and sums term weights per topology pair; Score only looks up the
// node's topology labels. Cost: O(nodes x groups + distinct groups x terms) per pod, plus
// scored nodes x topology keys; never nodes x pods.

#include <algorithm>
#include <limits>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
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
using inter_pod_affinity::ResolvedTerm;
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

// Phase 1: the weights contributed by the existing pods, added to their nodes' domains. Pods are
// visited as the node's groups (same namespace and labels; same term), and each selector is
// evaluated once per group id for the whole cycle, so the cost grows with nodes and distinct
// groups, not with pods.
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

  // Adds the contributions of the pods on `node`: towards them from the incoming pod's
  // preferred terms (when `incoming_terms`), and from their terms towards the incoming pod.
  void AddNode(const NodeInfo& node, const api::LabelSet& node_labels, bool incoming_terms);

  // Whether any term matched on a node that has its topology key. Upstream skips scoring
  // otherwise, even if the contributions cancel out to zero.
  bool contributed() const { return contributed_; }
  std::unique_ptr<PreScoreState> TakeState();

 private:
  struct KeySum {
    api::Symbol key = api::kEmptySymbol;
    int64_t sum = 0;
  };

  void AddIncomingTerms(const framework::LabelGroupCount& group);
  void AddReverseTerm(const framework::TermGroupCount& group);
  bool IncomingTermMatches(const ResolvedTerms& terms, size_t i, uint64_t memo_base,
                           const framework::LabelGroupCount& group);
  // One node's sums per topology key, then added to that node's domains in one go.
  void Collect(api::Symbol key, int64_t delta);
  void Flush(const api::LabelSet& node_labels);

  const api::Pod& pod_;
  const api::LabelSet* namespace_labels_;  // of the incoming pod's namespace; null if unknown
  const config::InterPodAffinityArgs& args_;
  ResolvedTerms preferred_;
  ResolvedTerms preferred_anti_;
  // (incoming term number << 32 | label group) -> matches; existing term id -> matches.
  absl::flat_hash_map<uint64_t, bool> incoming_memo_;
  absl::flat_hash_map<framework::TermId, bool> reverse_memo_;
  std::vector<KeySum> node_sums_;
  TopologyMap scores_;
  bool contributed_ = false;
};

void WeightAccumulator::AddNode(const NodeInfo& node, const api::LabelSet& node_labels,
                                bool incoming_terms) {
  if (incoming_terms) {
    for (const framework::LabelGroupCount& group : node.label_groups()) AddIncomingTerms(group);
  }
  for (const framework::TermGroupCount& group : node.term_groups()) AddReverseTerm(group);
  Flush(node_labels);
}

void WeightAccumulator::AddIncomingTerms(const framework::LabelGroupCount& group) {
  const size_t affinity_terms = preferred_.terms().size();
  for (size_t i = 0; i < affinity_terms; ++i) {
    if (IncomingTermMatches(preferred_, i, 0, group)) {
      const ResolvedTerm& t = preferred_.terms()[i];
      Collect(t.term->topology_key, int64_t{t.weight} * group.count);
    }
  }
  for (size_t i = 0; i < preferred_anti_.terms().size(); ++i) {
    if (IncomingTermMatches(preferred_anti_, i, affinity_terms, group)) {
      const ResolvedTerm& t = preferred_anti_.terms()[i];
      Collect(t.term->topology_key, -int64_t{t.weight} * group.count);
    }
  }
}

// Symmetry: an existing pod's terms towards the incoming pod. Its required affinity counts as a
// preference of hardPodAffinityWeight, so pods that need each other attract.
void WeightAccumulator::AddReverseTerm(const framework::TermGroupCount& group) {
  int64_t weight = 0;
  switch (group.kind) {
    case framework::TermKind::kRequiredAntiAffinity:
      return;  // a filter matter only
    case framework::TermKind::kRequiredAffinity:
      if (args_.hard_pod_affinity_weight <= 0) return;
      weight = args_.hard_pod_affinity_weight;
      break;
    case framework::TermKind::kPreferredAffinity:
      if (args_.ignore_preferred_terms_of_existing_pods) return;
      weight = group.weight;
      break;
    case framework::TermKind::kPreferredAntiAffinity:
      if (args_.ignore_preferred_terms_of_existing_pods) return;
      weight = -int64_t{group.weight};
      break;
  }
  auto [memo, inserted] = reverse_memo_.try_emplace(group.id, false);
  if (inserted) memo->second = TermMatches(*group.sample, pod_, namespace_labels_);
  if (memo->second) Collect(group.sample->topology_key, weight * group.count);
}

bool WeightAccumulator::IncomingTermMatches(const ResolvedTerms& terms, size_t i,
                                            uint64_t memo_base,
                                            const framework::LabelGroupCount& group) {
  const uint64_t memo_key = ((memo_base + i) << 32) | group.id;
  auto [memo, inserted] = incoming_memo_.try_emplace(memo_key, false);
  if (inserted) memo->second = terms.Matches(i, group.sample->get());
  return memo->second;
}

void WeightAccumulator::Collect(api::Symbol key, int64_t delta) {
  for (KeySum& entry : node_sums_) {
    if (entry.key == key) {
      entry.sum += delta;
      return;
    }
  }
  node_sums_.push_back({key, delta});
}

void WeightAccumulator::Flush(const api::LabelSet& node_labels) {
  for (const KeySum& entry : node_sums_) {
    contributed_ |= AddToDomain(scores_, node_labels, entry.key, entry.sum);
  }
  node_sums_.clear();
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
    accumulator.AddNode(*node, labels, has_preferred);
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
