// InterPodAffinity PreFilter/Filter: required affinity and anti-affinity of the incoming pod, and
// the required anti-affinity of the pods already running (symmetry).

#include <memory>

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

// What Filter needs for one pod, computed once in PreFilter. The incoming pod's topology keys
// are read from the PodInfo that Filter receives, so they are not copied here.
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

  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
};

CycleState::Key PreFilterKey() {
  static const CycleState::Key key = CycleState::AllocateKey("PreFilterInterPodAffinity");
  return key;
}

// Walks only the nodes that host pods with required anti-affinity.
TopologyMap CountExistingAntiAffinity(const api::Pod& pod, const Snapshot& snapshot) {
  const api::LabelSet* namespace_labels = snapshot.NamespaceLabels(pod.meta.namespace_symbol);
  TopologyMap counts;
  for (const NodeInfo* node : snapshot.nodes_with_required_anti_affinity_pods()) {
    if (node->node() == nullptr) continue;
    const api::LabelSet& labels = NodeLabels(*node);
    for (const framework::PodInfoPtr& existing : node->pods_with_required_anti_affinity()) {
      for (const framework::AffinityTerm& term : existing->required_anti_affinity) {
        if (TermMatches(term, pod, namespace_labels)) {
          AddToDomain(counts, labels, term.topology_key, 1);
        }
      }
    }
  }
  return counts;
}

// Walks every pod on every node: any of them may be selected by the incoming pod's terms.
void CountIncomingTerms(const PodInfo& pod, const Snapshot& snapshot, PreFilterState& state) {
  ResolvedTerms affinity;
  ResolvedTerms anti_affinity;
  for (const auto& term : pod.required_affinity) affinity.Add(term, 0, snapshot);
  for (const auto& term : pod.required_anti_affinity) anti_affinity.Add(term, 0, snapshot);
  state.matches_own_affinity = affinity.MatchesAll(pod.get());
  if (affinity.empty() && anti_affinity.empty()) return;

  for (const NodeInfo* node : snapshot.nodes()) {
    if (node->node() == nullptr) continue;
    const api::LabelSet& labels = NodeLabels(*node);
    for (const framework::PodInfoPtr& existing : node->pods()) {
      if (affinity.MatchesAll(existing->get())) {
        for (const auto& resolved : affinity.terms()) {
          AddToDomain(state.affinity, labels, resolved.term->topology_key, 1);
        }
      }
      for (size_t i = 0; i < anti_affinity.terms().size(); ++i) {
        if (anti_affinity.Matches(i, existing->get())) {
          AddToDomain(state.anti_affinity, labels, anti_affinity.terms()[i].term->topology_key, 1);
        }
      }
    }
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
  state.Write(PreFilterKey(), std::move(data));
  return {};
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
