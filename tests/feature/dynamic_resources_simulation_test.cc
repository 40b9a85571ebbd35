// DynamicResources through the real scheduler on the embedded cluster (which plays the
// ResourceClaim controller): template claims are made and allocated, no device is ever given
// twice, pods land on the nodes of their devices, a shared claim keeps its pods together, and a
// pod whose claims no node can serve stays pending with upstream's reason.

#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>
#include <variant>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "scheduler/api/decode.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/simulate/simulation.h"
#include "tests/feature/dra_world.h"

namespace kubesched::scheduler {
namespace {

using dra_testing::World;

std::string Node(const std::string& name) {
  return absl::StrCat("---\napiVersion: v1\nkind: Node\nmetadata: {name: ", name,
                      "}\nstatus: {allocatable: {cpu: '16', memory: 64Gi, pods: '110'}}\n");
}

// Two gpus of `model` published for `node`, in a pool named after it.
std::string Gpus(const std::string& node, const std::string& model) {
  return absl::StrCat(
      "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: ", node,
      "-gpus}\nspec:\n  driver: gpu.example.com\n  nodeName: ", node, "\n  pool: {name: ", node,
      ", generation: 1, resourceSliceCount: 1}\n  devices:\n",
      "  - {name: gpu-0, attributes: {model: {string: ", model, "}}}\n",
      "  - {name: gpu-1, attributes: {model: {string: ", model, "}}}\n");
}

// Nodes 1 and 2 with A100s, node 3 with H100s, node 4 with none; a class for the gpus, and a
// template for one gpu of a model.
std::string Cluster() {
  return Node("node-1") + Node("node-2") + Node("node-3") + Node("node-4") +
         Gpus("node-1", "A100") + Gpus("node-2", "A100") + Gpus("node-3", "H100") +
         R"(---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-a100, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly:
          deviceClassName: gpu.example.com
          selectors: [{cel: {expression: 'device.attributes["gpu.example.com"].model == "A100"'}}]
)";
}

std::string Pod(const std::string& name, const std::string& claims) {
  return absl::StrCat("---\napiVersion: v1\nkind: Pod\nmetadata: {name: ", name,
                      ", namespace: default, uid: ", name,
                      "-uid}\nspec:\n  schedulerName: kubesched\n",
                      "  containers: [{name: c, resources: {requests: {cpu: '1'}}}]\n",
                      "  resourceClaims: ", claims, "\n");
}

TEST_CASE("template claims get distinct devices on their pods' nodes, and the rest wait",
          "[simulation][dra]") {
  World world(Cluster());
  for (int i = 0; i < 6; ++i) {
    world.Add(Pod(absl::StrCat("train-", i), "[{name: gpu, resourceClaimTemplateName: one-a100}]"));
  }
  world.Run();
  REQUIRE(world.observer.bound.size() == 4);
  std::set<std::string> devices;
  for (const auto& [pod, node] : world.observer.bound) {
    INFO(pod);
    CHECK((node == "node-1" || node == "node-2"));
    const auto claim = world.ClaimOf(pod, "gpu");
    REQUIRE(claim != nullptr);
    REQUIRE(claim->allocation.has_value());
    REQUIRE(claim->allocation->devices.size() == 1);
    const api::DeviceRequestAllocationResult& result = claim->allocation->devices[0];
    CHECK(api::SymbolText(result.pool) == node);  // a device of the pod's own node
    devices.insert(std::string(api::SymbolText(result.pool)) + "/" +
                   std::string(api::SymbolText(result.device)));
    REQUIRE(claim->allocation->node_selector.has_value());
    CHECK(claim->allocation->node_selector->terms[0].match_fields[0].values ==
          std::vector<std::string>{node});
    REQUIRE(claim->reserved_for.size() == 1);
    CHECK(claim->reserved_for[0].name == pod);
    CHECK(claim->reserved_for[0].uid == pod + "-uid");
  }
  CHECK(devices.size() == 4);  // never one device twice
  REQUIRE(world.observer.messages.size() == 2);
  for (const auto& [pod, message] : world.observer.messages) {
    INFO(pod);
    CHECK_THAT(message,
               Catch::StartsWith("0/4 nodes are available: 4 cannot allocate all claims."));
  }
}

TEST_CASE("a shared claim is allocated once and reserved for each of its pods, on one node",
          "[simulation][dra]") {
  World world(Cluster() + R"(---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared-h100, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
        selectors: [{cel: {expression: 'device.attributes["gpu.example.com"].model == "H100"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: any-gpu, namespace: default}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}}
)");
  for (int i = 0; i < 3; ++i) {
    world.Add(Pod(absl::StrCat("worker-", i), "[{name: gpu, resourceClaimName: shared-h100}]"));
  }
  // A pod with a claim of its own besides the shared one: it may take any gpu, but only one on
  // the shared claim's node will do.
  world.Add(Pod("mixed",
                "[{name: own, resourceClaimTemplateName: any-gpu}, "
                "{name: shared, resourceClaimName: shared-h100}]"));
  world.Run();
  REQUIRE(world.observer.bound.size() == 4);
  for (const auto& [pod, node] : world.observer.bound) CHECK(node == "node-3");
  const auto shared = world.cluster.GetResourceClaim("default/shared-h100");
  REQUIRE(shared->allocation.has_value());
  REQUIRE(shared->allocation->devices.size() == 1);
  std::set<std::string> consumers;
  for (const api::ResourceClaimConsumer& consumer : shared->reserved_for) {
    consumers.insert(consumer.name);
  }
  CHECK(consumers == std::set<std::string>{"worker-0", "worker-1", "worker-2", "mixed"});
  const auto own = world.ClaimOf("mixed", "own");
  REQUIRE(own->allocation.has_value());
  CHECK(api::SymbolText(own->allocation->devices[0].pool) == "node-3");
  CHECK(own->allocation->devices[0].device != shared->allocation->devices[0].device);
}

TEST_CASE("a pod waits for its template claim's template, then is scheduled", "[simulation][dra]") {
  World world(Node("node-1") + Gpus("node-1", "A100") + R"(---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
)");
  world.Add(Pod("early", "[{name: gpu, resourceClaimTemplateName: later}]"));
  world.Run();
  CHECK(world.observer.bound.empty());
  world.Add(R"(---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: later, namespace: default}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}}
)");
  world.Run();
  CHECK(world.observer.bound == std::map<std::string, std::string>{{"early", "node-1"}});
}

}  // namespace
}  // namespace kubesched::scheduler
