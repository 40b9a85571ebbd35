// kubesched-testapi serves resource.k8s.io/v1 as the API server does: the four kinds with list,
// watch, get, create, update and patch, the ResourceClaim status subresource, discovery, the real
// API's status codes (404, 409, 422), and no trace of the group when it is turned off.

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "rapidjson/document.h"
#include "tests/testapi/api_fixture.h"

namespace kubesched::testapi {
namespace {

constexpr char kClaims[] = "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims";
constexpr char kTrain[] = "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/train";
constexpr char kSlices[] = "/apis/resource.k8s.io/v1/resourceslices";

constexpr char kClaim[] =
    R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"train"},)"
    R"("spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu"}}]}}})";

std::string SliceJson(const std::string& name, const std::string& node) {
  return R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice","metadata":{"name":")" +
         name + R"("},"spec":{"driver":"gpu.example.com","nodeName":")" + node +
         R"(","pool":{"name":")" + node +
         R"(","generation":1,"resourceSliceCount":1},"devices":[{"name":"gpu-0",)"
         R"("attributes":{"model":{"string":"A100"}}}]}})";
}

struct Fixture : ApiFixture {
  Fixture() {
    REQUIRE(Call("POST", "/api/v1/namespaces", R"({"metadata":{"name":"ml"}})").status == 201);
  }
};

std::vector<std::string> Drain(const HttpResponse& response) {
  std::vector<std::string> lines;
  if (!response.stream) return lines;
  auto output = response.stream->Poll(absl::Now());
  for (std::string& chunk : output.chunks) lines.push_back(std::move(chunk));
  return lines;
}

TEST_CASE("the four DRA kinds are created, read and listed", "[testapi]") {
  Fixture f;
  REQUIRE(f.Call("POST", "/apis/resource.k8s.io/v1/deviceclasses",
                 R"({"metadata":{"name":"gpu"},"spec":{"selectors":[{"cel":)"
                 R"({"expression":"device.driver == \"gpu.example.com\""}}]}})")
              .status == 201);
  REQUIRE(f.Call("POST", kSlices, SliceJson("node-a-gpu", "node-a")).status == 201);
  REQUIRE(f.Call("POST", kClaims, kClaim).status == 201);
  REQUIRE(f.Call("POST", "/apis/resource.k8s.io/v1/namespaces/ml/resourceclaimtemplates",
                 R"({"metadata":{"name":"one-gpu"},"spec":{"spec":{"devices":{"requests":)"
                 R"([{"name":"gpu","exactly":{"deviceClassName":"gpu"}}]}}}})")
              .status == 201);
  const rapidjson::Document claim = Json(f.Get(kTrain).body);
  CHECK(StringAt(claim, "kind") == "ResourceClaim");
  CHECK(StringAt(claim, "metadata.namespace") == "ml");
  for (const char* path : {"/apis/resource.k8s.io/v1/deviceclasses", kSlices,
                           "/apis/resource.k8s.io/v1/resourceclaims",
                           "/apis/resource.k8s.io/v1/resourceclaimtemplates"}) {
    INFO(path);
    const HttpResponse list = f.Get(path);
    REQUIRE(list.status == 200);
    CHECK(Json(list.body)["items"].Size() == 1);
  }
}

TEST_CASE("ResourceSlices are selected by driver and node, as the real API's field labels allow",
          "[testapi]") {
  Fixture f;
  REQUIRE(f.Call("POST", kSlices, SliceJson("a", "node-a")).status == 201);
  REQUIRE(f.Call("POST", kSlices, SliceJson("b", "node-b")).status == 201);
  const rapidjson::Document on_b =
      Json(f.Get(std::string(kSlices) + "?fieldSelector=spec.nodeName%3Dnode-b").body);
  REQUIRE(on_b["items"].Size() == 1);
  CHECK(StringAt(on_b["items"][0], "metadata.name") == "b");
  CHECK(Json(f.Get(std::string(kSlices) + "?fieldSelector=spec.driver%3Dgpu.example.com")
                 .body)["items"]
            .Size() == 2);
}

TEST_CASE("DRA objects answer with the real API's status codes", "[testapi]") {
  Fixture f;
  CHECK(f.Get(kTrain).status == 404);
  const rapidjson::Document created = Json(f.Call("POST", kClaims, kClaim).body);
  CHECK(f.Call("POST", kClaims, kClaim).status == 409);

  const HttpResponse invalid =
      f.Call("POST", kClaims,
             R"({"metadata":{"name":"bad"},"spec":{"devices":{"requests":[{"name":"gpu"}]}}})");
  CHECK(invalid.status == 422);
  CHECK(StringAt(Json(invalid.body), "message") ==
        "ResourceClaim.resource.k8s.io \"bad\" is invalid: spec.devices.requests[0]: exactly one "
        "of exactly, firstAvailable must be set");
  CHECK(f.Call("POST", kSlices,
               R"({"metadata":{"name":"s"},"spec":{"driver":"d","pool":{"name":"p",)"
               R"("resourceSliceCount":1}}})")
            .status == 422);  // in no place
  CHECK(
      f.Call(
           "PATCH", kTrain,
           R"({"spec":{"devices":{"requests":[{"name":"gpu","exactly":{"deviceClassName":"gpu","count":0}}]}}})",
           "application/merge-patch+json")
          .status == 422);

  // An update from a stale resourceVersion is a conflict.
  std::string stale = kClaim;
  stale.replace(stale.find(R"("name":"train"})"), 15, R"("name":"train","resourceVersion":"1"})");
  const std::string current = StringAt(created, "metadata.resourceVersion");
  REQUIRE(current != "1");
  CHECK(f.Call("PUT", kTrain, stale).status == 409);
  CHECK(f.Call("DELETE", kTrain).status == 200);
  CHECK(f.Call("DELETE", kTrain).status == 404);
}

