#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "config/plugin_args.h"
#include "plugins/plugin_handle.h"
#include "scheduler/api/cordon.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::plugins {

// Upstream's NodeUnschedulable: a cordoned node (spec.unschedulable) takes only pods that
// tolerate the taint {node.kubernetes.io/unschedulable, NoSchedule}. Stateless; Filter is safe to
// call concurrently.
class NodeUnschedulable final : public framework::FilterPlugin, public framework::RowFilterPlugin {
 public:
  static constexpr std::string_view kReason = "node(s) were unschedulable";
  static constexpr std::string_view kTaintKey = api::kUnschedulableTaintKey;

  std::string_view Name() const override;
  // UnschedulableAndUnresolvable kReason for a cordoned node the pod does not tolerate.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) const override;
  // Reads the row alone.
  framework::Status FilterWithRow(const framework::CycleState& state, const framework::PodInfo& pod,
                                  const framework::NodeInfo& node,
                                  const framework::NodeRow& row) const override;
  bool FilterReadsOnlyRow(const framework::CycleState& /*state*/,
                          const framework::PodInfo& /*pod*/) const override {
    return true;
  }
  // Clears the flags of the cordoned nodes the pod does not tolerate, and of rows without a node.
  void ClearFailingRows(const framework::CycleState& state, const framework::PodInfo& pod,
                        absl::Span<const framework::NodeRow> rows, uint8_t* passes) const override;
  // Reads spec.unschedulable and the node object only.
  bool FilterReadsPods() const override { return false; }
  // The node's unschedulable flag and the pod's tolerations.
  bool FilterJudgesPodAndNodeAlone(const framework::CycleState& /*state*/,
                                   const framework::PodInfo& /*pod*/) const override {
    return true;
  }
};

// Takes no args.
absl::StatusOr<std::unique_ptr<framework::Plugin>> NewNodeUnschedulable(
    const config::PluginArgs& args, const PluginHandle& handle);

}  // namespace kubesched::plugins
