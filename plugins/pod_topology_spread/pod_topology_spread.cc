#include "plugins/pod_topology_spread/pod_topology_spread.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "plugins/helper/args.h"
#include "plugins/names.h"

namespace kubesched::plugins {
namespace {

api::TopologySpreadConstraint SoftConstraint(std::string_view key, int32_t max_skew) {
  api::TopologySpreadConstraint c;
  c.max_skew = max_skew;
  c.topology_key = api::Intern(key);
  c.when_unsatisfiable = api::UnsatisfiableConstraintAction::kScheduleAnyway;
  return c;
}

// The checks config/ makes when decoding (upstream's ValidatePodTopologySpreadArgs): args built
// in code reach the factory without passing config/.
absl::Status ValidateArgs(const config::PodTopologySpreadArgs& args) {
  const auto error = [](std::string_view field, std::string_view problem) {
    return helper::ArgsError(names::kPodTopologySpread, field, problem);
  };
  if (args.defaulting_type == config::SpreadDefaultingType::kSystem &&
      !args.default_constraints.empty()) {
    return error("defaultingType", "must be List when defaultConstraints are not empty");
  }
  const auto& constraints = args.default_constraints;
  for (size_t i = 0; i < constraints.size(); ++i) {
    const std::string path = absl::StrCat("defaultConstraints[", i, "]");
    const api::TopologySpreadConstraint& c = constraints[i];
    if (c.max_skew <= 0) return error(path + ".maxSkew", "must be greater than zero");
    if (!api::IsValidLabelKey(api::SymbolText(c.topology_key))) {
      return error(path + ".topologyKey", "must be a valid label key");
    }
    if (c.label_selector.has_value()) {
      return error(path + ".labelSelector", "must not be set; the selector is deduced per pod");
    }
    for (size_t j = 0; j < i; ++j) {
      if (constraints[j].topology_key == c.topology_key &&
          constraints[j].when_unsatisfiable == c.when_unsatisfiable) {
        return error(path, "duplicate {topologyKey, whenUnsatisfiable}");
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::vector<api::TopologySpreadConstraint> SystemDefaultSpreadConstraints() {
  return {SoftConstraint("kubernetes.io/hostname", 3),
          SoftConstraint("topology.kubernetes.io/zone", 5)};
}

PodTopologySpread::PodTopologySpread(const config::PodTopologySpreadArgs& args,
                                     util::WorkerPool* pool)
    : pool_(pool) {
  if (args.defaulting_type == config::SpreadDefaultingType::kSystem) {
    default_constraints_ = SystemDefaultSpreadConstraints();
    system_defaulted_ = true;
  } else {
    default_constraints_ = args.default_constraints;
  }
}

std::string_view PodTopologySpread::Name() const { return names::kPodTopologySpread; }

absl::StatusOr<std::unique_ptr<framework::Plugin>> NewPodTopologySpread(
    const config::PluginArgs& args, const PluginHandle& handle) {
  auto typed = helper::ArgsAs<config::PodTopologySpreadArgs>(args, names::kPodTopologySpread);
  if (!typed.ok()) return typed.status();
  if (auto status = ValidateArgs(*typed); !status.ok()) return status;
  return std::make_unique<PodTopologySpread>(*typed, handle.pool);
}

}  // namespace kubesched::plugins
