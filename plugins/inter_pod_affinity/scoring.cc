// InterPodAffinity PreScore/Score/NormalizeScore, two-phase: PreScore brings the sums of term
// weights per topology pair up to date (preferred_scores.h: every node's pods, as groups, for a
// template's first pod; then only the nodes changed since); Score only looks up the node's
// topology labels. Cost: O(changed nodes x groups) per pod, plus scored nodes x topology keys;
// never nodes x pods.

#include <algorithm>
#include <memory>

#include "plugins/inter_pod_affinity/inter_pod_affinity.h"
#include "plugins/inter_pod_affinity/preferred_scores.h"
#include "plugins/inter_pod_affinity/topology.h"

namespace kubesched::plugins {
namespace {

using framework::CycleState;
using framework::NodeInfo;
using framework::PodInfo;
using framework::Snapshot;
using framework::Status;
using inter_pod_affinity::NodeLabels;
using inter_pod_affinity::PackPair;
using inter_pod_affinity::PreferredScores;
using inter_pod_affinity::ScoreTable;

// The table of the pod's template, kept by the plugin from cycle to cycle and shared (never
// changed while shared).
struct PreScoreState final : framework::StateData {
  std::shared_ptr<const ScoreTable> table;

  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

CycleState::Key PreScoreKey() {
  static const CycleState::Key key = CycleState::AllocateKey("PreScoreInterPodAffinity");
  return key;
}

}  // namespace

Status InterPodAffinity::PreScore(CycleState& state, const PodInfo& pod, const Snapshot& snapshot,
                                  absl::Span<const NodeInfo* const> feasible) {
  if (feasible.empty()) return Status::Skip();
  const bool has_preferred =
      !pod.preferred_affinity().empty() || !pod.preferred_anti_affinity().empty();
  if (args_.ignore_preferred_terms_of_existing_pods && !has_preferred) return Status::Skip();
  // Without preferred terms of its own, only pods carrying terms can contribute.
  if (!has_preferred && snapshot.nodes_with_affinity_pods().empty()) return Status::Skip();

  PreferredScores* scores = preferred_.Find(pod);
  if (scores == nullptr) scores = &preferred_.Add(std::make_unique<PreferredScores>(pod, args_));
  scores->Update(snapshot);
  // Upstream skips scoring unless some term matched on a node that has its topology key, even if
  // the contributions cancel out to zero.
  if (scores->table()->pairs.empty()) return Status::Skip();
  auto data = std::make_unique<PreScoreState>();
  data->table = scores->table();
  state.Write(PreScoreKey(), std::move(data));
  return Status::Success();
}

int64_t InterPodAffinity::Score(const CycleState& state, const PodInfo& pod,
                                const NodeInfo& node) const {
  const auto* data = state.Read<PreScoreState>(PreScoreKey());
  if (data == nullptr) return 0;
  const api::LabelSet& labels = NodeLabels(node);
  const ScoreTable& table = *data->table;
  int64_t score = 0;
  for (const api::Symbol key : table.keys) {
    const std::optional<api::Symbol> value = labels.Get(key);
    if (!value) continue;
    const auto it = table.pairs.find(PackPair(key, *value));
    if (it != table.pairs.end()) score += it->second.sum;
  }
  return score;
}

void InterPodAffinity::NormalizeScore(const CycleState& state, const PodInfo& pod,
                                      absl::Span<int64_t> scores) const {
  const auto* data = state.Read<PreScoreState>(PreScoreKey());
  if (data == nullptr || data->table->pairs.empty() || scores.empty()) return;
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
