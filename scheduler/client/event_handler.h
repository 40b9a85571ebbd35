#pragma once

// The informer side of the data flow: typed add/update/delete events for the objects the
// scheduler watches. The embedded cluster and the API server's reflectors both deliver these; the
// scheduler consumes them without knowing which one it is talking to.

#include <memory>

#include "scheduler/api/dra.h"
#include "scheduler/api/objects.h"
#include "scheduler/api/pod_group.h"
#include "scheduler/api/storage.h"

namespace kubesched::client {

enum class EventType { kAdded, kModified, kDeleted };

template <typename T>
struct Event {
  EventType type = EventType::kAdded;
  std::shared_ptr<const T> old_object;  // kModified only
  std::shared_ptr<const T> object;      // the new state; for kDeleted the last known state
};

// Receives events in the order the source produced them, per kind. Called from the source's
// delivery thread; implementations do their own locking.
class ClusterEventHandler {
 public:
  virtual ~ClusterEventHandler() = default;
  virtual void OnPod(const Event<api::Pod>& event) = 0;
  virtual void OnNode(const Event<api::Node>& event) = 0;
  virtual void OnNamespace(const Event<api::Namespace>& event) = 0;
  virtual void OnPriorityClass(const Event<api::PriorityClass>& event) = 0;
  virtual void OnConfigMap(const Event<api::ConfigMap>& /*event*/) {}
  virtual void OnPodDisruptionBudget(const Event<api::PodDisruptionBudget>& /*event*/) {}
  virtual void OnNodeMetrics(const Event<api::NodeMetrics>& /*event*/) {}
  // The volume objects (volume plugins).
  virtual void OnPersistentVolumeClaim(const Event<api::PersistentVolumeClaim>& /*event*/) {}
  virtual void OnPersistentVolume(const Event<api::PersistentVolume>& /*event*/) {}
  virtual void OnStorageClass(const Event<api::StorageClass>& /*event*/) {}
  virtual void OnCsiNode(const Event<api::CsiNode>& /*event*/) {}
  virtual void OnVolumeAttachment(const Event<api::VolumeAttachment>& /*event*/) {}
  // scheduler-plugins' PodGroups (the gang plugin). A cluster without the CRD delivers none.
  virtual void OnPodGroup(const Event<api::PodGroup>& /*event*/) {}
  // The Dynamic Resource Allocation objects (resource.k8s.io/v1). A cluster that does not serve
  // the group delivers none.
  virtual void OnDeviceClass(const Event<api::DeviceClass>& /*event*/) {}
  virtual void OnResourceSlice(const Event<api::ResourceSlice>& /*event*/) {}
  virtual void OnResourceClaim(const Event<api::ResourceClaim>& /*event*/) {}
  virtual void OnResourceClaimTemplate(const Event<api::ResourceClaimTemplate>& /*event*/) {}
};

}  // namespace kubesched::client
