#pragma once

// The embedded cluster with the real scheduler, instrumented as `simulate --metrics` is, for the
// feature tests that read the metrics: what a scrape would show after the pods added are run.

#include <catch2/catch.hpp>
#include <memory>

#include "absl/time/time.h"
#include "config/config.h"
#include "scheduler/cluster/embedded_cluster.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/instrumentation/instrumentation.h"
#include "scheduler/metrics/metrics_server.h"
#include "scheduler/simulate/simulation.h"
#include "scheduler/util/clock.h"
#include "tests/testing/scrape.h"

namespace kubesched::metrics {

class InstrumentedWorld {
 public:
  // `observer` (may be null) sees what the scheduler does besides the metrics; it must outlive
  // the world.
  explicit InstrumentedWorld(config::Configuration config,
                             scheduler::SchedulingObserver* observer = nullptr)
      : config_(std::move(config)), instrumentation_(&clock, config_) {
    scheduler::SchedulerDeps deps{&clock, &cluster, &binds, observer, /*seed=*/1, /*threads=*/2};
    deps.deleter = &cluster;
    instrumentation_.Instrument(deps);
    auto created = scheduler::Scheduler::Create(config_, deps);
    REQUIRE(created.ok());
    scheduler = std::move(*created);
    instrumentation_.state().AttachScheduler(scheduler.get());
    cluster.Watch(scheduler.get());
    cluster.DeliverEvents();
  }
  ~InstrumentedWorld() { instrumentation_.state().AttachScheduler(nullptr); }
  InstrumentedWorld(const InstrumentedWorld&) = delete;
  InstrumentedWorld& operator=(const InstrumentedWorld&) = delete;

  void Add(const api::Object& object) { REQUIRE(cluster.Create(object).ok()); }
  void Run() { scheduler::DriveToQuiescence(cluster, *scheduler, binds, clock); }
  testing::Scrape Metrics() const {
    auto scrape = testing::Scrape::Parse(ScrapeText(instrumentation_.collectables()));
    REQUIRE(scrape.ok());
    return *scrape;
  }

  cluster::EmbeddedCluster cluster;
  util::FakeClock clock{absl::FromUnixSeconds(1'700'000'000)};
  scheduler::DeferredBindExecutor binds;
  std::unique_ptr<scheduler::Scheduler> scheduler;

 private:
  const config::Configuration config_;
  Instrumentation instrumentation_;
};

}  // namespace kubesched::metrics
