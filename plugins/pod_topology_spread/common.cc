#include "plugins/pod_topology_spread/common.h"

#include <algorithm>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "scheduler/util/strings.h"

namespace kubesched::plugins::pod_topology_spread {
namespace {

// Labels the StatefulSet controller (and the revision history) stamps per pod. No controller
// selects on them, so a selector deduced from a pod's labels must leave them out, or it would
// select that one pod only.
constexpr std::string_view kPerPodLabels[] = {
    "statefulset.kubernetes.io/pod-name",
    "apps.kubernetes.io/pod-index",
    "controller-revision-hash",
};

api::Requirement Equals(api::Symbol key, api::Symbol value) {
  api::Requirement requirement;
  requirement.key = key;
  requirement.op = api::SelectorOperator::kIn;
  requirement.values = {value};
  return requirement;
}

bool IsPerPodLabel(api::Symbol key) {
  const std::string_view text = api::SymbolText(key);
  return std::find(std::begin(kPerPodLabels), std::end(kPerPodLabels), text) !=
         std::end(kPerPodLabels);
}

// The controller reference upstream's DefaultSelector follows (metav1.GetControllerOf), when it
// names a kind whose selector upstream merges: v1 ReplicationController, apps/v1 ReplicaSet or
// StatefulSet.
bool HasSpreadableController(const api::Pod& pod) {
  for (const api::OwnerReference& owner : pod.meta.owner_references) {
    if (!owner.controller) continue;
    if (owner.api_version == "v1") return owner.kind == "ReplicationController";
    if (owner.api_version == "apps/v1") {
      return owner.kind == "ReplicaSet" || owner.kind == "StatefulSet";
    }
    return false;  // only the first controller counts, as GetControllerOf
  }
  return false;
}

// kubesched's stand-in for upstream's DefaultSelector (see PodTopologySpread in the header).
// Empty when the pod has no such controller or no label to select on.
api::LabelSelector DeducedSelector(const api::Pod& pod) {
  api::LabelSelector selector;
  if (!HasSpreadableController(pod)) return selector;
  for (const auto& [key, value] : pod.meta.labels.pairs()) {
    if (!IsPerPodLabel(key)) selector.requirements.push_back(Equals(key, value));
  }
  return selector;
}

absl::Status CheckSelector(const api::LabelSelector& selector) {
  for (const api::Requirement& requirement : selector.requirements) {
    if (!requirement.valid) {
      return absl::InvalidArgumentError(
          absl::StrCat("PodTopologySpread: invalid labelSelector requirement on key \"",
                       util::Absl(api::SymbolText(requirement.key)), "\""));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Constraint> Compile(const api::TopologySpreadConstraint& given,
                                   const api::LabelSet& pod_labels) {
  Constraint c;
  c.max_skew = given.max_skew;
  c.topology_key = given.topology_key;
  c.min_domains = given.min_domains.value_or(1);
  c.node_affinity_policy = given.node_affinity_policy.value_or(api::NodeInclusionPolicy::kHonor);
  c.node_taints_policy = given.node_taints_policy.value_or(api::NodeInclusionPolicy::kIgnore);
  if (given.label_selector.has_value()) {
    if (auto status = CheckSelector(*given.label_selector); !status.ok()) return status;
    c.selector = *given.label_selector;
  } else {
    c.selects_nothing = true;
  }
  // matchLabelKeys: the pod's values of those keys are ANDed into the selector; keys the pod
  // lacks are dropped. Over "nothing", the merged labels are the whole selector, as upstream.
  std::vector<api::Requirement> merged;
  for (const api::Symbol key : given.match_label_keys) {
    if (const std::optional<api::Symbol> value = pod_labels.Get(key)) {
      merged.push_back(Equals(key, *value));
    }
  }
  if (!merged.empty()) {
    if (c.selects_nothing) c.selector.requirements.clear();
    c.selects_nothing = false;
    c.selector.requirements.insert(c.selector.requirements.begin(), merged.begin(), merged.end());
  }
  return c;
}

absl::StatusOr<std::vector<Constraint>> CompileAll(
    const std::vector<api::TopologySpreadConstraint>& given, const api::LabelSet& pod_labels,
    api::UnsatisfiableConstraintAction action) {
  std::vector<Constraint> constraints;
  for (const api::TopologySpreadConstraint& c : given) {
    if (c.when_unsatisfiable != action) continue;
    absl::StatusOr<Constraint> compiled = Compile(c, pod_labels);
    if (!compiled.ok()) return compiled.status();
    constraints.push_back(*std::move(compiled));
  }
  return constraints;
}

}  // namespace

absl::StatusOr<std::vector<Constraint>> PodConstraints(
    const api::Pod& pod, const std::vector<api::TopologySpreadConstraint>& defaults,
    api::UnsatisfiableConstraintAction action) {
  if (!pod.spec.topology_spread_constraints.empty()) {
    return CompileAll(pod.spec.topology_spread_constraints, pod.meta.labels, action);
  }
  absl::StatusOr<std::vector<Constraint>> constraints =
      CompileAll(defaults, pod.meta.labels, action);
  if (!constraints.ok() || constraints->empty()) return constraints;
  const api::LabelSelector selector = DeducedSelector(pod);
  if (selector.empty()) return std::vector<Constraint>();
  // The deduced selector replaces whatever the defaults carried (matchLabelKeys included), as
  // upstream overwrites it.
  for (Constraint& c : *constraints) {
    c.selects_nothing = false;
    c.selector = selector;
  }
  return constraints;
}

RequiredNodeAffinity::RequiredNodeAffinity(const api::Pod& pod)
    : node_selector_(pod.spec.node_selector) {
  const auto& affinity = pod.spec.affinity;
  if (affinity.has_value() && affinity->node_affinity.has_value() &&
      affinity->node_affinity->required.has_value()) {
    required_ = &*affinity->node_affinity->required;
  }
}

bool RequiredNodeAffinity::Matches(const api::Node& node) const {
  for (const auto& [key, value] : node_selector_.pairs()) {
    const std::optional<api::Symbol> actual = node.meta.labels.Get(key);
    if (!actual.has_value() || *actual != value) return false;
  }
  return required_ == nullptr || required_->Matches(node.meta.labels, node.meta.name);
}

namespace {

bool HasUntoleratedHardTaint(const api::Pod& pod, const api::Node& node) {
  for (const api::Taint& taint : node.spec.taints) {
    if (taint.effect != api::TaintEffect::kNoSchedule &&
        taint.effect != api::TaintEffect::kNoExecute) {
      continue;
    }
    const auto& tolerations = pod.spec.tolerations;
    if (std::none_of(tolerations.begin(), tolerations.end(),
                     [&](const api::Toleration& t) { return t.Tolerates(taint); })) {
      return true;
    }
  }
  return false;
}

}  // namespace

bool MatchesInclusionPolicies(const Constraint& constraint, const api::Pod& pod,
                              const api::Node& node, const RequiredNodeAffinity& affinity) {
  if (constraint.node_affinity_policy == api::NodeInclusionPolicy::kHonor &&
      !affinity.Matches(node)) {
    return false;
  }
  return constraint.node_taints_policy != api::NodeInclusionPolicy::kHonor ||
         !HasUntoleratedHardTaint(pod, node);
}

bool HasAllTopologyKeys(const api::LabelSet& labels, const std::vector<Constraint>& constraints) {
  return std::all_of(constraints.begin(), constraints.end(),
                     [&](const Constraint& c) { return labels.Has(c.topology_key); });
}

namespace {

// Terminating pods are on their way out and do not count (upstream #87621).
bool Counts(const framework::LabelGroupCount& group, const Constraint& constraint,
            api::Symbol namespace_symbol) {
  return PodCounts(group.sample->get(), constraint, namespace_symbol);
}

}  // namespace

bool PodCounts(const api::Pod& pod, const Constraint& constraint, api::Symbol namespace_symbol) {
  return !pod.meta.deletion_timestamp.has_value() &&
         pod.meta.namespace_symbol == namespace_symbol &&
         constraint.selector.Matches(pod.meta.labels);
}

int64_t CountMatchingPods(const framework::NodeInfo& node, const Constraint& constraint,
                          api::Symbol namespace_symbol, SelectorMemo* memo) {
  if (constraint.selects_nothing) return 0;
  int64_t count = 0;
  for (const framework::LabelGroupCount& group : node.label_groups()) {
    bool counts = false;
    if (memo == nullptr) {
      counts = Counts(group, constraint, namespace_symbol);
    } else {
      // The group id decides namespace, labels and terminating state, so the whole verdict is
      // remembered and the pod is not even looked at again.
      auto [entry, inserted] = memo->try_emplace(group.id, false);
      if (inserted) entry->second = Counts(group, constraint, namespace_symbol);
      counts = entry->second;
    }
    if (counts) count += group.count;
  }
  return count;
}

}  // namespace kubesched::plugins::pod_topology_spread
