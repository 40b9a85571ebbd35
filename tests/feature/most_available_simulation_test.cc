// MostAvailable end to end through simulate: NodeMetrics in the cluster file feed the cache, and a
// burst of pods scheduled before the next sample does not all land on the one node that looked
// idle, because each placed pod's VirtualRequest is taken off that node's room at once.

#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "scheduler/simulate/simulation.h"
#include "tests/testing/temp_file.h"

namespace kubesched::scheduler {
namespace {

using testing::TempFile;

constexpr int kBurst = 16;  // 1 cpu each

// One idle node and three busy ones (10 of 16 cpus in use), all 16 cpus with nothing requested.
// The samples carry no timestamp: taken "now", when the simulation loads them.
std::string ClusterYaml(bool with_metrics) {
  std::string out =
      "apiVersion: v1\nkind: List\nitems:\n"
      "- {apiVersion: v1, kind: Namespace, metadata: {name: default}}\n";
  for (const char* node : {"idle", "busy-1", "busy-2", "busy-3"}) {
    absl::StrAppend(&out, "- apiVersion: v1\n  kind: Node\n  metadata: {name: ", node,
                    "}\n  status:\n    allocatable: {cpu: '16', memory: 64Gi, pods: '110'}\n");
    if (!with_metrics) continue;
    absl::StrAppend(
        &out,
        "- apiVersion: metrics.k8s.io/v1beta1\n  kind: NodeMetrics\n  metadata: {name: ", node,
        "}\n  window: 30s\n  usage: {cpu: '", std::string(node) == "idle" ? "0" : "10",
        "', memory: 1Gi}\n");
  }
  return out;
}

// Only MostAvailable scores (cpu only), so that the placement is its doing alone.
config::Configuration MostAvailableOnly() {
  auto parsed = config::ParseConfiguration(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
      "profiles:\n- schedulerName: kubesched\n  plugins:\n"
      "    preScore:\n      enabled: [{name: MostAvailable}]\n    score:\n"
      "      disabled: [{name: '*'}]\n      enabled: [{name: MostAvailable, weight: 1}]\n"
      "  pluginConfig:\n  - name: MostAvailable\n    args: {resources: [{name: cpu, weight: "
      "1}]}\n");
  INFO((parsed.ok() ? std::string("ok") : std::string(parsed.status().message())));
  REQUIRE(parsed.ok());
  return *parsed;
}

// Three equal, idle nodes of 64 cpus; node `a`'s sample carries `a_timestamp` (none if empty).
std::string EqualNodesClusterYaml(const std::string& a_timestamp) {
  std::string out =
      "apiVersion: v1\nkind: List\nitems:\n"
      "- {apiVersion: v1, kind: Namespace, metadata: {name: default}}\n";
  for (const std::string node : {"a", "b", "c"}) {
    absl::StrAppend(&out, "- apiVersion: v1\n  kind: Node\n  metadata: {name: ", node,
                    "}\n  status:\n    allocatable: {cpu: '64', memory: 256Gi, pods: '110'}\n",
                    "- apiVersion: metrics.k8s.io/v1beta1\n  kind: NodeMetrics\n",
                    "  metadata: {name: ", node, "}\n  window: 30s\n",
                    "  usage: {cpu: '0', memory: 1Gi}\n");
    if (node == "a" && !a_timestamp.empty()) {
      absl::StrAppend(&out, "  timestamp: '", a_timestamp, "'\n");
    }
  }
  return out;
}

std::string WorkloadYaml(int pods) {
  std::string out;
  for (int i = 0; i < pods; ++i) {
    absl::StrAppend(&out, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: burst-", i,
                    ", namespace: default}\nspec:\n  schedulerName: kubesched\n"
                    "  containers:\n  - name: c\n    resources: {requests: {cpu: '1'}}\n");
  }
  return out;
}

std::string WorkloadYaml() { return WorkloadYaml(kBurst); }

std::map<std::string, int> PodsPerNode(const std::string& cluster_yaml,
                                       const std::string& workload_yaml) {
  const TempFile cluster(cluster_yaml, "cluster.yaml");
  const TempFile workload(workload_yaml, "workload.yaml");
  auto report =
      RunSimulation({cluster.path(), workload.path(), /*seed=*/1, 1}, MostAvailableOnly());
  REQUIRE(report.ok());
  std::map<std::string, int> count;
  for (const auto& pod : report->pod_results) {
    REQUIRE(pod.node.has_value());
    ++count[*pod.node];
  }
  return count;
}

std::map<std::string, int> PodsPerNode(bool with_metrics) {
  return PodsPerNode(ClusterYaml(with_metrics), WorkloadYaml());
}

TEST_CASE("MostAvailable spreads a burst once VirtualRequests use up the idle node's lead",
          "[simulation][plugins][most_available]") {
  const std::map<std::string, int> count = PodsPerNode(/*with_metrics=*/true);
  // The idle node (16 free) leads the busy ones (6 free) until 10 pods are placed on it; from
  // then on all four have about equal room and the burst spreads over them.
  CHECK(count.at("idle") >= 10);
  CHECK(count.at("idle") <= 12);
  for (const char* busy : {"busy-1", "busy-2", "busy-3"}) {
    INFO(busy);
    CHECK(count.at(busy) >= 1);
    CHECK(count.at(busy) <= 2);
  }
}

TEST_CASE("MostAvailable without metrics spreads by requests",
          "[simulation][plugins][most_available]") {
  const std::map<std::string, int> count = PodsPerNode(/*with_metrics=*/false);
  for (const char* node : {"idle", "busy-1", "busy-2", "busy-3"}) {
    INFO(node);
    CHECK(count.at(node) == kBurst / 4);
  }
}

TEST_CASE("MostAvailable spreads a burst even when a node's sample is stamped in the future",
          "[simulation][plugins][most_available]") {
  // Node a's clock runs years ahead. Were its sample taken as stamped, no pod placed on it would
  // count against it until then, and the burst would pile onto it.
  const std::map<std::string, int> count =
      PodsPerNode(EqualNodesClusterYaml("2099-01-01T00:00:00Z"), WorkloadYaml(30));
  for (const char* node : {"a", "b", "c"}) {
    INFO(node);
    CHECK(count.at(node) == 10);
  }
}

}  // namespace
}  // namespace kubesched::scheduler
