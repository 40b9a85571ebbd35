// A pod with resource claims (Dynamic Resource Allocation) is never bound while no plugin of its
// profile allocates claims (DynamicResources disabled): binding it would leave the claims
// unallocated and the pod unable to start. It stays pending with the reason; its neighbours
// without claims are scheduled. With the default plugins, the DRA objects of a cluster file are
// loaded and the pod gets its device.

#include <catch2/catch.hpp>
#include <string>

#include "config/config.h"
#include "scheduler/simulate/simulation.h"
#include "tests/testing/temp_file.h"

namespace kubesched::scheduler {
namespace {

using testing::TempFile;

constexpr char kCluster[] = R"(apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Namespace, metadata: {name: default}}
- apiVersion: v1
  kind: Node
  metadata: {name: node-1}
  status: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}
)";

constexpr char kWorkload[] = R"(apiVersion: v1
kind: Pod
metadata: {name: with-claim, namespace: default}
spec:
  schedulerName: kubesched
  containers: [{name: c, resources: {requests: {cpu: '1'}}}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
---
apiVersion: v1
kind: Pod
metadata: {name: plain, namespace: default}
spec:
  schedulerName: kubesched
  containers: [{name: c, resources: {requests: {cpu: '1'}}}]
)";

TEST_CASE("a pod with resource claims stays pending while nothing allocates claims",
          "[simulation]") {
  const TempFile cluster(kCluster, "cluster.yaml");
  const TempFile workload(kWorkload, "workload.yaml");
  auto without = config::ParseConfiguration(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
      "profiles: [{schedulerName: kubesched, plugins: {multiPoint: {disabled: "
      "[{name: DynamicResources}]}}}]\n");
  REQUIRE(without.ok());
  auto report = RunSimulation({cluster.path(), workload.path(), /*seed=*/1, 1}, *without);
  REQUIRE(report.ok());
  REQUIRE(report->pod_results.size() == 2);
  for (const PodResult& pod : report->pod_results) {
    INFO(pod.name);
    if (pod.name == "plain") {
      CHECK(pod.node == std::optional<std::string>("node-1"));
      continue;
    }
    CHECK_FALSE(pod.node.has_value());
    REQUIRE(pod.message.has_value());
    CHECK_THAT(*pod.message, Catch::Contains("pod has resource claims (spec.resourceClaims), but "
                                             "no plugin of its profile allocates them"));
  }
}

// The four resource.k8s.io/v1 kinds in a cluster file, one of them bad: the good ones load, the bad
// one is a problem naming it, and the claim pod gets its template's claim and the node's gpu.
constexpr char kDraCluster[] = R"(
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec: {selectors: [{cel: {expression: device.driver == "gpu.example.com"}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-1-gpu}
spec:
  driver: gpu.example.com
  nodeName: node-1
  pool: {name: node-1, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0, attributes: {model: {string: A100}}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: default}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: broken, namespace: default}
spec: {devices: {requests: [{name: gpu}]}}
)";

TEST_CASE("a cluster file with DRA objects loads them and reports the bad one", "[simulation]") {
  const TempFile cluster(std::string(kCluster) + "---\n" + kDraCluster, "cluster.yaml");
  const TempFile workload(kWorkload, "workload.yaml");
  auto report = RunSimulation({cluster.path(), workload.path(), /*seed=*/1, 1},
                              config::DefaultConfiguration());
  REQUIRE(report.ok());
  REQUIRE(report->problems.size() == 1);
  CHECK_THAT(report->problems[0].ToString(),
             Catch::Contains("ResourceClaim default/broken: spec.devices.requests[0]: exactly one "
                             "of exactly, firstAvailable must be set"));
  REQUIRE(report->pod_results.size() == 2);
  for (const PodResult& pod : report->pod_results) {
    INFO(pod.name);
    CHECK(pod.node == std::optional<std::string>("node-1"));
  }
}

}  // namespace
}  // namespace kubesched::scheduler
