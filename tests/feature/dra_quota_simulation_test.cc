// DRA GPUs in queue quota through the real scheduler on the embedded cluster: one typed limit
// (`nvidia.com/gpu.A100`) holds A100s from the device plugin (a labelled node's nvidia.com/gpu)
// and A100s from ResourceClaims together; a pod whose claim could take another model gets it.

#include <catch2/catch.hpp>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "scheduler/api/decode.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/simulate/simulation.h"
#include "tests/feature/dra_world.h"

namespace kubesched::scheduler {
namespace {

using dra_testing::World;

constexpr char kConfig[] = R"(
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
queues:
  modelLabels: {nvidia.com/gpu: nvidia.com/gpu.product}
  models: {A100: [NVIDIA-A100-SXM4-80GB]}
  devices:
  - {driver: gpu.nvidia.com, resource: nvidia.com/gpu, modelAttribute: productName}
  tree:
  - {name: ml, max: {nvidia.com/gpu.A100: "3"}}
)";

config::Configuration Config() {
  auto config = config::ParseConfiguration(kConfig);
  INFO(config.status().message());
  REQUIRE(config.ok());
  return *std::move(config);
}

// The pool (named after its node) of the device the pod's claim got; "" for none.
std::string DevicePool(World& world, const std::string& pod) {
  const auto claim = world.ClaimOf(pod, "gpu");
  if (claim == nullptr || !claim->allocation.has_value()) return "";
  REQUIRE(claim->allocation->devices.size() == 1);
  return std::string(api::SymbolText(claim->allocation->devices[0].pool));
}

// plugin-a100: four device-plugin A100s. dra-a100 and dra-h100: two DRA GPUs each, published by
// gpu.nvidia.com with the product names GPU feature discovery would label.
std::string Cluster() {
  std::string yaml = R"(---
apiVersion: v1
kind: Node
metadata: {name: plugin-a100, labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}}
status: {allocatable: {cpu: '16', memory: 64Gi, pods: '110', nvidia.com/gpu: '4'}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec: {selectors: [{cel: {expression: 'device.driver == "gpu.nvidia.com"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: any-gpu, namespace: default}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]}}}
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
          deviceClassName: gpu.nvidia.com
          selectors:
          - cel: {expression: 'device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA A100")'}
)";
  for (const auto& [node, product] :
       {std::pair("dra-a100", "NVIDIA A100-SXM4-80GB"), std::pair("dra-h100", "NVIDIA H100")}) {
    absl::StrAppend(
        &yaml, "---\napiVersion: v1\nkind: Node\nmetadata: {name: ", node,
        "}\nstatus: {allocatable: {cpu: '16', memory: 64Gi, pods: '110'}}\n",
        "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: ", node,
        "}\nspec:\n  driver: gpu.nvidia.com\n  nodeName: ", node, "\n  pool: {name: ", node,
        ", generation: 1, resourceSliceCount: 1}\n", "  devices:\n");
    for (int i = 0; i < 2; ++i) {
      absl::StrAppend(&yaml, "  - {name: gpu-", i, ", attributes: {productName: {string: '",
                      product, "'}}}\n");
    }
  }
  return yaml;
}

std::string PluginPod(const std::string& name) {
  return absl::StrCat("---\napiVersion: v1\nkind: Pod\nmetadata: {name: ", name,
                      ", namespace: default, uid: ", name,
                      "-uid, labels: {kubesched.io/queue: root.ml}}\nspec:\n",
                      "  schedulerName: kubesched\n  containers: [{name: c, resources: "
                      "{requests: {cpu: '1', nvidia.com/gpu: '1'}, limits: {nvidia.com/gpu: "
                      "'1'}}}]\n");
}

// A pod of queue `queue` ("" for its namespace's) whose claim comes from `template_name`.
std::string ClaimPod(const std::string& name, const std::string& template_name,
                     const std::string& queue = "root.ml", int priority = 0) {
  return absl::StrCat(
      "---\napiVersion: v1\nkind: Pod\nmetadata: {name: ", name,
      ", namespace: default, uid: ", name, "-uid",
      queue.empty() ? "" : absl::StrCat(", labels: {kubesched.io/queue: ", queue, "}"),
      "}\nspec:\n  priority: ", priority, "\n  schedulerName: kubesched\n",
      "  containers: [{name: c, resources: {requests: {cpu: '1'}}}]\n",
      "  resourceClaims: [{name: gpu, resourceClaimTemplateName: ", template_name, "}]\n");
}

TEST_CASE("one A100 limit holds device plugin and DRA A100s together", "[simulation][dra][quota]") {
  World world(Cluster(), Config());
  world.Add(PluginPod("plugin-0") + PluginPod("plugin-1"));
  world.Run();
  REQUIRE(world.observer.bound.size() == 2);

  // Room for one more A100: of three pods that take any GPU, one may get an A100, the others
  // get the H100s.
  for (int i = 0; i < 3; ++i) world.Add(ClaimPod(absl::StrCat("any-", i), "any-gpu"));
  world.Run();
  int a100s = 0;
  for (int i = 0; i < 3; ++i) {
    const std::string pod = absl::StrCat("any-", i);
    INFO(pod);
    REQUIRE(world.observer.bound.contains(pod));
    const std::string pool = DevicePool(world, pod);
    CHECK(pool == world.observer.bound.at(pod));
    a100s += pool == "dra-a100" ? 1 : 0;
  }
  CHECK(a100s == 1);

  // The limit is reached: neither an A100 from the device plugin nor one from a claim is given.
  world.Add(PluginPod("plugin-2") + ClaimPod("a100-0", "one-a100"));
  world.Run();
  REQUIRE(world.observer.messages.contains("plugin-2"));
  CHECK_THAT(world.observer.messages.at("plugin-2"),
             Catch::Contains("insufficient quota for nvidia.com/gpu.A100"));
  REQUIRE(world.observer.messages.contains("a100-0"));
  CHECK_THAT(world.observer.messages.at("a100-0"),
             Catch::Contains("queue root.ml: insufficient quota for nvidia.com/gpu.A100 (used 3, "
                             "max 3, requested more by the pod's resource claims)"));
  CHECK(DevicePool(world, "a100-0").empty());
}

TEST_CASE("a pod preempts the holder of the device its claim needs",
          "[simulation][dra][preemption]") {
  World world(Cluster(), Config());
  for (int i = 0; i < 4; ++i) world.Add(ClaimPod(absl::StrCat("low-", i), "any-gpu", ""));
  world.Run();
  REQUIRE(world.observer.bound.size() == 4);  // every DRA GPU is taken

  world.Add(ClaimPod("urgent", "one-a100", "", 1000));
  world.Run();
  INFO((world.observer.messages.contains("urgent") ? world.observer.messages.at("urgent") : ""));
  REQUIRE(world.observer.bound.contains("urgent"));
  CHECK(world.observer.bound.at("urgent") == "dra-a100");
  CHECK(DevicePool(world, "urgent") == "dra-a100");
  int gone = 0;
  for (int i = 0; i < 4; ++i) {
    const std::string low = absl::StrCat("low-", i);
    if (world.cluster.GetPod("default/" + low) == nullptr) {
      ++gone;
      CHECK(world.observer.bound.at(low) == "dra-a100");  // a holder of an A100, not of an H100
    }
  }
  CHECK(gone == 1);
}

}  // namespace
}  // namespace kubesched::scheduler
