#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "config/plugin_args.h"
#include "plugins/dynamic_resources/selector_cache.h"
#include "plugins/dynamic_resources/too_few_devices.h"
#include "plugins/plugin_handle.h"
#include "scheduler/framework/claim_binding.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::plugins {

// Upstream's DynamicResources with structured parameters: a pod's ResourceClaims
// (spec.resourceClaims, resource.k8s.io/v1) get devices from the ResourceSlices of the node it
// goes to.
//
// PreEnqueue: a pod whose template claim has not been created yet (no entry in
// status.resourceClaimStatuses) waits outside the queue until the pod's status names it.
// PreFilter: Skip for a pod without claims, before anything else. Resolves the claims
// (pod_claims.h) and rejects the pod on every node (UnschedulableAndUnresolvable, upstream's
// messages) when one is missing, being deleted, not the pod's own, reserved for as many consumers
// as a claim may have, or being allocated for another pod; when a request's class does not exist;
// an Error when a request names no class. For the claims to allocate it prepares, once, what the
// per-node search reads (classes, selectors compiled through the SelectorCache, constraints).
// Filter (UnschedulableAndUnresolvable): an allocated claim whose node selector rejects the node
// (`resourceclaim not available on the node`); claims to allocate that the node's devices cannot
// serve (`cannot allocate all claims`), counting as taken every device allocated to another
// claim, assumed allocations included (only Unschedulable when the node's devices would serve
// them were none taken: preemption may free some); a search that runs past filterTimeout (`timed
// out trying to allocate devices`); an Error when a selector fails on a device. The node's devices
// come from the snapshot's index (its own slices by name, plus the node-selected and allNodes
// ones), searched with this thread's allocator: no allocation and no strings per node. Claims
// that come down to one request for N devices (no constraints, no admin access, not All) are
// answered by counting the free matching devices of the snapshot's summary of the node instead
// (count_fit.h), with the same verdict; the search answers what counting cannot. Preemption
// (PreFilterExtensions): on a what-if copy of a node, the devices of a victim's claims that only
// the victim holds count as free, so a pod whose claims need them may preempt it (the ResourceClaim
// controller releases such a claim once its pod is gone). Devices of a claim shared with other pods
// stay taken. Other plugins' framework::PickedDevices do not see them freed.
// PostFilter (no node fits; upstream's): an allocated claim whose node selector rejected a node
// (`resourceclaim not available on the node`) and that no other pod has reserved is deallocated,
// so that the pod's next attempt may allocate it anew where the pod can go (`deallocation of
// ResourceClaim completed`); otherwise `still not schedulable` (`no new claims to deallocate`
// when the pod's claims could not be resolved; nothing for a pod without claims). The write
// (framework::ClaimStatusWriter::Deallocate, on the claim's resourceVersion) is one of the
// outcome's writes, which the scheduler runs on a bind worker; the claim's update brings the pod
// back. A dry run (explain) writes nothing and says `a ResourceClaim would be deallocated`.
// Reserve: searches the chosen node again, builds the allocations and assumes them in the cache
// (framework::ClaimAssumeCache), so the next cycle sees the devices taken and the claims in
// flight; Unreserve forgets those not written yet.
// PreBind (a bind worker): writes each claim's status.allocation (when allocated now) and adds
// the pod to status.reservedFor, with the claim's resourceVersion as precondition
// (framework::ClaimStatusWriter); a conflict or any other failure fails the binding cycle, which
// unreserves and requeues the pod. A claim already reserved for the pod is used as it is.
// Unreserve after PreBind (a later PreBind or the bind failed, on the same worker) takes the pod
// out of the reservedFor of the claims PreBind reserved (upstream's), so that they do not stay
// reserved for a pod that was not bound; their allocations stay, for the pod's next attempt.
//
// Threads: the plugin's own fields are set at construction; the SelectorCache is thread-safe.
// Per-pod data lives in the cycle state: written by PreFilter and Reserve on the scheduling
// thread, read by Filter workers and, after Reserve, by the bind worker that runs PreBind and
// Unreserve. Filter's scratch is per thread.
class DynamicResources final : public framework::PreEnqueuePlugin,
                               public framework::PreFilterPlugin,
                               public framework::PreFilterExtensions,
                               public framework::FilterPlugin,
                               public framework::PostFilterPlugin,
                               public framework::ReservePlugin,
                               public framework::PreBindPlugin {
 public:
  // `cache` and `writer` may be null (a configuration check); Reserve then assumes nothing and
  // PreBind fails for a pod with claims to write. A zero `filter_timeout` means none.
  DynamicResources(absl::Duration filter_timeout, framework::ClaimAssumeCache* cache,
                   framework::ClaimStatusWriter* writer);

  std::string_view Name() const override;
  // Claims, slices and classes appearing or changing, besides the defaults.
  framework::ClusterEventSet EventsToRegister() const override;
  framework::Status PreEnqueue(const framework::PodInfo& pod) const override;
  framework::PreFilterOutcome PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                        const framework::Snapshot& snapshot) override;
  bool AllocatesResourceClaims() const override { return true; }
  const framework::PreFilterExtensions* pre_filter_extensions() const override { return this; }
  // Preemption's what-if: a victim taken off the node frees the devices of its claims that no
  // other pod uses (RemovePod); put back, it holds them again (AddPod). Other pods change nothing.
  framework::Status RemovePod(framework::CycleState& state, const framework::PodInfo& pod,
                              const framework::PodInfo& removed,
                              const framework::NodeInfo& node) const override;
  framework::Status AddPod(framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::PodInfo& added,
                           const framework::NodeInfo& node) const override;
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) const override;
  // Reads the node's name and labels and the snapshot's DRA objects, never its pods.
  bool FilterReadsPods() const override { return false; }
  // Upstream's deallocation (see above); the write is asked of the scheduler, never made here.
  framework::PostFilterOutcome PostFilter(framework::CycleState& state,
                                          const framework::PodInfo& pod,
                                          const framework::Snapshot& snapshot,
                                          absl::Span<const framework::NodeStatus> filtered,
                                          const framework::PostFilterHost& host) override;
  framework::Status Reserve(framework::CycleState& state, const framework::PodInfo& pod,
                            std::string_view node_name) override;
  void Unreserve(framework::CycleState& state, const framework::PodInfo& pod,
                 std::string_view node_name) override;
  framework::Status PreBind(framework::CycleState& state, const framework::PodInfo& pod,
                            std::string_view node_name) override;

 private:
  const absl::Duration filter_timeout_;
  framework::ClaimAssumeCache* const cache_;
  framework::ClaimStatusWriter* const writer_;
  mutable dynamic_resources::SelectorCache selectors_;
  dynamic_resources::TooFewDevices too_few_devices_;  // PreFilter's, on the scheduling thread
};

// Checks filterTimeout (not negative).
absl::StatusOr<std::unique_ptr<framework::Plugin>> NewDynamicResources(
    const config::PluginArgs& args, const PluginHandle& handle);

}  // namespace kubesched::plugins
