// The structured-parameters allocator on one node: the cases of upstream's allocator tests
// (inputs and expected outcomes), in builder form.

#include "plugins/dynamic_resources/allocator.h"

#include <catch2/catch.hpp>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "scheduler/api/decode.h"
#include "tests/plugins/dynamic_resources/dra_builders.h"

namespace kubesched::plugins::dynamic_resources {
namespace {

using namespace testing;  // NOLINT: the builders are this file's vocabulary

constexpr char kDriverA[] = "driver-a";
constexpr char kDriverB[] = "driver-b";

// Two devices of driver-a on node-1, one pool, and a class that selects driver-a's devices.
World TwoDevices() {
  World world;
  world.slices.push_back(SliceBuilder("slice-1", kDriverA, "pool-1")
                             .Node("node-1")
                             .Add(MakeDevice("device-1"))
                             .Add(MakeDevice("device-2"))
                             .Build());
  world.classes.push_back(MakeClass("class-a", {R"(device.driver == "driver-a")"}));
  return world;
}

TEST_CASE("no claims to allocate gives no allocations", "[dra]") {
  World world = TwoDevices();
  auto result = world.Run();
  REQUIRE(result.ok());
  CHECK(result->empty());
}

TEST_CASE("a simple claim gets the first device and the node by name", "[dra]") {
  World world = TwoDevices();
  world.claims.push_back(MakeClaim("claim-0", {Exactly("req-0", Spec("class-a"))}));
  auto result = world.Run();
  REQUIRE(result.ok());
  REQUIRE(result->size() == 1);
  const api::AllocationResult& allocation = result->front().allocation;
  CHECK(Results(allocation) == std::vector<std::string>{"req-0 driver-a/pool-1/device-1"});
  REQUIRE(allocation.node_selector.has_value());
  REQUIRE(allocation.node_selector->terms.size() == 1);
  const api::NodeSelectorTerm& term = allocation.node_selector->terms.front();
  CHECK(term.match_expressions.empty());
  REQUIRE(term.match_fields.size() == 1);
  CHECK(term.match_fields.front().field == "metadata.name");
  CHECK(term.match_fields.front().op == api::SelectorOperator::kIn);
  CHECK(term.match_fields.front().values == std::vector<std::string>{"node-1"});
  CHECK_FALSE(allocation.devices.front().admin_access);
}

TEST_CASE("devices published for another node are not offered", "[dra]") {
  World world = TwoDevices();
  world.node = "node-2";
  world.claims.push_back(MakeClaim("claim-0", {Exactly("req-0", Spec("class-a"))}));
  auto result = world.Run();
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kResourceExhausted);
  CHECK(result.status().message() == "cannot allocate all claims");
}

TEST_CASE("a count larger than the matching devices cannot be allocated", "[dra]") {
  World world = TwoDevices();
  world.claims.push_back(MakeClaim("claim-0", {Exactly("req-0", Spec("class-a", 3))}));
  CHECK(world.Run().status().message() == "cannot allocate all claims");
  world.claims.front().spec.requests.front().exactly->count = 2;
  auto result = world.Run();
  REQUIRE(result.ok());
  CHECK(
      Results(result->front().allocation) ==
      std::vector<std::string>{"req-0 driver-a/pool-1/device-1", "req-0 driver-a/pool-1/device-2"});
}

TEST_CASE("the selectors of the class and of the request must all hold", "[dra]") {
  World world;
  world.slices.push_back(SliceBuilder("slice-1", kDriverA, "pool-1")
                             .Node("node-1")
                             .Add(MakeDevice("small", {StringAttribute("driver-a/size", "small")}))
                             .Add(MakeDevice("large", {StringAttribute("driver-a/size", "large")}))
                             .Build());
  world.slices.push_back(
      SliceBuilder("slice-2", kDriverB, "pool-1")
          .Node("node-1")
          .Add(MakeDevice("large-b", {StringAttribute("driver-b/size", "large")}))
          .Build());
  world.classes.push_back(MakeClass("class-a", {R"(device.driver == "driver-a")"}));
  world.claims.push_back(MakeClaim(
      "claim-0",
      {Exactly("small", Spec("class-a", 1, {R"(device.attributes["driver-a"].size == "small")"})),
       Exactly("large",
               Spec("class-a", 1, {R"(device.attributes["driver-a"].size == "large")"}))}));
  auto result = world.Run();
  REQUIRE(result.ok());
  CHECK(Results(result->front().allocation) ==
        std::vector<std::string>{"small driver-a/pool-1/small", "large driver-a/pool-1/large"});
}

TEST_CASE("allocation mode All takes every matching device on the node", "[dra]") {
  World world = TwoDevices();
  world.slices.push_back(
      SliceBuilder("slice-b", kDriverB, "pool-b").Node("node-1").Add(MakeDevice("other")).Build());
  world.claims.push_back(MakeClaim("claim-0", {Exactly("req-0", AllSpec("class-a"))}));
  auto result = world.Run();
  REQUIRE(result.ok());
  CHECK(
      Results(result->front().allocation) ==
      std::vector<std::string>{"req-0 driver-a/pool-1/device-1", "req-0 driver-a/pool-1/device-2"});
}

TEST_CASE("allocation mode All fails when a matching device is taken or none matches", "[dra]") {
  World world = TwoDevices();
  world.claims.push_back(MakeClaim("claim-0", {Exactly("req-0", AllSpec("class-a"))}));
  world.Allocated(kDriverA, "pool-1", "device-2");
  CHECK(world.Run().status().message() == "cannot allocate all claims");

  World empty = TwoDevices();
  empty.node = "node-2";
  empty.claims.push_back(MakeClaim("claim-0", {Exactly("req-0", AllSpec("class-a"))}));
  CHECK(empty.Run().status().message() == "cannot allocate all claims");
}

TEST_CASE("allocation mode All over an incomplete pool is an error naming the pool", "[dra]") {
  World world = TwoDevices();
  world.slices.front().pool.resource_slice_count = 2;
  world.claims.push_back(MakeClaim("claim-0", {Exactly("req-0", AllSpec("class-a"))}));
  auto result = world.Run();
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().message() ==
        "claim default/claim-0, request req-0: asks for all devices, but resource pool "
        "driver-a/pool-1 is currently being updated");
}

