#pragma once

// Helpers shared by the plugin factories for unpacking config::PluginArgs.

#include <string>
#include <string_view>
#include <variant>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "config/plugin_args.h"
#include "scheduler/util/strings.h"

namespace kubesched::plugins::helper {

// InvalidArgument "<plugin>: <field>: <problem>", the one shape of every args error.
inline absl::Status ArgsError(std::string_view plugin, std::string_view field,
                              std::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat(util::Absl(plugin), ": ", util::Absl(field), ": ", util::Absl(problem)));
}

// The args of a plugin that takes `T`: defaults for std::monostate, the value when `args` holds a
// T, and InvalidArgument naming the plugin for any other args type.
template <typename T>
absl::StatusOr<T> ArgsAs(const config::PluginArgs& args, std::string_view plugin) {
  if (std::holds_alternative<std::monostate>(args)) return T{};
  if (const T* typed = std::get_if<T>(&args)) return *typed;
  return ArgsError(plugin, "args", "wrong args type for this plugin");
}

// OK for a plugin that takes no args (only std::monostate is accepted).
inline absl::Status ExpectNoArgs(const config::PluginArgs& args, std::string_view plugin) {
  if (std::holds_alternative<std::monostate>(args)) return absl::OkStatus();
  return ArgsError(plugin, "args", "this plugin takes no args");
}

}  // namespace kubesched::plugins::helper
