// InterPodAffinity PreFilter/Filter: required affinity and anti-affinity of the incoming pod, and
// the required anti-affinity of the pods already running (symmetry).

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "plugins/inter_pod_affinity/inter_pod_affinity.h"
#include "plugins/inter_pod_affinity/required_counts.h"
#include "plugins/inter_pod_affinity/topology.h"

namespace kubesched::plugins {
namespace {

using framework::CycleState;
using framework::NodeInfo;
using framework::PodInfo;
using framework::Snapshot;
using framework::Status;
using framework::ValueIn;
using inter_pod_affinity::NodeLabels;
using inter_pod_affinity::PackPair;
using inter_pod_affinity::RequiredCounter;
using inter_pod_affinity::RequiredCounts;
using inter_pod_affinity::RequiredTerms;
using inter_pod_affinity::TermMatches;
using inter_pod_affinity::TopologyMap;
using inter_pod_affinity::UpdateDomain;

// What Filter needs for one pod: the counts of its template, kept by the plugin from cycle to
// cycle and shared (never changed while shared), and the template's resolved terms. The
// incoming pod's topology keys are read from the PodInfo that Filter receives.
struct PreFilterState final : framework::StateData {
  std::shared_ptr<const RequiredCounts> counts;
  std::shared_ptr<const RequiredTerms> terms;
  // The nodes' values of the pod's topology keys and of existing_anti_affinity_keys, and the
  // columns parallel to the pod's required affinity terms, its anti-affinity terms and the keys
  // (a key noted after PreFilter has none: it is read from the labels).
  std::shared_ptr<const framework::LabelColumns> columns;
  absl::InlinedVector<const std::vector<api::Symbol>*, 2> affinity_columns;
  absl::InlinedVector<const std::vector<api::Symbol>*, 2> anti_affinity_columns;
  absl::InlinedVector<const std::vector<api::Symbol>*, 2> existing_columns;
  // The state's own copy of the counts once the PreFilter extensions changed them (counts then
  // points at it); null while the counts are shared.
  std::shared_ptr<RequiredCounts> own;

