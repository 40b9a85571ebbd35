#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "scheduler/api/quantity.h"
#include "scheduler/cel/device_view.h"
#include "scheduler/cel/program.h"

namespace kubesched::cel::testing {

// A GPU as a DRA driver publishes it, with the attribute kinds of upstream's CEL tests under the
// driver's domain and a second domain as an NVIDIA driver names it.
struct TestDevice {
  std::vector<DeviceAttribute> attributes = {
      {"dra.example.com", "bool", AttributeValue::Bool(true)},
      {"dra.example.com", "int", AttributeValue::Int(1)},
      {"dra.example.com", "string", AttributeValue::String("fish")},
      {"dra.example.com", "version", AttributeValue::Version("1.0.0")},
      {"dra.example.com", "services", AttributeValue::String("asymetric")},
      {"gpu.nvidia.com", "productName", AttributeValue::String("NVIDIA A100-SXM4-40GB")},
      {"gpu.nvidia.com", "architecture", AttributeValue::String("Ampere")},
      {"gpu.nvidia.com", "cudaComputeCapability", AttributeValue::Version("8.0.0")},
      {"gpu.nvidia.com", "driverVersion", AttributeValue::Version("550.54.15-rc.1+build.7")},
      {"gpu.nvidia.com", "index", AttributeValue::Int(3)},
      {"gpu.nvidia.com", "badVersion", AttributeValue::Version("not-a-version")},
  };
  std::vector<DeviceCapacity> capacity = {
      {"dra.example.com", "quantity", *api::Quantity::Parse("1Mi")},
      {"gpu.nvidia.com", "memory", *api::Quantity::Parse("40Gi")},
      {"gpu.nvidia.com", "multiprocessors", *api::Quantity::Parse("108")},
  };
  std::string driver = "dra.example.com";
  bool allow_multiple_allocations = false;

  DeviceView View() const {
    return DeviceView{driver, attributes, capacity, allow_multiple_allocations};
  }
};

}  // namespace kubesched::cel::testing
