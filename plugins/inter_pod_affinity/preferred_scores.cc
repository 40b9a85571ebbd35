#include "plugins/inter_pod_affinity/preferred_scores.h"

#include <algorithm>
#include <utility>

namespace kubesched::plugins::inter_pod_affinity {
namespace {

std::vector<std::pair<framework::TermId, int32_t>> IdsOf(
    const std::vector<framework::WeightedAffinityTerm>& terms) {
  std::vector<std::pair<framework::TermId, int32_t>> ids;
  ids.reserve(terms.size());
  for (const auto& weighted : terms) ids.emplace_back(weighted.term.id, weighted.weight);
  return ids;
}

bool SameIds(const std::vector<std::pair<framework::TermId, int32_t>>& ids,
             const std::vector<framework::WeightedAffinityTerm>& terms) {
  return std::equal(ids.begin(), ids.end(), terms.begin(), terms.end(),
                    [](const auto& id, const auto& weighted) {
                      return id.first == weighted.term.id && id.second == weighted.weight;
                    });
}

}  // namespace

PreferredScores::PreferredScores(const framework::PodInfo& pod,
                                 const config::InterPodAffinityArgs& args)
    : label_group_(pod.label_group),
      affinity_ids_(IdsOf(pod.preferred_affinity())),
      anti_affinity_ids_(IdsOf(pod.preferred_anti_affinity())),
      sample_(pod.pod),
      affinity_terms_(pod.preferred_affinity()),
      anti_affinity_terms_(pod.preferred_anti_affinity()),
      args_(args),
      table_(std::make_shared<ScoreTable>()) {}

bool PreferredScores::Serves(const framework::PodInfo& pod) const {
  return pod.label_group == label_group_ && SameIds(affinity_ids_, pod.preferred_affinity()) &&
         SameIds(anti_affinity_ids_, pod.preferred_anti_affinity());
}

void PreferredScores::Update(const framework::Snapshot& snapshot) {
  if (!mark_.CatchUp(snapshot, &changed_)) {
    CountAll(snapshot);
  } else {
    for (const uint32_t position : changed_) Recount(*snapshot.nodes()[position], position);
  }
  if (!keys_changed_) return;
  ScoreTable& table = MutableTable();
  table.keys.clear();
  for (const auto& [key, pairs] : pairs_per_key_) table.keys.push_back(key);
  keys_changed_ = false;
}

void PreferredScores::CountAll(const framework::Snapshot& snapshot) {
  preferred_ = std::make_unique<ResolvedTerms>();
  preferred_anti_ = std::make_unique<ResolvedTerms>();
  for (const auto& t : affinity_terms_) {
    preferred_->Add(t.term, t.weight, snapshot, ResolvedTerms::Copy::kKeep);
  }
  for (const auto& t : anti_affinity_terms_) {
    preferred_anti_->Add(t.term, t.weight, snapshot, ResolvedTerms::Copy::kKeep);
  }
  const api::LabelSet* labels = snapshot.NamespaceLabels(sample_->meta.namespace_symbol);
  namespace_known_ = labels != nullptr;
  namespace_labels_ = namespace_known_ ? *labels : api::LabelSet();
  incoming_memo_.clear();
  reverse_memo_.clear();
  shares_.clear();
  pairs_per_key_.clear();
  keys_changed_ = true;
  if (table_.use_count() > 1) {
    table_ = std::make_shared<ScoreTable>();
  } else {
    *table_ = ScoreTable();
  }
  // Without preferred terms of its own, only pods carrying terms can contribute.
  const bool has_preferred = !affinity_terms_.empty() || !anti_affinity_terms_.empty();
  const auto& nodes = has_preferred ? snapshot.nodes() : snapshot.nodes_with_affinity_pods();
  for (const framework::NodeInfo* node : nodes) Recount(*node, node->snapshot_position());
}

// Takes back the node's last share and adds its share now.
void PreferredScores::Recount(const framework::NodeInfo& node, uint32_t position) {
  const auto old = shares_.find(position);
  scratch_.clear();
  SharesOf(node, scratch_);
  if (old == shares_.end() && scratch_.empty()) return;
  ScoreTable& table = MutableTable();
  if (old != shares_.end()) {
    for (const auto& [pair, sum] : old->second) TakeShare(table, pair, sum);
  }
  for (const auto& [pair, sum] : scratch_) AddShare(table, pair, sum);
  if (scratch_.empty()) {
    shares_.erase(old);
  } else if (old != shares_.end()) {
    old->second = scratch_;
  } else {
    shares_.emplace(position, scratch_);
  }
}

// The node's sums per topology key, each going to the node's pair of that key when the node has
// the key: towards its pods from the incoming pod's preferred terms, and from their terms towards
// the incoming pod. Pods are visited as the node's groups, and each selector is evaluated once
// per group id, so the cost grows with distinct groups, not with pods.
void PreferredScores::SharesOf(const framework::NodeInfo& node, Shares& out) {
  const api::LabelSet& labels = NodeLabels(node);
  if (labels.empty()) return;  // no topology domain: nothing to add (and no Node object)
  node_sums_.clear();
  if (!preferred_->empty() || !preferred_anti_->empty()) {
    for (const framework::LabelGroupCount& group : node.label_groups()) AddIncomingTerms(group);
  }
  for (const framework::TermGroupCount& group : node.term_groups()) AddReverseTerm(group);
  for (const KeySum& entry : node_sums_) {
    if (const std::optional<api::Symbol> value = labels.Get(entry.key)) {
      out.emplace_back(PackPair(entry.key, *value), entry.sum);
    }
  }
}

void PreferredScores::AddIncomingTerms(const framework::LabelGroupCount& group) {
  const size_t affinity_terms = preferred_->terms().size();
  for (size_t i = 0; i < affinity_terms; ++i) {
    if (IncomingTermMatches(*preferred_, i, 0, group)) {
      const ResolvedTerm& t = preferred_->terms()[i];
      Collect(t.term->topology_key, int64_t{t.weight} * group.count);
    }
  }
  for (size_t i = 0; i < preferred_anti_->terms().size(); ++i) {
    if (IncomingTermMatches(*preferred_anti_, i, affinity_terms, group)) {
      const ResolvedTerm& t = preferred_anti_->terms()[i];
      Collect(t.term->topology_key, -int64_t{t.weight} * group.count);
    }
  }
}

// Symmetry: an existing pod's terms towards the incoming pod. Its required affinity counts as a
// preference of hardPodAffinityWeight, so pods that need each other attract.
void PreferredScores::AddReverseTerm(const framework::TermGroupCount& group) {
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
  if (inserted) {
    memo->second =
        TermMatches(*group.sample, *sample_, namespace_known_ ? &namespace_labels_ : nullptr);
  }
  if (memo->second) Collect(group.sample->topology_key, weight * group.count);
}

bool PreferredScores::IncomingTermMatches(const ResolvedTerms& terms, size_t i, uint64_t memo_base,
                                          const framework::LabelGroupCount& group) {
  const uint64_t memo_key = ((memo_base + i) << 32) | group.id;
  auto [memo, inserted] = incoming_memo_.try_emplace(memo_key, false);
  if (inserted) memo->second = terms.Matches(i, group.sample->get());
  return memo->second;
}

void PreferredScores::Collect(api::Symbol key, int64_t delta) {
  for (KeySum& entry : node_sums_) {
    if (entry.key == key) {
      entry.sum += delta;
      return;
    }
  }
  node_sums_.push_back({key, delta});
}

void PreferredScores::AddShare(ScoreTable& table, TopologyPair pair, int64_t sum) {
  DomainScore& score = table.pairs[pair];
  score.sum += sum;
  if (++score.nodes > 1) return;
  if (++pairs_per_key_[static_cast<api::Symbol>(pair >> 32)] == 1) keys_changed_ = true;
}

void PreferredScores::TakeShare(ScoreTable& table, TopologyPair pair, int64_t sum) {
  const auto it = table.pairs.find(pair);
  if (it == table.pairs.end()) return;  // not expected: every share was added before
  it->second.sum -= sum;
  if (--it->second.nodes > 0) return;
  table.pairs.erase(it);
  const auto key = pairs_per_key_.find(static_cast<api::Symbol>(pair >> 32));
  if (key != pairs_per_key_.end() && --key->second == 0) {
    pairs_per_key_.erase(key);
    keys_changed_ = true;
  }
}

ScoreTable& PreferredScores::MutableTable() {
  if (table_.use_count() > 1) table_ = std::make_shared<ScoreTable>(*table_);
  return *table_;
}

}  // namespace kubesched::plugins::inter_pod_affinity
