// The Watermark strategy's pools in `kubesched run`, end to end against kubesched-testapi: on a
// mixed cluster the full CPU pool stacks while the empty GPU pool spreads, and the metrics show
// each pool's mode and ratio under its own `pool` label.

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "rapidjson/document.h"
#include "tests/testapi/testapi_process.h"
#include "tests/testing/child_process.h"
#include "tests/testing/kubesched_process.h"
#include "tests/testing/scrape.h"
#include "tests/testing/test_api_client.h"

namespace kubesched {
namespace {

using testapi::TestApiProcess;
using testing::RequireEventually;
using Api = testing::TestApiClient;

constexpr auto* Str = &testing::StringOf;

constexpr char kConfig[] = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: kubesched
    pluginConfig:
      - name: NodeResourcesFit
        args:
          scoringStrategy:
            type: Watermark
            watermark:
              high: 0.8
              low: 0.7
              pools:
                - {name: gpu, nodeSelector: {pool: gpu}, high: 0.6, low: 0.5}
                - {name: cpu, nodeSelector: {pool: cpu}}
)";

void CreateNode(Api& api, const std::string& name, const std::string& pool) {
  const bool gpu = pool == "gpu";
  api.Create(
      "/api/v1/nodes",
      absl::StrCat(
          R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")", name,
          R"(","labels":{"pool":")", pool, R"("}},"spec":{)",
          gpu ? R"("taints":[{"key":"nvidia.com/gpu","value":"present","effect":"NoSchedule"}])"
              : "",
          R"(},"status":{"allocatable":{"cpu":")", gpu ? "20" : "10", R"(","memory":")",
          gpu ? "20Gi" : "10Gi", R"(","pods":"110")", gpu ? R"(,"nvidia.com/gpu":"8")" : "",
          "}}}"));
}

// A pod of `cpu` CPUs and as many GiB; bound to `node` when given; tolerating the GPU taint and
// asking for one GPU when `gpu`.
void CreatePod(Api& api, const std::string& name, int cpu, const std::string& node, bool gpu) {
  const std::string requests = absl::StrCat(R"({"cpu":")", cpu, R"(","memory":")", cpu, "Gi\"",
                                            gpu ? R"(,"nvidia.com/gpu":"1")" : "", "}");
  api.Create(
      "/api/v1/namespaces/default/pods",
      absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
                   R"(","namespace":"default"},"spec":{"schedulerName":"kubesched",)",
                   node.empty() ? "" : absl::StrCat(R"("nodeName":")", node, R"(",)"),
                   gpu ? R"("tolerations":[{"key":"nvidia.com/gpu","operator":"Exists"}],)" : "",
                   R"("containers":[{"name":"c","image":"busybox","resources":{"requests":)",
                   requests, "}}]}}"));
}

std::string NodeName(Api& api, const std::string& pod_name) {
  const rapidjson::Document pod = api.Get("/api/v1/namespaces/default/pods/" + pod_name);
  const auto spec = pod.FindMember("spec");
  if (spec == pod.MemberEnd() || !spec->value.HasMember("nodeName")) return "";
  return Str(spec->value["nodeName"]);
}

TEST_CASE("run: each watermark pool keeps its own mode, and the metrics label it by pool",
          "[run][e2e][watermark]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  TestApiProcess& apiserver = **server;
  Api api(apiserver);
  CreateNode(api, "cpu-0", "cpu");
  CreateNode(api, "cpu-1", "cpu");
  // Two GPU nodes: a pod with one feasible node is not scored, and its pool's ratio not taken.
  CreateNode(api, "gpu-0", "gpu");
  CreateNode(api, "gpu-1", "gpu");
  // The CPU pool is 85 % allocated (over its high of 0.8); the GPU nodes are empty. Counting
  // them, the ratio would be 17/60: spread.
  CreatePod(api, "fill-0", 9, "cpu-0", false);
  CreatePod(api, "fill-1", 8, "cpu-1", false);
  const std::string config_path = apiserver.dir() + "/watermark.yaml";
  std::ofstream(config_path) << kConfig;
  auto scheduler = testing::StartKubeschedRun(
      {.kubeconfig = apiserver.kubeconfig(), .config_path = config_path});

  CreatePod(api, "cpu-pod", 1, "", false);
  CreatePod(api, "gpu-pod", 1, "", true);
  std::string cpu_node;
  std::string gpu_node;
  RequireEventually("both pods are bound", *scheduler, [&] {
    cpu_node = NodeName(api, "cpu-pod");
    gpu_node = NodeName(api, "gpu-pod");
    return !cpu_node.empty() && !gpu_node.empty();
  });
  // Stacking puts the CPU pod on the fuller CPU node; spreading would have chosen cpu-1.
  CHECK(cpu_node == "cpu-0");
  CHECK(gpu_node.starts_with("gpu-"));

  const testing::Scrape scrape = testing::ScrapeMetrics(*scheduler);
  const auto mode = [&](const std::string& pool, const std::string& name) {
    return scrape.Value("kubesched_watermark_mode",
                        {{"profile", "kubesched"}, {"pool", pool}, {"mode", name}});
  };
  CHECK(mode("cpu", "stack") == 1);
  CHECK(mode("cpu", "spread") == 0);
  CHECK(mode("gpu", "spread") == 1);
  CHECK(mode("gpu", "stack") == 0);
  const auto ratio = [&](const std::string& pool) {
    return scrape.Value("kubesched_watermark_allocated_ratio",
                        {{"profile", "kubesched"}, {"pool", pool}});
  };
  CHECK(ratio("cpu") >= 0.85);
  CHECK(ratio("gpu") < 0.5);
  REQUIRE(scheduler->Stop(SIGTERM, absl::Seconds(10)).value_or(-1) == 0);
}

}  // namespace
}  // namespace kubesched
