#pragma once

// The decoders of each plugin's args, by plugin family; DecodePluginArgs (plugin_args.cc) picks
// one by plugin name. Each takes the plugin's `args` node, checks its fields strictly and
// validates the values; errors name the field under `path`. They may throw on yaml-cpp misuse:
// DecodePluginArgs turns that into a Status. Internal to config/.

#include <yaml-cpp/yaml.h>

#include <string_view>

#include "absl/status/statusor.h"
#include "config/plugin_args.h"

namespace kubesched::config {

// resource_args.cc: the plugins that weigh node resources.
absl::StatusOr<PluginArgs> DecodeFitArgs(const YAML::Node& node, std::string_view path);
absl::StatusOr<PluginArgs> DecodeBalancedAllocationArgs(const YAML::Node& node,
                                                        std::string_view path);
absl::StatusOr<PluginArgs> DecodeMostAvailableArgs(const YAML::Node& node, std::string_view path);

// affinity_spread_args.cc: the plugins that place pods relative to nodes and other pods.
absl::StatusOr<PluginArgs> DecodeNodeAffinityArgs(const YAML::Node& node, std::string_view path);
absl::StatusOr<PluginArgs> DecodeInterPodAffinityArgs(const YAML::Node& node,
                                                      std::string_view path);
absl::StatusOr<PluginArgs> DecodePodTopologySpreadArgs(const YAML::Node& node,
                                                       std::string_view path);

// preemption_args.cc
absl::StatusOr<PluginArgs> DecodeDefaultPreemptionArgs(const YAML::Node& node,
                                                       std::string_view path);

// volume_args.cc: the plugins that bind what a pod uses besides room (volumes, devices).
absl::StatusOr<PluginArgs> DecodeVolumeBindingArgs(const YAML::Node& node, std::string_view path);
absl::StatusOr<PluginArgs> DecodeDynamicResourcesArgs(const YAML::Node& node,
                                                      std::string_view path);

}  // namespace kubesched::config
