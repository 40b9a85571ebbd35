#include "scheduler/quota/namespace_quota.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "scheduler/api/resource.h"

namespace kubesched::quota {
namespace {

struct Parsed {
  absl::Status status;
  api::ResourceList max;
  std::vector<api::ResourceId> limited;
};

Parsed Parse(const std::string& text) {
  Parsed out;
  out.status = ParseNamespaceQuota(text, &out.max, &out.limited);
  return out;
}

TEST_CASE("a namespace quota reads quantities as strings and as numbers", "[quota]") {
  const Parsed parsed =
      Parse(R"({"cpu": "1500m", "memory": "2Gi", "pods": 10, "nvidia.com/gpu": 2.0})");
  REQUIRE(parsed.status.ok());
  const api::ResourceId gpu = api::InternResource("nvidia.com/gpu");
  CHECK(parsed.max.Get(api::kCpu) == 1500);
  CHECK(parsed.max.Get(api::kMemory) == int64_t{2} << 30);
  CHECK(parsed.max.Get(api::kPods) == 10);
  CHECK(parsed.max.Get(gpu) == 2);
  CHECK(parsed.limited == std::vector<api::ResourceId>{api::kCpu, api::kMemory, api::kPods, gpu});
}

TEST_CASE("a namespace quota adds a resource already limited only once", "[quota]") {
  api::ResourceList max;
  std::vector<api::ResourceId> limited = {api::kCpu};
  REQUIRE(ParseNamespaceQuota(R"({"cpu": "2"})", &max, &limited).ok());
  CHECK(limited == std::vector<api::ResourceId>{api::kCpu});
  CHECK(max.Get(api::kCpu) == 2000);
}

TEST_CASE("a namespace quota that is not a JSON object is refused", "[quota]") {
  for (const std::string text : {"{cpu: 4", "[1, 2]", "\"4\"", ""}) {
    INFO(text);
    const Parsed parsed = Parse(text);
    CHECK(parsed.status.code() == absl::StatusCode::kInvalidArgument);
    CHECK(parsed.status.message() == "must be a JSON object of resource quantities");
  }
}

TEST_CASE("a namespace quota names the resource whose value is not a quantity", "[quota]") {
  CHECK(Parse(R"({"cpu": true})").status.message() == "cpu: not a quantity");
  CHECK(Parse(R"({"memory": "lots"})").status.message() == "memory: \"lots\" is not a quantity");
  CHECK(Parse(R"({"pods": -1})").status.message() == "pods: \"-1\" is not a quantity");
}

}  // namespace
}  // namespace kubesched::quota
