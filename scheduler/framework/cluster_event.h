#pragma once

// Cluster events that may make a pod schedulable that a plugin rejected (upstream's
// EventsToRegister, at the grain kubesched tells events apart). A plugin declares which ones can
// help (Plugin::EventsToRegister); the queue moves a rejected pod back only on an event that one
// of the plugins that rejected it registered, so a pod is not retried for changes that cannot
// change its verdict.

#include <cstddef>
#include <cstdint>

namespace kubesched::framework {

enum class ClusterEvent : uint8_t {
  kNodeAdded,
  kNodeUpdated,
  kPodDeleted,        // an assigned pod was deleted or terminated: frees room
  kAssignedPodAdded,  // a pod was bound or appeared bound: may satisfy pod affinity
  // A PersistentVolumeClaim, PersistentVolume, StorageClass, CSINode or VolumeAttachment was
  // added, changed or deleted: may satisfy a volume plugin.
  kStorageChanged,
  // A PodGroup (scheduling.x-k8s.io) was added or deleted, or its spec changed: may complete or
  // release a gang whose members wait for it. A status-only update is not one.
  kPodGroupChanged,
  // A ResourceClaim or ResourceClaimTemplate was added, changed or deleted (a claim created for
  // a pod, allocated or freed): may let a pod with claims proceed.
  kResourceClaimChanged,
  // A ResourceSlice or DeviceClass was added, changed or deleted: devices were published, went
  // away, or a class's selectors changed.
  kDeviceInventoryChanged,
  // A pending pod of a gang appeared: may give its group enough members.
  kGangMemberAdded,
  // Not a cluster event: the queue's periodic flush of pods left unschedulable for too long,
  // which moves every pod whatever its plugins registered.
  kUnschedulableTimeout,
};
inline constexpr size_t kClusterEventCount = 10;

// A set of ClusterEvents, one bit each.
using ClusterEventSet = uint32_t;

constexpr ClusterEventSet EventBit(ClusterEvent event) {
  return ClusterEventSet{1} << static_cast<unsigned>(event);
}

// What a plugin registers unless it says otherwise: a node added or changed, or room freed by a
// pod leaving, may change any verdict.
inline constexpr ClusterEventSet kDefaultEvents = EventBit(ClusterEvent::kNodeAdded) |
                                                  EventBit(ClusterEvent::kNodeUpdated) |
                                                  EventBit(ClusterEvent::kPodDeleted);
// Every event: for a pod that no plugin in particular rejected.
inline constexpr ClusterEventSet kAllEvents = (ClusterEventSet{1} << kClusterEventCount) - 1;

}  // namespace kubesched::framework
