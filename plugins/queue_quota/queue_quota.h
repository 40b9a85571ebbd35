#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "config/plugin_args.h"
#include "plugins/plugin_handle.h"
#include "scheduler/framework/plugin.h"
#include "scheduler/quota/quota_tracker.h"

namespace kubesched::plugins {

// QueueQuota (kubesched extension; DESIGN.md "Queue quota"): a pod fits only if its leaf queue
// and every ancestor have room for its request under their max, and their budgets are not spent.
//
// PreFilter asks the QuotaTracker once per pod: an untyped limit or budget that blocks rejects
// every node (Unschedulable: removing pods of the queue would help; a spent budget or a pod that
// names no usable leaf queue is UnschedulableAndUnresolvable). Typed limits
// (`nvidia.com/gpu.A100`) block only nodes of that model: PreFilter lists the blocked
// (label, value) pairs and Filter compares them with the node's labels, so a pod whose A100 quota
// is used up still lands on a V100 node. With nothing blocked per model, Filter is skipped.
//
// DRA devices (the queue configuration's `devices`) count as the resource they are: for a pod with
// resource claims whose path limits such a resource (a max or spent budget on `nvidia.com/gpu`,
// or a typed key of it), Filter counts the devices DynamicResources would give it on each node
// (framework::PickedDevices, which repeats that node's search) by resource and model against the
// room PreFilter found; any other pod pays nothing for it.
//
// Reserve checks once more and charges the pod to its queue on that node (typed key included, and
// the devices its claims get there); Unreserve refunds it unless the informers already saw it
// bound.
class QueueQuota final : public framework::PreFilterPlugin,
                         public framework::FilterPlugin,
                         public framework::ReservePlugin,
                         public framework::WaitKeysPlugin {
 public:
  // null `tracker`: the plugin lets everything through (configuration checks build plugins
  // without a scheduler).
  explicit QueueQuota(quota::QuotaTracker* tracker) : tracker_(tracker) {}

  std::string_view Name() const override;
  framework::PreFilterOutcome PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                        const framework::Snapshot& snapshot) override;
  // Preempting pods of the blocking queue may free its quota (DefaultPreemption, quota-aware).
  bool PreemptionMayLiftRejection() const override { return true; }
  // A quota-blocked pod waits until its queue's usage drops, its quota or budget changes, or its
  // placement becomes possible (the tracker's keys), not for cluster events.
  std::vector<std::string> WaitKeys(const framework::PodInfo& pod) const override;
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) const override;
  // Reads the node's model label, its devices and the quota tracker only.
  bool FilterReadsPods() const override { return false; }
  framework::Status Reserve(framework::CycleState& state, const framework::PodInfo& pod,
                            std::string_view node_name) override;
  void Unreserve(framework::CycleState& state, const framework::PodInfo& pod,
                 std::string_view node_name) override;

 private:
  quota::QuotaTracker* const tracker_;
};

// Takes no args.
absl::StatusOr<std::unique_ptr<framework::Plugin>> NewQueueQuota(const config::PluginArgs& args,
                                                                 const PluginHandle& handle);

}  // namespace kubesched::plugins
