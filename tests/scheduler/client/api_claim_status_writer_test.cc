// DynamicResources' claim status write through the API client, against the test API server: a
// new allocation first protects the claim with upstream's finalizer, then the allocation and the
// reservation land on the status subresource, each patch with the resourceVersion it builds on as
// a precondition (409 when the claim moved on), 404 for a claim that is gone, and the API
// server's refusal of a second allocation; Unreserve's removal of one consumer by uid, and
// PostFilter's deallocation on the claim's resourceVersion.

#include "scheduler/client/api_claim_status_writer.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <variant>

#include "absl/strings/match.h"
#include "rapidjson/document.h"
#include "scheduler/api/decode.h"
#include "tests/testapi/routes.h"
#include "tests/testapi/store.h"
#include "tests/testing/fake_transport.h"

namespace kubesched::client {
namespace {

constexpr char kTrain[] = "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/train";

// The test API server in-process, behind the client's transport interface, with one claim.
struct InProcessApi {
  InProcessApi() : store(testapi::StoreOptions{}), api(&store, &faults, {}) {
    REQUIRE(api.Bootstrap().ok());
    REQUIRE(api.LoadObjects(R"(apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Namespace, metadata: {name: ml}}
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata: {name: train, namespace: ml}
  spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}
)",
                            "fixture")
                .ok());
    transport.OnDo([this](const HttpRequest& request) -> absl::StatusOr<HttpResponse> {
      const testapi::HttpResponse response = api.Handle({.method = request.method,
                                                         .target = request.target,
                                                         .content_type = request.content_type,
                                                         .body = request.body});
      return HttpResponse{response.status, response.body};
    });
  }
  // The claim as the server has it now.
  api::ResourceClaim Claim() {
    const testapi::HttpResponse response = api.Handle({.method = "GET", .target = kTrain});
    REQUIRE(response.status == 200);
    auto decoded = api::DecodeObjects(response.body, "claim");
    REQUIRE(decoded.ok());
    REQUIRE(decoded->objects.size() == 1);
    return std::get<api::ResourceClaim>(decoded->objects.front());
  }

  testapi::Store store;
  testapi::Faults faults;
  testapi::ApiServer api;
  testing::FakeTransport transport;
};

api::AllocationResult OneGpu() {
  api::AllocationResult allocation;
  allocation.devices.push_back(
      {"gpu", api::Intern("gpu.example.com"), api::Intern("node-a"), api::Intern("gpu-0"), false});
  allocation.config.push_back({true, {"gpu"}, {"gpu.example.com", R"({"sharing":"none"})"}});
  api::FieldRequirement by_name{"metadata.name", api::SelectorOperator::kIn, {"node-a"}, true};
  allocation.node_selector.emplace();
  allocation.node_selector->terms.push_back({{}, {by_name}});
  return allocation;
}

const api::ResourceClaimConsumer kPod{"", "pods", "train-0", "uid-0"};

TEST_CASE("the reservation patch carries the resourceVersion, the allocation and every consumer",
          "[writer][dra]") {
  api::ResourceClaim claim;
  claim.meta.name = "train";
  claim.meta.namespace_name = "ml";
  claim.meta.resource_version = "41";
  claim.reserved_for.push_back({"", "pods", "earlier", "uid-e"});
  const api::AllocationResult allocation = OneGpu();
  CHECK(ApiClaimStatusWriter::ReservationPatch(claim, &allocation, kPod) ==
        R"({"metadata":{"resourceVersion":"41"},"status":{"allocation":{"devices":{"results":)"
        R"([{"request":"gpu","driver":"gpu.example.com","pool":"node-a","device":"gpu-0"}],)"
        R"("config":[{"source":"FromClass","requests":["gpu"],"opaque":{"driver":)"
        R"("gpu.example.com","parameters":{"sharing":"none"}}}]},"nodeSelector":)"
        R"({"nodeSelectorTerms":[{"matchFields":[{"key":"metadata.name","operator":"In",)"
        R"("values":["node-a"]}]}]}},"reservedFor":[{"resource":"pods","name":"earlier",)"
        R"("uid":"uid-e"},{"resource":"pods","name":"train-0","uid":"uid-0"}]}})");
  // Reserving an allocated claim leaves its allocation alone.
  CHECK_FALSE(absl::StrContains(ApiClaimStatusWriter::ReservationPatch(claim, nullptr, kPod),
                                "allocation"));
  CHECK(ApiClaimStatusWriter::FinalizerPatch(claim) ==
        R"({"metadata":{"resourceVersion":"41","finalizers":)"
        R"(["resource.kubernetes.io/delete-protection"]}})");
}

