#pragma once

// Pieces shared by InterPodAffinity's filtering and scoring: topology pairs packed into one
// integer, and the incoming pod's terms with their namespaceSelector resolved for the cycle.

#include <cstdint>
#include <deque>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "scheduler/api/labels.h"
#include "scheduler/api/objects.h"
#include "scheduler/api/symbol.h"
#include "scheduler/framework/node_info.h"
#include "scheduler/framework/pod_info.h"
#include "scheduler/framework/snapshot.h"

namespace kubesched::plugins::inter_pod_affinity {

// A (topology key, value) pair of interned symbols, packed so that the per-node look-up hashes
// one integer.
using TopologyPair = uint64_t;
inline TopologyPair PackPair(api::Symbol key, api::Symbol value) {
  return (static_cast<uint64_t>(key) << 32) | value;
}
inline api::Symbol PairKey(TopologyPair pair) { return static_cast<api::Symbol>(pair >> 32); }

// Per topology pair: a count of pods (filtering) or a sum of weights (scoring).
using TopologyMap = absl::flat_hash_map<TopologyPair, int64_t>;

// Adds `delta` to the pair (key, labels[key]); a node without the key contributes no domain.
// Returns whether the node has the key.
inline bool AddToDomain(TopologyMap& map, const api::LabelSet& labels, api::Symbol key,
                        int64_t delta) {
  const std::optional<api::Symbol> value = labels.Get(key);
  if (!value) return false;
  map[PackPair(key, *value)] += delta;
  return true;
}

// AddToDomain for the PreFilter extensions: a pair whose count drops to zero is erased, as
// upstream does, since Filter tells "no such pods anywhere" by an empty map.
inline void UpdateDomain(TopologyMap& map, const api::LabelSet& labels, api::Symbol key,
                         int64_t delta) {
  const std::optional<api::Symbol> value = labels.Get(key);
  if (!value) return;
  const auto it = map.try_emplace(PackPair(key, *value), 0).first;
  it->second += delta;
  if (it->second == 0) map.erase(it);
}

// The empty label set, for matching where upstream passes nil labels.
const api::LabelSet& NoLabels();

// The node object's labels; empty while the NodeInfo has no Node object.
const api::LabelSet& NodeLabels(const framework::NodeInfo& node);

// Whether `pod` is in a namespace that `term` selects and carries labels that it selects, given
// the labels of the pod's namespace (null: namespace unknown, matched as having no labels, as
// upstream does with a missing namespace).
inline bool TermMatches(const framework::AffinityTerm& term, const api::Pod& pod,
                        const api::LabelSet* namespace_labels) {
  return term.Matches(pod, namespace_labels != nullptr ? namespace_labels : &NoLabels());
}

struct ResolvedTerm {
  const framework::AffinityTerm* term = nullptr;
  int32_t weight = 0;  // 0 for required terms
};

// The incoming pod's terms as upstream evaluates them during one cycle: a non-empty
// namespaceSelector is resolved once against the namespaces in the snapshot and merged into the
// term's namespace list (mergeAffinityTermNamespacesIfNotEmpty), so matching an existing pod
// needs no look-up of its namespace, and a pod whose namespace has no Namespace object is
// selected only through the explicit list. Terms with nothing to resolve are referenced, not
// copied, unless `keep` says to: the PodInfo they come from must then outlive this object.
// Never copied itself (it points into itself): shared through pointers.
class ResolvedTerms {
 public:
  ResolvedTerms() = default;
  ResolvedTerms(const ResolvedTerms&) = delete;
  ResolvedTerms& operator=(const ResolvedTerms&) = delete;

  enum class Copy : uint8_t { kReference, kKeep };
  void Add(const framework::AffinityTerm& term, int32_t weight, const framework::Snapshot& snapshot,
           Copy copy = Copy::kReference);

  const std::vector<ResolvedTerm>& terms() const { return terms_; }
  bool empty() const { return terms_.empty(); }

  // Whether `pod` is selected by term `i` / by every term (false for no terms, as upstream).
  bool Matches(size_t i, const api::Pod& pod) const {
    return TermMatches(*terms_[i].term, pod, nullptr);
  }
  bool MatchesAll(const api::Pod& pod) const;

 private:
  std::deque<framework::AffinityTerm> resolved_;  // stable addresses for terms_
  std::vector<ResolvedTerm> terms_;
};

}  // namespace kubesched::plugins::inter_pod_affinity
