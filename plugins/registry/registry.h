#pragma once

// The one map from plugin name to factory. Every plugin in the binary is listed in registry.cc;
// nothing registers itself.

#include <functional>
#include <memory>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "config/plugin_args.h"
#include "plugins/plugin_handle.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::plugins {

// Builds a plugin from its args (std::monostate = defaults). Wrong or invalid args are an
// InvalidArgument error naming the plugin and the field.
using PluginFactory = std::function<absl::StatusOr<std::unique_ptr<framework::Plugin>>(
    const config::PluginArgs& args, const PluginHandle& handle)>;

using RegistryMap = absl::flat_hash_map<std::string_view, PluginFactory>;

// Every plugin in the binary.
const RegistryMap& Registry();

}  // namespace kubesched::plugins