TEST_CASE("an exact count does not use the devices of an incomplete pool", "[dra]") {
  World world = TwoDevices();
  world.slices.front().pool.resource_slice_count = 2;
  world.claims.push_back(MakeClaim("claim-0", {Exactly("req-0", Spec("class-a"))}));
  CHECK(world.Run().status().message() == "cannot allocate all claims");
  // The missing slice, published for another node, completes the pool.
  world.slices.push_back(SliceBuilder("slice-2", kDriverA, "pool-1")
                             .Node("node-2")
                             .Generation(1, 2)
                             .Add(MakeDevice("device-3"))
                             .Build());
  auto result = world.Run();
  REQUIRE(result.ok());
  CHECK(Results(result->front().allocation) ==
        std::vector<std::string>{"req-0 driver-a/pool-1/device-1"});
}

TEST_CASE("a pool another node's slices moved to a newer generation offers nothing", "[dra]") {
  World world = TwoDevices();
  world.slices.front().pool.resource_slice_count = 2;
  world.slices.push_back(SliceBuilder("moved", kDriverA, "pool-1")
                             .Node("node-2")
                             .Generation(2, 2)
                             .Add(MakeDevice("device-3"))
                             .Build());
  world.claims.push_back(MakeClaim("claim-0", {Exactly("req-0", AllSpec("class-a"))}));
  // Not even an All request's error: the pool is left out.
  CHECK(world.Run().status().message() == "cannot allocate all claims");
}

