// DynamicResources on a real cache: which nodes a pod's claims fit (devices by node, by node
// selector, for all nodes; taken devices; shared claims), upstream's messages for claims that are
// missing or unusable, and the cycle from Reserve (assumed allocations) to PreBind (the write).

#include "plugins/dynamic_resources/dynamic_resources.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "scheduler/framework/picked_devices.h"
#include "tests/plugins/dynamic_resources/dra_world.h"
#include "tests/plugins/plugin_fixture.h"

namespace kubesched {
namespace {

using framework::CycleState;
using framework::Status;
using plugin_testing::AllocatedOn;
using plugin_testing::ClaimPod;
using plugin_testing::DraNode;
using plugin_testing::DraWorld;
using plugin_testing::GpuClaim;
using plugin_testing::GpuClass;
using plugin_testing::GpuSlice;

// Two nodes with two gpus each: A100s on node-1, H100s on node-2.
std::string TwoNodes() { return plugin_testing::TwoGpuNodes("A100", "H100"); }

std::map<std::string, std::string> Nodes(const std::string& one, const std::string& two) {
  return {{"node-1", one}, {"node-2", two}};
}

constexpr char kCannot[] = "cannot allocate all claims";

TEST_CASE("a pod without claims is let through and skipped at once", "[dra]") {
  DraWorld world(TwoNodes());
  const framework::PodInfoPtr pod = ClaimPod("plain", {});
  CHECK(world.plugin().PreEnqueue(*pod).IsSuccess());
  CycleState state;
  CHECK(world.plugin().PreFilter(state, *pod, world.Snapshot()).status.IsSkip());
  CHECK(world.plugin().Reserve(state, *pod, "node-1").IsSuccess());
  CHECK(world.plugin().PreBind(state, *pod, "node-1").IsSuccess());
  CHECK(world.writer().writes().empty());
  CHECK(world.cache().AssumedClaimCount() == 0);
}

TEST_CASE("a claim fits the nodes whose devices its selectors match", "[dra]") {
  DraWorld world(TwoNodes() + GpuClaim("a100", 1, "A100") + GpuClaim("two-h100", 2, "H100") +
                 GpuClaim("three", 3));
  CHECK(world.Judge(*ClaimPod("p", {{"gpu", "claim:a100"}})).nodes == Nodes("pass", kCannot));
  CHECK(world.Judge(*ClaimPod("p", {{"gpu", "claim:two-h100"}})).nodes == Nodes(kCannot, "pass"));
  CHECK(world.Judge(*ClaimPod("p", {{"gpu", "claim:three"}})).nodes == Nodes(kCannot, kCannot));
  // Two entries naming one claim ask for its devices once.
  CHECK(world.Judge(*ClaimPod("p", {{"a", "claim:two-h100"}, {"b", "claim:two-h100"}})).nodes ==
        Nodes(kCannot, "pass"));
  // Two claims of one pod get different devices of one node.
  CHECK(world.Judge(*ClaimPod("p", {{"a", "claim:a100"}, {"b", "claim:three"}})).nodes ==
        Nodes(kCannot, kCannot));
}

TEST_CASE("claims that are missing or unusable keep the pod pending with upstream's message",
          "[dra]") {
  DraWorld world(
      TwoNodes() + GpuClaim("deleting", 1, "", "", "deletionTimestamp: '2026-01-01T00:00:00Z'") +
      GpuClaim("not-mine", 1, "", "",
               "ownerReferences: [{apiVersion: v1, kind: Pod, name: other, uid: other-uid, "
               "controller: true}]") +
      "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: "
      "no-class, namespace: default}\nspec: {devices: {requests: [{name: gpu, exactly: "
      "{deviceClassName: nope}}]}}\n");
  struct Case {
    const char* name;
    framework::PodInfoPtr pod;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"missing claim", ClaimPod("p", {{"gpu", "claim:missing"}}),
       R"(could not find ResourceClaim "default/missing")"},
      {"claim being deleted", ClaimPod("p", {{"gpu", "claim:deleting"}}),
       R"(resourceclaim "deleting" is being deleted)"},
      {"generated claim of another pod",
       ClaimPod("p", {{"gpu", "template:one-gpu"}}, "[{name: gpu, resourceClaimName: not-mine}]"),
       "ResourceClaim default/not-mine was not created for pod default/p (pod is not owner)"},
      {"class that does not exist", ClaimPod("p", {{"gpu", "claim:no-class"}}),
       "request gpu: device class nope does not exist"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(world.plugin().PreEnqueue(*c.pod).IsSuccess());
    const DraWorld::Verdicts verdicts = world.Judge(*c.pod);
    CHECK(verdicts.pre_filter.code() == framework::Code::kUnschedulableAndUnresolvable);
    CHECK(verdicts.pre_filter.Message() == c.message);
  }
}

TEST_CASE("a claim not created yet keeps the pod out of the queue until its status names it",
          "[dra]") {
  DraWorld world(TwoNodes() +
                 GpuClaim("p-gpu-x7k2q", 1, "", "",
                          "ownerReferences: [{apiVersion: v1, kind: Pod, name: p, uid: p-uid, "
                          "controller: true}]"));
  const Status waiting = world.plugin().PreEnqueue(*ClaimPod("p", {{"gpu", "template:one-gpu"}}));
  CHECK(waiting.code() == framework::Code::kUnschedulableAndUnresolvable);
  CHECK(waiting.Message() == R"(pod "default/p": ResourceClaim not created yet)");
  const Status unsupported = world.plugin().PreEnqueue(*ClaimPod("p", {{"gpu", ""}}));
  CHECK(unsupported.Message() ==
        R"(pod "default/p", spec.resourceClaim "gpu": none of the supported fields are set)");

  const framework::PodInfoPtr created =
      ClaimPod("p", {{"gpu", "template:one-gpu"}}, "[{name: gpu, resourceClaimName: p-gpu-x7k2q}]");
  CHECK(world.plugin().PreEnqueue(*created).IsSuccess());
  CHECK(world.Judge(*created).nodes == Nodes("pass", "pass"));
  // A template claim the pod does not need (no name in its status) asks for nothing.
  const framework::PodInfoPtr none = ClaimPod("p", {{"gpu", "template:one-gpu"}}, "[{name: gpu}]");
  CHECK(world.plugin().PreEnqueue(*none).IsSuccess());
  CycleState state;
  CHECK(world.plugin().PreFilter(state, *none, world.Snapshot()).status.IsSkip());
}

TEST_CASE("devices allocated to other claims are not offered again", "[dra]") {
  DraWorld world(TwoNodes() + GpuClaim("other", 1, "A100", AllocatedOn("node-1", "gpu-0")) +
                 GpuClaim("one-a100", 1, "A100") + GpuClaim("two-a100", 2, "A100"));
  CHECK(world.Judge(*ClaimPod("p", {{"gpu", "claim:one-a100"}})).nodes == Nodes("pass", kCannot));
  CHECK(world.Judge(*ClaimPod("p", {{"gpu", "claim:two-a100"}})).nodes == Nodes(kCannot, kCannot));
  // The allocation goes: its device comes back.
  world.Add(GpuClaim("other", 1, "A100"));
  CHECK(world.Judge(*ClaimPod("p", {{"gpu", "claim:two-a100"}})).nodes == Nodes("pass", kCannot));
}

TEST_CASE(
    "Reserve's allocation takes the devices from the next cycle on, and Unreserve gives "
    "them back",
    "[dra]") {
  DraWorld world(TwoNodes() + GpuClaim("first", 2, "A100") + GpuClaim("second", 1, "A100"));
  const framework::PodInfoPtr first = ClaimPod("first", {{"gpu", "claim:first"}});
  CycleState state;
  REQUIRE(world.Judge(*first, state).nodes == Nodes("pass", kCannot));
  REQUIRE(world.plugin().Reserve(state, *first, "node-1").IsSuccess());
  CHECK(world.cache().AssumedClaimCount() == 1);
  const framework::Snapshot& assumed = world.Snapshot();
  REQUIRE(assumed.dra().Claim("default", "first")->allocation.has_value());
  CHECK(assumed.dra().Claim("default", "first")->allocation->devices.size() == 2);

  const framework::PodInfoPtr second = ClaimPod("second", {{"gpu", "claim:second"}});
  CHECK(world.Judge(*second).nodes == Nodes(kCannot, kCannot));
  // Another pod that shares the claim in flight waits for the write.
  const DraWorld::Verdicts sharing = world.Judge(*ClaimPod("sharer", {{"gpu", "claim:first"}}));
  CHECK(sharing.pre_filter.Message() ==
        "resource claim default/first is in the process of being allocated");

  world.plugin().Unreserve(state, *first, "node-1");
  world.plugin().Unreserve(state, *first, "node-1");  // idempotent
  CHECK(world.cache().AssumedClaimCount() == 0);
  CHECK_FALSE(world.Snapshot().dra().Claim("default", "first")->allocation.has_value());
  CHECK(world.Judge(*second).nodes == Nodes("pass", kCannot));
}

TEST_CASE(
    "PreBind writes the allocation and the reservation, and the write keeps the devices "
    "taken until the informers show it",
    "[dra]") {
  DraWorld world(TwoNodes() + GpuClaim("mine", 1, "H100") + GpuClaim("next", 2, "H100"));
  const framework::PodInfoPtr pod = ClaimPod("p", {{"gpu", "claim:mine"}});
  CycleState state;
  REQUIRE(world.Judge(*pod, state).nodes == Nodes(kCannot, "pass"));
  REQUIRE(world.plugin().Reserve(state, *pod, "node-2").IsSuccess());
  REQUIRE(world.plugin().PreBind(state, *pod, "node-2").IsSuccess());
  CHECK(world.writer().writes() == std::vector<std::string>{"mine allocated reserved for p"});
  const auto written = world.writer().last();
  REQUIRE(written->allocation.has_value());
  REQUIRE(written->allocation->devices.size() == 1);
  CHECK(api::SymbolText(written->allocation->devices[0].device) == "gpu-0");
  CHECK(written->allocation->node_selector->terms[0].match_fields[0].values ==
        std::vector<std::string>{"node-2"});
  CHECK(written->reserved_for.size() == 1);
  CHECK(written->reserved_for[0].uid == "p-uid");
  CHECK(written->reserved_for[0].resource == "pods");

  // A failure after the write (the bind) takes the pod out of the claim's reservedFor but does
  // not give the written devices back...
  world.plugin().Unreserve(state, *pod, "node-2");
  CHECK(world.writer().writes() == std::vector<std::string>{"mine allocated reserved for p",
                                                            "mine no longer reserved for p-uid"});
  const framework::PodInfoPtr next = ClaimPod("next", {{"gpu", "claim:next"}});
  CHECK(world.Judge(*next).nodes == Nodes(kCannot, kCannot));
  CHECK_FALSE(world.Snapshot().dra().PendingAllocation("default/mine"));
  // ...and the informers' older version (from before the write) does not either.
  world.Add(GpuClaim("mine", 1, "H100"));
  CHECK(world.Judge(*next).nodes == Nodes(kCannot, kCannot));
  // Only the API server's word that the allocation is gone does.
  world.cache().SetDraObject(std::make_shared<const api::ResourceClaim>([&] {
    api::ResourceClaim freed = *written;
    freed.allocation.reset();
    freed.reserved_for.clear();
    freed.meta.resource_version = "7";
    return freed;
  }()));
  CHECK(world.cache().AssumedClaimCount() == 0);
  CHECK(world.Judge(*next).nodes == Nodes(kCannot, "pass"));
}

TEST_CASE("a write refused by the API server fails the binding cycle with upstream's message",
          "[dra]") {
  DraWorld world(TwoNodes() + GpuClaim("mine", 1, "A100"));
  const framework::PodInfoPtr pod = ClaimPod("p", {{"gpu", "claim:mine"}});
  CycleState state;
  REQUIRE(world.Judge(*pod, state).nodes == Nodes("pass", kCannot));
  REQUIRE(world.plugin().Reserve(state, *pod, "node-1").IsSuccess());
  world.writer().FailWith(absl::AbortedError("the object has been modified"));
  const Status status = world.plugin().PreBind(state, *pod, "node-1");
  CHECK(status.code() == framework::Code::kError);
  CHECK(status.Message() ==
        "add allocation and reservation to claim default/mine: the object has been modified");
  world.plugin().Unreserve(state, *pod, "node-1");
  CHECK(world.cache().AssumedClaimCount() == 0);
  CHECK(world.Judge(*pod).nodes == Nodes("pass", kCannot));
}

TEST_CASE("a shared claim that is allocated pins its pods to its node and is only reserved",
          "[dra]") {
  const std::string others = "[{resource: pods, name: q, uid: q-uid}]";
  DraWorld world(TwoNodes() + GpuClaim("shared", 1, "", AllocatedOn("node-2", "gpu-1", others)) +
                 GpuClaim("mine", 1, "",
                          AllocatedOn("node-1", "gpu-0",
                                      "[{resource: pods, name: "
                                      "p, uid: p-uid}]")));
  const framework::PodInfoPtr pod = ClaimPod("p", {{"gpu", "claim:shared"}});
  CycleState state;
  CHECK(world.Judge(*pod, state).nodes == Nodes("resourceclaim not available on the node", "pass"));
  REQUIRE(world.plugin().Reserve(state, *pod, "node-2").IsSuccess());
  CHECK(world.cache().AssumedClaimCount() == 0);
  REQUIRE(world.plugin().PreBind(state, *pod, "node-2").IsSuccess());
  CHECK(world.writer().writes() == std::vector<std::string>{"shared reserved for p"});
  CHECK(world.writer().last()->reserved_for.size() == 2);

  // A claim allocated and reserved for the pod already is simply used.
  const framework::PodInfoPtr owner = ClaimPod("p", {{"gpu", "claim:mine"}});
  CycleState own_state;
  CHECK(world.Judge(*owner, own_state).nodes ==
        Nodes("pass", "resourceclaim not available on the node"));
  REQUIRE(world.plugin().Reserve(own_state, *owner, "node-1").IsSuccess());
  REQUIRE(world.plugin().PreBind(own_state, *owner, "node-1").IsSuccess());
  CHECK(world.writer().writes().size() == 1);
}

TEST_CASE("other plugins read the devices the pod would get on each node", "[dra]") {
  DraWorld world(TwoNodes() + GpuClaim("two", 2, "H100") +
                 GpuClaim("other", 1, "", AllocatedOn("node-1", "gpu-0")));
  const auto picked = [&](const framework::CycleState& state, const std::string& node) {
    const auto* devices = state.Read<framework::PickedDevices>(framework::PickedDevicesKey());
    REQUIRE(devices != nullptr);
    std::vector<std::string> names;
    devices->ForEachDevice(*world.Snapshot().Get(node), [&](const api::ResourceSlice& slice,
                                                            const api::Device& device) {
      names.push_back(slice.node_name + "/" + std::string(api::SymbolText(device.name)));
    });
    return names;
  };
  CycleState state;
  REQUIRE(world.Judge(*ClaimPod("p", {{"gpu", "claim:two"}}), state).pre_filter.IsSuccess());
  CHECK(picked(state, "node-2") == std::vector<std::string>{"node-2/gpu-0", "node-2/gpu-1"});
  CHECK(picked(state, "node-1").empty());
  // A pod whose claims are all allocated picks nothing, and has no such state.
  CycleState allocated;
  REQUIRE(world.Judge(*ClaimPod("q", {{"gpu", "claim:other"}}), allocated).pre_filter.IsSuccess());
  CHECK(allocated.Read<framework::PickedDevices>(framework::PickedDevicesKey()) == nullptr);
}

TEST_CASE("a claim reserved for as many consumers as a claim may have is in use", "[dra]") {
  std::string consumers = "[";
  for (int i = 0; i < 256; ++i) {
    absl::StrAppend(&consumers, i == 0 ? "" : ", ", "{resource: pods, name: q", i, ", uid: q", i,
                    "-uid}");
  }
  consumers += "]";
  DraWorld world(TwoNodes() + GpuClaim("full", 1, "", AllocatedOn("node-1", "gpu-0", consumers)));
  const DraWorld::Verdicts verdicts = world.Judge(*ClaimPod("p", {{"gpu", "claim:full"}}));
  CHECK(verdicts.pre_filter.code() == framework::Code::kUnschedulableAndUnresolvable);
  CHECK(verdicts.pre_filter.Message() == "resourceclaim in use");
  // One of its consumers is not refused.
  CHECK(world.Judge(*ClaimPod("q7", {{"gpu", "claim:full"}})).pre_filter.Message() !=
        "resourceclaim in use");
}

TEST_CASE("node-selected and allNodes slices offer their devices to the nodes they select",
          "[dra]") {
  DraWorld world(DraNode("node-1") + DraNode("node-2", "z2") + GpuClass() +
                 GpuSlice("zone-z2",
                          "nodeSelector: {nodeSelectorTerms: [{matchExpressions: "
                          "[{key: topology.kubernetes.io/zone, operator: In, values: "
                          "[z2]}]}]}",
                          {{"net-0", "NIC"}}) +
                 GpuSlice("everywhere", "allNodes: true", {{"fabric-0", "FABRIC"}}) +
                 GpuClaim("nic", 1, "NIC") + GpuClaim("fabric", 1, "FABRIC"));
  CHECK(world.Judge(*ClaimPod("p", {{"gpu", "claim:nic"}})).nodes == Nodes(kCannot, "pass"));
  CHECK(world.Judge(*ClaimPod("p", {{"gpu", "claim:fabric"}})).nodes == Nodes("pass", "pass"));
  // The allocation names the node selection it came from.
  const framework::PodInfoPtr pod = ClaimPod("p", {{"gpu", "claim:nic"}});
  CycleState state;
  world.Judge(*pod, state);
  REQUIRE(world.plugin().Reserve(state, *pod, "node-2").IsSuccess());
  REQUIRE(world.plugin().PreBind(state, *pod, "node-2").IsSuccess());
  const auto& selector = world.writer().last()->allocation->node_selector;
  REQUIRE(selector.has_value());
  CHECK(api::SymbolText(selector->terms[0].match_expressions[0].key) ==
        "topology.kubernetes.io/zone");
}

TEST_CASE("only the newest generation of a pool offers its devices to a node", "[dra]") {
  DraWorld world(DraNode("node-1") + DraNode("node-2", "z2") + GpuClass() +
                 GpuSlice("old", "nodeName: node-1", {{"gpu-0", "A100"}}, "pool-1", 1) +
                 GpuSlice("new", "nodeName: node-1", {{"gpu-0", "H100"}}, "pool-1", 2) +
                 GpuClaim("a100", 1, "A100") + GpuClaim("h100", 1, "H100"));
  CHECK(world.Judge(*ClaimPod("p", {{"gpu", "claim:a100"}})).nodes == Nodes(kCannot, kCannot));
  CHECK(world.Judge(*ClaimPod("p", {{"gpu", "claim:h100"}})).nodes == Nodes("pass", kCannot));
}

TEST_CASE("a selector that fails on a device is an error that names it", "[dra]") {
  DraWorld world(DraNode("node-1") + GpuClass("device.attributes[\"gpu.example.com\"].memory > 1") +
                 GpuSlice("node-1", "nodeName: node-1", {{"gpu-0", "A100"}}) + GpuClaim("c"));
  framework::CycleState state;
  const framework::PodInfoPtr pod = ClaimPod("p", {{"gpu", "claim:c"}});
  REQUIRE(world.plugin().PreFilter(state, *pod, world.Snapshot()).status.IsSuccess());
  const Status status = world.plugin().Filter(state, *pod, *world.Snapshot().Get("node-1"));
  CHECK(status.code() == framework::Code::kError);
  CHECK_THAT(status.Message(),
             Catch::StartsWith("claim default/c, request gpu: class gpu: selector #1: CEL runtime "
                               "error"));
}

TEST_CASE("a search that runs past filterTimeout leaves the node out", "[dra]") {
  // 100 devices, no two on one NUMA node, and a claim for two on one: the search tries every
  // pair, far more than it does between two looks at the clock, and a nanosecond has passed.
  std::string devices;
  for (int i = 0; i < 100; ++i) {
    absl::StrAppend(&devices, i == 0 ? "" : ", ", "{name: gpu-", i,
                    ", attributes: {numa: {int: ", i, "}}}");
  }
  const std::string slice = absl::StrCat(
      "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: node-1}\n"
      "spec: {driver: gpu.example.com, nodeName: node-1, pool: {name: node-1, generation: 1, "
      "resourceSliceCount: 1}, devices: [",
      devices, "]}\n");
  const std::string claim =
      "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: pair, "
      "namespace: default}\nspec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: "
      "gpu, count: 2}}], constraints: [{matchAttribute: gpu.example.com/numa}]}}\n";
  const std::string cluster = DraNode("node-1") + GpuClass() + slice + claim;
  const framework::PodInfoPtr pod = ClaimPod("p", {{"gpu", "claim:pair"}});
  CHECK(DraWorld(cluster).Judge(*pod).nodes ==
        std::map<std::string, std::string>{{"node-1", kCannot}});
  CHECK(DraWorld(cluster, absl::Nanoseconds(1)).Judge(*pod).nodes ==
        std::map<std::string, std::string>{{"node-1", "timed out trying to allocate devices"}});
}

TEST_CASE("filterTimeout must not be negative", "[dra]") {
  config::DynamicResourcesArgs args;
  args.filter_timeout = absl::Seconds(-1);
  auto made = plugins::NewDynamicResources(args, {});
  REQUIRE_FALSE(made.ok());
  CHECK(made.status().message() == "DynamicResources: filterTimeout: must not be negative");
  CHECK(plugins::NewDynamicResources(std::monostate(), {}).ok());
}

TEST_CASE("preemption's what-if frees the devices of claims only its victims hold", "[dra]") {
  const std::string victim_only = "[{resource: pods, name: victim, uid: victim-uid}]";
  const std::string shared =
      "[{resource: pods, name: victim, uid: victim-uid}, "
      "{resource: pods, name: other, uid: other-uid}]";
  DraWorld world(TwoNodes() +
                 GpuClaim("held", 1, "A100", AllocatedOn("node-1", "gpu-0", victim_only)) +
                 GpuClaim("shared", 1, "A100", AllocatedOn("node-1", "gpu-1", shared)) +
                 GpuClaim("one", 1, "A100") + GpuClaim("two", 2, "A100"));
  const framework::PodInfoPtr victim =
      ClaimPod("victim", {{"a", "claim:held"}, {"b", "claim:shared"}});
  const framework::PodInfoPtr pod = ClaimPod("p", {{"gpu", "claim:one"}});
  CycleState state;
  REQUIRE(world.Judge(*pod, state).pre_filter.IsSuccess());
  const framework::NodeInfo& node_1 = *world.Snapshot().Get("node-1");
  const framework::NodeInfo& node_2 = *world.Snapshot().Get("node-2");
  // Both A100s are held: preemption may free them on node-1; node-2 has none to free.
  CHECK(world.plugin().Filter(state, *pod, node_1).code() == framework::Code::kUnschedulable);
  CHECK(world.plugin().Filter(state, *pod, node_2).code() ==
        framework::Code::kUnschedulableAndUnresolvable);

  const framework::PreFilterExtensions* extensions = world.plugin().pre_filter_extensions();
  REQUIRE(extensions != nullptr);
  const std::unique_ptr<CycleState> what_if = state.Clone();
  REQUIRE(extensions->RemovePod(*what_if, *pod, *victim, node_1).IsSuccess());
  CHECK(world.plugin().Filter(*what_if, *pod, node_1).IsSuccess());
  CHECK_FALSE(world.plugin().Filter(state, *pod, node_1).IsSuccess());  // the cycle's own state
  REQUIRE(extensions->AddPod(*what_if, *pod, *victim, node_1).IsSuccess());
  CHECK_FALSE(world.plugin().Filter(*what_if, *pod, node_1).IsSuccess());

  // The shared claim keeps its device: two A100s are not to be had by preempting the victim.
  const framework::PodInfoPtr wants_two = ClaimPod("q", {{"gpu", "claim:two"}});
  CycleState two_state;
  REQUIRE(world.Judge(*wants_two, two_state).pre_filter.IsSuccess());
  const std::unique_ptr<CycleState> two_what_if = two_state.Clone();
  REQUIRE(extensions->RemovePod(*two_what_if, *wants_two, *victim, node_1).IsSuccess());
  CHECK(world.plugin().Filter(*two_what_if, *wants_two, node_1).code() ==
        framework::Code::kUnschedulable);
}

}  // namespace
}  // namespace kubesched
