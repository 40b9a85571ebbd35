#pragma once

#include <cstdint>
#include <string_view>

#include "absl/types/span.h"
#include "scheduler/api/quantity.h"

namespace kubesched::cel {

// One attribute value of a device as a ResourceSlice publishes it: exactly one of a string, an
// integer, a boolean or a semantic version (kept as text; it is parsed when compared).
struct AttributeValue {
  enum class Kind : uint8_t { kString, kInt, kBool, kVersion };
  Kind kind = Kind::kString;
  std::string_view text;  // kString and kVersion
  int64_t integer = 0;    // kInt
  bool boolean = false;   // kBool

  static AttributeValue String(std::string_view value) { return {Kind::kString, value, 0, false}; }
  static AttributeValue Int(int64_t value) { return {Kind::kInt, {}, value, false}; }
  static AttributeValue Bool(bool value) { return {Kind::kBool, {}, 0, value}; }
  static AttributeValue Version(std::string_view value) {
    return {Kind::kVersion, value, 0, false};
  }
};

// An attribute under its domain: "gpu.nvidia.com/productName" is {"gpu.nvidia.com",
// "productName"}. A name without a domain in the slice belongs to the device's driver; whoever
// fills the view resolves that, so that the expression sees every attribute under a domain.
struct DeviceAttribute {
  std::string_view domain;
  std::string_view name;
  AttributeValue value;
};

struct DeviceCapacity {
  std::string_view domain;
  std::string_view name;
  api::Quantity value;
};

// What a selector expression sees of a device. It only borrows: the spans and strings belong to
// the caller (the DRA plugin's slice cache) and must outlive the evaluation. Lookups scan the
// spans, which is cheaper than hashing for the few dozen entries a device may carry (upstream
// caps attributes and capacities at 32 per device) and needs no allocation.
struct DeviceView {
  std::string_view driver;
  absl::Span<const DeviceAttribute> attributes;
  absl::Span<const DeviceCapacity> capacity;
  bool allow_multiple_allocations = false;
};

}  // namespace kubesched::cel