TEST_CASE("a pool whose slices name one device twice offers nothing", "[dra]") {
  World world = TwoDevices();
  world.slices.front().pool.resource_slice_count = 2;
  world.slices.push_back(SliceBuilder("slice-2", kDriverA, "pool-1")
                             .Node("node-1")
                             .Generation(1, 2)
                             .Add(MakeDevice("device-2"))
                             .Build());
  world.claims.push_back(MakeClaim("claim-0", {Exactly("req-0", Spec("class-a"))}));
  CHECK(world.Run().status().message() == "invalid resource pools were encountered");
  world.claims.front().spec.requests.front().exactly->allocation_mode =
      api::DeviceAllocationMode::kAll;
  CHECK(world.Run().status().message() ==
        "claim default/claim-0, request req-0: asks for all devices, but resource pool "
        "driver-a/pool-1 is currently invalid");
  // A valid pool on the node serves the claim.
  world.claims.front().spec.requests.front().exactly->allocation_mode =
      api::DeviceAllocationMode::kExactCount;
  world.slices.push_back(
      SliceBuilder("slice-3", kDriverA, "pool-2").Node("node-1").Add(MakeDevice("other")).Build());
  auto result = world.Run();
  REQUIRE(result.ok());
  CHECK(Results(result->front().allocation) ==
        std::vector<std::string>{"req-0 driver-a/pool-2/other"});
}

TEST_CASE("only the newest generation of a pool counts", "[dra]") {
  World world;
  world.slices.push_back(SliceBuilder("old", kDriverA, "pool-1")
                             .Node("node-1")
                             .Generation(1)
                             .Add(MakeDevice("old-device"))
                             .Build());
  world.slices.push_back(SliceBuilder("new", kDriverA, "pool-1")
                             .Node("node-1")
                             .Generation(2)
                             .Add(MakeDevice("new-device"))
                             .Build());
  world.classes.push_back(MakeClass("class-a"));
  world.claims.push_back(MakeClaim("claim-0", {Exactly("req-0", Spec("class-a"))}));
  auto result = world.Run();
  REQUIRE(result.ok());
  CHECK(Results(result->front().allocation) ==
        std::vector<std::string>{"req-0 driver-a/pool-1/new-device"});
  world.claims.front().spec.requests.front().exactly->count = 2;
  CHECK(world.Run().status().message() == "cannot allocate all claims");
}

TEST_CASE("devices allocated to other claims are skipped", "[dra]") {
  World world = TwoDevices();
  world.Allocated(kDriverA, "pool-1", "device-1");
  world.claims.push_back(MakeClaim("claim-0", {Exactly("req-0", Spec("class-a"))}));
  auto result = world.Run();
  REQUIRE(result.ok());
  CHECK(Results(result->front().allocation) ==
        std::vector<std::string>{"req-0 driver-a/pool-1/device-2"});
  world.Allocated(kDriverA, "pool-1", "device-2");
  CHECK(world.Run().status().message() == "cannot allocate all claims");
}

TEST_CASE("admin access may use devices allocated or used by other claims", "[dra]") {
  World world = TwoDevices();
  world.Allocated(kDriverA, "pool-1", "device-1");
  world.Allocated(kDriverA, "pool-1", "device-2");
  world.claims.push_back(MakeClaim("claim-0", {Exactly("req-0", Spec("class-a"), true)}));
  world.claims.push_back(MakeClaim("claim-1", {Exactly("req-0", Spec("class-a"), true)}));
  auto result = world.Run();
  REQUIRE(result.ok());
  REQUIRE(result->size() == 2);
  for (const ClaimAllocation& claim : *result) {
    CHECK(Results(claim.allocation) == std::vector<std::string>{"req-0 driver-a/pool-1/device-1"});
    CHECK(claim.allocation.devices.front().admin_access);
  }
}

TEST_CASE("several claims of a pod never share a device", "[dra]") {
  World world = TwoDevices();
  world.claims.push_back(MakeClaim("claim-0", {Exactly("req-0", Spec("class-a"))}));
  world.claims.push_back(MakeClaim("claim-1", {Exactly("req-0", Spec("class-a"))}));
  auto result = world.Run();
  REQUIRE(result.ok());
  REQUIRE(result->size() == 2);
  CHECK((*result)[0].claim_index == 0);
  CHECK(Results((*result)[0].allocation) ==
        std::vector<std::string>{"req-0 driver-a/pool-1/device-1"});
  CHECK((*result)[1].claim_index == 1);
  CHECK(Results((*result)[1].allocation) ==
        std::vector<std::string>{"req-0 driver-a/pool-1/device-2"});
  world.claims.push_back(MakeClaim("claim-2", {Exactly("req-0", Spec("class-a"))}));
  CHECK(world.Run().status().message() == "cannot allocate all claims");
}

