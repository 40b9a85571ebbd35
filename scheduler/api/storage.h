#pragma once

// The volume objects the scheduler reads (core/v1 PersistentVolumeClaim and PersistentVolume,
// storage.k8s.io/v1 StorageClass, CSINode and VolumeAttachment), in the shape the volume plugins
// need them. Decoded by decode.h like every other kind.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/api/objects.h"

namespace kubesched::api {

enum class AccessMode : uint8_t {
  kReadWriteOnce,
  kReadOnlyMany,
  kReadWriteMany,
  kReadWriteOncePod
};
enum class ClaimPhase : uint8_t { kPending, kBound, kLost };
enum class VolumePhase : uint8_t { kPending, kAvailable, kBound, kReleased, kFailed };
enum class VolumeBindingMode : uint8_t { kImmediate, kWaitForFirstConsumer };

// Annotations the volume binding protocol uses (upstream's pv controller and scheduler).
inline constexpr char kSelectedNodeAnnotation[] = "volume.kubernetes.io/selected-node";
inline constexpr char kBindCompletedAnnotation[] = "pv.kubernetes.io/bind-completed";
inline constexpr char kBoundByControllerAnnotation[] = "pv.kubernetes.io/bound-by-controller";
// On a CSINode: the in-tree plugins whose volumes its CSI drivers serve.
inline constexpr char kMigratedPluginsAnnotation[] = "storage.alpha.kubernetes.io/migrated-plugins";

struct ObjectReference {
  std::string kind;
  std::string namespace_name;
  std::string name;
  std::string uid;
};

struct PersistentVolumeClaim {
  ObjectMeta meta;
  std::vector<AccessMode> access_modes;
  std::optional<LabelSelector> selector;
  ResourceList requests;  // spec.resources.requests (storage)
  // spec.storageClassName: nullopt when absent (the default class applies), "" when explicitly
  // empty (only unclassed volumes match).
  std::optional<std::string> storage_class_name;
  std::string volume_name;  // spec.volumeName: the PV it is (being) bound to
  ClaimPhase phase = ClaimPhase::kPending;
};

// The volume source a PersistentVolume or an inline pod volume names, as far as the scheduler
// tells them apart (node volume limits, disk conflicts).
struct CsiSource {
  std::string driver;
  std::string volume_handle;
};

struct PersistentVolume {
  ObjectMeta meta;
  ResourceList capacity;  // spec.capacity (storage)
  std::vector<AccessMode> access_modes;
  std::string storage_class_name;
  std::optional<NodeSelector> node_affinity;  // spec.nodeAffinity.required
  std::optional<ObjectReference> claim_ref;
  std::optional<CsiSource> csi;
  std::string aws_ebs_volume_id;  // in-tree awsElasticBlockStore (migratable to CSI)
  std::string gce_pd_name;        // in-tree gcePersistentDisk (migratable to CSI)
  VolumePhase phase = VolumePhase::kPending;
};

struct TopologySelectorRequirement {
  Symbol key = kEmptySymbol;
  std::vector<Symbol> values;
};

struct StorageClass {
  ObjectMeta meta;
  std::string provisioner;
  // nullopt when the object leaves it out (the API server would default it to Immediate; the
  // volume plugins tell the two apart as upstream does).
  std::optional<VolumeBindingMode> volume_binding_mode;
  // allowedTopologies: each term's requirements must all hold; any term will do.
  std::vector<std::vector<TopologySelectorRequirement>> allowed_topologies;
  bool is_default = false;  // annotation storageclass.kubernetes.io/is-default-class: "true"
};

struct CsiNodeDriver {
  std::string name;
  std::string node_id;
  std::optional<int32_t> allocatable_count;  // absent: no limit reported
};

struct CsiNode {
  ObjectMeta meta;  // named after its node
  std::vector<CsiNodeDriver> drivers;
};

struct VolumeAttachment {
  ObjectMeta meta;
  std::string attacher;
  std::string node_name;
  std::string persistent_volume_name;  // spec.source.persistentVolumeName
};

}  // namespace kubesched::api
