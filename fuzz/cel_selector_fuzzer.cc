// libFuzzer target: the CEL device selector compiler, and evaluation of what it accepts against a
// fixed device. Neither may crash, hang or leak on any input; a program must give the same
// answer when evaluated twice, as it keeps no state between devices.

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scheduler/api/quantity.h"
#include "scheduler/cel/device_view.h"
#include "scheduler/cel/program.h"

namespace {

using kubesched::cel::AttributeValue;
using kubesched::cel::DeviceAttribute;
using kubesched::cel::DeviceCapacity;

const DeviceAttribute kAttributes[] = {
    {"dra.example.com", "model", AttributeValue::String("LATEST-GPU-MODEL")},
    {"dra.example.com", "index", AttributeValue::Int(3)},
    {"dra.example.com", "healthy", AttributeValue::Bool(true)},
    {"dra.example.com", "driverVersion", AttributeValue::Version("1.2.3-rc.1+build")},
    {"dra.example.com", "broken", AttributeValue::Version("1.2")},
    {"gpu.nvidia.com", "productName", AttributeValue::String("NVIDIA A100-SXM4-40GB")},
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const DeviceCapacity capacity[] = {
      {"dra.example.com", "memory", *kubesched::api::Quantity::Parse("40Gi")},
      {"gpu.nvidia.com", "multiprocessors", *kubesched::api::Quantity::Parse("108")},
  };
  const kubesched::cel::DeviceView device{"dra.example.com", kAttributes, capacity, true};
  const std::string_view expression(reinterpret_cast<const char*>(data), size);
  const absl::StatusOr<kubesched::cel::Program> program = kubesched::cel::Compile(expression);
  if (!program.ok()) return 0;
  const absl::StatusOr<bool> first = program->Evaluate(device);
  const absl::StatusOr<bool> second = program->Evaluate(device);
  if (first.ok() != second.ok() || (first.ok() && *first != *second)) __builtin_trap();
  return 0;
}