TEST_CASE("the allocation and the reservation land on the claim's status", "[writer][dra]") {
  InProcessApi server;
  ApiClaimStatusWriter writer(&server.transport);
  const api::ResourceClaim before = server.Claim();
  const api::AllocationResult allocation = OneGpu();
  auto stored = writer.WriteReservation(before, &allocation, kPod);
  INFO(stored.status().message());
  REQUIRE(stored.ok());
  CHECK((*stored)->meta.resource_version != before.meta.resource_version);
  const api::ResourceClaim after = server.Claim();
  CHECK(after.meta.resource_version == (*stored)->meta.resource_version);
  REQUIRE(after.allocation.has_value());
  REQUIRE(after.allocation->devices.size() == 1);
  CHECK(api::SymbolText(after.allocation->devices[0].device) == "gpu-0");
  CHECK(after.allocation->node_selector->terms[0].match_fields[0].values ==
        std::vector<std::string>{"node-a"});
  REQUIRE(after.reserved_for.size() == 1);
  CHECK(after.reserved_for[0].uid == "uid-0");
  CHECK(after.spec.requests.size() == 1);  // the status subresource keeps the spec
  const auto requests = server.transport.requests();
  REQUIRE(requests.size() == 2);
  CHECK(requests[0].method == "PATCH");
  CHECK(requests[0].target == kTrain);
  CHECK(requests[0].content_type == "application/strategic-merge-patch+json");
  CHECK(requests[1].method == "PATCH");
  CHECK(requests[1].target == std::string(kTrain) + "/status");
  const testapi::HttpResponse raw = server.api.Handle({.method = "GET", .target = kTrain});
  CHECK(
      absl::StrContains(raw.body, R"("finalizers":["resource.kubernetes.io/delete-protection"])"));

  // A second pod reserves the allocated claim (one patch); the allocation may not be written again.
  auto second = writer.WriteReservation(after, nullptr, {"", "pods", "train-1", "uid-1"});
  REQUIRE(second.ok());
  CHECK((*second)->reserved_for.size() == 2);
  CHECK(server.transport.requests().size() == 3);
  api::AllocationResult other = OneGpu();
  other.devices[0].device = api::Intern("gpu-1");
  const absl::Status again =
      writer.WriteReservation(**second, &other, {"", "pods", "train-2", "uid-2"}).status();
  CHECK(again.code() == absl::StatusCode::kInvalidArgument);
  CHECK_THAT(std::string(again.message()), Catch::Contains("field is immutable"));
}

TEST_CASE("a claim that moved on is a conflict, and one that does not exist is not found",
          "[writer][dra]") {
  InProcessApi server;
  ApiClaimStatusWriter writer(&server.transport);
  api::ResourceClaim stale = server.Claim();
  // Someone else's write comes first.
  const api::AllocationResult allocation = OneGpu();
  REQUIRE(writer.WriteReservation(stale, &allocation, {"", "pods", "other", "uid-x"}).ok());
  const absl::Status conflict = writer.WriteReservation(stale, &allocation, kPod).status();
  CHECK(conflict.code() == absl::StatusCode::kAborted);
  CHECK_THAT(std::string(conflict.message()), Catch::Contains("resourceclaim ml/train"));
  // Reserving from the stale version is a conflict too.
  CHECK(writer.WriteReservation(stale, nullptr, kPod).status().code() ==
        absl::StatusCode::kAborted);
  CHECK(server.Claim().reserved_for.size() == 1);

  api::ResourceClaim missing = stale;
  missing.meta.name = "missing";
  CHECK(writer.WriteReservation(missing, &allocation, kPod).status().code() ==
        absl::StatusCode::kNotFound);
  CHECK(writer.WriteReservation(missing, nullptr, kPod).status().code() ==
        absl::StatusCode::kNotFound);
}

