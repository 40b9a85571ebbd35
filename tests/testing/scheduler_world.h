#pragma once

// The scheduler on the embedded cluster with a virtual clock and binds that run when the test
// drives them: the set-up the feature tests share. A test's world derives from it, adds its
// observer and helpers, and calls Start with the services it wants.

#include <catch2/catch.hpp>
#include <memory>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "config/config.h"
#include "scheduler/cluster/embedded_cluster.h"
#include "scheduler/core/bind_executor.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/simulate/simulation.h"
#include "scheduler/util/clock.h"

namespace kubesched::testing {

struct SchedulerWorld {
  cluster::EmbeddedCluster cluster;
  util::FakeClock clock{absl::FromUnixSeconds(1'700'000'000)};
  scheduler::DeferredBindExecutor binds;
  std::unique_ptr<scheduler::Scheduler> scheduler;

  // Creates the scheduler with `deps` (the observer, the threads, the services the test wants),
  // the world being its clock, binder and bind executor, and has the cluster's events delivered
  // to it, those of the objects already added included.
  void Start(const config::Configuration& config, scheduler::SchedulerDeps deps) {
    deps.clock = &clock;
    deps.binder = &cluster;
    deps.bind_executor = &binds;
    auto created = scheduler::Scheduler::Create(config, deps);
    INFO(created.status().message());
    REQUIRE(created.ok());
    scheduler = std::move(*created);
    cluster.Watch(scheduler.get());
    cluster.DeliverEvents();
  }
  void Add(const api::Object& object) {
    const absl::Status status = cluster.Create(object);
    INFO(status.message());
    REQUIRE(status.ok());
  }
  // Until nothing is left to do, the clock moving on to each next timer.
  void Run() { scheduler::DriveToQuiescence(cluster, *scheduler, binds, clock); }
};

}  // namespace kubesched::testing
