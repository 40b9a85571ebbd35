#pragma once

// Internal to scheduler/runtime/: what the extension-point runners
// (scheduling_phases.cc, binding_phases.cc) share. The runner, not the plugin,
// stamps a verdict with its plugin's name (Stamp); a whole extension point is
// observed into the profile's metrics (ObservePoint) and each plugin call is
// timed when the cycle is sampled (TimePlugin). Not part of the framework's
// contract.
//
// Everything here is inline so that it costs the per-node paths (Filter, Score)
// nothing over writing it out at each call. Stateless: safe from any thread the
// metrics objects allow.

#include <chrono>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#include "scheduler/framework/plugin.h"
#include "scheduler/metrics/extension_point.h"
#include "scheduler/metrics/plugin_timings.h"
#include "scheduler/metrics/scheduler_metrics.h"
#include "scheduler/runtime/framework.h"

namespace kubesched::runtime::internal {

// The runner names the plugin in its verdict; plugins do not name themselves.
inline framework::Status Stamp(framework::Status status, std::string_view plugin) {
  status.set_plugin(plugin);
  return status;
}

using SteadyClock = std::chrono::steady_clock;

// Time since `start`, for the plugin timings (ns) and the extension-point
// histograms (s).
inline int64_t NanosecondsSince(SteadyClock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(SteadyClock::now() - start).count();
}

inline double SecondsSince(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// The code a runner's result is observed under.
inline framework::Code CodeOf(const framework::Status& status) { return status.code(); }
inline framework::Code CodeOf(const framework::PreFilterOutcome& outcome) {
  return outcome.status.code();
}
inline framework::Code CodeOf(const framework::PostFilterOutcome& outcome) {
  return outcome.status.code();
}
inline framework::Code CodeOf(const PreFilterSummary& summary) { return summary.status.code(); }
inline framework::Code CodeOf(const PreScoreSummary& summary) { return summary.status.code(); }

// Runs one extension point's `plugins` (`run`), observing the whole as upstream
// does when the profile has metrics. `run` returns a Status-like result, or
// nothing (always Success). A point without plugins takes no time: it is
// observed as 0 s without reading the clock (each read costs ~20 ns, and
// several points are empty in most profiles).
template <typename Run>
auto ObservePoint(metrics::ProfileMetrics* metrics, metrics::ExtensionPoint point, size_t plugins,
                  Run&& run) {
  using Result = decltype(run());
  if (metrics == nullptr) return run();
  const bool timed = plugins > 0;
  const auto start = timed ? SteadyClock::now() : SteadyClock::time_point();
  const auto seconds = [&] { return timed ? SecondsSince(start) : 0.0; };
  if constexpr (std::is_void_v<Result>) {
    run();
    metrics->ObserveExtensionPoint(point, framework::Code::kSuccess, seconds());
  } else {
    Result result = run();
    metrics->ObserveExtensionPoint(point, CodeOf(result), seconds());
    return result;
  }
}

// One plugin call (`call`), timed into `slot` when the cycle is sampled.
template <typename Call>
auto TimePlugin(metrics::PluginTimings* timings, int slot, const framework::CycleState& state,
                Call&& call) {
  using Result = decltype(call());
  if (timings == nullptr || !state.record_plugin_metrics()) return call();
  const auto start = SteadyClock::now();
  if constexpr (std::is_void_v<Result>) {
    call();
    timings->Observe(slot, framework::Code::kSuccess, NanosecondsSince(start));
  } else {
    Result result = call();
    timings->Observe(slot, CodeOf(result), NanosecondsSince(start));
    return result;
  }
}

}  // namespace kubesched::runtime::internal
