// PodTopologySpread PreFilter/Filter: DoNotSchedule constraints. PreFilter brings the matching
// pods of every eligible domain up to date (spread_counts.h: every node for a template's first
// pod, then only the nodes changed since); Filter compares the node's domain with the global
// minimum.

#include <memory>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "plugins/pod_topology_spread/common.h"
#include "plugins/pod_topology_spread/pod_topology_spread.h"
#include "plugins/pod_topology_spread/spread_counts.h"
#include "scheduler/util/strings.h"

namespace kubesched::plugins {
namespace {

using framework::CycleState;
using framework::NodeInfo;
using framework::PodInfo;
using framework::Snapshot;
using framework::Status;
using pod_topology_spread::Constraint;
using pod_topology_spread::ConstraintCounts;
using pod_topology_spread::SpreadCounter;
using pod_topology_spread::SpreadCounts;

// What Filter needs for one pod: the counts of its template, kept by the plugin from cycle to
// cycle and shared (never changed while shared), and the constraints they are for.
struct PreFilterState final : framework::StateData {
  std::shared_ptr<const std::vector<Constraint>> constraints;
  std::shared_ptr<const SpreadCounts> counts;              // parallel to constraints
  std::shared_ptr<const framework::LabelColumns> columns;  // the constraints' topology keys
  absl::InlinedVector<const std::vector<api::Symbol>*, 2> key_columns;  // parallel to constraints
  // The state's own copy of the counts once the PreFilter extensions changed them (counts then
  // points at it); null while the counts are shared.
  std::shared_ptr<SpreadCounts> own;

  SpreadCounts& MutableCounts() {
    if (own == nullptr) {
      own = std::make_shared<SpreadCounts>(*counts);
      counts = own;
    }
    return *own;
  }
  std::unique_ptr<framework::StateData> Clone() const override {
    auto copy = std::make_unique<PreFilterState>(*this);
    if (own != nullptr) {
      copy->own = std::make_shared<SpreadCounts>(*own);
      copy->counts = copy->own;
    }
    return copy;
  }
};

CycleState::Key PreFilterKey() {
  static const CycleState::Key key = CycleState::AllocateKey("PreFilterPodTopologySpread");
  return key;
}

}  // namespace

framework::PreFilterOutcome PodTopologySpread::PreFilter(CycleState& state, const PodInfo& pod,
                                                         const Snapshot& snapshot) {
  absl::StatusOr<std::vector<Constraint>> constraints = pod_topology_spread::PodConstraints(
      pod.get(), default_constraints_, api::UnsatisfiableConstraintAction::kDoNotSchedule);
  if (!constraints.ok()) return {Status::Error(util::Std(constraints.status().message())), {}};
  if (constraints->empty()) return {Status::Skip(), {}};

  const pod_topology_spread::SpreadTemplate key{pod, *constraints};
  SpreadCounter* counter = kept_.Find(key);
  if (counter == nullptr) {
    counter = &kept_.Add(std::make_unique<SpreadCounter>(pod, *std::move(constraints)));
  }
  counter->Update(snapshot, pool_);
  auto data = std::make_unique<PreFilterState>();
  data->constraints = counter->constraints();
  data->counts = counter->counts();
  absl::InlinedVector<api::Symbol, 4> keys;
  for (const Constraint& c : *data->constraints) keys.push_back(c.topology_key);
  label_columns_.Update(snapshot, keys);
  data->columns = label_columns_.columns();
  for (const api::Symbol topology_key : keys) {
    data->key_columns.push_back(data->columns->Column(topology_key));
  }
  state.Write(PreFilterKey(), std::move(data));
  return {};
}

Status PodTopologySpread::Filter(const CycleState& state, const PodInfo& pod,
                                 const NodeInfo& node) const {
  const auto* data = state.Read<PreFilterState>(PreFilterKey());
  if (data == nullptr) return Status::Error("PodTopologySpread: Filter without PreFilter state");
  if (node.node() == nullptr) return Status::Error("PodTopologySpread: node not found");
  const api::LabelSet& labels = node.node()->meta.labels;
  const std::vector<Constraint>& constraints = *data->constraints;
  for (size_t i = 0; i < constraints.size(); ++i) {
    const Constraint& c = constraints[i];
    const std::optional<api::Symbol> value =
        framework::ValueIn(data->key_columns[i], c.topology_key, node, labels);
    if (!value) return Status::Unresolvable(kReasonTopologySpreadMissingLabel);
    const ConstraintCounts& counts = (*data->counts)[i];
    const auto it = counts.per_domain.find(*value);
    const int64_t match = it == counts.per_domain.end() ? 0 : it->second;
    // 'existing matching pods' + 'the pod itself if it matches' - 'global minimum' <= maxSkew
    const int64_t skew = match + (counts.self_match ? 1 : 0) - counts.min_match;
    if (skew > c.max_skew) return Status::Unschedulable(kReasonTopologySpreadConstraintsNotMatch);
  }
  return Status::Success();
}

namespace {

// Upstream's updateWithPod: a pod that joins or leaves an eligible domain moves its count (and the
// global minimum) by `delta`.
Status UpdateWithPod(CycleState& state, const PodInfo& pod, const PodInfo& changed,
                     const NodeInfo& node, int64_t delta) {
  auto* data = state.ReadMutable<PreFilterState>(PreFilterKey());
  if (data == nullptr) return Status::Error("PodTopologySpread: PreFilter state missing");
  const api::Node* n = node.node();
  const std::vector<Constraint>& constraints = *data->constraints;
  if (n == nullptr || !HasAllTopologyKeys(n->meta.labels, constraints)) {
    return Status::Success();
  }
  const pod_topology_spread::RequiredNodeAffinity affinity(pod.get());
  for (size_t i = 0; i < constraints.size(); ++i) {
    const Constraint& c = constraints[i];
    if (c.selects_nothing || !MatchesInclusionPolicies(c, pod.get(), *n, affinity)) continue;
    if (!pod_topology_spread::PodCounts(changed.get(), c, pod.get().meta.namespace_symbol)) {
      continue;
    }
    ConstraintCounts& counts = data->MutableCounts()[i];
    counts.per_domain[*n->meta.labels.Get(c.topology_key)] += delta;
    counts.min_match = pod_topology_spread::GlobalMinimum(counts, c.min_domains);
  }
  return Status::Success();
}

}  // namespace

Status PodTopologySpread::AddPod(CycleState& state, const PodInfo& pod, const PodInfo& added,
                                 const NodeInfo& node) const {
  return UpdateWithPod(state, pod, added, node, 1);
}

Status PodTopologySpread::RemovePod(CycleState& state, const PodInfo& pod, const PodInfo& removed,
                                    const NodeInfo& node) const {
  return UpdateWithPod(state, pod, removed, node, -1);
}

}  // namespace kubesched::plugins
