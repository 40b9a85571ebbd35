// kubesched-testapi serves scheduler-plugins' PodGroup as the API server serves its CRD: the
// cluster-wide and namespaced collections, the status subresource, discovery, and the real API's
// status codes.

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "rapidjson/document.h"
#include "tests/testapi/api_fixture.h"

namespace kubesched::testapi {
namespace {

constexpr char kGroups[] = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/ml/podgroups";
constexpr char kTrain[] = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/ml/podgroups/train";

struct Fixture : ApiFixture {
  Fixture() {
    REQUIRE(Call("POST", "/api/v1/namespaces", R"({"metadata":{"name":"ml"}})").status == 201);
  }
  HttpResponse CreateTrain() {
    return Call("POST", kGroups,
                R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup",)"
                R"("metadata":{"name":"train"},"spec":{"minMember":3}})");
  }
  static std::vector<std::string> Drain(const HttpResponse& response) {
    std::vector<std::string> lines;
    if (!response.stream) return lines;
    auto output = response.stream->Poll(absl::Now());
    for (std::string& chunk : output.chunks) lines.push_back(std::move(chunk));
    return lines;
  }
};

TEST_CASE("PodGroups are created, read and listed in their namespace and cluster-wide",
          "[testapi]") {
  Fixture f;
  const HttpResponse created = f.CreateTrain();
  REQUIRE(created.status == 201);
  CHECK(StringAt(Json(created.body), "metadata.namespace") == "ml");
  CHECK(StringAt(Json(f.Call("GET", kTrain).body), "spec.minMember") == "3");

  const HttpResponse all = f.Call("GET", "/apis/scheduling.x-k8s.io/v1alpha1/podgroups");
  REQUIRE(all.status == 200);
  const rapidjson::Document list = Json(all.body);
  CHECK(StringAt(list, "kind") == "PodGroupList");
  REQUIRE(list["items"].Size() == 1);
  CHECK(StringAt(list["items"][0], "metadata.name") == "train");
}

TEST_CASE("PodGroups answer with the real API's status codes", "[testapi]") {
  Fixture f;
  CHECK(f.Call("GET", kTrain).status == 404);
  REQUIRE(f.CreateTrain().status == 201);
  const HttpResponse again = f.CreateTrain();
  CHECK(again.status == 409);
  CHECK(StringAt(Json(again.body), "reason") == "AlreadyExists");

  const HttpResponse bad_spec =
      f.Call("POST", kGroups, R"({"metadata":{"name":"bad"},"spec":{"minMember":"three"}})");
  CHECK(bad_spec.status == 422);
  CHECK(absl::StrContains(StringAt(Json(bad_spec.body), "message"),
                          "spec.minMember in body must be of type integer"));
  CHECK(f.Call("PATCH", kTrain, R"({"spec":{"minMember":2.5}})", "application/merge-patch+json")
            .status == 422);
  CHECK(f.Call("PATCH", kTrain, R"({"spec":{"minMember":2}})",
               "application/strategic-merge-patch+json")
            .status == 415);
  CHECK(f.Call("DELETE", kTrain).status == 200);
  CHECK(f.Call("DELETE", kTrain).status == 404);
}

TEST_CASE("a PodGroup status patch changes only status, bumps resourceVersion and is watched",
          "[testapi]") {
  Fixture f;
  const std::string created_rv = StringAt(Json(f.CreateTrain().body), "metadata.resourceVersion");
  HttpResponse watch =
      f.Call("GET", std::string(kGroups) + "?watch=true&resourceVersion=" + created_rv);
  REQUIRE(watch.stream);
  watch.stream->Start([] {});

  const HttpResponse patched =
      f.Call("PATCH", std::string(kTrain) + "/status",
             R"({"spec":{"minMember":9},"status":{"phase":"Scheduling","scheduled":2}})",
             "application/merge-patch+json");
  REQUIRE(patched.status == 200);
  const rapidjson::Document group = Json(patched.body);
  CHECK(StringAt(group, "status.phase") == "Scheduling");
  CHECK(StringAt(group, "status.scheduled") == "2");
  CHECK(StringAt(group, "spec.minMember") == "3");  // the status subresource keeps the spec
  CHECK(StringAt(group, "metadata.resourceVersion") != created_rv);

  const std::vector<std::string> lines = Fixture::Drain(watch);
  REQUIRE(lines.size() == 1);
  CHECK(absl::StrContains(lines[0], R"("type":"MODIFIED")"));
  CHECK(absl::StrContains(lines[0], R"("phase":"Scheduling")"));

  CHECK(f.Call("PATCH", std::string(kTrain) + "/status", R"({"status":{"running":"x"}})",
               "application/merge-patch+json")
            .status == 422);
  CHECK(f.Call("PATCH", "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/ml/podgroups/none/status",
               R"({"status":{"phase":"Running"}})", "application/merge-patch+json")
            .status == 404);
}

TEST_CASE("a PodGroup status update replaces status and leaves the spec", "[testapi]") {
  Fixture f;
  rapidjson::Document group = Json(f.CreateTrain().body);
  const std::string body =
      R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup","metadata":{"name":"train",)"
      R"("namespace":"ml","resourceVersion":")" +
      StringAt(group, "metadata.resourceVersion") +
      R"("},"spec":{"minMember":1},"status":{"phase":"Running","running":3}})";
  const HttpResponse updated = f.Call("PUT", std::string(kTrain) + "/status", body);
  REQUIRE(updated.status == 200);
  CHECK(StringAt(Json(updated.body), "status.running") == "3");
  CHECK(StringAt(Json(updated.body), "spec.minMember") == "3");
}

TEST_CASE("discovery lists the PodGroup group, its resource and the status subresource",
          "[testapi]") {
  Fixture f;
  CHECK(absl::StrContains(f.Call("GET", "/apis").body, R"("name":"scheduling.x-k8s.io")"));
  const HttpResponse resources = f.Call("GET", "/apis/scheduling.x-k8s.io/v1alpha1");
  REQUIRE(resources.status == 200);
  CHECK(absl::StrContains(resources.body, R"("name":"podgroups")"));
  CHECK(absl::StrContains(resources.body, R"("kind":"PodGroup")"));
  CHECK(absl::StrContains(resources.body, R"("name":"podgroups/status")"));
}

}  // namespace
}  // namespace kubesched::testapi
