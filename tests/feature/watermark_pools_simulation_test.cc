// The Watermark strategy on a mixed cluster through simulate and explain: empty GPU nodes,
// tainted, must not hold the CPU nodes' ratio down. CPU pods see only the CPU nodes (97.5% full)
// and stack; GPU pods, tolerating the taint, see the nodes they may use; explicit pools each
// report their own ratio.

#include <catch2/catch.hpp>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "scheduler/api/decode.h"
#include "scheduler/simulate/report_output.h"
#include "scheduler/simulate/simulation.h"
#include "tests/testing/temp_file.h"

namespace kubesched::scheduler {
namespace {

using testing::TempFile;

constexpr int kCpuNodes = 4;  // 100 cpu / 100Gi each
constexpr int kGpuNodes = 4;  // 200 cpu / 800Gi / 8 GPUs each, tainted, empty

std::string NodeYaml(const std::string& name, const std::string& meta, const std::string& spec,
                     const std::string& allocatable) {
  return absl::StrCat("- apiVersion: v1\n  kind: Node\n  metadata: {name: ", name, meta, "}\n",
                      spec, "  status:\n    allocatable: {", allocatable, "}\n");
}

std::string BoundPodYaml(const std::string& name, const std::string& node, int cpu) {
  return absl::StrCat("- apiVersion: v1\n  kind: Pod\n  metadata: {name: ", name,
                      ", namespace: default}\n  spec:\n    nodeName: ", node,
                      "\n    containers:\n    - name: c\n      resources: {requests: {cpu: '", cpu,
                      "', memory: ", cpu, "Gi}}\n");
}

// cpu-0 holds 98 cpus, the other CPU nodes 97 each (97.25% of the CPU nodes); the GPU nodes
// are empty and tainted. Counting them, the cluster's ratio would be about 0.2.
std::string ClusterYaml() {
  std::string out =
      "apiVersion: v1\nkind: List\nitems:\n"
      "- {apiVersion: v1, kind: Namespace, metadata: {name: default}}\n";
  for (int i = 0; i < kCpuNodes; ++i) {
    const std::string name = absl::StrCat("cpu-", i);
    out += NodeYaml(name, ", labels: {pool: cpu}", "", "cpu: '100', memory: 100Gi, pods: '110'");
    out += BoundPodYaml("fill-" + name, name, i == 0 ? 98 : 97);
  }
  for (int i = 0; i < kGpuNodes; ++i) {
    out +=
        NodeYaml(absl::StrCat("gpu-", i), ", labels: {pool: gpu}",
                 "  spec: {taints: [{key: nvidia.com/gpu, value: present, effect: NoSchedule}]}\n",
                 "cpu: '200', memory: 800Gi, pods: '110', nvidia.com/gpu: '8'");
  }
  return out;
}

std::string PodYaml(const std::string& name, bool gpu) {
  std::string out = absl::StrCat("---\napiVersion: v1\nkind: Pod\nmetadata: {name: ", name,
                                 ", namespace: default}\nspec:\n  schedulerName: kubesched\n");
  if (gpu) {
    out += "  tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]\n";
  }
  absl::StrAppend(&out, "  containers:\n  - name: c\n    resources: {requests: {cpu: '1', ",
                  "memory: 1Gi", gpu ? ", nvidia.com/gpu: '1'" : "", "}}\n");
  return out;
}

config::Configuration ConfigWith(const std::string& watermark) {
  auto parsed = config::ParseConfiguration(absl::StrCat(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
      "profiles:\n- schedulerName: kubesched\n  pluginConfig:\n  - name: NodeResourcesFit\n"
      "    args: {scoringStrategy: {type: Watermark, watermark: ",
      watermark, "}}\n"));
  INFO((parsed.ok() ? std::string("ok") : std::string(parsed.status().message())));
  REQUIRE(parsed.ok());
  return *parsed;
}

SimulationReport Simulate(const std::string& watermark, const std::string& workload) {
  const TempFile cluster(ClusterYaml(), "cluster.yaml");
  const TempFile pods(workload, "workload.yaml");
  auto report = RunSimulation({cluster.path(), pods.path(), /*seed=*/1, 1}, ConfigWith(watermark));
  REQUIRE(report.ok());
  return *report;
}

std::string NodeOf(const SimulationReport& report, const std::string& pod) {
  for (const auto& result : report.pod_results) {
    if (result.name == pod && result.node.has_value()) return *result.node;
  }
  return "";
}

ExplainReport Explain(const std::string& watermark, bool gpu) {
  auto cluster = api::DecodeFile(TempFile(ClusterYaml()).path());
  REQUIRE(cluster.ok());
  auto pod = api::DecodeFile(TempFile(PodYaml("p", gpu)).path());
  REQUIRE(pod.ok());
  REQUIRE(pod->objects.size() == 1);
  const auto* decoded = std::get_if<api::Pod>(&pod->objects.front());
  REQUIRE(decoded != nullptr);
  auto report = ExplainObjects(cluster->objects, *decoded, ConfigWith(watermark));
  REQUIRE(report.ok());
  return *report;
}

TEST_CASE("on a mixed cluster CPU pods stack once the CPU nodes are full, whatever the GPU nodes",
          "[simulation][watermark]") {
  const auto report = Simulate("{high: 0.85, low: 0.80}", PodYaml("cpu-pod", false));
  // Stacking puts the pod on the fullest CPU node; spreading would pick one of the others.
  CHECK(NodeOf(report, "cpu-pod") == "cpu-0");
  REQUIRE(report.watermark.has_value());
  CHECK(report.watermark->pool == "default");
  CHECK(report.watermark->mode == "stack");
  CHECK(report.watermark->allocated_ratio == Approx((98 + 3 * 97 + 1) / 400.0));
  CHECK(SimulationTable(report).find("watermark: stack (pool default, allocated ratio 0.97") !=
        std::string::npos);
  CHECK(SimulationJson(report).find("\"pool\": \"default\"") != std::string::npos);
}

TEST_CASE("explain shows a GPU pod the ratio of the nodes it may use, a CPU pod its own",
          "[simulation][watermark]") {
  const auto cpu = Explain("{high: 0.85, low: 0.80}", false);
  REQUIRE(cpu.watermark.has_value());
  CHECK(cpu.watermark->mode == "stack");
  CHECK(cpu.watermark->allocated_ratio == Approx((98 + 3 * 97) / 400.0));

  // The GPU pod tolerates the taint: every node counts (cpu 389/1200, memory 389Gi/3600Gi).
  const auto gpu = Explain("{high: 0.85, low: 0.80}", true);
  REQUIRE(gpu.watermark.has_value());
  CHECK(gpu.watermark->mode == "spread");
  CHECK(gpu.watermark->allocated_ratio == Approx((389.0 / 1200 + 389.0 / 3600) / 2));
  CHECK(ExplainTable(gpu).find("pool default") != std::string::npos);
}

TEST_CASE("explicit pools: GPU pods see the gpu pool, CPU pods the cpu pool",
          "[simulation][watermark]") {
  const std::string pools =
      "{high: 0.85, low: 0.80, pools: [{name: gpu, nodeSelector: {pool: gpu}, high: 0.5, "
      "low: 0.4}, {name: cpu, nodeSelector: {pool: cpu}}]}";
  const auto gpu = Explain(pools, true);
  REQUIRE(gpu.watermark.has_value());
  CHECK(gpu.watermark->pool == "gpu");
  CHECK(gpu.watermark->allocated_ratio == Approx(0.0));
  CHECK(gpu.watermark->mode == "spread");
  CHECK(ExplainJson(gpu).find("\"pool\": \"gpu\"") != std::string::npos);

  const auto cpu = Explain(pools, false);
  REQUIRE(cpu.watermark.has_value());
  CHECK(cpu.watermark->pool == "cpu");
  CHECK(cpu.watermark->mode == "stack");

  // Through simulate: GPU pods land in their pool; the report's pod without tolerations is in
  // the cpu pool, still stacking.
  std::string workload;
  for (int i = 0; i < 4; ++i) workload += PodYaml(absl::StrCat("gpu-pod-", i), true);
  const auto report = Simulate(pools, workload);
  for (int i = 0; i < 4; ++i) {
    CHECK(NodeOf(report, absl::StrCat("gpu-pod-", i)).rfind("gpu-", 0) == 0);
  }
  REQUIRE(report.watermark.has_value());
  CHECK(report.watermark->pool == "cpu");
  CHECK(report.watermark->mode == "stack");
}

}  // namespace
}  // namespace kubesched::scheduler