TEST_CASE("an already allocated claim of the pod is left alone", "[dra]") {
  World world = TwoDevices();
  world.claims.push_back(MakeClaim("claim-0", {Exactly("req-0", Spec("class-a"))}));
  world.claims.front().allocation = api::AllocationResult{};
  world.Allocated(kDriverA, "pool-1", "device-1");
  world.claims.push_back(MakeClaim("claim-1", {Exactly("req-0", Spec("class-a"))}));
  auto result = world.Run();
  REQUIRE(result.ok());
  REQUIRE(result->size() == 1);
  CHECK(result->front().claim_index == 1);
  CHECK(Results(result->front().allocation) ==
        std::vector<std::string>{"req-0 driver-a/pool-1/device-2"});
}

World VersionedDevices() {
  World world;
  world.slices.push_back(
      SliceBuilder("slice-1", kDriverA, "pool-1")
          .Node("node-1")
          .Add(MakeDevice("device-1", {VersionAttribute("driver-a/driverVersion", "1.0.0"),
                                       IntAttribute("driver-a/numa", 0)}))
          .Add(MakeDevice("device-2", {VersionAttribute("driver-a/driverVersion", "2.0.0"),
                                       IntAttribute("driver-a/numa", 1)}))
          .Add(MakeDevice("device-3", {VersionAttribute("driver-a/driverVersion", "2.0.0"),
                                       IntAttribute("driver-a/numa", 0)}))
          .Build());
  world.classes.push_back(MakeClass("class-a"));
  return world;
}

TEST_CASE("matchAttribute picks devices that agree on the attribute", "[dra]") {
  World world = VersionedDevices();
  world.claims.push_back(
      MakeClaim("claim-0", {Exactly("req-0", Spec("class-a")), Exactly("req-1", Spec("class-a"))},
                {MatchAttribute("driver-a/driverVersion")}));
  auto result = world.Run();
  REQUIRE(result.ok());
  CHECK(
      Results(result->front().allocation) ==
      std::vector<std::string>{"req-0 driver-a/pool-1/device-2", "req-1 driver-a/pool-1/device-3"});
}

TEST_CASE("matchAttribute binds only the requests it names", "[dra]") {
  World world = VersionedDevices();
  world.claims.push_back(
      MakeClaim("claim-0",
                {Exactly("req-0", Spec("class-a")), Exactly("req-1", Spec("class-a")),
                 Exactly("req-2", Spec("class-a"))},
                {MatchAttribute("driver-a/numa", {"req-0", "req-2"})}));
  auto result = world.Run();
  REQUIRE(result.ok());
  CHECK(Results(result->front().allocation) ==
        std::vector<std::string>{"req-0 driver-a/pool-1/device-1", "req-1 driver-a/pool-1/device-2",
                                 "req-2 driver-a/pool-1/device-3"});
}

TEST_CASE("matchAttribute fails on mismatching or missing attributes", "[dra]") {
  World world = VersionedDevices();
  world.claims.push_back(MakeClaim("claim-0", {Exactly("req-0", Spec("class-a", 3))},
                                   {MatchAttribute("driver-a/numa")}));
  CHECK(world.Run().status().message() == "cannot allocate all claims");
  world.claims.front().spec.constraints = {MatchAttribute("driver-a/noSuchAttribute")};
  world.claims.front().spec.requests.front().exactly->count = 1;
  CHECK(world.Run().status().message() == "cannot allocate all claims");
}

TEST_CASE("firstAvailable falls back to the next sub-request in order", "[dra]") {
  World world = TwoDevices();
  world.claims.push_back(
      MakeClaim("claim-0", {FirstAvailable("req-0", {{"sub-0", Spec("class-a", 3)},
                                                     {"sub-1", Spec("class-a", 2)},
                                                     {"sub-2", Spec("class-a", 1)}})}));
  auto result = world.Run();
  REQUIRE(result.ok());
  CHECK(Results(result->front().allocation) ==
        std::vector<std::string>{"req-0/sub-1 driver-a/pool-1/device-1",
                                 "req-0/sub-1 driver-a/pool-1/device-2"});
}

