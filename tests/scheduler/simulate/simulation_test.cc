#include "scheduler/simulate/simulation.h"

#include <catch2/catch.hpp>

#include "scheduler/simulate/report_output.h"
#include "tests/testing/temp_file.h"

namespace kubesched::scheduler {
namespace {

using testing::SourcePath;
using testing::TempFile;

SimulationReport SimulateExample(uint64_t seed = 1) {
  SimulationInput input{SourcePath("examples/cluster.yaml"), SourcePath("examples/workload.yaml"),
                        seed, 2};
  auto report = RunSimulation(input, config::DefaultConfiguration());
  REQUIRE(report.ok());
  return *report;
}

const PodResult* FindPod(const SimulationReport& report, const std::string& name) {
  for (const auto& pod : report.pod_results) {
    if (pod.name == name) return &pod;
  }
  return nullptr;
}

TEST_CASE("the example accounts for every pending pod", "[simulation]") {
  const auto report = SimulateExample();
  CHECK(report.pods == 255);  // 253 workload pods and two pending pods of the cluster dump
  CHECK(report.scheduled + report.unschedulable + report.skipped == report.pods);
  CHECK(report.skipped == 6);  // five workload pods and one cluster pod of another scheduler
  CHECK(report.problems.empty());
  CHECK(report.scheduled > 200);
}

TEST_CASE("the example never over-commits a node", "[simulation]") {
  const auto report = SimulateExample();
  REQUIRE(report.nodes.size() == 20);
  for (const auto& node : report.nodes) {
    INFO(node.name);
    for (size_t id = 0; id < std::max(node.requested.size(), node.allocatable.size()); ++id) {
      const auto resource = static_cast<api::ResourceId>(id);
      if (resource == api::kPods) continue;
      CHECK(node.requested.Get(resource) <= node.allocatable.Get(resource));
    }
    CHECK(node.pods <= node.allocatable.Get(api::kPods));
  }
}

TEST_CASE("the example's impossible pods say why, in upstream's words", "[simulation]") {
  const auto report = SimulateExample();
  const auto* huge = FindPod(report, "huge-batch-0");
  REQUIRE(huge != nullptr);
  CHECK_FALSE(huge->node.has_value());
  REQUIRE(huge->message.has_value());
  CHECK(huge->message->rfind("0/20 nodes are available: ", 0) == 0);
  CHECK(huge->message->find("Insufficient cpu") != std::string::npos);

  const auto* untolerated = FindPod(report, "gpu-no-toleration-0");
  REQUIRE(untolerated != nullptr);
  CHECK_FALSE(untolerated->node.has_value());
  CHECK(untolerated->message->find("node(s) had untolerated taint(s)") != std::string::npos);

  const auto* pinned = FindPod(report, "pinned-0");
  REQUIRE(pinned != nullptr);
  CHECK(pinned->node == std::optional<std::string>("cpu-b-2"));
}

TEST_CASE("GPU pods land only on GPU nodes of the model they require", "[simulation]") {
  const auto report = SimulateExample();
  for (const auto& pod : report.pod_results) {
    if (pod.name.rfind("train-llm-", 0) == 0 && pod.node.has_value()) {
      CHECK(pod.node->rfind("gpu-a100-", 0) == 0);
    }
    if (pod.name.rfind("notebook-", 0) == 0 && pod.node.has_value()) {
      CHECK(pod.node->rfind("gpu-", 0) == 0);
    }
  }
}

TEST_CASE("required anti-affinity keeps cache pods on distinct nodes", "[simulation]") {
  const auto report = SimulateExample();
  std::set<std::string> nodes;
  int placed = 0;
  for (const auto& pod : report.pod_results) {
    if (pod.name.rfind("cache-", 0) == 0 && pod.node.has_value()) {
      ++placed;
      CHECK(nodes.insert(*pod.node).second);
    }
  }
  CHECK(placed > 0);
}

TEST_CASE("the same seed gives the same placement", "[simulation]") {
  const auto a = SimulateExample(42);
  const auto b = SimulateExample(42);
  REQUIRE(a.pod_results.size() == b.pod_results.size());
  for (size_t i = 0; i < a.pod_results.size(); ++i) {
    CHECK(a.pod_results[i].node == b.pod_results[i].node);
  }
}

TEST_CASE("bad objects are reported by file and name and the rest is simulated", "[simulation]") {
  TempFile cluster(R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: n1}
  status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}}
- apiVersion: v1
  kind: Pod
  metadata: {name: bad-quantity, namespace: default}
  spec:
    schedulerName: kubesched
    containers: [{name: c, resources: {requests: {cpu: "lots"}}}]
- apiVersion: v1
  kind: Pod
  metadata: {name: good, namespace: default}
  spec:
    schedulerName: kubesched
    containers: [{name: c, resources: {requests: {cpu: "1"}}}]
- apiVersion: v1
  kind: Pod
  metadata: {name: good, namespace: default}
  spec:
    schedulerName: kubesched
    containers: [{name: c}]
- apiVersion: v1
  kind: Widget
  metadata: {name: w}
)");
  SimulationInput input{cluster.path(), std::nullopt, 1, 1};
  auto report = RunSimulation(input, config::DefaultConfiguration());
  REQUIRE(report.ok());
  REQUIRE(report->problems.size() == 3);
  std::string all;
  for (const auto& p : report->problems) all += p.ToString() + "\n";
  INFO(all);
  CHECK(all.find("bad-quantity") != std::string::npos);
  CHECK(all.find("lots") != std::string::npos);
  CHECK(all.find("Widget") != std::string::npos);
  CHECK(all.find("already exists") != std::string::npos);
  CHECK(all.find(cluster.path()) != std::string::npos);
  REQUIRE(report->pods == 1);
  CHECK(report->pod_results[0].node == std::optional<std::string>("n1"));
}

