#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "config/plugin_args.h"
#include "plugins/plugin_handle.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::plugins {

// Upstream's SchedulingGates: a pod that carries spec.schedulingGates is not ready to be
// scheduled. PreEnqueue keeps it out of activeQ, never tried, until an update of the pod removes
// its last gate; the queue moves it then. Stateless; PreEnqueue is safe from any thread.
class SchedulingGates final : public framework::PreEnqueuePlugin {
 public:
  static constexpr std::string_view kReasonPrefix = "waiting for scheduling gates: ";

  std::string_view Name() const override;
  // Success for a pod without gates (one empty-vector check: the common case). Otherwise
  // UnschedulableAndUnresolvable "waiting for scheduling gates: [g1 g2]": the gate names in spec
  // order, printed as Go's %v prints a []string, the message upstream gives.
  framework::Status PreEnqueue(const framework::PodInfo& pod) const override;
  // No cluster event can lift a gate; only an update of the pod itself, which the queue acts on
  // directly (upstream registers no event either, without queueing hints).
  framework::ClusterEventSet EventsToRegister() const override { return 0; }
};

// Takes no args.
absl::StatusOr<std::unique_ptr<framework::Plugin>> NewSchedulingGates(
    const config::PluginArgs& args, const PluginHandle& handle);

}  // namespace kubesched::plugins
