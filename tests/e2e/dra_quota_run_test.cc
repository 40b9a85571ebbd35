// DRA GPUs in queue quota through `kubesched run`, end to end: the real binary against
// kubesched-testapi. One typed limit (`nvidia.com/gpu.A100`) holds the device plugin's A100s and
// the A100s that ResourceClaims get from ResourceSlices together; when a device-plugin pod goes,
// the claim pod that waited on the limit is scheduled and its claim allocated. Outcomes are polled
// for with deadlines, never slept for.

#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "rapidjson/document.h"
#include "tests/testapi/testapi_process.h"
#include "tests/testing/child_process.h"
#include "tests/testing/kubesched_process.h"
#include "tests/testing/test_api_client.h"

namespace kubesched {
namespace {

using testapi::TestApiProcess;
using Api = testing::TestApiClient;

constexpr auto* Str = &testing::StringOf;
constexpr char kDra[] = "/apis/resource.k8s.io/v1";
constexpr char kPods[] = "/api/v1/namespaces/default/pods";

// Devices of gpu.nvidia.com count as nvidia.com/gpu, their model from productName; the model
// A100 covers the label value GPU feature discovery writes and the attribute DRA publishes.
constexpr char kConfig[] =
    "apiVersion: kubescheduler.config.k8s.io/v1\n"
    "kind: KubeSchedulerConfiguration\n"
    "podInitialBackoffSeconds: 1\npodMaxBackoffSeconds: 1\n"
    "queues:\n"
    "  modelLabels: {nvidia.com/gpu: nvidia.com/gpu.product}\n"
    "  models: {A100: [NVIDIA-A100-SXM4-80GB]}\n"
    "  devices: [{driver: gpu.nvidia.com, resource: nvidia.com/gpu, modelAttribute: "
    "productName}]\n"
    "  tree: [{name: ml, max: {nvidia.com/gpu.A100: \"2\"}}]\n";

std::string PodJson(const std::string& name, const std::string& extra_spec,
                    const std::string& requests) {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
                      R"(","namespace":"default","labels":{"kubesched.io/queue":"root.ml"}},)",
                      R"("spec":{"schedulerName":"kubesched",)", extra_spec,
                      R"("containers":[{"name":"c","image":"busybox","resources":{"requests":)",
                      requests, R"(,"limits":)", requests, "}}]}}");
}

std::string ClaimPodJson(const std::string& name, const std::string& claim) {
  return PodJson(
      name,
      absl::StrCat(R"("resourceClaims":[{"name":"gpu","resourceClaimName":")", claim, R"("}],)"),
      R"({"cpu":"1"})");
}

std::string ClaimJson(const std::string& name) {
  return absl::StrCat(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",)",
                      R"("metadata":{"name":")", name, R"("},"spec":{"devices":{"requests":)",
                      R"([{"name":"gpu","exactly":{"deviceClassName":"gpu.nvidia.com"}}]}}})");
}

std::string NodeName(Api& api, const std::string& pod) {
  const rapidjson::Document json = api.GetOk(absl::StrCat(kPods, "/", pod));
  const auto spec = json.FindMember("spec");
  if (spec == json.MemberEnd() || !spec->value.HasMember("nodeName")) return "";
  return Str(spec->value["nodeName"]);
}

std::string PodScheduledMessage(Api& api, const std::string& pod) {
  const rapidjson::Document json = api.GetOk(absl::StrCat(kPods, "/", pod));
  if (!json.HasMember("status") || !json["status"].HasMember("conditions")) return "";
  for (const rapidjson::Value& condition : json["status"]["conditions"].GetArray()) {
    if (Str(condition["type"]) == "PodScheduled" && condition.HasMember("message")) {
      return Str(condition["message"]);
    }
  }
  return "";
}

// The pool of the device allocated to `claim`, "" while it has none.
std::string AllocatedPool(Api& api, const std::string& claim) {
  const rapidjson::Document json =
      api.GetOk(absl::StrCat(kDra, "/namespaces/default/resourceclaims/", claim));
  if (!json.HasMember("status") || !json["status"].HasMember("allocation")) return "";
  const rapidjson::Value& results = json["status"]["allocation"]["devices"]["results"];
  return results.Size() == 1 ? Str(results[0]["pool"]) : "more than one";
}