TEST_CASE("taking a pod out of reservedFor patches its entry away by uid and keeps the rest",
          "[writer][dra]") {
  api::ResourceClaim claim;
  claim.meta.uid = "claim-uid";
  CHECK(ApiClaimStatusWriter::RemoveReservationPatch(claim, "uid-0") ==
        R"({"metadata":{"uid":"claim-uid"},"status":{"reservedFor":)"
        R"([{"$patch":"delete","uid":"uid-0"}]}})");

  InProcessApi server;
  ApiClaimStatusWriter writer(&server.transport);
  const api::AllocationResult allocation = OneGpu();
  auto first = writer.WriteReservation(server.Claim(), &allocation, kPod);
  REQUIRE(first.ok());
  // Another pod reserves the claim after this one: the removal needs no resourceVersion.
  REQUIRE(writer.WriteReservation(**first, nullptr, {"", "pods", "train-1", "uid-1"}).ok());
  auto removed = writer.RemoveReservation(**first, "uid-0");
  INFO(removed.status().message());
  REQUIRE(removed.ok());
  const api::ResourceClaim after = server.Claim();
  REQUIRE(after.reserved_for.size() == 1);
  CHECK(after.reserved_for[0].uid == "uid-1");
  CHECK(after.allocation.has_value());
  CHECK((*removed)->meta.resource_version == after.meta.resource_version);
  CHECK(server.transport.requests().back().content_type ==
        "application/strategic-merge-patch+json");

  // A claim deleted and made again under the same name is not the one the pod reserved.
  api::ResourceClaim other_claim = after;
  other_claim.meta.uid = "another-uid";
  const absl::Status replaced = writer.RemoveReservation(other_claim, "uid-1").status();
  CHECK(replaced.code() == absl::StatusCode::kAborted);
  CHECK(server.Claim().reserved_for.size() == 1);
  api::ResourceClaim missing = after;
  missing.meta.name = "missing";
  CHECK(writer.RemoveReservation(missing, "uid-1").status().code() == absl::StatusCode::kNotFound);
}

TEST_CASE("a deallocation clears the allocation and the reservations, on the claim's version",
          "[writer][dra]") {
  api::ResourceClaim claim;
  claim.meta.resource_version = "41";
  CHECK(ApiClaimStatusWriter::DeallocationPatch(claim) ==
        R"({"metadata":{"resourceVersion":"41"},"status":)"
        R"({"allocation":null,"reservedFor":null,"devices":null}})");

  InProcessApi server;
  ApiClaimStatusWriter writer(&server.transport);
  const api::AllocationResult allocation = OneGpu();
  auto allocated = writer.WriteReservation(server.Claim(), &allocation, kPod);
  REQUIRE(allocated.ok());
  auto removed = writer.RemoveReservation(**allocated, "uid-0");
  REQUIRE(removed.ok());
  // From a version that moved on since (the removal): a conflict, and nothing changes.
  const absl::Status stale = writer.Deallocate(**allocated).status();
  CHECK(stale.code() == absl::StatusCode::kAborted);
  CHECK(server.Claim().allocation.has_value());

  auto deallocated = writer.Deallocate(**removed);
  INFO(deallocated.status().message());
  REQUIRE(deallocated.ok());
  const api::ResourceClaim after = server.Claim();
  CHECK_FALSE(after.allocation.has_value());
  CHECK(after.reserved_for.empty());
  CHECK(after.spec.requests.size() == 1);
  CHECK(server.transport.requests().back().target == std::string(kTrain) + "/status");
  // The claim may be allocated again from there.
  CHECK(writer.WriteReservation(after, &allocation, kPod).ok());
}

}  // namespace
}  // namespace kubesched::client
