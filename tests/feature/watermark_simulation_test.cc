// The Watermark scoring strategy end to end through simulate: a cluster filled with small pods
// past the high watermark switches from spread to stack, so that the leftover room gathers on
// fewer nodes and more large pods fit afterwards than with LeastAllocated alone.

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "scheduler/simulate/report_output.h"
#include "scheduler/simulate/simulation.h"
#include "tests/testing/temp_file.h"

namespace kubesched::scheduler {
namespace {

using testing::TempFile;

constexpr int kNodes = 10;       // 32 cpu / 128Gi each: 320 cpu in all
constexpr int kSmallPods = 296;  // 1 cpu / 4Gi each: 92.5% of the cluster
constexpr int kLargePods = 20;   // 4 cpu / 16Gi each: far more than can fit

std::string ClusterYaml() {
  std::string out =
      "apiVersion: v1\nkind: List\nitems:\n"
      "- {apiVersion: v1, kind: Namespace, metadata: {name: default}}\n";
  for (int i = 0; i < kNodes; ++i) {
    absl::StrAppend(&out, "- apiVersion: v1\n  kind: Node\n  metadata: {name: node-", i,
                    "}\n  status:\n    allocatable: {cpu: '32', memory: 128Gi, pods: '110'}\n");
  }
  return out;
}

std::string PodYaml(const std::string& name, const std::string& cpu, const std::string& memory) {
  return absl::StrCat("---\napiVersion: v1\nkind: Pod\nmetadata: {name: ", name,
                      ", namespace: default}\nspec:\n  schedulerName: kubesched\n"
                      "  containers:\n  - name: c\n    resources: {requests: {cpu: '",
                      cpu, "', memory: ", memory, "}}\n");
}

// Many small pods first, then the large ones.
std::string WorkloadYaml() {
  std::string out;
  for (int i = 0; i < kSmallPods; ++i) out += PodYaml(absl::StrCat("small-", i), "1", "4Gi");
  for (int i = 0; i < kLargePods; ++i) out += PodYaml(absl::StrCat("large-", i), "4", "16Gi");
  return out;
}

config::Configuration ConfigWith(const std::string& strategy) {
  auto parsed = config::ParseConfiguration(absl::StrCat(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
      "profiles:\n- schedulerName: kubesched\n  pluginConfig:\n  - name: NodeResourcesFit\n"
      "    args: {scoringStrategy: ",
      strategy, "}\n"));
  INFO((parsed.ok() ? std::string("ok") : std::string(parsed.status().message())));
  REQUIRE(parsed.ok());
  return *parsed;
}

SimulationReport Simulate(const std::string& strategy) {
  const TempFile cluster(ClusterYaml(), "cluster.yaml");
  const TempFile workload(WorkloadYaml(), "workload.yaml");
  auto report =
      RunSimulation({cluster.path(), workload.path(), /*seed=*/1, 1}, ConfigWith(strategy));
  REQUIRE(report.ok());
  return *report;
}

int ScheduledWithPrefix(const SimulationReport& report, const std::string& prefix) {
  int count = 0;
  for (const auto& pod : report.pod_results) {
    if (pod.name.rfind(prefix, 0) == 0 && pod.node.has_value()) ++count;
  }
  return count;
}

TEST_CASE("watermark stacks past the high mark and fits more large pods than spreading",
          "[simulation][watermark]") {
  const auto least = Simulate("{type: LeastAllocated}");
  const auto watermark = Simulate("{type: Watermark, watermark: {high: 0.85, low: 0.80}}");

  // Every small pod fits either way.
  CHECK(ScheduledWithPrefix(least, "small-") == kSmallPods);
  CHECK(ScheduledWithPrefix(watermark, "small-") == kSmallPods);

  const int large_least = ScheduledWithPrefix(least, "large-");
  const int large_watermark = ScheduledWithPrefix(watermark, "large-");
  UNSCOPED_INFO("large pods placed: LeastAllocated " << large_least << ", Watermark "
                                                     << large_watermark);
  // Spreading leaves 29-30 cpus on every node (2-3 free): no 4-cpu pod fits. Spreading up to 85%
  // then stacking the rest leaves whole 4-5 cpu holes on half the nodes.
  CHECK(large_least == 0);
  CHECK(large_watermark >= 5);
  CHECK(large_watermark > large_least);

  // Only the Watermark run reports a mode; it ended stacking, above the high mark.
  CHECK_FALSE(least.watermark.has_value());
  REQUIRE(watermark.watermark.has_value());
  CHECK(watermark.watermark->mode == "stack");
  const double expected_cpu = (kSmallPods + 4.0 * large_watermark) / (kNodes * 32.0);
  CHECK(watermark.watermark->allocated_ratio == Approx(expected_cpu));
  CHECK(watermark.watermark->allocated_ratio >= 0.85);

  // Both output forms carry it.
  CHECK(SimulationJson(watermark).find("\"allocatedRatio\"") != std::string::npos);
  CHECK(SimulationJson(least).find("\"watermark\": null") != std::string::npos);
  CHECK(SimulationTable(watermark).find("watermark: stack") != std::string::npos);
}

TEST_CASE("watermark with a high mark never reached spreads like LeastAllocated",
          "[simulation][watermark]") {
  const auto least = Simulate("{type: LeastAllocated}");
  const auto watermark = Simulate("{type: Watermark, watermark: {high: 1.0, low: 1.0}}");
  CHECK(ScheduledWithPrefix(watermark, "large-") == ScheduledWithPrefix(least, "large-"));
  REQUIRE(watermark.watermark.has_value());
  CHECK(watermark.watermark->mode == "spread");
}

TEST_CASE("explain shows the watermark mode and ratio of the cluster it sees",
          "[simulation][watermark]") {
  // Eight of the ten nodes hold a 30-cpu / 120Gi pod.
  std::string cluster = ClusterYaml();
  auto parsed = api::DecodeFile(TempFile(cluster).path());
  REQUIRE(parsed.ok());
  std::vector<api::Object> objects = std::move(parsed->objects);
  std::string bound;
  for (int i = 0; i < 8; ++i) {
    bound += absl::StrCat("---\napiVersion: v1\nkind: Pod\nmetadata: {name: bound-", i,
                          ", namespace: default}\nspec:\n  nodeName: node-", i,
                          "\n  containers:\n  - name: c\n    resources: {requests: {cpu: '30', "
                          "memory: 120Gi}}\n");
  }
  auto bound_objects = api::DecodeFile(TempFile(bound).path());
  REQUIRE(bound_objects.ok());
  for (auto& object : bound_objects->objects) objects.push_back(std::move(object));
  api::Pod pod;
  pod.meta.name = "p";
  pod.meta.namespace_name = "default";
  pod.spec.scheduler_name = "kubesched";

  const auto report = ExplainObjects(
      objects, pod, ConfigWith("{type: Watermark, watermark: {high: 0.7, low: 0.6}}"));
  REQUIRE(report.ok());
  REQUIRE(report->watermark.has_value());
  CHECK(report->watermark->mode == "stack");
  // cpu 240/320 and memory 960Gi/1280Gi: 0.75 both.
  CHECK(report->watermark->allocated_ratio == Approx(0.75));
  CHECK(ExplainJson(*report).find("\"mode\": \"stack\"") != std::string::npos);
  CHECK(ExplainTable(*report).find("watermark: stack") != std::string::npos);

  const auto plain = ExplainObjects(objects, pod, ConfigWith("{type: MostAllocated}"));
  REQUIRE(plain.ok());
  CHECK_FALSE(plain->watermark.has_value());
}

TEST_CASE("the shipped watermark example configuration loads", "[simulation][watermark]") {
  const auto loaded =
      config::LoadConfigurationFile(testing::SourcePath("config/examples/watermark.yaml"));
  INFO((loaded.ok() ? std::string("ok") : std::string(loaded.status().message())));
  REQUIRE(loaded.ok());
  REQUIRE(CheckConfiguration(*loaded).ok());
}

}  // namespace
}  // namespace kubesched::scheduler
