#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "config/plugin_args.h"
#include "plugins/plugin_handle.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::plugins {

// Upstream's NodeName: a pod that names its node (spec.nodeName) fits only that node.
// Stateless; Filter is safe to call concurrently.
class NodeName final : public framework::PreFilterPlugin, public framework::FilterPlugin {
 public:
  static constexpr std::string_view kReason = "node(s) didn't match the requested node name";

  std::string_view Name() const override;
  // Skip when the pod names no node.
  framework::PreFilterOutcome PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                        const framework::Snapshot& snapshot) override;
  // UnschedulableAndUnresolvable kReason when spec.nodeName is set and differs from the node.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) const override;
  // Reads the node's name only.
  bool FilterReadsPods() const override { return false; }
  bool FilterJudgesPodAndNodeAlone(const framework::CycleState& /*state*/,
                                   const framework::PodInfo& /*pod*/) const override {
    return true;
  }
};

// Takes no args.
absl::StatusOr<std::unique_ptr<framework::Plugin>> NewNodeName(const config::PluginArgs& args,
                                                               const PluginHandle& handle);

}  // namespace kubesched::plugins
