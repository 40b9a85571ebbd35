#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "config/plugin_args.h"
#include "plugins/plugin_handle.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::plugins {

// Upstream's NodePorts: the host ports a pod asks for (containers and sidecar init containers,
// hostPort > 0) must be free on the node. PreFilter collects the ports into CycleState (key
// "NodePorts"); Filter only reads them and is safe to call concurrently.
class NodePorts final : public framework::PreFilterPlugin, public framework::FilterPlugin {
 public:
  static constexpr std::string_view kReason =
      "node(s) didn't have free ports for the requested pod ports";

  std::string_view Name() const override;
  // Skip when the pod asks for no host port.
  framework::PreFilterOutcome PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                        const framework::Snapshot& snapshot) override;
  // Unschedulable kReason when any wanted port conflicts with one in use on the node; Error when
  // PreFilter did not run.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) const override;
  // The pod's host ports against those of the node's pods.
  bool FilterJudgesPodAndNodeAlone(const framework::CycleState& /*state*/,
                                   const framework::PodInfo& /*pod*/) const override {
    return true;
  }
};

// Takes no args.
absl::StatusOr<std::unique_ptr<framework::Plugin>> NewNodePorts(const config::PluginArgs& args,
                                                                const PluginHandle& handle);

}  // namespace kubesched::plugins
