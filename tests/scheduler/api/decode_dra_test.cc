// Decoding of the resource.k8s.io/v1 kinds and of a pod's resourceClaimStatuses.

#include <catch2/catch.hpp>
#include <string>
#include <variant>

#include "scheduler/api/decode.h"
#include "scheduler/api/dra.h"
#include "tests/testing/decode_one.h"

namespace kubesched::api {
namespace {

using testing::DecodeOne;

std::string ProblemOf(const std::string& text) {
  auto decoded = DecodeObjects(text, "test");
  REQUIRE(decoded.ok());
  REQUIRE(decoded->problems.size() == 1);
  CHECK(decoded->objects.empty());
  return decoded->problems.front().ToString();
}

constexpr char kSlice[] = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-a-gpu}
spec:
  driver: gpu.nvidia.com
  nodeName: node-a
  pool: {name: node-a, generation: 3, resourceSliceCount: 2}
  devices:
  - name: gpu-0
    attributes:
      productName: {string: NVIDIA A100-SXM4-40GB}
      index: {int: 0}
      mig: {bool: false}
      driverVersion: {version: 550.54.15}
      numa.example.com/node: {int: 1}
    capacity:
      memory: {value: 40Gi}
)";

TEST_CASE("a ResourceSlice's pool, place and devices are read, names interned", "[api]") {
  const ResourceSlice slice = DecodeOne<ResourceSlice>(kSlice);
  CHECK(slice.meta.name == "node-a-gpu");
  CHECK(slice.meta.namespace_name.empty());
  CHECK(SymbolText(slice.driver) == "gpu.nvidia.com");
  CHECK(SymbolText(slice.pool.name) == "node-a");
  CHECK(slice.pool.generation == 3);
  CHECK(slice.pool.resource_slice_count == 2);
  CHECK(slice.node_name == "node-a");
  CHECK_FALSE(slice.all_nodes);
  REQUIRE(slice.devices.size() == 1);
  const Device& gpu = slice.devices[0];
  CHECK(SymbolText(gpu.name) == "gpu-0");
  REQUIRE(gpu.attributes.size() == 5);
  // A name without a domain is the driver's; one with a domain stays as it is.
  const DeviceAttribute* product = gpu.FindAttribute(Intern("gpu.nvidia.com/productName"));
  REQUIRE(product != nullptr);
  CHECK(product->type == DeviceAttributeType::kString);
  CHECK(product->string_value == "NVIDIA A100-SXM4-40GB");
  const DeviceAttribute* numa = gpu.FindAttribute(Intern("numa.example.com/node"));
  REQUIRE(numa != nullptr);
  CHECK(numa->type == DeviceAttributeType::kInt);
  CHECK(numa->int_value == 1);
  const DeviceAttribute* mig = gpu.FindAttribute(Intern("gpu.nvidia.com/mig"));
  REQUIRE(mig != nullptr);
  CHECK(mig->type == DeviceAttributeType::kBool);
  CHECK_FALSE(mig->bool_value);
  const DeviceAttribute* version = gpu.FindAttribute(Intern("gpu.nvidia.com/driverVersion"));
  REQUIRE(version != nullptr);
  CHECK(version->type == DeviceAttributeType::kVersion);
  CHECK(version->string_value == "550.54.15");
  CHECK(gpu.FindAttribute(Intern("productName")) == nullptr);
  const DeviceCapacity* memory = gpu.FindCapacity(Intern("gpu.nvidia.com/memory"));
  REQUIRE(memory != nullptr);
  CHECK(memory->value.ValueCeil() == int64_t{40} << 30);
}

