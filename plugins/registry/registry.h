#pragma once

// The one map from plugin name to factory. Every plugin in the binary is listed in registry.cc;
// nothing registers itself.

#include <functional>
#include <memory>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "config/plugin_args.h"
#include "scheduler/framework/plugin.h"
#include "scheduler/quota/quota_tracker.h"

namespace kubesched::metrics {
class SchedulerMetrics;
}  // namespace kubesched::metrics

namespace kubesched::util {
class WorkerPool;
}  // namespace kubesched::util

namespace kubesched::plugins {

// What a plugin may be handed at construction besides its args.
struct PluginHandle {
  framework::PodBinder* binder = nullptr;  // DefaultBinder only
  quota::QuotaTracker* quota = nullptr;    // QueueQuota only
  // Where the framework runtime records extension-point and plugin timings; null = none.
  metrics::SchedulerMetrics* metrics = nullptr;
  // The scheduler's Filter/Score threads, for a PreFilter that counts across every node
  // (PodTopologySpread), as upstream's Parallelizer. PreFilter runs on the scheduling thread,
  // the pool's only caller, and never inside a pool job. Null: run inline.
  util::WorkerPool* pool = nullptr;
};

// Builds a plugin from its args (std::monostate = defaults). Wrong or invalid args are an
// InvalidArgument error naming the plugin and the field.
using PluginFactory = std::function<absl::StatusOr<std::unique_ptr<framework::Plugin>>(
    const config::PluginArgs& args, const PluginHandle& handle)>;

using RegistryMap = absl::flat_hash_map<std::string_view, PluginFactory>;

// Every plugin in the binary.
const RegistryMap& Registry();

}  // namespace kubesched::plugins
