#include "plugins/node_ports/node_ports.h"

#include <string>
#include <vector>

#include "plugins/helper/args.h"
#include "plugins/names.h"

namespace kubesched::plugins {
namespace {

struct WantedPort {
  std::string ip;
  api::Protocol protocol;
  int32_t port;
};

struct PortsState final : framework::StateData {
  std::vector<WantedPort> ports;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PortsState>(*this);
  }
};

framework::CycleState::Key StateKey() {
  static const framework::CycleState::Key key =
      framework::CycleState::AllocateKey(names::kNodePorts);
  return key;
}

void CollectHostPorts(const api::Container& container, std::vector<WantedPort>* out) {
  for (const api::ContainerPort& port : container.ports) {
    if (port.host_port > 0) out->push_back({port.host_ip, port.protocol, port.host_port});
  }
}

}  // namespace

std::string_view NodePorts::Name() const { return names::kNodePorts; }

framework::PreFilterOutcome NodePorts::PreFilter(framework::CycleState& state,
                                                 const framework::PodInfo& pod,
                                                 const framework::Snapshot& /*snapshot*/) {
  auto data = std::make_unique<PortsState>();
  // Only sidecars (restartPolicy Always) among the init containers run for the pod's lifetime
  // and so hold their ports, as upstream's GetHostPorts.
  for (const api::Container& c : pod.get().spec.init_containers) {
    if (c.restart_policy == "Always") CollectHostPorts(c, &data->ports);
  }
  for (const api::Container& c : pod.get().spec.containers) CollectHostPorts(c, &data->ports);
  if (data->ports.empty()) return {framework::Status::Skip(), {}};
  state.Write(StateKey(), std::move(data));
  return {};
}

framework::Status NodePorts::Filter(const framework::CycleState& state,
                                    const framework::PodInfo& /*pod*/,
                                    const framework::NodeInfo& node) const {
  const auto* data = state.Read<PortsState>(StateKey());
  if (data == nullptr) {
    return framework::Status(framework::Code::kError, "NodePorts: PreFilter state missing");
  }
  const framework::HostPorts& used = node.used_ports();
  if (used.empty()) return framework::Status::Success();
  for (const WantedPort& wanted : data->ports) {
    if (used.Conflicts(wanted.ip, wanted.protocol, wanted.port)) {
      return framework::Status::Unschedulable(kReason);
    }
  }
  return framework::Status::Success();
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> NewNodePorts(const config::PluginArgs& args,
                                                                const PluginHandle& /*handle*/) {
  if (auto status = helper::ExpectNoArgs(args, names::kNodePorts); !status.ok()) return status;
  return std::make_unique<NodePorts>();
}

}  // namespace kubesched::plugins
