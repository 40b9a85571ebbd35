// Plugin args: DecodePluginArgs picks the decoder of the plugin's family (resource_args.cc,
// affinity_spread_args.cc, preemption_args.cc, volume_args.cc); the defaults when a plugin has no
// args.

#include "config/plugin_args.h"

#include <exception>
#include <string>
#include <variant>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "config/decode_internal.h"
#include "config/plugin_args_internal.h"
#include "config/yaml_reader.h"
#include "plugins/names.h"
#include "scheduler/util/strings.h"

namespace kubesched::config {
namespace {

namespace names = plugins::names;
using util::Absl;
using yaml::HasValue;

absl::StatusOr<PluginArgs> DecodeNoArgs(const YAML::Node& node, std::string_view path) {
  // `args: {}` is what tools emit for "nothing"; anything more would be silently ignored.
  if (HasValue(node) && !(node.IsMap() && node.size() == 0)) {
    return yaml::PathError(path, "must be empty; the plugin takes no args");
  }
  return PluginArgs(std::monostate());
}

}  // namespace

absl::StatusOr<PluginArgs> DecodePluginArgs(std::string_view plugin_name, const YAML::Node& args,
                                            std::string_view path) {
  if (auto status = CheckPluginName(plugin_name); !status.ok()) {
    return yaml::PathError(path, util::Std(status.message()));
  }
  try {
    if (plugin_name == names::kNodeResourcesFit) return DecodeFitArgs(args, path);
    if (plugin_name == names::kNodeResourcesBalancedAllocation) {
      return DecodeBalancedAllocationArgs(args, path);
    }
    if (plugin_name == names::kNodeAffinity) return DecodeNodeAffinityArgs(args, path);
    if (plugin_name == names::kInterPodAffinity) return DecodeInterPodAffinityArgs(args, path);
    if (plugin_name == names::kPodTopologySpread) return DecodePodTopologySpreadArgs(args, path);
    if (plugin_name == names::kMostAvailable) return DecodeMostAvailableArgs(args, path);
    if (plugin_name == names::kDefaultPreemption) return DecodeDefaultPreemptionArgs(args, path);
    if (plugin_name == names::kVolumeBinding) return DecodeVolumeBindingArgs(args, path);
    if (plugin_name == names::kDynamicResources) return DecodeDynamicResourcesArgs(args, path);
    return DecodeNoArgs(args, path);
  } catch (const std::exception& e) {
    // yaml-cpp throws on misuse; no exception may leave config/.
    return yaml::PathError(path, absl::StrCat("cannot decode: ", e.what()));
  }
}

absl::StatusOr<PluginArgs> ParsePluginArgs(std::string_view plugin_name, std::string_view text) {
  if (auto status = CheckPluginName(plugin_name); !status.ok()) return status;
  const auto with_plugin = [plugin_name](const absl::Status& status) {
    return absl::InvalidArgumentError(absl::StrCat(Absl(plugin_name), ": ", status.message()));
  };
  absl::StatusOr<YAML::Node> node = yaml::ParseDocument(text);
  if (!node.ok()) return with_plugin(node.status());
  absl::StatusOr<PluginArgs> args = DecodePluginArgs(plugin_name, *node, "");
  if (!args.ok()) return with_plugin(args.status());
  return args;
}

PluginArgs DefaultPluginArgs(std::string_view plugin_name) {
  if (plugin_name == names::kNodeResourcesFit) return NodeResourcesFitArgs();
  if (plugin_name == names::kNodeResourcesBalancedAllocation) return BalancedAllocationArgs();
  if (plugin_name == names::kNodeAffinity) return NodeAffinityArgs();
  if (plugin_name == names::kInterPodAffinity) return InterPodAffinityArgs();
  if (plugin_name == names::kPodTopologySpread) return PodTopologySpreadArgs();
  if (plugin_name == names::kMostAvailable) return MostAvailableArgs();
  if (plugin_name == names::kDefaultPreemption) return DefaultPreemptionArgs();
  if (plugin_name == names::kVolumeBinding) return VolumeBindingArgs();
  if (plugin_name == names::kDynamicResources) return DynamicResourcesArgs();
  return std::monostate();
}

}  // namespace kubesched::config
