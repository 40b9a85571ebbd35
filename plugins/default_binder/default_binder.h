#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "config/plugin_args.h"
#include "plugins/plugin_handle.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::plugins {

// Upstream's DefaultBinder: binds through the scheduler's PodBinder (a POST of
// pods/<name>/binding, or the embedded cluster). Runs on a bind worker; holds no state of its own,
// so concurrent binds of different pods are safe as far as the binder is.
class DefaultBinder final : public framework::BindPlugin {
 public:
  // `binder` may be null (e.g. a profile only used to explain): Bind then returns Error.
  explicit DefaultBinder(framework::PodBinder* binder) : binder_(binder) {}

  std::string_view Name() const override;
  // The binder's status (Error with its reason on failure); Error when there is no binder.
  framework::Status Bind(framework::CycleState& state, const framework::PodInfo& pod,
                         std::string_view node_name) override;

 private:
  framework::PodBinder* binder_;  // not owned; outlives the plugin
};

// Takes no args; uses handle.binder.
absl::StatusOr<std::unique_ptr<framework::Plugin>> NewDefaultBinder(const config::PluginArgs& args,
                                                                    const PluginHandle& handle);

}  // namespace kubesched::plugins
