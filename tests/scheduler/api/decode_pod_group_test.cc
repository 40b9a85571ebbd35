// Decoding of scheduler-plugins' PodGroup.

#include <catch2/catch.hpp>
#include <string>
#include <variant>

#include "absl/time/time.h"
#include "scheduler/api/decode.h"
#include "scheduler/api/pod_group.h"

namespace kubesched::api {
namespace {

PodGroup DecodeGroup(const std::string& json) {
  auto decoded = DecodeObjects(json, "test");
  REQUIRE(decoded.ok());
  INFO((decoded->problems.empty() ? "" : decoded->problems.front().ToString()));
  REQUIRE(decoded->problems.empty());
  REQUIRE(decoded->objects.size() == 1);
  const PodGroup* group = std::get_if<PodGroup>(&decoded->objects.front());
  REQUIRE(group != nullptr);
  return *group;
}

std::string GroupJson(const std::string& spec) {
  return R"({"apiVersion": "scheduling.x-k8s.io/v1alpha1", "kind": "PodGroup",
    "metadata": {"name": "train", "namespace": "ml"}, "spec": )" +
         spec + "}";
}

TEST_CASE("a PodGroup's spec and status are read under scheduler-plugins' names", "[api]") {
  const PodGroup group = DecodeGroup(R"({"apiVersion": "scheduling.x-k8s.io/v1alpha1",
    "kind": "PodGroup", "metadata": {"name": "train", "namespace": "ml", "resourceVersion": "7"},
    "spec": {"minMember": 4, "minResources": {"cpu": "8", "nvidia.com/gpu": 4},
             "scheduleTimeoutSeconds": 60},
    "status": {"phase": "Scheduling", "scheduled": 2, "running": 1, "succeeded": 0, "failed": 1,
               "occupiedBy": "ml/train-job", "scheduleStartTime": "2026-01-02T03:04:05Z"}})");
  CHECK(group.Key() == "ml/train");
  CHECK(group.min_member == 4);
  CHECK(group.min_resources.Get(kCpu) == 8000);
  CHECK(group.min_resources.Get(InternResource("nvidia.com/gpu")) == 4);
  CHECK(group.schedule_timeout_seconds == 60);
  CHECK(group.error.empty());
  CHECK(group.status.phase == "Scheduling");
  CHECK(group.status.scheduled == 2);
  CHECK(group.status.running == 1);
  CHECK(group.status.failed == 1);
  CHECK(group.status.occupied_by == "ml/train-job");
  CHECK(group.status.schedule_start_time == absl::FromUnixSeconds(1767323045));
}

TEST_CASE("a PodGroup without status or optional spec fields decodes with empty values", "[api]") {
  const PodGroup group = DecodeGroup(GroupJson(R"({"minMember": 2})"));
  CHECK(group.min_member == 2);
  CHECK(group.min_resources.IsZero());
  CHECK_FALSE(group.schedule_timeout_seconds.has_value());
  CHECK(group.status == PodGroupStatus{});
  CHECK(group.error.empty());
}

TEST_CASE("a PodGroup with a minMember below 1 is kept with the reason in error", "[api]") {
  CHECK(DecodeGroup(GroupJson(R"({"minMember": 0})")).error ==
        "spec.minMember must be at least 1 (is 0)");
  CHECK(DecodeGroup(GroupJson(R"({"minMember": -3})")).error ==
        "spec.minMember must be at least 1 (is -3)");
}

TEST_CASE("a PodGroup without minMember, or without spec, is kept with the reason", "[api]") {
  CHECK(DecodeGroup(GroupJson(R"({"scheduleTimeoutSeconds": 5})")).error ==
        "spec.minMember: missing");
  const PodGroup no_spec = DecodeGroup(R"({"kind": "PodGroup", "metadata": {"name": "g"}})");
  CHECK(no_spec.meta.namespace_name == "default");
  CHECK(no_spec.error == "spec.minMember: missing");
}

TEST_CASE("a PodGroup with an unparsable minResources quantity is kept with the reason", "[api]") {
  const PodGroup group =
      DecodeGroup(GroupJson(R"({"minMember": 3, "minResources": {"cpu": "lots"}})"));
  CHECK(group.min_member == 3);
  CHECK(group.min_resources.IsZero());
  CHECK(group.error.starts_with("spec.minResources.cpu: "));
}

TEST_CASE("a PodGroup with a malformed status is a decode problem", "[api]") {
  auto decoded = DecodeObjects(
      R"({"kind": "PodGroup", "metadata": {"name": "g", "namespace": "ml"},
          "spec": {"minMember": 1}, "status": {"scheduled": "two"}})",
      "test");
  REQUIRE(decoded.ok());
  REQUIRE(decoded->problems.size() == 1);
  CHECK(decoded->problems[0].object == "PodGroup ml/g");
  CHECK(decoded->problems[0].message.starts_with("status.scheduled: "));
}

}  // namespace
}  // namespace kubesched::api
