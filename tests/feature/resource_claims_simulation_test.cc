// A pod with resource claims (Dynamic Resource Allocation) is never bound while no plugin of its
// profile allocates claims: binding it would leave the claims unallocated and the pod unable to
// start. It stays pending with the reason; its neighbours without claims are scheduled.

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
  auto report = RunSimulation({cluster.path(), workload.path(), /*seed=*/1, 1},
                              config::DefaultConfiguration());
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

}  // namespace
}  // namespace kubesched::scheduler
