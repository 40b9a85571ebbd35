#include "plugins/node_unschedulable/node_unschedulable.h"

#include "plugins/helper/args.h"
#include "plugins/names.h"

namespace kubesched::plugins {

std::string_view NodeUnschedulable::Name() const { return names::kNodeUnschedulable; }

framework::Status NodeUnschedulable::Filter(const framework::CycleState& state,
                                            const framework::PodInfo& pod,
                                            const framework::NodeInfo& node) const {
  return FilterWithRow(state, pod, node, node.row());
}

framework::Status NodeUnschedulable::FilterWithRow(const framework::CycleState& /*state*/,
                                                   const framework::PodInfo& pod,
                                                   const framework::NodeInfo& /*node*/,
                                                   const framework::NodeRow& row) const {
  if (!row.unschedulable) {
    if (!row.has_node) return framework::Status(framework::Code::kError, "node not found");
    return framework::Status::Success();
  }
  if (api::ToleratesCordon(pod.get().spec.tolerations)) return framework::Status::Success();
  return framework::Status::Unresolvable(kReason);
}

void NodeUnschedulable::ClearFailingRows(const framework::CycleState& /*state*/,
                                         const framework::PodInfo& pod,
                                         absl::Span<const framework::NodeRow> rows,
                                         uint8_t* passes) const {
  const bool tolerates_cordon = api::ToleratesCordon(pod.get().spec.tolerations);
  for (size_t i = 0; i < rows.size(); ++i) {
    const framework::NodeRow& row = rows[i];
    const bool fits = row.has_node && (!row.unschedulable || tolerates_cordon);
    passes[i] &= static_cast<uint8_t>(fits);
  }
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> NewNodeUnschedulable(
    const config::PluginArgs& args, const PluginHandle& /*handle*/) {
  if (auto status = helper::ExpectNoArgs(args, names::kNodeUnschedulable); !status.ok()) {
    return status;
  }
  return std::make_unique<NodeUnschedulable>();
}

}  // namespace kubesched::plugins