TEST_CASE("a malformed file is an error naming the file", "[simulation]") {
  TempFile cluster("items: [ {kind: Node\n");
  SimulationInput input{cluster.path(), std::nullopt, 1, 1};
  auto report = RunSimulation(input, config::DefaultConfiguration());
  REQUIRE_FALSE(report.ok());
  CHECK(std::string(report.status().message()).find(cluster.path()) != std::string::npos);
}

TEST_CASE("a missing file is an error naming the file", "[simulation]") {
  SimulationInput input{"/nonexistent/cluster.yaml", std::nullopt, 1, 1};
  auto report = RunSimulation(input, config::DefaultConfiguration());
  REQUIRE_FALSE(report.ok());
  CHECK(std::string(report.status().message()).find("/nonexistent/cluster.yaml") !=
        std::string::npos);
}

TEST_CASE("simulate and explain list typed queue limits that match no node of the cluster",
          "[simulation][quota]") {
  TempFile cluster(R"(apiVersion: v1
kind: List
items:
- apiVersion: v1
  kind: Node
  metadata: {name: a100, labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}}
  status: {capacity: {cpu: "8", memory: 8Gi, pods: "110", nvidia.com/gpu: "8"}}
)");
  TempFile pod(R"(apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec: {schedulerName: kubesched, containers: [{name: c}]}
)");
  config::Configuration config = config::DefaultConfiguration();
  auto queues = config::ParseQueuesDocument(
      "models: {A100: [NVIDIA-A100-*]}\n"
      "tree: [{name: gpu, max: {nvidia.com/gpu.A100: '4', nvidia.com/gpu.A10O: '4'}}]\n");
  REQUIRE(queues.ok());
  config.queues = *queues;
  const std::vector<std::string> expected = {
      "queue root.gpu: the max on nvidia.com/gpu.A10O matches no node: no node's model label "
      "names model A10O (check the queue configuration's models)"};
  auto simulated = RunSimulation({cluster.path(), std::nullopt, 1, 1}, config);
  REQUIRE(simulated.ok());
  CHECK(simulated->typed_limit_warnings == expected);
  CHECK_THAT(SimulationTable(*simulated), Catch::Contains("warning: " + expected[0]));
  auto explained = RunExplain({cluster.path(), pod.path()}, config);
  REQUIRE(explained.ok());
  CHECK(explained->typed_limit_warnings == expected);
  CHECK_THAT(ExplainJson(*explained), Catch::Contains("\"typedLimitWarnings\": [\n"));
}

}  // namespace
}  // namespace kubesched::scheduler
