#include "plugins/inter_pod_affinity/inter_pod_affinity.h"

#include <variant>

#include "absl/status/status.h"
#include "plugins/names.h"

namespace kubesched::plugins {

std::string_view InterPodAffinity::Name() const { return names::kInterPodAffinity; }

absl::StatusOr<std::unique_ptr<framework::Plugin>> NewInterPodAffinity(
    const config::PluginArgs& args, const PluginHandle& /*handle*/) {
  config::InterPodAffinityArgs parsed;
  if (const auto* given = std::get_if<config::InterPodAffinityArgs>(&args)) {
    parsed = *given;
  } else if (!std::holds_alternative<std::monostate>(args)) {
    return absl::InvalidArgumentError("InterPodAffinity: args are not InterPodAffinityArgs");
  }
  // Args usually arrive validated by config/, but a factory must not trust its caller.
  if (parsed.hard_pod_affinity_weight < 0 || parsed.hard_pod_affinity_weight > 100) {
    return absl::InvalidArgumentError("InterPodAffinity: hardPodAffinityWeight: must be in 0..100");
  }
  return std::make_unique<InterPodAffinity>(parsed);
}

}  // namespace kubesched::plugins
