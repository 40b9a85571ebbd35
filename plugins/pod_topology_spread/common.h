#pragma once

// Pieces shared by PodTopologySpread's filtering and scoring: a pod's constraints compiled once
// per cycle (selector with matchLabelKeys merged, policies defaulted), node eligibility, and
// counting matching pods on a node.

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "scheduler/api/labels.h"
#include "scheduler/api/objects.h"
#include "scheduler/api/symbol.h"
#include "scheduler/framework/node_info.h"
#include "scheduler/framework/pod_info.h"

namespace kubesched::plugins::pod_topology_spread {

// One constraint as the plugin evaluates it (upstream's internal topologySpreadConstraint).
struct Constraint {
  int32_t max_skew = 1;
  api::Symbol topology_key = api::kEmptySymbol;
  // A constraint without labelSelector selects no pod (upstream's labels.Nothing()), unless
  // matchLabelKeys contributed labels, which then form the whole selector.
  bool selects_nothing = false;
  api::LabelSelector selector{};
  int32_t min_domains = 1;  // absent minDomains counts as 1
  api::NodeInclusionPolicy node_affinity_policy = api::NodeInclusionPolicy::kHonor;
  api::NodeInclusionPolicy node_taints_policy = api::NodeInclusionPolicy::kIgnore;

  bool Selects(const api::LabelSet& labels) const {
    return !selects_nothing && selector.Matches(labels);
  }
  bool operator==(const Constraint&) const = default;
};

// The incoming pod's constraints with `action`: its own when it has any (of any action),
// otherwise `defaults` with a selector deduced from the pod (see PodTopologySpread). Error when a
// selector requirement is invalid (upstream fails the cycle the same way).
absl::StatusOr<std::vector<Constraint>> PodConstraints(
    const api::Pod& pod, const std::vector<api::TopologySpreadConstraint>& defaults,
    api::UnsatisfiableConstraintAction action);

// The pod's required node affinity (nodeSelector and required terms), evaluated per node.
class RequiredNodeAffinity {
 public:
  explicit RequiredNodeAffinity(const api::Pod& pod);
  bool Matches(const api::Node& node) const;

 private:
  const api::LabelSet& node_selector_;
  const api::NodeSelector* required_ = nullptr;
};

// Whether `node` is an eligible domain member for `constraint` (nodeAffinityPolicy and
// nodeTaintsPolicy; taints with NoSchedule/NoExecute effects only).
bool MatchesInclusionPolicies(const Constraint& constraint, const api::Pod& pod,
                              const api::Node& node, const RequiredNodeAffinity& affinity);

// Whether the node carries every constraint's topology key.
bool HasAllTopologyKeys(const api::LabelSet& labels, const std::vector<Constraint>& constraints);

// Remembers, for one constraint and one incoming pod, whether each label group counts,
// so that a selector is evaluated once per distinct group instead of once per pod.
using SelectorMemo = absl::flat_hash_map<framework::LabelGroupId, bool>;

// Whether `pod` counts for `constraint` in a domain: in namespace `namespace_symbol`, not
// terminating, selected (the caller checks selects_nothing).
bool PodCounts(const api::Pod& pod, const Constraint& constraint, api::Symbol namespace_symbol);

// Pods on `node` in namespace `namespace_symbol`, not terminating, selected by `constraint`;
// counted by label group, with `memo` (null: match every group afresh).
int64_t CountMatchingPods(const framework::NodeInfo& node, const Constraint& constraint,
                          api::Symbol namespace_symbol, SelectorMemo* memo);

}  // namespace kubesched::plugins::pod_topology_spread