  RequiredCounts& MutableCounts() {
    if (own == nullptr) {
      own = std::make_shared<RequiredCounts>(*counts);
      counts = own;
    }
    return *own;
  }
  std::unique_ptr<framework::StateData> Clone() const override {
    auto copy = std::make_unique<PreFilterState>(*this);
    if (own != nullptr) {
      copy->own = std::make_shared<RequiredCounts>(*own);
      copy->counts = copy->own;
    }
    return copy;
  }
};

CycleState::Key PreFilterKey() {
  static const CycleState::Key key = CycleState::AllocateKey("PreFilterInterPodAffinity");
  return key;
}

int64_t CountAt(const TopologyMap& map, api::Symbol key, api::Symbol value) {
  const auto it = map.find(PackPair(key, value));
  return it == map.end() ? 0 : it->second;
}

// Every topology key must be on the node, and each domain must hold a pod matching all terms,
// unless no such pod exists anywhere and the pod would match itself.
bool SatisfiesPodAffinity(const PreFilterState& state, const PodInfo& pod, const NodeInfo& node,
                          const api::LabelSet& labels) {
  bool pods_exist = true;
  for (size_t i = 0; i < pod.required_affinity().size(); ++i) {
    const framework::AffinityTerm& term = pod.required_affinity()[i];
    const std::optional<api::Symbol> value =
        ValueIn(state.affinity_columns[i], term.topology_key, node, labels);
    if (!value) return false;
    if (CountAt(state.counts->affinity, term.topology_key, *value) <= 0) pods_exist = false;
  }
  return pods_exist || (state.counts->affinity.empty() && state.terms->matches_own_affinity);
}

bool SatisfiesPodAntiAffinity(const PreFilterState& state, const PodInfo& pod, const NodeInfo& node,
                              const api::LabelSet& labels) {
  const TopologyMap& counts = state.counts->anti_affinity;
  if (counts.empty()) return true;
  for (size_t i = 0; i < pod.required_anti_affinity().size(); ++i) {
    const framework::AffinityTerm& term = pod.required_anti_affinity()[i];
    const std::optional<api::Symbol> value =
        ValueIn(state.anti_affinity_columns[i], term.topology_key, node, labels);
    if (value && CountAt(counts, term.topology_key, *value) > 0) return false;
  }
  return true;
}

// A pair of the map is a label of the node only if its key is one of the keys the map has held.
bool SatisfiesExistingPodsAntiAffinity(const PreFilterState& state, const NodeInfo& node,
                                       const api::LabelSet& labels) {
  const TopologyMap& counts = state.counts->existing_anti_affinity;
  if (counts.empty()) return true;
  const auto& keys = state.counts->existing_anti_affinity_keys;
  for (size_t i = 0; i < keys.size(); ++i) {
    const auto* column = i < state.existing_columns.size() ? state.existing_columns[i] : nullptr;
    const std::optional<api::Symbol> value = ValueIn(column, keys[i], node, labels);
    if (value && CountAt(counts, keys[i], *value) > 0) return false;
  }
  return true;
}

}  // namespace

framework::PreFilterOutcome InterPodAffinity::PreFilter(CycleState& state, const PodInfo& pod,
                                                        const Snapshot& snapshot) {
  const bool own_terms = !pod.required_affinity().empty() || !pod.required_anti_affinity().empty();
  if (!own_terms && snapshot.nodes_with_required_anti_affinity_pods().empty()) {
    return {Status::Skip(), {}};
  }
  RequiredCounter* counter = required_.Find(pod);
  if (counter == nullptr) counter = &required_.Add(std::make_unique<RequiredCounter>(pod));
  counter->Update(snapshot);
  if (!own_terms && counter->counts()->existing_anti_affinity.empty()) return {Status::Skip(), {}};
  auto data = std::make_unique<PreFilterState>();
  data->counts = counter->counts();
  data->terms = counter->terms();
  absl::InlinedVector<api::Symbol, 8> keys(data->counts->existing_anti_affinity_keys.begin(),
                                           data->counts->existing_anti_affinity_keys.end());
  for (const framework::AffinityTerm& term : pod.required_affinity())
    keys.push_back(term.topology_key);
  for (const framework::AffinityTerm& term : pod.required_anti_affinity()) {
    keys.push_back(term.topology_key);
  }
  label_columns_.Update(snapshot, keys);
  data->columns = label_columns_.columns();
  const framework::LabelColumns& columns = *data->columns;
  for (const framework::AffinityTerm& term : pod.required_affinity()) {
    data->affinity_columns.push_back(columns.Column(term.topology_key));
  }
  for (const framework::AffinityTerm& term : pod.required_anti_affinity()) {
    data->anti_affinity_columns.push_back(columns.Column(term.topology_key));
  }
  for (const api::Symbol key : data->counts->existing_anti_affinity_keys) {
    data->existing_columns.push_back(columns.Column(key));
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
  const RequiredTerms& terms = *data->terms;
  const api::LabelSet* namespace_labels = terms.namespace_known ? &terms.namespace_labels : nullptr;
  for (const framework::AffinityTerm& term : changed.required_anti_affinity()) {
    if (TermMatches(term, pod.get(), namespace_labels)) {
      data->MutableCounts().NoteExistingAntiAffinityKey(term.topology_key);
      UpdateDomain(data->MutableCounts().existing_anti_affinity, labels, term.topology_key, delta);
    }
  }
  if (terms.affinity.MatchesAll(changed.get())) {
    for (const auto& resolved : terms.affinity.terms()) {
      UpdateDomain(data->MutableCounts().affinity, labels, resolved.term->topology_key, delta);
    }
  }
  for (size_t i = 0; i < terms.anti_affinity.terms().size(); ++i) {
    if (terms.anti_affinity.Matches(i, changed.get())) {
      UpdateDomain(data->MutableCounts().anti_affinity, labels,
                   terms.anti_affinity.terms()[i].term->topology_key, delta);
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
  if (!SatisfiesPodAffinity(*data, pod, node, labels)) {
    return Status::Unresolvable(kReasonAffinityRulesNotMatch);
  }
  if (!SatisfiesPodAntiAffinity(*data, pod, node, labels)) {
    return Status::Unschedulable(kReasonAntiAffinityRulesNotMatch);
  }
  if (!SatisfiesExistingPodsAntiAffinity(*data, node, labels)) {
    return Status::Unschedulable(kReasonExistingAntiAffinityRulesNotMatch);
  }
  return Status::Success();
}

}  // namespace kubesched::plugins
