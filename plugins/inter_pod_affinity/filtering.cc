// InterPodAffinity PreFilter/Filter: required affinity and anti-affinity of the incoming pod, and
// the required anti-affinity of the pods already running (symmetry).

#include <cstdint>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
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
using inter_pod_affinity::UpdateDomain;

// What Filter needs for one pod, computed once in PreFilter. The incoming pod's topology keys
// are read from the PodInfo that Filter receives, so they are not copied here.
// The incoming pod's required terms as resolved for the cycle, kept for the PreFilter extensions;
// shared (never copied) by the state's clones, since ResolvedTerms points into itself.
struct IncomingTerms {
  ResolvedTerms affinity;
  ResolvedTerms anti_affinity;
};

struct PreFilterState final : framework::StateData {
  // Pods with required anti-affinity whose terms select the incoming pod, per topology pair.
  TopologyMap existing_anti_affinity;
  // Pods matching ALL of the incoming pod's required affinity terms, per topology pair of each
  // term.
  TopologyMap affinity;
  // Pods matching each of the incoming pod's required anti-affinity terms, per topology pair.
  TopologyMap anti_affinity;
  // Whether the incoming pod matches all its own affinity terms: the first pod of a group that
  // must be co-located must not wait forever for a partner.
  bool matches_own_affinity = false;
  std::shared_ptr<const IncomingTerms> incoming;
  // The incoming pod's namespace labels, for matching the terms of pods added or removed.
  api::LabelSet namespace_labels;
  bool namespace_known = false;

  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
};

CycleState::Key PreFilterKey() {
  static const CycleState::Key key = CycleState::AllocateKey("PreFilterInterPodAffinity");
  return key;
}

// Walks only the nodes that host pods with required anti-affinity, and their term groups: each
// distinct term is matched against the incoming pod once.
TopologyMap CountExistingAntiAffinity(const api::Pod& pod, const Snapshot& snapshot) {
  const api::LabelSet* namespace_labels = snapshot.NamespaceLabels(pod.meta.namespace_symbol);
  absl::flat_hash_map<framework::TermId, bool> matches;
  TopologyMap counts;
  for (const NodeInfo* node : snapshot.nodes_with_required_anti_affinity_pods()) {
    if (node->node() == nullptr) continue;
    const api::LabelSet& labels = NodeLabels(*node);
    for (const framework::TermGroupCount& group : node->term_groups()) {
      if (group.kind != framework::TermKind::kRequiredAntiAffinity) continue;
      auto [match, inserted] = matches.try_emplace(group.id, false);
      if (inserted) match->second = TermMatches(*group.sample, pod, namespace_labels);
      if (match->second) AddToDomain(counts, labels, group.sample->topology_key, group.count);
    }
  }
  return counts;
}

// The incoming pod's required terms, matched once per label group (pods with the same namespace
// and labels) rather than once per pod.
class IncomingTermCounter {
 public:
  explicit IncomingTermCounter(const IncomingTerms& terms)
      : affinity_(terms.affinity), anti_affinity_(terms.anti_affinity) {}

  bool empty() const { return affinity_.empty() && anti_affinity_.empty(); }
  bool MatchesOwnAffinity(const api::Pod& pod) const { return affinity_.MatchesAll(pod); }

  void CountNode(const NodeInfo& node, PreFilterState& state) {
    const api::LabelSet& labels = NodeLabels(node);
    for (const framework::LabelGroupCount& group : node.label_groups()) {
      const Matches& match = MatchesOf(group);
      if (match.all_affinity) {
        for (const auto& resolved : affinity_.terms()) {
          AddToDomain(state.affinity, labels, resolved.term->topology_key, group.count);
        }
      }
      for (size_t i = 0; i < anti_affinity_.terms().size(); ++i) {
        if (match.anti_affinity[i] != 0) {
          AddToDomain(state.anti_affinity, labels, anti_affinity_.terms()[i].term->topology_key,
                      group.count);
        }
      }
    }
  }

 private:
  struct Matches {
    bool all_affinity = false;
    absl::InlinedVector<uint8_t, 4> anti_affinity;  // [i]: anti-affinity term i selects the group
  };

  const Matches& MatchesOf(const framework::LabelGroupCount& group) {
    auto [entry, inserted] = memo_.try_emplace(group.id);
    if (!inserted) return entry->second;
    const api::Pod& sample = group.sample->get();
    entry->second.all_affinity = affinity_.MatchesAll(sample);
    for (size_t i = 0; i < anti_affinity_.terms().size(); ++i) {
      entry->second.anti_affinity.push_back(anti_affinity_.Matches(i, sample) ? 1 : 0);
    }
    return entry->second;
  }

  const ResolvedTerms& affinity_;
  const ResolvedTerms& anti_affinity_;
  absl::flat_hash_map<framework::LabelGroupId, Matches> memo_;
};

// Walks every node: any pod may be selected by the incoming pod's terms.
void CountIncomingTerms(const PodInfo& pod, const Snapshot& snapshot, PreFilterState& state) {
  auto incoming = std::make_shared<IncomingTerms>();
  for (const auto& term : pod.required_affinity) incoming->affinity.Add(term, 0, snapshot);
  for (const auto& term : pod.required_anti_affinity) {
    incoming->anti_affinity.Add(term, 0, snapshot);
  }
  state.incoming = incoming;
  IncomingTermCounter counter(*incoming);
  state.matches_own_affinity = counter.MatchesOwnAffinity(pod.get());
  if (counter.empty()) return;
  for (const NodeInfo* node : snapshot.nodes()) {
    if (node->node() != nullptr) counter.CountNode(*node, state);
  }
}

