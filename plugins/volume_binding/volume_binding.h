#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "config/plugin_args.h"
#include "plugins/plugin_handle.h"
#include "scheduler/framework/plugin.h"
#include "scheduler/framework/volume_binding.h"

namespace kubesched::plugins {

// Upstream's VolumeBinding: a pod's PersistentVolumeClaims must be bound, or bindable on the node.
//
// PreFilter: Skip for a pod without claim volumes. Rejects the pod (UnschedulableAndUnresolvable)
// when a claim is missing, lost, being deleted or not the pod's own (ephemeral volumes), or when a
// claim the PV controller binds (Immediate class, or pre-bound by the user) is not bound yet; an
// Error when a claim's class leaves volumeBindingMode out. Narrows the nodes to those the bound
// PVs' kubernetes.io/hostname affinity names (PreFilterResult). Everything per pod (which PVs each
// claim to bind could take, smallest first) is worked out here once.
// Filter (UnschedulableAndUnresolvable; reasons in upstream's order): a bound PV whose node
// affinity rejects the node; a WaitForFirstConsumer claim with no free PV of its class that fits
// (capacity, access modes, selector, node affinity; the smallest is taken) and no way to be
// provisioned there (the class's provisioner and allowedTopologies); a bound claim whose PV does
// not exist. Reads only the cycle state and the node's labels and name; allocates nothing for a
// pod with at most 8 claims to bind.
// Reserve: takes the chosen node's PVs and provisioning decisions and assumes them in the cache
// (framework::VolumeAssumeCache), so the next cycle sees those PVs taken; Unreserve forgets them.
// PreBind (a bind worker): writes each PV's claimRef and each claim's selected-node annotation
// through the VolumeBinder, then waits, on the cache's informer view, until every claim is bound
// (at most bindTimeoutSeconds); an error or a timeout fails the binding cycle, which unreserves
// and requeues the pod.
//
// Threads: the plugin's own fields are set at construction and only read. Per-pod data lives in
// the cycle state: written by PreFilter and Reserve on the scheduling thread, read by Filter
// workers and, after Reserve, by the bind worker that runs PreBind and Unreserve.
class VolumeBinding final : public framework::PreFilterPlugin,
                            public framework::FilterPlugin,
                            public framework::ReservePlugin,
                            public framework::PreBindPlugin {
 public:
  // `cache` and `binder` may be null (a configuration check); Reserve then assumes nothing and
  // PreBind fails for a pod with volumes to bind.
  VolumeBinding(absl::Duration bind_timeout, framework::VolumeAssumeCache* cache,
                framework::VolumeBinder* binder);

  std::string_view Name() const override;
  // Volume objects appearing or changing, besides the defaults.
  framework::ClusterEventSet EventsToRegister() const override;
  framework::PreFilterOutcome PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                        const framework::Snapshot& snapshot) override;
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) const override;
  // Reads the node's labels and name only.
  bool FilterReadsPods() const override { return false; }
  framework::Status Reserve(framework::CycleState& state, const framework::PodInfo& pod,
                            std::string_view node_name) override;
  void Unreserve(framework::CycleState& state, const framework::PodInfo& pod,
                 std::string_view node_name) override;
  framework::Status PreBind(framework::CycleState& state, const framework::PodInfo& pod,
                            std::string_view node_name) override;

 private:
  const absl::Duration bind_timeout_;
  framework::VolumeAssumeCache* const cache_;
  framework::VolumeBinder* const binder_;
};

// Checks bindTimeoutSeconds (not negative).
absl::StatusOr<std::unique_ptr<framework::Plugin>> NewVolumeBinding(const config::PluginArgs& args,
                                                                    const PluginHandle& handle);

}  // namespace kubesched::plugins
