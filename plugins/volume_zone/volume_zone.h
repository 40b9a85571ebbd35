#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "config/plugin_args.h"
#include "plugins/plugin_handle.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::plugins {

// Upstream's VolumeZone: a pod's bound PersistentVolumes that carry zone or region labels
// (failure-domain.beta.kubernetes.io/{zone,region}, topology.kubernetes.io/{zone,region}; a value
// "a__b" means either) keep it on nodes whose label for the same key — or, for a beta key the
// node lacks, its GA equivalent — is one of the values. A node with none of the four labels
// passes (a single-zone cluster need not label its nodes).
//
// PreFilter resolves the pod's claims once and stores the topologies in CycleState (key
// "VolumeZone"); Filter only reads them and the node's labels, so it is safe to call
// concurrently and never allocates.
class VolumeZone final : public framework::PreFilterPlugin, public framework::FilterPlugin {
 public:
  static constexpr std::string_view kReasonConflict = "node(s) had no available volume zone";

  std::string_view Name() const override;
  // Skip when no claim of the pod leads to a PV with topology labels. UnschedulableAndUnresolvable
  // when a claim cannot be followed: the claim, its PV or its class is missing, an unbound claim
  // has no class, the class has no volumeBindingMode, or an Immediate class's claim is still
  // unbound (upstream's messages). Unbound claims of WaitForFirstConsumer classes are left to
  // volume binding.
  framework::PreFilterOutcome PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                        const framework::Snapshot& snapshot) override;
  // UnschedulableAndUnresolvable kReasonConflict when a topology does not hold on the node; Error
  // when PreFilter did not run.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) const override;
  // Reads the node's labels only.
  bool FilterReadsPods() const override { return false; }
  // A node added or relabelled, or a claim, volume or class appearing or changing.
  framework::ClusterEventSet EventsToRegister() const override;
};

// Takes no args.
absl::StatusOr<std::unique_ptr<framework::Plugin>> NewVolumeZone(const config::PluginArgs& args,
                                                                 const PluginHandle& handle);

}  // namespace kubesched::plugins