int64_t CountAt(const TopologyMap& map, api::Symbol key, api::Symbol value) {
  const auto it = map.find(PackPair(key, value));
  return it == map.end() ? 0 : it->second;
}

// Every topology key must be on the node, and each domain must hold a pod matching all terms,
// unless no such pod exists anywhere and the pod would match itself.
bool SatisfiesPodAffinity(const PreFilterState& state, const PodInfo& pod,
                          const api::LabelSet& labels) {
  bool pods_exist = true;
  for (const framework::AffinityTerm& term : pod.required_affinity) {
    const std::optional<api::Symbol> value = labels.Get(term.topology_key);
    if (!value) return false;
    if (CountAt(state.affinity, term.topology_key, *value) <= 0) pods_exist = false;
  }
  return pods_exist || (state.affinity.empty() && state.matches_own_affinity);
}

bool SatisfiesPodAntiAffinity(const PreFilterState& state, const PodInfo& pod,
                              const api::LabelSet& labels) {
  if (state.anti_affinity.empty()) return true;
  for (const framework::AffinityTerm& term : pod.required_anti_affinity) {
    const std::optional<api::Symbol> value = labels.Get(term.topology_key);
    if (value && CountAt(state.anti_affinity, term.topology_key, *value) > 0) return false;
  }
  return true;
}

bool SatisfiesExistingPodsAntiAffinity(const PreFilterState& state, const api::LabelSet& labels) {
  if (state.existing_anti_affinity.empty()) return true;
  for (const auto& [key, value] : labels.pairs()) {
    if (CountAt(state.existing_anti_affinity, key, value) > 0) return false;
  }
  return true;
}

}  // namespace

framework::PreFilterOutcome InterPodAffinity::PreFilter(CycleState& state, const PodInfo& pod,
                                                        const Snapshot& snapshot) {
  auto data = std::make_unique<PreFilterState>();
  data->existing_anti_affinity = CountExistingAntiAffinity(pod.get(), snapshot);
  if (data->existing_anti_affinity.empty() && pod.required_affinity.empty() &&
      pod.required_anti_affinity.empty()) {
    return {Status::Skip(), {}};
  }
  CountIncomingTerms(pod, snapshot, *data);
  if (const api::LabelSet* labels = snapshot.NamespaceLabels(pod.get().meta.namespace_symbol)) {
    data->namespace_labels = *labels;
    data->namespace_known = true;
  }
  state.Write(PreFilterKey(), std::move(data));
  return {};
}

// Upstream's updateWithPod: the counts move by `delta` for a pod that joins or leaves `node`.
Status InterPodAffinity::UpdateWithPod(CycleState& state, const PodInfo& pod,
                                       const PodInfo& changed, const NodeInfo& node,
                                       int64_t delta) const {
  auto* data = state.ReadMutable<PreFilterState>(PreFilterKey());
  if (data == nullptr) return Status::Error("InterPodAffinity: PreFilter state missing");
  const api::LabelSet& labels = NodeLabels(node);
  const api::LabelSet* namespace_labels = data->namespace_known ? &data->namespace_labels : nullptr;
  for (const framework::AffinityTerm& term : changed.required_anti_affinity) {
    if (TermMatches(term, pod.get(), namespace_labels)) {
      UpdateDomain(data->existing_anti_affinity, labels, term.topology_key, delta);
    }
  }
  if (data->incoming == nullptr) return Status::Success();
  const IncomingTerms& incoming = *data->incoming;
  if (incoming.affinity.MatchesAll(changed.get())) {
    for (const auto& resolved : incoming.affinity.terms()) {
      UpdateDomain(data->affinity, labels, resolved.term->topology_key, delta);
    }
  }
  for (size_t i = 0; i < incoming.anti_affinity.terms().size(); ++i) {
    if (incoming.anti_affinity.Matches(i, changed.get())) {
      UpdateDomain(data->anti_affinity, labels,
                   incoming.anti_affinity.terms()[i].term->topology_key, delta);
    }
  }
  return Status::Success();
}

Status InterPodAffinity::AddPod(CycleState& state, const PodInfo& pod, const PodInfo& added,
                                const NodeInfo& node) const {
  return UpdateWithPod(state, pod, added, node, 1);
}

Status InterPodAffinity::RemovePod(CycleState& state, const PodInfo& pod, const PodInfo& removed,
                                   const NodeInfo& node) const {
  return UpdateWithPod(state, pod, removed, node, -1);
}

Status InterPodAffinity::Filter(const CycleState& state, const PodInfo& pod,
                                const NodeInfo& node) const {
  const auto* data = state.Read<PreFilterState>(PreFilterKey());
  if (data == nullptr) return Status::Error("InterPodAffinity: Filter without PreFilter state");
  const api::LabelSet& labels = NodeLabels(node);
  // Order and codes as upstream: a missing affinity partner cannot be fixed by preemption,
  // anti-affinity conflicts can (by evicting the conflicting pods).
  if (!SatisfiesPodAffinity(*data, pod, labels)) {
    return Status::Unresolvable(kReasonAffinityRulesNotMatch);
  }
  if (!SatisfiesPodAntiAffinity(*data, pod, labels)) {
    return Status::Unschedulable(kReasonAntiAffinityRulesNotMatch);
  }
  if (!SatisfiesExistingPodsAntiAffinity(*data, labels)) {
    return Status::Unschedulable(kReasonExistingAntiAffinityRulesNotMatch);
  }
  return Status::Success();
}

}  // namespace kubesched::plugins
