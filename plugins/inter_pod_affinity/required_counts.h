#pragma once

// InterPodAffinity's PreFilter counts, kept from one cycle to the next for each pod template and
// brought up to date by recounting only the nodes that changed (framework/kept_result.h).

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "plugins/inter_pod_affinity/topology.h"
#include "scheduler/framework/kept_result.h"

namespace kubesched::plugins::inter_pod_affinity {

// What Filter reads, per topology pair. Every count is positive: a pair whose count would be 0
// is absent, as upstream, since Filter tells "no such pods anywhere" by an empty map.
struct RequiredCounts {
  // Pods with required anti-affinity whose terms select the incoming pod.
  TopologyMap existing_anti_affinity;
  // Every topology key existing_anti_affinity has held a pair of (it may hold none of some now),
  // so that Filter looks up the node's values of these keys only, not every label of the node.
  absl::InlinedVector<api::Symbol, 2> existing_anti_affinity_keys;
  // Pods matching ALL of the incoming pod's required affinity terms, per pair of each term.
  TopologyMap affinity;
  // Pods matching each of the incoming pod's required anti-affinity terms.
  TopologyMap anti_affinity;

  void NoteExistingAntiAffinityKey(api::Symbol key) {
    for (const api::Symbol known : existing_anti_affinity_keys) {
      if (known == key) return;
    }
    existing_anti_affinity_keys.push_back(key);
  }
};

// A template's required terms as resolved against the snapshot's namespaces, and what depends on
// the template alone.
struct RequiredTerms {
  ResolvedTerms affinity;
  ResolvedTerms anti_affinity;
  // The labels of the pods' namespace, for matching the terms of pods added or removed.
  api::LabelSet namespace_labels;
  bool namespace_known = false;
  // Whether the pods match all their own affinity terms: the first pod of a group that must be
  // co-located must not wait forever for a partner.
  bool matches_own_affinity = false;
};

// RequiredCounts for the pods of one template: one label group (namespace, labels, terminating)
// with the same required terms. Counting every node is needed only for the template's first pod,
// or when the snapshot cannot say which nodes changed; then each node's share is remembered so
// that a changed node's old share can be taken back. The counts always equal those of counting
// every node afresh (tests/plugins/inter_pod_affinity_kept_test.cc).
class RequiredCounter {
 public:
  explicit RequiredCounter(const framework::PodInfo& pod);

  // Whether `pod` has this counter's label group and required terms.
  bool Serves(const framework::PodInfo& pod) const;
  // Brings the counts up to date with `snapshot`.
  void Update(const framework::Snapshot& snapshot);

  // Never changed while a state holds them: the next Update copies them first then.
  std::shared_ptr<const RequiredCounts> counts() const { return counts_; }
  const std::shared_ptr<const RequiredTerms>& terms() const { return terms_; }

 private:
  enum class Which : uint8_t { kExistingAntiAffinity, kAffinity, kAntiAffinity };
  struct Share {
    Which which = Which::kAffinity;
    TopologyPair pair = 0;
    int64_t count = 0;
  };
  using Shares = absl::InlinedVector<Share, 2>;
  struct GroupMatches {
    bool all_affinity = false;
    absl::InlinedVector<uint8_t, 4> anti_affinity;  // [i]: anti-affinity term i selects the group
  };

  void CountAll(const framework::Snapshot& snapshot);
  void Recount(const framework::NodeInfo& node, uint32_t position);
  void SharesOf(const framework::NodeInfo& node, Shares& out);
  const GroupMatches& MatchesOf(const framework::LabelGroupCount& group);
  bool ExistingTermMatches(const framework::TermGroupCount& group);
  RequiredCounts& MutableCounts();
  TopologyMap& MapOf(RequiredCounts& counts, Which which);

  // The template: what Serves compares, and the terms copied for resolving them again.
  framework::LabelGroupId label_group_;
  std::vector<framework::TermId> affinity_ids_;
  std::vector<framework::TermId> anti_affinity_ids_;
  std::shared_ptr<const api::Pod> sample_;  // a pod of the template, for matching it
  std::vector<framework::AffinityTerm> affinity_terms_;
  std::vector<framework::AffinityTerm> anti_affinity_terms_;

  framework::SnapshotMark mark_;
  std::shared_ptr<const RequiredTerms> terms_;
  std::shared_ptr<RequiredCounts> counts_;
  absl::flat_hash_map<uint32_t, Shares> shares_;  // by snapshot position; nodes with a share
  // Selector verdicts, valid while the namespaces stay as they are (CountAll forgets them).
  absl::flat_hash_map<framework::LabelGroupId, GroupMatches> incoming_memo_;
  absl::flat_hash_map<framework::TermId, bool> existing_memo_;
  std::vector<uint32_t> changed_;
  Shares scratch_;
};

}  // namespace kubesched::plugins::inter_pod_affinity