TEST_CASE("firstAvailable backtracks when a later request needs other devices", "[dra]") {
  World world = VersionedDevices();
  world.slices.front().devices.push_back(
      MakeDevice("device-4", {IntAttribute("driver-a/numa", 1)}));
  // Every choice of sub-0 (numa 0) leaves req-1 (numa 1) unable to agree on numa; sub-1 must
  // then skip device-1 for device-2, so that device-4 remains for req-1.
  const std::string numa0 = R"(device.attributes["driver-a"].numa == 0)";
  const std::string numa1 = R"(device.attributes["driver-a"].numa == 1)";
  world.claims.push_back(MakeClaim("claim-0",
                                   {FirstAvailable("req-0", {{"sub-0", Spec("class-a", 1, {numa0})},
                                                             {"sub-1", Spec("class-a", 1)}}),
                                    Exactly("req-1", Spec("class-a", 1, {numa1}))},
                                   {MatchAttribute("driver-a/numa", {"req-0", "req-1"})}));
  auto result = world.Run();
  REQUIRE(result.ok());
  CHECK(Results(result->front().allocation) ==
        std::vector<std::string>{"req-0/sub-1 driver-a/pool-1/device-2",
                                 "req-1 driver-a/pool-1/device-4"});
}

TEST_CASE("a constraint may name a sub-request", "[dra]") {
  World world = VersionedDevices();
  world.claims.push_back(MakeClaim(
      "claim-0",
      {FirstAvailable("req-0", {{"sub-0", Spec("class-a", 2)}}), Exactly("req-1", Spec("class-a"))},
      {MatchAttribute("driver-a/numa", {"req-0/sub-0"})}));
  auto result = world.Run();
  REQUIRE(result.ok());
  CHECK(Results(result->front().allocation) ==
        std::vector<std::string>{"req-0/sub-0 driver-a/pool-1/device-1",
                                 "req-0/sub-0 driver-a/pool-1/device-3",
                                 "req-1 driver-a/pool-1/device-2"});
}

TEST_CASE("a selector failing on a device is an error naming claim, request and expression",
          "[dra]") {
  World world = TwoDevices();
  world.claims.push_back(MakeClaim(
      "claim-0",
      {Exactly("req-0", Spec("class-a", 1, {R"(device.attributes["driver-a"].model == "x")"}))}));
  auto result = world.Run();
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(result.status().message()) ==
        "claim default/claim-0, request req-0: selector #0: CEL runtime error: 1:31: no such key: "
        "model; expression: device.attributes[\"driver-a\"].model == \"x\"");
}

TEST_CASE("a class selector failing at run time is an error naming the class", "[dra]") {
  World world = TwoDevices();
  world.classes.push_back(
      MakeClass("needs-model", {R"(device.attributes["driver-a"].model == "x")"}));
  world.claims.push_back(MakeClaim("claim-0", {Exactly("req-0", Spec("needs-model"))}));
  auto result = world.Run();
  REQUIRE_FALSE(result.ok());
  CHECK_THAT(std::string(result.status().message()),
             Catch::StartsWith("claim default/claim-0, request req-0: class needs-model: "
                               "selector #0: CEL runtime error: 1:31: no such key: model"));
}

TEST_CASE("a selector is evaluated only on the devices the search reaches", "[dra]") {
  // device-2 has no model attribute, but device-1 already satisfies the request, as upstream
  // evaluates selectors lazily in device order.
  World world;
  world.slices.push_back(SliceBuilder("slice-1", kDriverA, "pool-1")
                             .Node("node-1")
                             .Add(MakeDevice("device-1", {StringAttribute("driver-a/model", "x")}))
                             .Add(MakeDevice("device-2"))
                             .Build());
  world.classes.push_back(MakeClass("class-a"));
  world.claims.push_back(MakeClaim(
      "claim-0",
      {Exactly("req-0", Spec("class-a", 1, {R"(device.attributes["driver-a"].model == "x")"}))}));
  auto result = world.Run();
  REQUIRE(result.ok());
  CHECK(Results(result->front().allocation) ==
        std::vector<std::string>{"req-0 driver-a/pool-1/device-1"});
  world.claims.front().spec.requests.front().exactly->count = 2;
  CHECK_THAT(std::string(world.Run().status().message()),
             Catch::Contains("CEL runtime error: 1:31: no such key: model"));
}

