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

#include "config/config.h"
#include "prometheus/collectable.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/instrumentation/metrics_observer.h"
#include "scheduler/instrumentation/state_collector.h"
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

  SchedulerMetrics& metrics() { return *metrics_; }
  StateCollector& state() { return *state_; }
  // What a scrape reads: the recorded families, the plugin timings and the state.
  std::vector<std::shared_ptr<prometheus::Collectable>> collectables() const;

 private:
  std::unique_ptr<SchedulerMetrics> metrics_;
  std::shared_ptr<StateCollector> state_;
  MetricsObserver observer_;
  std::unique_ptr<ObserverFanout> fanout_;
};

}  // namespace kubesched::metrics
