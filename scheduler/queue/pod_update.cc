#include "scheduler/queue/pod_update.h"

#include <optional>
#include <tuple>
#include <vector>

namespace kubesched::queue {
namespace {

// The API structs have no operator== (they live in another module), so equality is spelled out
// here field by field. A field added to the object model must be added here too.

template <typename T>
bool Eq(const std::vector<T>& a, const std::vector<T>& b);
template <typename T>
bool Eq(const std::optional<T>& a, const std::optional<T>& b);
template <typename T>
bool Eq(const api::SharedList<T>& a, const api::SharedList<T>& b);
template <typename T>
bool Eq(const api::SharedOptional<T>& a, const api::SharedOptional<T>& b);

// Types that already compare with ==.
template <typename T>
requires std::equality_comparable<T>
bool Eq(const T& a, const T& b) { return a == b; }

bool Eq(const api::Requirement& a, const api::Requirement& b) {
  return std::tie(a.key, a.op, a.values, a.number, a.valid) ==
         std::tie(b.key, b.op, b.values, b.number, b.valid);
}

bool Eq(const api::LabelSelector& a, const api::LabelSelector& b) {
  return Eq(a.requirements, b.requirements);
}

bool Eq(const api::FieldRequirement& a, const api::FieldRequirement& b) {
  return std::tie(a.field, a.op, a.values, a.valid) == std::tie(b.field, b.op, b.values, b.valid);
}

bool Eq(const api::NodeSelectorTerm& a, const api::NodeSelectorTerm& b) {
  return Eq(a.match_expressions, b.match_expressions) && Eq(a.match_fields, b.match_fields);
}

bool Eq(const api::NodeSelector& a, const api::NodeSelector& b) { return Eq(a.terms, b.terms); }

bool Eq(const api::PreferredSchedulingTerm& a, const api::PreferredSchedulingTerm& b) {
  return a.weight == b.weight && Eq(a.preference, b.preference);
}

bool Eq(const api::NodeAffinity& a, const api::NodeAffinity& b) {
  return Eq(a.required, b.required) && Eq(a.preferred, b.preferred);
}

bool Eq(const api::PodAffinityTerm& a, const api::PodAffinityTerm& b) {
  return Eq(a.label_selector, b.label_selector) && a.namespaces == b.namespaces &&
         Eq(a.namespace_selector, b.namespace_selector) && a.topology_key == b.topology_key &&
         a.match_label_keys == b.match_label_keys && a.mismatch_label_keys == b.mismatch_label_keys;
}

bool Eq(const api::WeightedPodAffinityTerm& a, const api::WeightedPodAffinityTerm& b) {
  return a.weight == b.weight && Eq(a.term, b.term);
}

bool Eq(const api::PodAffinity& a, const api::PodAffinity& b) {
  return Eq(a.required, b.required) && Eq(a.preferred, b.preferred);
}

bool Eq(const api::Affinity& a, const api::Affinity& b) {
  return Eq(a.node_affinity, b.node_affinity) && Eq(a.pod_affinity, b.pod_affinity) &&
         Eq(a.pod_anti_affinity, b.pod_anti_affinity);
}

bool Eq(const api::Toleration& a, const api::Toleration& b) {
  return std::tie(a.key, a.op, a.value, a.effect, a.toleration_seconds) ==
         std::tie(b.key, b.op, b.value, b.effect, b.toleration_seconds);
}

bool Eq(const api::TopologySpreadConstraint& a, const api::TopologySpreadConstraint& b) {
  return std::tie(a.max_skew, a.topology_key, a.when_unsatisfiable, a.min_domains,
                  a.node_affinity_policy, a.node_taints_policy, a.match_label_keys) ==
             std::tie(b.max_skew, b.topology_key, b.when_unsatisfiable, b.min_domains,
                      b.node_affinity_policy, b.node_taints_policy, b.match_label_keys) &&
         Eq(a.label_selector, b.label_selector);
}

bool Eq(const api::ContainerPort& a, const api::ContainerPort& b) {
  return std::tie(a.container_port, a.host_port, a.host_ip, a.protocol) ==
         std::tie(b.container_port, b.host_port, b.host_ip, b.protocol);
}

bool Eq(const api::Container& a, const api::Container& b) {
  return std::tie(a.name, a.requests, a.limits, a.requests_cpu, a.requests_memory,
                  a.restart_policy) == std::tie(b.name, b.requests, b.limits, b.requests_cpu,
                                                b.requests_memory, b.restart_policy) &&
         Eq(a.ports, b.ports);
}

bool Eq(const api::PodSpec& a, const api::PodSpec& b) {
  return Eq(a.containers, b.containers) && Eq(a.init_containers, b.init_containers) &&
         a.overhead == b.overhead && a.node_selector == b.node_selector &&
         Eq(a.affinity, b.affinity) && Eq(a.tolerations, b.tolerations) &&
         Eq(a.topology_spread_constraints, b.topology_spread_constraints) &&
         std::tie(a.priority, a.priority_class_name, a.preemption_policy, a.scheduler_name,
                  a.node_name, a.host_network) == std::tie(b.priority, b.priority_class_name,
                                                           b.preemption_policy, b.scheduler_name,
                                                           b.node_name, b.host_network) &&
         a.scheduling_gates == b.scheduling_gates;
}

template <typename T>
bool Eq(const std::vector<T>& a, const std::vector<T>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!Eq(a[i], b[i])) return false;
  }
  return true;
}

template <typename T>
bool Eq(const std::optional<T>& a, const std::optional<T>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a.has_value() || Eq(*a, *b);
}

template <typename T>
bool Eq(const api::SharedList<T>& a, const api::SharedList<T>& b) {
  return a.SharesWith(b) || Eq(a.get(), b.get());
}

template <typename T>
bool Eq(const api::SharedOptional<T>& a, const api::SharedOptional<T>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a.has_value() || Eq(*a, *b);
}

}  // namespace

bool PodChangedBeyondStatus(const api::Pod& old, const api::Pod& updated) {
  const api::ObjectMeta& a = old.meta;
  const api::ObjectMeta& b = updated.meta;
  const bool meta_equal = a.labels == b.labels && a.annotations == b.annotations &&
                          a.deletion_timestamp == b.deletion_timestamp && a.uid == b.uid;
  return !meta_equal || !Eq(old.spec, updated.spec);
}

}  // namespace kubesched::queue
