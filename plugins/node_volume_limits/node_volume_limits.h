#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "config/plugin_args.h"
#include "plugins/plugin_handle.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::plugins {

// Upstream's NodeVolumeLimits (the CSI limits, csi.go): a node's CSINode gives each CSI driver an
// allocatable volume count; the distinct volumes of the node's pods, plus the volumes attached to
// the node (VolumeAttachments) that no pod there uses, plus the pod's volumes not already on the
// node must not exceed it. A volume is "<driver>/<handle>": a bound claim's CSI PV; an in-tree AWS
// EBS or GCE PD volume (PV or inline) as its CSI driver's, where the CSINode lists the in-tree
// plugin as migrated; an unbound claim (or one whose PV is missing) as its class's provisioner's,
// once per claim; a generic ephemeral volume through its claim. Inline CSI volumes are not
// attached and do not count, as upstream.
//
// PreFilter resolves the pod's volumes once into CycleState (key "NodeVolumeLimits"). Filter reads
// the node's volume refs (NodeInfo::volume_refs, kept by the cache as pods come and go) and the
// cycle's storage objects, counts with per-thread scratch reused across calls, and so allocates
// nothing on a node that passes; it is safe to call concurrently.
class NodeVolumeLimits final : public framework::PreFilterPlugin, public framework::FilterPlugin {
 public:
  static constexpr std::string_view kReasonMaxVolumeCount = "node(s) exceed max volume count";

  std::string_view Name() const override;
  // Skip when the pod has no claim, generic ephemeral volume or inline AWS EBS / GCE PD volume.
  framework::PreFilterOutcome PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                        const framework::Snapshot& snapshot) override;
  // UnschedulableAndUnresolvable 'looking up PVC <ns>/<name>: persistentvolumeclaims "<name>" not
  // found' for a missing claim of the pod (on every node, as upstream's Filter); Error for an
  // ephemeral volume's claim the pod does not own; Unschedulable kReasonMaxVolumeCount when a
  // driver's count would exceed its limit.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) const override;
  // A claim, CSINode or attachment changing; a pod deleted (its volumes detach).
  framework::ClusterEventSet EventsToRegister() const override;
};

// Takes no args.
absl::StatusOr<std::unique_ptr<framework::Plugin>> NewNodeVolumeLimits(
    const config::PluginArgs& args, const PluginHandle& handle);

}  // namespace kubesched::plugins
