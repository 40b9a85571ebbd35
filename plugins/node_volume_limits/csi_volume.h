#pragma once

// Which CSI volume a pod volume occupies on a node, as upstream's NodeVolumeLimits counts it
// (csi.go getCSIDriverInfo, and csi-translation-lib for in-tree AWS EBS and GCE PD volumes).
// Everything here returns views into the objects it is given and never allocates, because it
// runs for the volumes of every pod on every node a pod with volumes is checked against.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "scheduler/api/objects.h"
#include "scheduler/api/storage.h"
#include "scheduler/framework/storage_state.h"

namespace kubesched::plugins::volume_limits {

// The in-tree plugins whose volumes count as their CSI driver's where the node has migrated them.
enum class InTreePlugin : uint8_t { kNone, kAwsEbs, kGcePd };

// Which in-tree plugins a node's CSINode lists in storage.alpha.kubernetes.io/migrated-plugins;
// none without a CSINode.
struct Migration {
  bool aws_ebs = false;
  bool gce_pd = false;
  bool Allows(InTreePlugin plugin) const {
    return plugin == InTreePlugin::kNone || (plugin == InTreePlugin::kAwsEbs && aws_ebs) ||
           (plugin == InTreePlugin::kGcePd && gce_pd);
  }
};
Migration MigrationOf(const api::CsiNode* csi_node);

// A CSI volume handle as up to four pieces of text whose concatenation is the handle, so that a
// translated handle ("projects/UNSPECIFIED/zones/<zone>/disks/<pd>") is compared without being
// formatted. Views only: the pieces must outlive it.
class Handle {
 public:
  Handle() = default;
  explicit Handle(std::string_view a, std::string_view b = {}, std::string_view c = {},
                  std::string_view d = {})
      : parts_{a, b, c, d} {}
  // <0, 0, >0 as the concatenations compare.
  int Compare(const Handle& other) const;
  bool empty() const;
  std::string ToString() const;

 private:
  std::array<std::string_view, 4> parts_{};
};

// A volume as NodeVolumeLimits counts it: upstream's "<driver>/<handle>" unique name, and the
// in-tree plugin the node must have migrated for it to count (kNone for a CSI volume).
struct CsiVolume {
  std::string_view driver;
  Handle handle;
  InTreePlugin plugin = InTreePlugin::kNone;
};

// The volume a claim occupies (upstream's getCSIDriverInfo, before the migration check): its
// bound PV's CSI source or translated in-tree source; for an unbound claim, or one whose PV is
// missing, its class's provisioner with a handle unique to the claim. nullopt when it does not
// count (another volume type, no class, an untranslatable PV).
std::optional<CsiVolume> ClaimVolume(const framework::StorageState& storage,
                                     const api::PersistentVolumeClaim& claim);
// The volume an inline AWS EBS or GCE PD volume occupies; nullopt for any other volume.
std::optional<CsiVolume> InlineVolume(const api::Volume& volume);

// Whether `claim` was made for `pod`'s generic ephemeral volume (upstream's VolumeIsForPod: same
// namespace, and the pod is its controller).
bool ClaimIsForPod(const api::PersistentVolumeClaim& claim, const api::Pod& pod);

}  // namespace kubesched::plugins::volume_limits
