#include "plugins/inter_pod_affinity/topology.h"

namespace kubesched::plugins::inter_pod_affinity {

const api::LabelSet& NoLabels() {
  static const api::LabelSet* const kEmpty = new api::LabelSet();
  return *kEmpty;
}

const api::LabelSet& NodeLabels(const framework::NodeInfo& node) {
  return node.node() != nullptr ? node.node()->meta.labels : NoLabels();
}

void ResolvedTerms::Add(const framework::AffinityTerm& term, int32_t weight,
                        const framework::Snapshot& snapshot, Copy copy) {
  // An empty selector ({}) stays as it is: upstream keeps it as "every namespace", which also
  // covers pods in namespaces it has never seen.
  if (!term.namespace_selector.has_value() || term.namespace_selector->empty()) {
    terms_.push_back({copy == Copy::kKeep ? &resolved_.emplace_back(term) : &term, weight});
    return;
  }
  framework::AffinityTerm& resolved = resolved_.emplace_back(term);
  for (const auto& [namespace_symbol, labels] : snapshot.namespace_labels()) {
    if (term.namespace_selector->Matches(labels)) resolved.namespaces.insert(namespace_symbol);
  }
  resolved.namespace_selector.reset();
  terms_.push_back({&resolved, weight});
}

bool ResolvedTerms::MatchesAll(const api::Pod& pod) const {
  if (terms_.empty()) return false;
  for (size_t i = 0; i < terms_.size(); ++i) {
    if (!Matches(i, pod)) return false;
  }
  return true;
}

}  // namespace kubesched::plugins::inter_pod_affinity