TEST_CASE("devices of equal content share a shape whatever their names, others do not", "[api]") {
  const ResourceSlice slice = DecodeOne<ResourceSlice>(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: d.example.com
  nodeName: n
  pool: {name: p, resourceSliceCount: 1}
  devices:
  - {name: a, attributes: {model: {string: x}, index: {int: 0}}, capacity: {memory: {value: 1Gi}}}
  - {name: b, attributes: {index: {int: 0}, model: {string: x}}, capacity: {memory: {value: 1Gi}}}
  - {name: c, attributes: {model: {string: y}, index: {int: 0}}, capacity: {memory: {value: 1Gi}}}
  - {name: d, attributes: {model: {string: x}, index: {int: 0}}, capacity: {memory: {value: 2Gi}}}
  - {name: e, attributes: {model: {string: x}, index: {int: 0}}}
)");
  REQUIRE(slice.devices.size() == 5);
  const DeviceShape a = slice.devices[0].shape;
  CHECK(a != kNoShape);
  CHECK(slice.devices[1].shape == a);
  for (size_t i = 2; i < 5; ++i) {
    INFO("device " << i);
    CHECK(slice.devices[i].shape != a);
  }
  // The same content under another driver is another shape: a selector sees the driver.
  Device other = slice.devices[0];
  CHECK(InternDeviceShape(Intern("e.example.com"), other) != a);
  CHECK(InternDeviceShape(slice.driver, other) == a);
}

TEST_CASE("a ResourceSlice for all nodes or for selected nodes is read", "[api]") {
  const ResourceSlice shared = DecodeOne<ResourceSlice>(R"(
kind: ResourceSlice
metadata: {name: fabric}
spec: {driver: net.example.com, allNodes: true, pool: {name: fabric, resourceSliceCount: 1}})");
  CHECK(shared.all_nodes);
  CHECK(shared.devices.empty());
  const ResourceSlice rack = DecodeOne<ResourceSlice>(R"(
kind: ResourceSlice
metadata: {name: rack-1}
spec:
  driver: net.example.com
  pool: {name: rack-1, resourceSliceCount: 1}
  nodeSelector:
    nodeSelectorTerms: [{matchExpressions: [{key: rack, operator: In, values: ["1"]}]}])");
  REQUIRE(rack.node_selector.has_value());
  CHECK(rack.node_selector->terms.size() == 1);
}

TEST_CASE("a bad ResourceSlice is a problem naming the field", "[api]") {
  SECTION("an attribute with two values") {
    CHECK_THAT(ProblemOf(R"(
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: d.example.com
  nodeName: n
  pool: {name: p, resourceSliceCount: 1}
  devices: [{name: x, attributes: {a: {int: 1, string: "1"}}}])"),
               Catch::Contains("ResourceSlice s: spec.devices[0].attributes.a: exactly one of "
                               "int, bool, string, version must be set, got 2"));
  }
  SECTION("no place, or two") {
    CHECK_THAT(ProblemOf(R"(
kind: ResourceSlice
metadata: {name: s}
spec: {driver: d.example.com, pool: {name: p, resourceSliceCount: 1}})"),
               Catch::Contains("spec: exactly one of nodeName, nodeSelector, allNodes, "
                               "perDeviceNodeSelection must be set, got 0"));
    CHECK_THAT(ProblemOf(R"(
kind: ResourceSlice
metadata: {name: s}
spec: {driver: d.example.com, nodeName: n, allNodes: true, pool: {name: p, resourceSliceCount: 1}})"),
               Catch::Contains("got 2"));
  }
  SECTION("no driver, no pool, a bad capacity") {
    CHECK_THAT(ProblemOf(R"(
kind: ResourceSlice
metadata: {name: s}
spec: {nodeName: n, pool: {name: p, resourceSliceCount: 1}})"),
               Catch::Contains("spec.driver: missing or empty"));
    CHECK_THAT(ProblemOf(R"(
kind: ResourceSlice
metadata: {name: s}
spec: {driver: d.example.com, nodeName: n})"),
               Catch::Contains("spec.pool: missing"));
    CHECK_THAT(ProblemOf(R"(
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: d.example.com
  nodeName: n
  pool: {name: p, resourceSliceCount: 1}
  devices: [{name: x, capacity: {memory: {value: lots}}}])"),
               Catch::Contains("spec.devices[0].capacity.memory.value:"));
  }
  SECTION("two devices of one name") {
    CHECK_THAT(ProblemOf(R"(
kind: ResourceSlice
metadata: {name: s}
spec:
  driver: d.example.com
  nodeName: n
  pool: {name: p, resourceSliceCount: 1}
  devices: [{name: x}, {name: y}, {name: x}])"),
               Catch::Contains("spec.devices[2].name: duplicate device name \"x\""));
  }
}

