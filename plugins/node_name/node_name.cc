#include "plugins/node_name/node_name.h"

#include "plugins/helper/args.h"
#include "plugins/names.h"

namespace kubesched::plugins {

std::string_view NodeName::Name() const { return names::kNodeName; }

framework::PreFilterOutcome NodeName::PreFilter(framework::CycleState& /*state*/,
                                                const framework::PodInfo& pod,
                                                const framework::Snapshot& /*snapshot*/) {
  if (pod.get().spec.node_name.empty()) return {framework::Status::Skip(), {}};
  return {};
}

framework::Status NodeName::Filter(const framework::CycleState& /*state*/,
                                   const framework::PodInfo& pod,
                                   const framework::NodeInfo& node) const {
  const std::string& wanted = pod.get().spec.node_name;
  if (wanted.empty() || wanted == node.name()) return framework::Status::Success();
  return framework::Status::Unresolvable(kReason);
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> NewNodeName(const config::PluginArgs& args,
                                                               const PluginHandle& /*handle*/) {
  if (auto status = helper::ExpectNoArgs(args, names::kNodeName); !status.ok()) return status;
  return std::make_unique<NodeName>();
}

}  // namespace kubesched::plugins