TEST_CASE("a firstAvailable sub-request may ask for all devices", "[dra]") {
  World world = TwoDevices();
  world.Allocated(kDriverA, "pool-1", "device-2");
  world.claims.push_back(MakeClaim(
      "claim-0",
      {FirstAvailable("req-0", {{"all", AllSpec("class-a")}, {"one", Spec("class-a")}})}));
  auto result = world.Run();
  REQUIRE(result.ok());
  CHECK(Results(result->front().allocation) ==
        std::vector<std::string>{"req-0/one driver-a/pool-1/device-1"});
  world.allocated.clear();
  result = world.Run();
  REQUIRE(result.ok());
  CHECK(Results(result->front().allocation) ==
        std::vector<std::string>{"req-0/all driver-a/pool-1/device-1",
                                 "req-0/all driver-a/pool-1/device-2"});
}

TEST_CASE("admin access with All takes every matching device, allocated or not", "[dra]") {
  World world = TwoDevices();
  world.Allocated(kDriverA, "pool-1", "device-1");
  world.claims.push_back(MakeClaim("claim-0", {Exactly("req-0", AllSpec("class-a"), true)}));
  auto result = world.Run();
  REQUIRE(result.ok());
  CHECK(
      Results(result->front().allocation) ==
      std::vector<std::string>{"req-0 driver-a/pool-1/device-1", "req-0 driver-a/pool-1/device-2"});
  // What it uses is in use for a request without admin access that comes after it.
  world.claims.push_back(MakeClaim("claim-1", {Exactly("req-0", Spec("class-a"))}));
  CHECK(world.Run().status().message() == "cannot allocate all claims");
}

TEST_CASE("admin access does not use a device its own claim uses", "[dra]") {
  World world = TwoDevices();
  world.claims.push_back(MakeClaim("claim-0", {Exactly("req-0", Spec("class-a"), true),
                                               Exactly("req-1", AllSpec("class-a"), true)}));
  CHECK(world.Run().status().message() == "cannot allocate all claims");
  // Another claim's request with admin access may.
  world.claims.front().spec.requests.pop_back();
  world.claims.push_back(MakeClaim("claim-1", {Exactly("req-0", AllSpec("class-a"), true)}));
  auto result = world.Run();
  REQUIRE(result.ok());
  CHECK(
      Results((*result)[1].allocation) ==
      std::vector<std::string>{"req-0 driver-a/pool-1/device-1", "req-0 driver-a/pool-1/device-2"});
}

TEST_CASE("an alternative that would take a claim past 32 devices is passed over", "[dra]") {
  World world;
  SliceBuilder slice("slice-1", kDriverA, "pool-1");
  slice.Node("node-1");
  for (int i = 0; i < 64; ++i) slice.Add(MakeDevice(absl::StrCat("device-", i)));
  world.slices.push_back(slice.Build());
  world.classes.push_back(MakeClass("class-a"));
  const auto request = [](const char* name) {
    return FirstAvailable(name, {{"many", Spec("class-a", 32)}, {"half", Spec("class-a", 16)}});
  };
  world.claims.push_back(MakeClaim("claim-0", {request("req-0"), request("req-1")}));
  auto result = world.Run();
  REQUIRE(result.ok());
  const std::vector<std::string> results = Results(result->front().allocation);
  REQUIRE(results.size() == 32);
  CHECK(results.front() == "req-0/half driver-a/pool-1/device-0");
  CHECK(results.back() == "req-1/half driver-a/pool-1/device-31");
}

