#pragma once

// InterPodAffinity's PreScore sums (phase 1 of the two-phase score), kept from one cycle to the
// next for each pod template and brought up to date by recounting only the nodes that changed
// (framework/kept_result.h).

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "config/plugin_args.h"
#include "plugins/inter_pod_affinity/topology.h"
#include "scheduler/framework/kept_result.h"

namespace kubesched::plugins::inter_pod_affinity {

// The summed weight of one topology pair, and how many nodes of the pair had a term that matched
// (upstream keeps a pair once any term matched on a node of it, even if the weights cancel out).
struct DomainScore {
  int64_t sum = 0;
  int32_t nodes = 0;
};

// What Score reads: the pairs with their sums, and their distinct topology keys.
struct ScoreTable {
  absl::flat_hash_map<TopologyPair, DomainScore> pairs;
  std::vector<api::Symbol> keys;
};

// The ScoreTable for the pods of one template: one label group (namespace, labels, terminating)
// with the same preferred terms and weights. Like RequiredCounter, it visits every node only for
// the template's first pod (or when the snapshot cannot say which nodes changed), and remembers
// each node's share to take it back when the node changes. The table always equals the one of
// visiting every node afresh (tests/plugins/inter_pod_affinity_kept_test.cc).
class PreferredScores {
 public:
  PreferredScores(const framework::PodInfo& pod, const config::InterPodAffinityArgs& args);

  // Whether `pod` has this table's label group and preferred terms with the same weights.
  bool Serves(const framework::PodInfo& pod) const;
  // Brings the table up to date with `snapshot`.
  void Update(const framework::Snapshot& snapshot);
  // Never changed while a state holds it: the next Update copies it first then.
  std::shared_ptr<const ScoreTable> table() const { return table_; }

 private:
  using Shares = absl::InlinedVector<std::pair<TopologyPair, int64_t>, 2>;
  struct KeySum {
    api::Symbol key = api::kEmptySymbol;
    int64_t sum = 0;
  };

  void CountAll(const framework::Snapshot& snapshot);
  void Recount(const framework::NodeInfo& node, uint32_t position);
  void SharesOf(const framework::NodeInfo& node, Shares& out);
  void AddIncomingTerms(const framework::LabelGroupCount& group);
  void AddReverseTerm(const framework::TermGroupCount& group);
  bool IncomingTermMatches(const ResolvedTerms& terms, size_t i, uint64_t memo_base,
                           const framework::LabelGroupCount& group);
  // One node's sums per topology key, before they go to the node's pairs.
  void Collect(api::Symbol key, int64_t delta);
  void AddShare(ScoreTable& table, TopologyPair pair, int64_t sum);
  void TakeShare(ScoreTable& table, TopologyPair pair, int64_t sum);
  ScoreTable& MutableTable();

  // The template: what Serves compares, and the terms copied for resolving them again.
  framework::LabelGroupId label_group_;
  std::vector<std::pair<framework::TermId, int32_t>> affinity_ids_;
  std::vector<std::pair<framework::TermId, int32_t>> anti_affinity_ids_;
  std::shared_ptr<const api::Pod> sample_;  // a pod of the template, for matching it
  std::vector<framework::WeightedAffinityTerm> affinity_terms_;
  std::vector<framework::WeightedAffinityTerm> anti_affinity_terms_;
  const config::InterPodAffinityArgs args_;

  framework::SnapshotMark mark_;
  // Resolved against the snapshot's namespaces by CountAll, with the namespace's labels.
  std::unique_ptr<ResolvedTerms> preferred_;
  std::unique_ptr<ResolvedTerms> preferred_anti_;
  api::LabelSet namespace_labels_;
  bool namespace_known_ = false;
  std::shared_ptr<ScoreTable> table_;
  absl::flat_hash_map<uint32_t, Shares> shares_;  // by snapshot position; nodes with a share
  absl::flat_hash_map<api::Symbol, int32_t> pairs_per_key_;
  bool keys_changed_ = false;
  // (incoming term number << 32 | label group) -> matches; existing term id -> matches. Valid
  // while the namespaces stay as they are (CountAll forgets them).
  absl::flat_hash_map<uint64_t, bool> incoming_memo_;
  absl::flat_hash_map<framework::TermId, bool> reverse_memo_;
  std::vector<KeySum> node_sums_;
  std::vector<uint32_t> changed_;
  Shares scratch_;
};

}  // namespace kubesched::plugins::inter_pod_affinity
