#pragma once

// The PodGroup object (scheduling.x-k8s.io/v1alpha1, kind PodGroup, namespaced): the group of
// kubernetes-sigs' scheduler-plugins, which the training, JobSet, Spark and Ray operators create
// for a gang of pods. Pods join it with the label scheduling.x-k8s.io/pod-group
// (framework/gang_membership.h). Decoded by decode.h like every other kind.

#include <cstdint>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "scheduler/api/objects.h"
#include "scheduler/api/resource.h"

namespace kubesched::api {

inline constexpr char kPodGroupApiVersion[] = "scheduling.x-k8s.io/v1alpha1";

// status, under scheduler-plugins' names: phase (Pending, PreScheduling, Scheduling, Scheduled,
// Running, Finished, Failed), the member counts, occupiedBy (the owner that occupies the group) and
// scheduleStartTime.
struct PodGroupStatus {
  std::string phase;
  int32_t scheduled = 0;
  int32_t running = 0;
  int32_t succeeded = 0;
  int32_t failed = 0;
  std::string occupied_by;
  std::optional<absl::Time> schedule_start_time;

  bool operator==(const PodGroupStatus&) const = default;
};

struct PodGroup {
  ObjectMeta meta;
  int32_t min_member = 0;                           // spec.minMember
  ResourceList min_resources;                       // spec.minResources; empty if absent
  std::optional<int32_t> schedule_timeout_seconds;  // spec.scheduleTimeoutSeconds
  PodGroupStatus status;
  // Why the spec cannot be used ("spec.minMember must be at least 1 (is 0)"), else empty. Such a
  // group is kept rather than dropped, so that its pods can be told what is wrong with it.
  std::string error;

  // "namespace/name", as GangMembership::key names the group.
  std::string Key() const { return meta.namespace_name + "/" + meta.name; }
};

}  // namespace kubesched::api