TEST_CASE("a class's configuration is written once, for every request it served", "[dra]") {
  World world = TwoDevices();
  world.classes.front().config.push_back({"driver-a", R"({"mode":"shared"})"});
  world.claims.push_back(
      MakeClaim("claim-0", {Exactly("req-0", Spec("class-a")), Exactly("req-1", Spec("class-a"))}));
  auto result = world.Run();
  REQUIRE(result.ok());
  const std::vector<api::DeviceAllocationConfiguration>& config = result->front().allocation.config;
  REQUIRE(config.size() == 1);
  CHECK(config.front().from_class);
  CHECK(config.front().requests == std::vector<std::string>{"req-0", "req-1"});
  CHECK(config.front().opaque.parameters_json == R"({"mode":"shared"})");
}

TEST_CASE("a class selector that does not compile is an error naming the class", "[dra]") {
  World world = TwoDevices();
  world.classes.push_back(MakeClass("broken", {"device.driver + 1"}));
  world.claims.push_back(MakeClaim("claim-0", {Exactly("req-0", Spec("broken"))}));
  auto result = world.Run();
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(result.status().message()),
             Catch::StartsWith("claim default/claim-0, request req-0: class broken: selector #0: "
                               "CEL compile error: 1:"));
  CHECK_THAT(std::string(result.status().message()),
             Catch::EndsWith("expression: device.driver + 1"));
}

TEST_CASE("a request for a class that does not exist is an error", "[dra]") {
  World world = TwoDevices();
  world.claims.push_back(MakeClaim("claim-0", {Exactly("req-0", Spec("no-such-class"))}));
  auto result = world.Run();
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == absl::StatusCode::kNotFound);
  CHECK(result.status().message() ==
        "claim default/claim-0, request req-0: could not retrieve device class no-such-class: "
        "not found");
}

TEST_CASE("a claim asking for more than 32 devices is refused", "[dra]") {
  World world = TwoDevices();
  world.claims.push_back(MakeClaim("claim-0", {Exactly("req-0", Spec("class-a", 33))}));
  CHECK(world.Run().status().message() ==
        "claim default/claim-0: number of requested devices 33 exceeds the claim limit of 32");
}

TEST_CASE("devices of node-selected slices carry the slice's selector into the allocation",
          "[dra]") {
  World world;
  world.node_labels = api::LabelSet::FromPairs({{api::Intern("rack"), api::Intern("r1")}});
  world.slices.push_back(SliceBuilder("selected", kDriverA, "fabric")
                             .Selecting("rack", "r1")
                             .Add(MakeDevice("nic-1"))
                             .Build());
  world.slices.push_back(SliceBuilder("elsewhere", kDriverA, "fabric-2")
                             .Selecting("rack", "r2")
                             .Add(MakeDevice("nic-2"))
                             .Build());
  world.classes.push_back(MakeClass("class-a"));
  world.claims.push_back(MakeClaim("claim-0", {Exactly("req-0", Spec("class-a", 1))}));
  auto result = world.Run();
  REQUIRE(result.ok());
  const api::AllocationResult& allocation = result->front().allocation;
  CHECK(Results(allocation) == std::vector<std::string>{"req-0 driver-a/fabric/nic-1"});
  REQUIRE(allocation.node_selector.has_value());
  REQUIRE(allocation.node_selector->terms.size() == 1);
  const api::NodeSelectorTerm& term = allocation.node_selector->terms.front();
  CHECK(term.match_fields.empty());
  REQUIRE(term.match_expressions.size() == 1);
  CHECK(term.match_expressions.front().key == api::Intern("rack"));
  world.claims.front().spec.requests.front().exactly->count = 2;
  CHECK(world.Run().status().message() == "cannot allocate all claims");
}

TEST_CASE("devices for all nodes need no node selector", "[dra]") {
  World world;
  world.slices.push_back(
      SliceBuilder("everywhere", kDriverA, "shared").AllNodes().Add(MakeDevice("d")).Build());
  world.classes.push_back(MakeClass("class-a"));
  world.claims.push_back(MakeClaim("claim-0", {Exactly("req-0", Spec("class-a"))}));
  auto result = world.Run();
  REQUIRE(result.ok());
  CHECK(Results(result->front().allocation) == std::vector<std::string>{"req-0 driver-a/shared/d"});
  CHECK_FALSE(result->front().allocation.node_selector.has_value());
}

