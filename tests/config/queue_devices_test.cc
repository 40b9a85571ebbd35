// `queues.devices`: which DRA devices count as which resource. Decoding, the checks that refuse a
// bad kind with its path, and that a ConfigMap may not set it.

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "config/queues.h"

namespace kubesched::config {
namespace {

absl::StatusOr<Configuration> Parse(const std::string& devices) {
  return ParseConfiguration(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
      "queues:\n  devices:\n" +
      devices);
}

TEST_CASE("device kinds decode with their attributes fully qualified, in the order written",
          "[config][quota][dra]") {
  auto config = Parse(
      "  - driver: gpu.nvidia.com\n"
      "    resource: nvidia.com/gpu\n"
      "    modelAttribute: productName\n"
      "    attributes: {type: gpu, example.com/mig: false, cores: 8}\n"
      "  - {driver: gpu.nvidia.com, resource: nvidia.com/mig, attributes: {type: mig}}\n");
  INFO(config.status().message());
  REQUIRE(config.ok());
  const std::vector<DeviceResourceSpec>& devices = config->queues.devices;
  REQUIRE(devices.size() == 2);
  CHECK(devices[0].driver == "gpu.nvidia.com");
  CHECK(devices[0].resource == "nvidia.com/gpu");
  CHECK(devices[0].model_attribute == "gpu.nvidia.com/productName");
  CHECK(devices[0].attributes ==
        std::vector<std::pair<std::string, std::string>>{{"gpu.nvidia.com/type", "gpu"},
                                                         {"example.com/mig", "false"},
                                                         {"gpu.nvidia.com/cores", "8"}});
  CHECK(devices[1].model_attribute.empty());
  CHECK(devices[1].resource == "nvidia.com/mig");
}

TEST_CASE("bad device kinds are refused with their path and why", "[config][quota][dra]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"  - {resource: nvidia.com/gpu}\n", "queues.devices[0].driver: required"},
      {"  - {driver: GPU.nvidia.com, resource: nvidia.com/gpu}\n",
       "queues.devices[0].driver: \"GPU.nvidia.com\" is not a driver name"},
      {"  - {driver: gpu.nvidia.com}\n", "queues.devices[0].resource: required"},
      {"  - {driver: gpu.nvidia.com, resource: gpu}\n",
       "queues.devices[0].resource: \"gpu\" is not an extended resource name"},
      {"  - {driver: gpu.nvidia.com, resource: nvidia.com/gpu, modelAttribute: 'product name'}\n",
       "queues.devices[0].modelAttribute: \"product name\" is not an attribute name"},
      {"  - {driver: gpu.nvidia.com, resource: nvidia.com/gpu, attributes: [type]}\n",
       "queues.devices[0].attributes: must be a map"},
      {"  - {driver: gpu.nvidia.com, resource: nvidia.com/gpu, attributes: {type: [a]}}\n",
       "queues.devices[0].attributes.type: must be a value"},
      {"  - {driver: gpu.nvidia.com, resource: nvidia.com/gpu, attributes: {type: a, "
       "gpu.nvidia.com/type: b}}\n",
       "names attribute gpu.nvidia.com/type twice"},
      {"  - {driver: gpu.nvidia.com, resource: nvidia.com/gpu, colour: red}\n", "colour"},
      {"  - {driver: gpu.nvidia.com, resource: nvidia.com/gpu, attributes: {a: '1', b: '2'}}\n"
       "  - {driver: gpu.nvidia.com, resource: nvidia.com/other, attributes: {b: '2', a: '1'}}\n",
       "queues.devices[1]: counts the same devices as queues.devices[0]"},
      {"    driver: x\n", "queues.devices: must be a list of device kinds"},
  };
  for (const auto& [yaml, error] : cases) {
    INFO(yaml);
    auto config = Parse(yaml);
    REQUIRE_FALSE(config.ok());
    CHECK_THAT(std::string(config.status().message()), Catch::Contains(error));
  }
}

TEST_CASE("a queue ConfigMap may not change which devices count", "[config][quota][dra]") {
  auto parsed = ParseQueuesDocument(
      "devices: [{driver: gpu.nvidia.com, resource: nvidia.com/gpu}]\ntree: [{name: a}]\n");
  REQUIRE_FALSE(parsed.ok());
  CHECK_THAT(std::string(parsed.status().message()),
             Catch::Contains("devices: may be set in the configuration file only"));
}

}  // namespace
}  // namespace kubesched::config
