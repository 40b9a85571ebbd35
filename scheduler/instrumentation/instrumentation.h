#pragma once

// Everything metrics needs around one Scheduler, for `run` and `simulate` alike: the families,
// the observer that feeds them (next to the mode's own observer), and the state read on scrape.
//
//   metrics::Instrumentation instrumentation(&clock, config);
//   deps.observer = &my_observer;
//   instrumentation.Instrument(deps);                 // before Scheduler::Create
//   instrumentation.state().AttachScheduler(scheduler.get());
//   ... serve instrumentation.collectables(), or ScrapeText() them ...
//   instrumentation.state().AttachScheduler(nullptr);  // before the scheduler goes

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "config/config.h"
#include "prometheus/collectable.h"
#include "scheduler/client/rest_client.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/instrumentation/metrics_observer.h"
#include "scheduler/instrumentation/state_collector.h"
#include "scheduler/metrics/process_collector.h"
#include "scheduler/metrics/scheduler_metrics.h"
#include "scheduler/util/clock.h"

namespace kubesched::metrics {

class Instrumentation {
 public:
  // `clock`: the scheduler's; must outlive this object.
  Instrumentation(const util::Clock* clock, const config::Configuration& config);
  Instrumentation(const Instrumentation&) = delete;
  Instrumentation& operator=(const Instrumentation&) = delete;

  // Sets deps.metrics, and deps.observer to one that hands every event to the observer it had
  // (the mode's own, which must outlive this object; may be null) and to the metrics. Once.
  void Instrument(scheduler::SchedulerDeps& deps);

  // Sets rest.on_request to count and time every request in rest_client_requests_total and
  // rest_client_request_duration_seconds, with `host` taken from rest.server (InvalidArgument if
  // that does not parse). Before the RestClient is created from `rest`.
  absl::Status InstrumentRestClient(client::RestConfig& rest);

  SchedulerMetrics& metrics() { return *metrics_; }
  StateCollector& state() { return *state_; }
  // What a scrape reads: the recorded families, the plugin timings, the state and the process.
  std::vector<std::shared_ptr<prometheus::Collectable>> collectables() const;

 private:
  std::unique_ptr<SchedulerMetrics> metrics_;
  std::shared_ptr<StateCollector> state_;
  std::shared_ptr<ProcessCollector> process_;
  MetricsObserver observer_;
  std::unique_ptr<ObserverFanout> fanout_;
};

}  // namespace kubesched::metrics