TEST_CASE("selectors are compiled once and reused across nodes", "[dra]") {
  World world = TwoDevices();
  world.claims.push_back(MakeClaim("claim-0", {Exactly("req-0", Spec("class-a"))}));
  REQUIRE(world.Run().ok());
  world.node = "node-2";
  CHECK_FALSE(world.Run().ok());
  CHECK(world.selectors->size() == 1);
}

constexpr char kDecodedCluster[] = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-gpus}
spec:
  driver: gpu.nvidia.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes:
      productName: {string: NVIDIA A100-SXM4-40GB}
      numa.example.com/node: {int: 0}
    capacity:
      memory: {value: 40Gi}
  - name: gpu-1
    attributes:
      productName: {string: NVIDIA H100 80GB HBM3}
      numa.example.com/node: {int: 1}
    capacity:
      memory: {value: 80Gi}
  - name: gpu-2
    attributes:
      productName: {string: NVIDIA H100 80GB HBM3}
      numa.example.com/node: {int: 1}
    capacity:
      memory: {value: 80Gi}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.nvidia.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: train, namespace: ml}
spec:
  devices:
    requests:
    - name: gpus
      exactly:
        deviceClassName: gpu.nvidia.com
        count: 2
        selectors:
        - cel: {expression: 'device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("40Gi"))'}
        - cel: {expression: 'device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H100")'}
    constraints:
    - {matchAttribute: numa.example.com/node}
)";

TEST_CASE("decoded slices, classes and claims allocate by capacity and attribute", "[dra]") {
  auto decoded = api::DecodeObjects(kDecodedCluster, "test");
  REQUIRE(decoded.ok());
  REQUIRE(decoded->problems.empty());
  World world;
  for (api::Object& object : decoded->objects) {
    if (auto* slice = std::get_if<api::ResourceSlice>(&object)) world.slices.push_back(*slice);
    if (auto* klass = std::get_if<api::DeviceClass>(&object)) world.classes.push_back(*klass);
    if (auto* claim = std::get_if<api::ResourceClaim>(&object)) world.claims.push_back(*claim);
  }
  auto result = world.Run();
  REQUIRE(result.ok());
  CHECK(Results(result->front().allocation) ==
        std::vector<std::string>{"gpus gpu.nvidia.com/node-1/gpu-1",
                                 "gpus gpu.nvidia.com/node-1/gpu-2"});
  world.Allocated("gpu.nvidia.com", "node-1", "gpu-2");
  CHECK(world.Run().status().message() == "cannot allocate all claims");
}

TEST_CASE("a selector's verdict is remembered for every device of the same content", "[dra]") {
  auto decoded = api::DecodeObjects(kDecodedCluster, "test");
  REQUIRE(decoded.ok());
  World world;
  for (api::Object& object : decoded->objects) {
    if (auto* slice = std::get_if<api::ResourceSlice>(&object)) world.slices.push_back(*slice);
    if (auto* klass = std::get_if<api::DeviceClass>(&object)) world.classes.push_back(*klass);
    if (auto* claim = std::get_if<api::ResourceClaim>(&object)) world.claims.push_back(*claim);
  }
  const std::vector<api::Device>& gpus = world.slices.front().devices;
  REQUIRE(gpus[1].shape == gpus[2].shape);  // the two H100s differ only in name
  REQUIRE(world.Run().ok());
  const CompiledSelector& product = world.selectors->Get(
      R"(device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA H100"))");
  CHECK(product.verdicts.Get(gpus[1].shape) == VerdictMemo::kTrue);
  // gpu-0 failed the first of the claim's selectors: the second never saw it.
  const CompiledSelector& memory = world.selectors->Get(
      R"(device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("40Gi")))");
  CHECK(memory.verdicts.Get(gpus[0].shape) == VerdictMemo::kFalse);
  CHECK(product.verdicts.Get(gpus[0].shape) == VerdictMemo::kUnknown);
  // What is remembered decides: a verdict the memo holds is not evaluated again.
  memory.verdicts.Set(gpus[1].shape, VerdictMemo::kFalse);
  CHECK(world.Run().status().message() == "cannot allocate all claims");
}

}  // namespace
}  // namespace kubesched::plugins::dynamic_resources
