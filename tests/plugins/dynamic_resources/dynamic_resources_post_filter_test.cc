// DynamicResources after a failed Filter phase and a failed binding: upstream's PostFilter, which
// deallocates an allocated claim whose node the pod cannot go to (the write asked of the
// scheduler, not made by the plugin), and Unreserve after PreBind, which takes the pod out of the
// reservedFor of the claims PreBind reserved.

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "plugins/dynamic_resources/dynamic_resources.h"
#include "plugins/names.h"
#include "tests/plugins/dynamic_resources/dra_world.h"

namespace kubesched {
namespace {

using framework::CycleState;
using framework::Status;
using plugin_testing::AllocatedOn;
using plugin_testing::ClaimPod;
using plugin_testing::DraWorld;
using plugin_testing::GpuClaim;

// Two nodes with two A100s each.
std::string TwoNodes() { return plugin_testing::TwoGpuNodes("A100", "A100"); }

// The plugin's PostFilter needs nothing of its host.
class NoHost final : public framework::PostFilterHost {
 public:
  Status RunFilters(const CycleState& /*state*/, const framework::PodInfo& /*pod*/,
                    const framework::NodeInfo& /*what_if*/,
                    const framework::NodeInfo& /*node*/) const override {
    return Status::Error("not expected");
  }
};

// The Filter phase as the framework hands it to PostFilter: every node rejected, by this plugin
// when it rejects the node (its status stamped with its name), otherwise by another plugin (as
// when node-1 has too little cpu for the pod).
std::vector<framework::NodeStatus> EveryNodeRejected(DraWorld& world, const framework::PodInfo& pod,
                                                     CycleState& state) {
  std::vector<framework::NodeStatus> rejected;
  REQUIRE(world.Judge(pod, state).pre_filter.IsSuccess());
  for (const framework::NodeInfo* node : world.Snapshot().nodes()) {
    Status status = world.plugin().Filter(state, pod, *node);
    if (status.IsSuccess()) {
      status = Status::Unschedulable("Insufficient cpu");
      status.set_plugin("NodeResourcesFit");
    } else {
      status.set_plugin(plugins::names::kDynamicResources);
    }
    rejected.push_back({node, status});
  }
  return rejected;
}

framework::PostFilterOutcome RunPostFilter(DraWorld& world, const framework::PodInfo& pod,
                                           CycleState& state) {
  const std::vector<framework::NodeStatus> rejected = EveryNodeRejected(world, pod, state);
  return world.plugin().PostFilter(state, pod, world.Snapshot(), rejected, NoHost());
}

const api::ResourceClaim& Cached(DraWorld& world, const std::string& name) {
  const api::ResourceClaim* claim = world.Snapshot().dra().Claim("default", name);
  REQUIRE(claim != nullptr);
  return *claim;
}

TEST_CASE(
    "PostFilter deallocates a claim allocated where the pod cannot go, once it runs the write",
    "[dra]") {
  const std::string by_pod = "[{resource: pods, name: p, uid: p-uid}]";
  const std::string reserved = GENERATE_COPY(std::string("[]"), by_pod);
  DraWorld world(TwoNodes() + GpuClaim("mine", 1, "", AllocatedOn("node-1", "gpu-0", reserved)));
  const framework::PodInfoPtr pod = ClaimPod("p", {{"gpu", "claim:mine"}});
  CycleState state;
  framework::PostFilterOutcome outcome = RunPostFilter(world, *pod, state);
  CHECK(outcome.status.code() == framework::Code::kUnschedulable);
  CHECK(outcome.status.Message() == "deallocation of ResourceClaim completed");
  REQUIRE(outcome.writes.size() == 1);
  // Nothing is written until the scheduler runs the write (off the scheduling thread).
  CHECK(world.writer().writes().empty());
  CHECK(Cached(world, "mine").allocation.has_value());

  outcome.writes[0]();
  CHECK(world.writer().writes() == std::vector<std::string>{"mine deallocated"});
  // The cache has the server's answer before the informers bring it: the next attempt may
  // allocate the claim on either node.
  CHECK_FALSE(Cached(world, "mine").allocation.has_value());
  CHECK(Cached(world, "mine").reserved_for.empty());
  CycleState next;
  CHECK(world.Judge(*pod, next).nodes ==
        std::map<std::string, std::string>{{"node-1", "pass"}, {"node-2", "pass"}});
}

TEST_CASE("PostFilter leaves claims alone that others use or that do not keep the pod away",
          "[dra]") {
  const std::string others = "[{resource: pods, name: q, uid: q-uid}]";
  DraWorld world(TwoNodes() + GpuClaim("shared", 1, "", AllocatedOn("node-1", "gpu-0", others)) +
                 GpuClaim("fresh", 1));
  CycleState state;
  // Reserved for another pod: deallocating it would take its devices from under that pod.
  framework::PostFilterOutcome outcome =
      RunPostFilter(world, *ClaimPod("p", {{"gpu", "claim:shared"}}), state);
  CHECK(outcome.status.code() == framework::Code::kUnschedulable);
  CHECK(outcome.status.Message() == "still not schedulable");
  CHECK(outcome.writes.empty());

  // Not allocated yet: no node was refused for the claim's sake.
  CycleState fresh_state;
  outcome = RunPostFilter(world, *ClaimPod("p", {{"gpu", "claim:fresh"}}), fresh_state);
  CHECK(outcome.status.Message() == "still not schedulable");
  CHECK(outcome.writes.empty());

  // A pod without claims gets nothing from this plugin; one whose claims are not to be had gets
  // upstream's answer.
  CycleState plain_state;
  const framework::PodInfoPtr plain = ClaimPod("plain", {});
  REQUIRE(world.plugin().PreFilter(plain_state, *plain, world.Snapshot()).status.IsSkip());
  CHECK(world.plugin()
            .PostFilter(plain_state, *plain, world.Snapshot(), {}, NoHost())
            .status.IsSkip());
  CycleState missing_state;
  const framework::PodInfoPtr missing = ClaimPod("p", {{"gpu", "claim:nowhere"}});
  REQUIRE_FALSE(
      world.plugin().PreFilter(missing_state, *missing, world.Snapshot()).status.IsSuccess());
  outcome = world.plugin().PostFilter(missing_state, *missing, world.Snapshot(), {}, NoHost());
  CHECK(outcome.status.Message() == "no new claims to deallocate");
  CHECK(world.writer().writes().empty());
}

TEST_CASE("a dry run says what PostFilter would do and asks for no write", "[dra]") {
  DraWorld world(TwoNodes() + GpuClaim("mine", 1, "", AllocatedOn("node-1", "gpu-0")));
  const framework::PodInfoPtr pod = ClaimPod("p", {{"gpu", "claim:mine"}});
  CycleState state;
  state.set_dry_run(true);
  const framework::PostFilterOutcome outcome = RunPostFilter(world, *pod, state);
  CHECK(outcome.status.Message() == "a ResourceClaim would be deallocated");
  CHECK(outcome.writes.empty());
}

TEST_CASE("a deallocation the API server refuses leaves the claim as it was", "[dra]") {
  DraWorld world(TwoNodes() + GpuClaim("mine", 1, "", AllocatedOn("node-1", "gpu-0")));
  const framework::PodInfoPtr pod = ClaimPod("p", {{"gpu", "claim:mine"}});
  CycleState state;
  framework::PostFilterOutcome outcome = RunPostFilter(world, *pod, state);
  REQUIRE(outcome.writes.size() == 1);
  world.writer().FailWith(absl::AbortedError("the object has been modified"));
  outcome.writes[0]();
  CHECK(world.writer().writes() == std::vector<std::string>{"mine deallocated"});
  CHECK(Cached(world, "mine").allocation.has_value());
  CHECK(world.cache().AssumedClaimCount() == 0);
}

TEST_CASE("a binding that fails after PreBind takes the pod out of the claims it reserved",
          "[dra]") {
  const std::string others = "[{resource: pods, name: q, uid: q-uid}]";
  DraWorld world(TwoNodes() + GpuClaim("mine", 1) +
                 GpuClaim("shared", 1, "", AllocatedOn("node-2", "gpu-1", others)));
  const framework::PodInfoPtr pod = ClaimPod("p", {{"a", "claim:mine"}, {"b", "claim:shared"}});
  CycleState state;
  REQUIRE(world.Judge(*pod, state).pre_filter.IsSuccess());
  REQUIRE(world.plugin().Reserve(state, *pod, "node-2").IsSuccess());
  REQUIRE(world.plugin().PreBind(state, *pod, "node-2").IsSuccess());
  world.plugin().Unreserve(state, *pod, "node-2");
  CHECK(world.writer().writes() == std::vector<std::string>{"mine allocated reserved for p",
                                                            "shared reserved for p",
                                                            "mine no longer reserved for p-uid",
                                                            "shared no longer reserved for p-uid"});
  // The allocations stay (the pod's next attempt may use them); the reservations are gone, and
  // the other pod's stays.
  CHECK(Cached(world, "mine").allocation.has_value());
  CHECK(Cached(world, "mine").reserved_for.empty());
  REQUIRE(Cached(world, "shared").reserved_for.size() == 1);
  CHECK(Cached(world, "shared").reserved_for[0].uid == "q-uid");
  // Unreserve again (it is idempotent) writes nothing more.
  world.plugin().Unreserve(state, *pod, "node-2");
  CHECK(world.writer().writes().size() == 4);
}

TEST_CASE("a reservation that cannot be taken back is left for the pod's next attempt", "[dra]") {
  DraWorld world(TwoNodes() + GpuClaim("mine", 1));
  const framework::PodInfoPtr pod = ClaimPod("p", {{"gpu", "claim:mine"}});
  CycleState state;
  REQUIRE(world.Judge(*pod, state).pre_filter.IsSuccess());
  REQUIRE(world.plugin().Reserve(state, *pod, "node-1").IsSuccess());
  REQUIRE(world.plugin().PreBind(state, *pod, "node-1").IsSuccess());
  world.writer().FailWith(absl::UnavailableError("connection refused"));
  world.plugin().Unreserve(state, *pod, "node-1");
  REQUIRE(Cached(world, "mine").reserved_for.size() == 1);
  CHECK(Cached(world, "mine").reserved_for[0].uid == "p-uid");
  // The next attempt uses the claim as it is: reserved for the pod, on its node.
  CycleState next;
  CHECK(world.Judge(*pod, next).nodes ==
        std::map<std::string, std::string>{{"node-1", "pass"},
                                           {"node-2", "resourceclaim not available on the node"}});
}

}  // namespace
}  // namespace kubesched
