#include "scheduler/client/api_pod_group_status_writer.h"

#include <catch2/catch.hpp>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "rapidjson/document.h"
#include "scheduler/util/log.h"
#include "tests/testapi/routes.h"
#include "tests/testapi/store.h"
#include "tests/testing/fake_transport.h"
#include "tests/testing/wait.h"

namespace kubesched::client {
namespace {

constexpr char kTrain[] = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/ml/podgroups/train";

// The test API server in-process, behind the client's transport interface.
struct InProcessApi {
  InProcessApi() : store(testapi::StoreOptions{}), api(&store, &faults, {}) {
    REQUIRE(api.Bootstrap().ok());
    REQUIRE(api.LoadObjects(R"(apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Namespace, metadata: {name: ml}}
- apiVersion: scheduling.x-k8s.io/v1alpha1
  kind: PodGroup
  metadata: {name: train, namespace: ml}
  spec: {minMember: 3}
  status: {phase: Pending, occupiedBy: ml/job}
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
  rapidjson::Document Get(const std::string& target) {
    const testapi::HttpResponse response = api.Handle({.method = "GET", .target = target});
    rapidjson::Document document;
    document.Parse(response.body.data(), response.body.size());
    REQUIRE(document.IsObject());
    return document;
  }

  testapi::Store store;
  testapi::Faults faults;
  testapi::ApiServer api;
  testing::FakeTransport transport;
};

api::PodGroupStatus Scheduled() {
  api::PodGroupStatus status;
  status.phase = "Scheduled";
  status.scheduled = 3;
  status.running = 1;
  status.schedule_start_time = absl::FromUnixSeconds(1767323045);  // 2026-01-02T03:04:05Z
  return status;
}

TEST_CASE("the status patch carries every field under scheduler-plugins' names", "[writer]") {
  CHECK(ApiPodGroupStatusWriter::StatusPatch(Scheduled()) ==
        R"({"status":{"phase":"Scheduled","scheduled":3,"running":1,"succeeded":0,"failed":0,)"
        R"("occupiedBy":null,"scheduleStartTime":"2026-01-02T03:04:05Z"}})");
}

TEST_CASE("a PodGroup status write lands on the status subresource", "[writer]") {
  InProcessApi server;
  AsyncWriter queue;
  queue.Start();
  ApiPodGroupStatusWriter writer(&server.transport, &queue);
  writer.WriteStatus("ml", "train", Scheduled());
  queue.Stop(absl::Seconds(10));  // runs what is queued
  REQUIRE(queue.completed() == 1);

  const auto requests = server.transport.requests();
  REQUIRE(requests.size() == 1);
  CHECK(requests[0].method == "PATCH");
  CHECK(requests[0].target == std::string(kTrain) + "/status");
  CHECK(requests[0].content_type == "application/merge-patch+json");
  const rapidjson::Document group = server.Get(kTrain);
  CHECK(testapi::StringAt(group, "status.phase") == "Scheduled");
  CHECK(testapi::StringAt(group, "status.scheduled") == "3");
  CHECK(testapi::StringAt(group, "status.scheduleStartTime") == "2026-01-02T03:04:05Z");
  CHECK(testapi::StringAt(group, "status.occupiedBy").empty());  // removed: the writer has none
  CHECK(testapi::StringAt(group, "spec.minMember") == "3");
}

TEST_CASE("a status write for a PodGroup that is gone is logged and not fatal", "[writer]") {
  std::mutex mu;
  std::vector<std::string> warnings;
  util::SetLogSinkForTesting([&](std::string_view level, std::string_view message) {
    std::lock_guard<std::mutex> lock(mu);
    if (level == "W") warnings.emplace_back(message);
  });
  InProcessApi server;
  AsyncWriter queue;
  queue.Start();
  ApiPodGroupStatusWriter writer(&server.transport, &queue);
  writer.WriteStatus("ml", "gone", Scheduled());
  writer.WriteStatus("ml", "train", Scheduled());  // the writer goes on after the failure
  queue.Stop(absl::Seconds(10));
  util::SetLogSinkForTesting(nullptr);

  CHECK(queue.completed() == 2);
  REQUIRE(warnings.size() == 1);
  CHECK(absl::StrContains(warnings[0], "writing the status of PodGroup ml/gone"));
  CHECK(absl::StrContains(warnings[0], "not found"));
  CHECK(testapi::StringAt(server.Get(kTrain), "status.phase") == "Scheduled");
}

TEST_CASE("a synchronous status patch reports NotFound for a missing group", "[writer]") {
  InProcessApi server;
  AsyncWriter queue;
  ApiPodGroupStatusWriter writer(&server.transport, &queue);
  CHECK(absl::IsNotFound(writer.Patch("ml", "gone", Scheduled())));
  CHECK(absl::IsInvalidArgument(writer.Patch("ml", "../x", Scheduled())));
  CHECK(writer.Patch("ml", "train", Scheduled()).ok());
}

}  // namespace
}  // namespace kubesched::client