TEST_CASE("a ResourceClaim status patch writes the allocation, keeps the spec and is watched",
          "[testapi]") {
  Fixture f;
  const std::string created_rv =
      StringAt(Json(f.Call("POST", kClaims, kClaim).body), "metadata.resourceVersion");
  HttpResponse watch = f.Get(std::string(kClaims) + "?watch=true&resourceVersion=" + created_rv);
  REQUIRE(watch.stream);
  watch.stream->Start([] {});

  const HttpResponse patched =
      f.Call("PATCH", std::string(kTrain) + "/status",
             R"({"spec":{"devices":{"requests":[]}},"status":{"allocation":{"devices":{"results":)"
             R"([{"request":"gpu","driver":"gpu.example.com","pool":"node-a","device":"gpu-0"}]}},)"
             R"("reservedFor":[{"resource":"pods","name":"p","uid":"u-1"}]}})",
             "application/merge-patch+json");
  REQUIRE(patched.status == 200);
  const rapidjson::Document claim = Json(patched.body);
  CHECK(StringAt(claim["status"]["allocation"]["devices"]["results"][0], "device") == "gpu-0");
  CHECK(claim["spec"]["devices"]["requests"].Size() == 1);  // the subresource keeps the spec
  const std::vector<std::string> lines = Drain(watch);
  REQUIRE(lines.size() == 1);
  CHECK(absl::StrContains(lines[0], R"("type":"MODIFIED")"));

  CHECK(f.Call("PATCH", std::string(kTrain) + "/status",
               R"({"status":{"allocation":{"devices":{"results":[{"request":"gpu"}]}}}})",
               "application/merge-patch+json")
            .status == 422);
}

TEST_CASE("a ResourceClaim status keeps its allocation and needs one for its reservations",
          "[testapi]") {
  Fixture f;
  REQUIRE(f.Call("POST", kClaims, kClaim).status == 201);
  const std::string status = std::string(kTrain) + "/status";
  const auto patch = [&](const std::string& body) {
    return f.Call("PATCH", status, body, "application/merge-patch+json");
  };
  const char kPod[] = R"({"resource":"pods","name":"p","uid":"u-1"})";
  const HttpResponse unallocated =
      patch(absl::StrCat(R"({"status":{"reservedFor":[)", kPod, "]}}"));
  CHECK(unallocated.status == 422);
  CHECK_THAT(unallocated.body,
             Catch::Contains("status.reservedFor: Forbidden: may not be specified when "
                             "`allocated` is not set"));
  const std::string allocation =
      R"("allocation":{"devices":{"results":[{"request":"gpu","driver":"gpu.example.com",)"
      R"("pool":"node-a","device":"gpu-0"}]}})";
  REQUIRE(patch(absl::StrCat(R"({"status":{)", allocation, R"(,"reservedFor":[)", kPod, "]}}"))
              .status == 200);
  // Another device for the same allocation: refused; the same allocation again: fine.
  std::string other = allocation;
  other.replace(other.find("gpu-0"), 5, "gpu-1");
  const HttpResponse changed = patch(absl::StrCat(R"({"status":{)", other, "}}"));
  CHECK(changed.status == 422);
  CHECK_THAT(changed.body, Catch::Contains("status.allocation: Invalid value"));
  CHECK_THAT(changed.body, Catch::Contains("field is immutable"));
  CHECK(patch(absl::StrCat(R"({"status":{)", allocation, "}}")).status == 200);
  const HttpResponse twice =
      patch(absl::StrCat(R"({"status":{"reservedFor":[)", kPod, ",", kPod, "]}}"));
  CHECK(twice.status == 422);
  CHECK_THAT(twice.body, Catch::Contains("status.reservedFor[1].uid: Duplicate value"));
  // Taking the allocation away with its reservations is allowed (deallocation).
  CHECK(patch(R"({"status":{"allocation":null,"reservedFor":null}})").status == 200);
}

TEST_CASE("discovery lists resource.k8s.io/v1 and the claim status subresource", "[testapi]") {
  Fixture f;
  CHECK(absl::StrContains(f.Get("/apis").body, R"("name":"resource.k8s.io")"));
  const HttpResponse resources = f.Get("/apis/resource.k8s.io/v1");
  REQUIRE(resources.status == 200);
  for (const char* name : {"deviceclasses", "resourceslices", "resourceclaims",
                           "resourceclaims/status", "resourceclaimtemplates"}) {
    CHECK(absl::StrContains(resources.body, std::string(R"("name":")") + name + "\""));
  }
}

TEST_CASE("a group version turned off is not found and not discovered", "[testapi]") {
  Store store{StoreOptions{}};
  Faults faults;
  ApiServerOptions options;
  options.disabled_api_versions = {"resource.k8s.io/v1"};
  ApiServer api(&store, &faults, options);
  REQUIRE(api.Bootstrap().ok());
  const auto get = [&](const std::string& target) {
    return api.Handle({.method = "GET", .target = target});
  };
  CHECK(get(kSlices).status == 404);
  CHECK(get("/apis/resource.k8s.io/v1").status == 404);
  CHECK_FALSE(absl::StrContains(get("/apis").body, "resource.k8s.io"));
  CHECK(get("/apis/storage.k8s.io/v1/storageclasses").status == 200);
}

}  // namespace
}  // namespace kubesched::testapi
