#pragma once

// The scheduler on the embedded cluster (which plays the ResourceClaim controller) with a virtual
// clock: what the DRA feature tests drive.

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>

#include "config/config.h"
#include "scheduler/api/decode.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/simulate/simulation.h"
#include "tests/testing/scheduler_world.h"

namespace kubesched::scheduler::dra_testing {

// What the tests read: the last FailedScheduling message of each pod still pending and the node
// of each pod bound.
class Observer : public SchedulingObserver {
 public:
  void OnUnschedulable(const framework::PodInfo& pod, const std::string& message, int) override {
    messages[pod.get().meta.name] = message;
  }
  void OnBound(const framework::PodInfo& pod, const std::string& node, int) override {
    bound[pod.get().meta.name] = node;
    messages.erase(pod.get().meta.name);
  }
  std::map<std::string, std::string> messages, bound;
};

// The cluster writes the claims' status (allocation, reservedFor) and deletes preemption victims.
struct World : testing::SchedulerWorld {
  Observer observer;

  explicit World(const std::string& yaml,
                 const config::Configuration& config = config::DefaultConfiguration()) {
    Add(yaml);
    SchedulerDeps deps;
    deps.observer = &observer;
    deps.threads = 2;
    deps.claim_writer = &cluster;
    deps.deleter = &cluster;
    Start(config, deps);
  }
  using SchedulerWorld::Add;
  void Add(const std::string& yaml) {
    auto decoded = api::DecodeObjects(yaml, "test");
    REQUIRE(decoded.ok());
    INFO((decoded->problems.empty() ? std::string() : decoded->problems.front().ToString()));
    REQUIRE(decoded->problems.empty());
    for (const api::Object& object : decoded->objects) Add(object);
  }

  // The claim of the pod's entry `entry` in spec.resourceClaims: the one its status names for a
  // template claim, else the one the entry names; null when there is none yet.
  std::shared_ptr<const api::ResourceClaim> ClaimOf(const std::string& pod,
                                                    const std::string& entry) {
    const auto stored = cluster.GetPod("default/" + pod);
    REQUIRE(stored != nullptr);
    for (const api::PodResourceClaimStatus& status : stored->status.resource_claim_statuses) {
      if (status.name == entry)
        return cluster.GetResourceClaim("default/" + status.resource_claim_name);
    }
    for (const api::PodResourceClaim& claim : stored->spec.resource_claims) {
      if (claim.name == entry)
        return cluster.GetResourceClaim("default/" + claim.resource_claim_name);
    }
    return nullptr;
  }
};

}  // namespace kubesched::scheduler::dra_testing
