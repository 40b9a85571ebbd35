#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "config/plugin_args.h"
#include "plugins/plugin_handle.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::plugins {

// Upstream's VolumeRestrictions, two rules:
// - Disk conflicts with the pods on the node, for in-tree disks named inline: the same GCE PD
//   unless both mount it read-only, the same AWS EBS volume, the same iSCSI IQN unless both are
//   read-only, the same RBD image (overlapping monitors, same pool and image) unless both are
//   read-only.
// - ReadWriteOncePod: a claim with that access mode that any pod in the cluster already uses
//   rejects every node (preemption of that pod may lift it).
//
// PreFilter looks the pod's claims up and counts its ReadWriteOncePod claims in use from the
// snapshot's nodes (NodeInfo::volume_refs, kept by the cache as pods come and go), only when the
// pod has such a claim; the count lives in CycleState (key "VolumeRestrictions"), and the
// PreFilter extensions keep it true to what-if nodes. Filter reads the state and the node's
// volume refs only: safe to call concurrently, never allocates.
class VolumeRestrictions final : public framework::PreFilterPlugin,
                                 public framework::FilterPlugin,
                                 public framework::PreFilterExtensions {
 public:
  static constexpr std::string_view kReasonDiskConflict = "node(s) had no available disk";
  static constexpr std::string_view kReasonReadWriteOncePodConflict =
      "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access "
      "mode";

  std::string_view Name() const override;
  // UnschedulableAndUnresolvable 'persistentvolumeclaim "<name>" not found' when a claim of the
  // pod is missing. Skip when the pod has no inline disk and none of its ReadWriteOncePod claims
  // is in use.
  framework::PreFilterOutcome PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                        const framework::Snapshot& snapshot) override;
  const framework::PreFilterExtensions* pre_filter_extensions() const override { return this; }
  // Unschedulable kReasonDiskConflict, else Unschedulable kReasonReadWriteOncePodConflict (on every
  // node while a ReadWriteOncePod claim is in use); Error when PreFilter did not run.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) const override;
  // A pod on a what-if node that uses one of the pod's ReadWriteOncePod claims counts in (Add) or
  // out (Remove) of the claims in use.
  framework::Status AddPod(framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::PodInfo& added,
                           const framework::NodeInfo& node) const override;
  framework::Status RemovePod(framework::CycleState& state, const framework::PodInfo& pod,
                              const framework::PodInfo& removed,
                              const framework::NodeInfo& node) const override;
  // A pod deleted (disk or claim released), a node added or changed, a claim appearing.
  framework::ClusterEventSet EventsToRegister() const override;
};

// Takes no args.
absl::StatusOr<std::unique_ptr<framework::Plugin>> NewVolumeRestrictions(
    const config::PluginArgs& args, const PluginHandle& handle);

}  // namespace kubesched::plugins
