#include "plugins/inter_pod_affinity/required_counts.h"

#include <algorithm>
#include <utility>

namespace kubesched::plugins::inter_pod_affinity {
namespace {

std::vector<framework::TermId> IdsOf(const std::vector<framework::AffinityTerm>& terms) {
  std::vector<framework::TermId> ids;
  ids.reserve(terms.size());
  for (const framework::AffinityTerm& term : terms) ids.push_back(term.id);
  return ids;
}

bool SameIds(const std::vector<framework::TermId>& ids,
             const std::vector<framework::AffinityTerm>& terms) {
  return std::equal(ids.begin(), ids.end(), terms.begin(), terms.end(),
                    [](framework::TermId id, const auto& term) { return id == term.id; });
}

void Subtract(TopologyMap& map, TopologyPair pair, int64_t count) {
  const auto it = map.find(pair);
  if (it == map.end()) return;  // not expected: every share was added before
  it->second -= count;
  if (it->second == 0) map.erase(it);
}

}  // namespace

RequiredCounter::RequiredCounter(const framework::PodInfo& pod)
    : label_group_(pod.label_group),
      affinity_ids_(IdsOf(pod.required_affinity())),
      anti_affinity_ids_(IdsOf(pod.required_anti_affinity())),
      sample_(pod.pod),
      affinity_terms_(pod.required_affinity()),
      anti_affinity_terms_(pod.required_anti_affinity()),
      counts_(std::make_shared<RequiredCounts>()) {}

bool RequiredCounter::Serves(const framework::PodInfo& pod) const {
  return pod.label_group == label_group_ && SameIds(affinity_ids_, pod.required_affinity()) &&
         SameIds(anti_affinity_ids_, pod.required_anti_affinity());
}

void RequiredCounter::Update(const framework::Snapshot& snapshot) {
  if (!mark_.CatchUp(snapshot, &changed_)) {
    CountAll(snapshot);
    return;
  }
  for (const uint32_t position : changed_) Recount(*snapshot.nodes()[position], position);
}

void RequiredCounter::CountAll(const framework::Snapshot& snapshot) {
  auto terms = std::make_shared<RequiredTerms>();
  for (const auto& term : affinity_terms_) {
    terms->affinity.Add(term, 0, snapshot, ResolvedTerms::Copy::kKeep);
  }
  for (const auto& term : anti_affinity_terms_) {
    terms->anti_affinity.Add(term, 0, snapshot, ResolvedTerms::Copy::kKeep);
  }
  if (const api::LabelSet* labels = snapshot.NamespaceLabels(sample_->meta.namespace_symbol)) {
    terms->namespace_labels = *labels;
    terms->namespace_known = true;
  }
  terms->matches_own_affinity = terms->affinity.MatchesAll(*sample_);
  terms_ = std::move(terms);
  incoming_memo_.clear();
  existing_memo_.clear();
  shares_.clear();
  if (counts_.use_count() > 1) {
    counts_ = std::make_shared<RequiredCounts>();
  } else {
    *counts_ = RequiredCounts();
  }
  // Without terms of its own, only nodes with pods that carry required anti-affinity can add.
  const bool incoming = !terms_->affinity.empty() || !terms_->anti_affinity.empty();
  const auto& nodes =
      incoming ? snapshot.nodes() : snapshot.nodes_with_required_anti_affinity_pods();
  for (const framework::NodeInfo* node : nodes) Recount(*node, node->snapshot_position());
}

// Takes back the node's last share and adds its share now.
void RequiredCounter::Recount(const framework::NodeInfo& node, uint32_t position) {
  const auto old = shares_.find(position);
  scratch_.clear();
  SharesOf(node, scratch_);
  if (old == shares_.end() && scratch_.empty()) return;
  RequiredCounts& counts = MutableCounts();
  if (old != shares_.end()) {
    for (const Share& share : old->second)
      Subtract(MapOf(counts, share.which), share.pair, share.count);
  }
  for (const Share& share : scratch_) {
    MapOf(counts, share.which)[share.pair] += share.count;
    if (share.which == Which::kExistingAntiAffinity) {
      counts.NoteExistingAntiAffinityKey(PairKey(share.pair));
    }
  }
  if (scratch_.empty()) {
    shares_.erase(old);
  } else if (old != shares_.end()) {
    old->second = scratch_;
  } else {
    shares_.emplace(position, scratch_);
  }
}

void RequiredCounter::SharesOf(const framework::NodeInfo& node, Shares& out) {
  if (node.node() == nullptr) return;
  const api::LabelSet& labels = NodeLabels(node);
  const auto add = [&](Which which, api::Symbol key, int64_t count) {
    if (const std::optional<api::Symbol> value = labels.Get(key)) {
      out.push_back({which, PackPair(key, *value), count});
    }
  };
  for (const framework::TermGroupCount& group : node.term_groups()) {
    if (group.kind != framework::TermKind::kRequiredAntiAffinity) continue;
    if (ExistingTermMatches(group)) {
      add(Which::kExistingAntiAffinity, group.sample->topology_key, group.count);
    }
  }
  const ResolvedTerms& affinity = terms_->affinity;
  const ResolvedTerms& anti_affinity = terms_->anti_affinity;
  if (affinity.empty() && anti_affinity.empty()) return;
  for (const framework::LabelGroupCount& group : node.label_groups()) {
    const GroupMatches& match = MatchesOf(group);
    if (match.all_affinity) {
      for (const auto& resolved : affinity.terms()) {
        add(Which::kAffinity, resolved.term->topology_key, group.count);
      }
    }
    for (size_t i = 0; i < anti_affinity.terms().size(); ++i) {
      if (match.anti_affinity[i] != 0) {
        add(Which::kAntiAffinity, anti_affinity.terms()[i].term->topology_key, group.count);
      }
    }
  }
}

const RequiredCounter::GroupMatches& RequiredCounter::MatchesOf(
    const framework::LabelGroupCount& group) {
  auto [entry, inserted] = incoming_memo_.try_emplace(group.id);
  if (!inserted) return entry->second;
  const api::Pod& sample = group.sample->get();
  entry->second.all_affinity = terms_->affinity.MatchesAll(sample);
  for (size_t i = 0; i < terms_->anti_affinity.terms().size(); ++i) {
    entry->second.anti_affinity.push_back(terms_->anti_affinity.Matches(i, sample) ? 1 : 0);
  }
  return entry->second;
}

bool RequiredCounter::ExistingTermMatches(const framework::TermGroupCount& group) {
  auto [match, inserted] = existing_memo_.try_emplace(group.id, false);
  if (inserted) {
    match->second = TermMatches(*group.sample, *sample_,
                                terms_->namespace_known ? &terms_->namespace_labels : nullptr);
  }
  return match->second;
}

RequiredCounts& RequiredCounter::MutableCounts() {
  if (counts_.use_count() > 1) counts_ = std::make_shared<RequiredCounts>(*counts_);
  return *counts_;
}

TopologyMap& RequiredCounter::MapOf(RequiredCounts& counts, Which which) {
  switch (which) {
    case Which::kExistingAntiAffinity:
      return counts.existing_anti_affinity;
    case Which::kAffinity:
      return counts.affinity;
    case Which::kAntiAffinity:
      break;
  }
  return counts.anti_affinity;
}

}  // namespace kubesched::plugins::inter_pod_affinity