TEST_CASE("a DeviceClass's selectors and config are read", "[api]") {
  const DeviceClass device_class = DecodeOne<DeviceClass>(R"(
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  selectors:
  - cel: {expression: device.driver == "gpu.nvidia.com"}
  config:
  - opaque: {driver: gpu.nvidia.com, parameters: {sharing: {strategy: TimeSlicing}}}
)");
  CHECK(device_class.meta.name == "gpu.nvidia.com");
  REQUIRE(device_class.selectors.size() == 1);
  CHECK(device_class.selectors[0].cel_expression == "device.driver == \"gpu.nvidia.com\"");
  REQUIRE(device_class.config.size() == 1);
  CHECK(device_class.config[0].driver == "gpu.nvidia.com");
  CHECK(device_class.config[0].parameters_json == R"({"sharing":{"strategy":"TimeSlicing"}})");
}

TEST_CASE("a selector without an expression is a problem naming the field", "[api]") {
  CHECK_THAT(ProblemOf(R"(
kind: DeviceClass
metadata: {name: c}
spec: {selectors: [{cel: {}}]})"),
             Catch::Contains("DeviceClass c: spec.selectors[0].cel.expression: missing or empty"));
}

constexpr char kClaim[] = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: train, namespace: ml}
spec:
  devices:
    requests:
    - name: gpus
      exactly:
        deviceClassName: gpu.nvidia.com
        allocationMode: ExactCount
        count: 2
        selectors: [{cel: {expression: 'device.attributes["gpu.nvidia.com"].productName == "A100"'}}]
    - name: nic
      firstAvailable:
      - {name: fast, deviceClassName: nic.example.com, allocationMode: All}
      - {name: slow, deviceClassName: nic.example.com}
    constraints:
    - {requests: [gpus, nic], matchAttribute: numa.example.com/node}
    config:
    - {requests: [gpus], opaque: {driver: gpu.nvidia.com, parameters: {a: 1}}}
status:
  allocation:
    devices:
      results:
      - {request: gpus, driver: gpu.nvidia.com, pool: node-a, device: gpu-0}
      - {request: nic/fast, driver: nic.example.com, pool: node-a, device: eth1}
    nodeSelector:
      nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [node-a]}]}]
  reservedFor: [{resource: pods, name: trainer, uid: u-1}]
)";

TEST_CASE("a ResourceClaim's requests, constraints, config and allocation are read", "[api]") {
  const ResourceClaim claim = DecodeOne<ResourceClaim>(kClaim);
  CHECK(claim.Key() == "ml/train");
  REQUIRE(claim.spec.requests.size() == 2);
  const DeviceRequest& gpus = claim.spec.requests[0];
  CHECK(gpus.name == "gpus");
  REQUIRE(gpus.exactly.has_value());
  CHECK(gpus.exactly->device_class_name == "gpu.nvidia.com");
  CHECK(gpus.exactly->allocation_mode == DeviceAllocationMode::kExactCount);
  CHECK(gpus.exactly->count == 2);
  REQUIRE(gpus.exactly->selectors.size() == 1);
  CHECK(gpus.exactly->selectors[0].cel_expression ==
        R"(device.attributes["gpu.nvidia.com"].productName == "A100")");
  const DeviceRequest& nic = claim.spec.requests[1];
  CHECK_FALSE(nic.exactly.has_value());
  REQUIRE(nic.first_available.size() == 2);
  CHECK(nic.first_available[0].name == "fast");
  CHECK(nic.first_available[0].spec.allocation_mode == DeviceAllocationMode::kAll);
  CHECK(nic.first_available[1].spec.count == 1);  // ExactCount's default
  REQUIRE(claim.spec.constraints.size() == 1);
  CHECK(claim.spec.constraints[0].requests == std::vector<std::string>{"gpus", "nic"});
  CHECK(SymbolText(claim.spec.constraints[0].match_attribute) == "numa.example.com/node");
  REQUIRE(claim.spec.config.size() == 1);
  CHECK(claim.spec.config[0].opaque.parameters_json == R"({"a":1})");
  REQUIRE(claim.allocation.has_value());
  REQUIRE(claim.allocation->devices.size() == 2);
  CHECK(claim.allocation->devices[1].request == "nic/fast");
  CHECK(SymbolText(claim.allocation->devices[1].driver) == "nic.example.com");
  CHECK(SymbolText(claim.allocation->devices[1].pool) == "node-a");
  CHECK(SymbolText(claim.allocation->devices[1].device) == "eth1");
  REQUIRE(claim.allocation->node_selector.has_value());
  REQUIRE(claim.reserved_for.size() == 1);
  CHECK(claim.reserved_for[0].uid == "u-1");
}

