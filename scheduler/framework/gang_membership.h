#pragma once

// Which gang (pod group) a pod belongs to, derived once per pod. Two ways to join one:
//  - the label scheduling.x-k8s.io/pod-group: <name>, naming a PodGroup object
//    (scheduling.x-k8s.io/v1alpha1, the one of kubernetes-sigs' scheduler-plugins, which the
//    training, JobSet, Spark and Ray operators create) in the pod's namespace;
//  - for plain pods, the annotations kubesched.io/pod-group: <name> and
//    kubesched.io/pod-group-min-member: "<n>": an implicit group in the pod's namespace, with no
//    object.

#include <cstdint>
#include <string>

#include "scheduler/api/objects.h"

namespace kubesched::framework {

inline constexpr char kPodGroupLabel[] = "scheduling.x-k8s.io/pod-group";
inline constexpr char kPodGroupAnnotation[] = "kubesched.io/pod-group";
inline constexpr char kPodGroupMinMemberAnnotation[] = "kubesched.io/pod-group-min-member";

struct GangMembership {
  std::string key;   // "namespace/name"; empty: the pod is in no group
  std::string name;  // the group's name
  // Formed by annotations: there is no PodGroup object, and min_member comes from the pod.
  bool implicit = false;
  int32_t min_member = 0;  // implicit groups only
  // Why the pod's membership cannot be used (a label and an annotation naming different groups,
  // a missing or bad min-member): the pod stays pending with this message.
  std::string error;

  bool InGroup() const { return !key.empty(); }
};

// Reads the pod's label and annotations.
GangMembership GangMembershipOf(const api::Pod& pod);

}  // namespace kubesched::framework