void CreateCluster(Api& api) {
  api.Create("/api/v1/nodes",
             R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"plugin-a100","labels":)"
             R"({"nvidia.com/gpu.product":"NVIDIA-A100-SXM4-80GB"}},"status":{"allocatable":)"
             R"({"cpu":"8","memory":"64Gi","pods":"110","nvidia.com/gpu":"2"}}})");
  api.Create("/api/v1/nodes",
             R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"dra-a100"},)"
             R"("status":{"allocatable":{"cpu":"8","memory":"64Gi","pods":"110"}}})");
  api.Create(absl::StrCat(kDra, "/deviceclasses"),
             R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass",)"
             R"("metadata":{"name":"gpu.nvidia.com"},"spec":{"selectors":[{"cel":)"
             R"({"expression":"device.driver == \"gpu.nvidia.com\""}}]}})");
  api.Create(
      absl::StrCat(kDra, "/resourceslices"),
      R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",)"
      R"("metadata":{"name":"dra-a100"},"spec":{"driver":"gpu.nvidia.com",)"
      R"("nodeName":"dra-a100","pool":{"name":"dra-a100","generation":1,)"
      R"("resourceSliceCount":1},"devices":[)"
      R"({"name":"gpu-0","attributes":{"productName":{"string":"NVIDIA A100-SXM4-80GB"}}},)"
      R"({"name":"gpu-1","attributes":{"productName":{"string":"NVIDIA A100-SXM4-80GB"}}}]}})");
}

TEST_CASE("run: one A100 limit holds device plugin and DRA A100s, and frees for a claim pod",
          "[run][e2e][dra][quota]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  Api api(**server);
  CreateCluster(api);
  for (const char* claim : {"claim-0", "claim-1"}) {
    api.Create(absl::StrCat(kDra, "/namespaces/default/resourceclaims"), ClaimJson(claim));
  }
  api.Create(kPods, PodJson("plugin-0", "", R"({"cpu":"1","nvidia.com/gpu":"1"})"));
  const std::string config_path = (*server)->dir() + "/dra-quota.yaml";
  std::ofstream(config_path) << kConfig;
  auto started = testing::StartKubeschedRun(
      {.kubeconfig = (*server)->kubeconfig(), .config_path = config_path});
  testing::ChildProcess& scheduler = *started;
  testing::RequireEventually("the device-plugin pod is bound", scheduler,
                             [&] { return NodeName(api, "plugin-0") == "plugin-a100"; });

  // One A100 is left under the limit: one claim pod gets it, the other waits on the limit.
  api.Create(kPods, ClaimPodJson("dra-0", "claim-0"));
  testing::RequireEventually("the first claim pod is bound to its device's node", scheduler,
                             [&] { return NodeName(api, "dra-0") == "dra-a100"; });
  CHECK(AllocatedPool(api, "claim-0") == "dra-a100");
  api.Create(kPods, ClaimPodJson("dra-1", "claim-1"));
  testing::RequireEventually("the second claim pod waits on the A100 limit", scheduler, [&] {
    return absl::StrContains(PodScheduledMessage(api, "dra-1"),
                             "insufficient quota for nvidia.com/gpu.A100");
  });
  CHECK(NodeName(api, "dra-1").empty());
  CHECK(AllocatedPool(api, "claim-1").empty());

  // The device-plugin pod goes: its A100 under the limit goes to the waiting claim.
  REQUIRE(api.Send("DELETE", absl::StrCat(kPods, "/plugin-0")).status == 200);
  testing::RequireEventually("the waiting claim pod is bound once the plugin A100 is free",
                             scheduler, [&] { return NodeName(api, "dra-1") == "dra-a100"; });
  CHECK(AllocatedPool(api, "claim-1") == "dra-a100");
}

}  // namespace
}  // namespace kubesched