TEST_CASE("a bad ResourceClaim is a problem naming the field", "[api]") {
  const auto claim = [](const std::string& request) {
    return "kind: ResourceClaim\nmetadata: {name: c, namespace: ns}\n"
           "spec: {devices: {requests: [" +
           request + "]}}";
  };
  CHECK_THAT(ProblemOf(claim("{name: r}")),
             Catch::Contains("ResourceClaim ns/c: spec.devices.requests[0]: exactly one of "
                             "exactly, firstAvailable must be set"));
  CHECK_THAT(ProblemOf(claim("{name: r, exactly: {deviceClassName: c}, firstAvailable: "
                             "[{name: s, deviceClassName: c}]}")),
             Catch::Contains("exactly one of exactly, firstAvailable must be set"));
  CHECK_THAT(ProblemOf(claim("{name: r, exactly: {deviceClassName: c, count: 0}}")),
             Catch::Contains("spec.devices.requests[0].exactly.count: must be >= 1"));
  CHECK_THAT(ProblemOf(claim("{name: r, exactly: {deviceClassName: c, allocationMode: Some}}")),
             Catch::Contains(
                 "spec.devices.requests[0].exactly.allocationMode: unsupported value \"Some\""));
  CHECK_THAT(ProblemOf(claim("{name: r, exactly: {}}")),
             Catch::Contains("spec.devices.requests[0].exactly.deviceClassName: missing or empty"));
  CHECK_THAT(ProblemOf(claim("{exactly: {deviceClassName: c}}")),
             Catch::Contains("spec.devices.requests[0].name: missing or empty"));
  CHECK_THAT(ProblemOf("kind: ResourceClaim\nmetadata: {name: c, namespace: ns}\n"
                       "spec: {devices: {constraints: [{matchAttribute: model}]}}"),
             Catch::Contains("spec.devices.constraints[0].matchAttribute: \"model\" must be a "
                             "fully qualified name"));
  CHECK_THAT(ProblemOf("kind: ResourceClaim\nmetadata: {name: c, namespace: ns}\n"
                       "status: {allocation: {devices: {results: [{request: r}]}}}"),
             Catch::Contains("status.allocation.devices.results[0].driver: missing or empty"));
}

TEST_CASE("a ResourceClaimTemplate's claim spec is read", "[api]") {
  const ResourceClaimTemplate claim_template = DecodeOne<ResourceClaimTemplate>(R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: ml}
spec:
  metadata: {labels: {team: a}}
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]
)");
  CHECK(claim_template.Key() == "ml/one-gpu");
  REQUIRE(claim_template.spec.requests.size() == 1);
  CHECK(claim_template.spec.requests[0].exactly->count == 1);
  CHECK_THAT(ProblemOf("kind: ResourceClaimTemplate\nmetadata: {name: t, namespace: ns}\n"
                       "spec: {metadata: {}}"),
             Catch::Contains("ResourceClaimTemplate ns/t: spec.spec: missing"));
}

TEST_CASE("a pod's resourceClaimStatuses name the claims made from its templates", "[api]") {
  const Pod pod = DecodeOne<Pod>(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ml"},
    "spec": {"containers": [{"name": "c"}],
      "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"},
                         {"name": "opt", "resourceClaimTemplateName": "maybe"}]},
    "status": {"resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu-x7k2"},
                                         {"name": "opt"}]}})");
  REQUIRE(pod.status.resource_claim_statuses.size() == 2);
  CHECK(pod.status.resource_claim_statuses[0].name == "gpu");
  CHECK(pod.status.resource_claim_statuses[0].resource_claim_name == "p-gpu-x7k2");
  CHECK(pod.status.resource_claim_statuses[1].resource_claim_name.empty());
  CHECK_THAT(ProblemOf(R"({"kind": "Pod", "metadata": {"name": "p"},
    "status": {"resourceClaimStatuses": [{"resourceClaimName": "x"}]}})"),
             Catch::Contains("status.resourceClaimStatuses[0].name: missing or empty"));
}

}  // namespace
}  // namespace kubesched::api
