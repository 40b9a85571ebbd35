#include "scheduler/client/api_volume_binder.h"

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/match.h"
#include "rapidjson/document.h"
#include "tests/testing/fake_transport.h"

namespace kubesched::client {
namespace {

using testing::FakeTransport;

api::PersistentVolume ClaimedVolume() {
  api::PersistentVolume volume;
  volume.meta.name = "pv-1";
  volume.meta.resource_version = "41";
  volume.meta.annotations[api::kBoundByControllerAnnotation] = "yes";
  volume.claim_ref = api::ObjectReference{"PersistentVolumeClaim", "team-a", "data", "uid-7"};
  return volume;
}

rapidjson::Document Parse(const std::string& text) {
  rapidjson::Document doc;
  doc.Parse(text.data(), text.size());
  REQUIRE(doc.IsObject());
  return doc;
}

TEST_CASE("binding a PV patches its claimRef with the PV's resourceVersion as a precondition",
          "[writer][volumes]") {
  FakeTransport transport;
  transport.OnDo([](const HttpRequest&) -> absl::StatusOr<HttpResponse> {
    return HttpResponse{200, R"({"apiVersion":"v1","kind":"PersistentVolume","metadata":)"
                             R"({"name":"pv-1","resourceVersion":"42"},"spec":{"claimRef":)"
                             R"({"namespace":"team-a","name":"data","uid":"uid-7"}}})"};
  });
  ApiVolumeBinder binder(&transport);
  auto result = binder.BindVolume(ClaimedVolume());
  REQUIRE(result.ok());
  REQUIRE(result->volume != nullptr);
  CHECK(result->volume->meta.resource_version == "42");
  CHECK(result->claim == nullptr);

  const auto requests = transport.requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].method == "PATCH");
  CHECK(requests[0].target == "/api/v1/persistentvolumes/pv-1");
  CHECK(requests[0].content_type == "application/merge-patch+json");
  const rapidjson::Document body = Parse(requests[0].body);
  CHECK(std::string(body["metadata"]["resourceVersion"].GetString()) == "41");
  CHECK(std::string(
            body["metadata"]["annotations"]["pv.kubernetes.io/bound-by-controller"].GetString()) ==
        "yes");
  const auto& ref = body["spec"]["claimRef"];
  CHECK(std::string(ref["kind"].GetString()) == "PersistentVolumeClaim");
  CHECK(std::string(ref["namespace"].GetString()) == "team-a");
  CHECK(std::string(ref["name"].GetString()) == "data");
  CHECK(std::string(ref["uid"].GetString()) == "uid-7");
}

TEST_CASE("a PV changed meanwhile is a conflict", "[writer][volumes]") {
  FakeTransport transport;
  transport.OnDo([](const HttpRequest&) -> absl::StatusOr<HttpResponse> {
    return HttpResponse{409,
                        R"({"kind":"Status","reason":"Conflict","message":"the object has been )"
                        R"(modified"})"};
  });
  ApiVolumeBinder binder(&transport);
  auto result = binder.BindVolume(ClaimedVolume());
  REQUIRE_FALSE(result.ok());
  CHECK(absl::IsAborted(result.status()));
  CHECK(absl::StrContains(result.status().message(),
                          "binding persistentvolume pv-1 to claim "
                          "team-a/data"));
}

TEST_CASE("selecting a node patches the claim's annotation", "[writer][volumes]") {
  FakeTransport transport;
  transport.OnDo([](const HttpRequest&) -> absl::StatusOr<HttpResponse> {
    return HttpResponse{
        200, R"({"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":)"
             R"({"name":"data","namespace":"team-a","resourceVersion":"9","annotations":)"
             R"({"volume.kubernetes.io/selected-node":"node-b"}}})"};
  });
  ApiVolumeBinder binder(&transport);
  api::PersistentVolumeClaim claim;
  claim.meta.name = "data";
  claim.meta.namespace_name = "team-a";
  claim.meta.annotations[api::kSelectedNodeAnnotation] = "node-b";
  auto result = binder.SelectNode(claim);
  REQUIRE(result.ok());
  REQUIRE(result->claim != nullptr);
  CHECK(result->claim->meta.resource_version == "9");

  const auto requests = transport.requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].target == "/api/v1/namespaces/team-a/persistentvolumeclaims/data");
  const rapidjson::Document body = Parse(requests[0].body);
  CHECK(std::string(
            body["metadata"]["annotations"]["volume.kubernetes.io/selected-node"].GetString()) ==
        "node-b");
  CHECK_FALSE(body["metadata"].HasMember("resourceVersion"));
}

}  // namespace
}  // namespace kubesched::client
