#pragma once

// The Dynamic Resource Allocation objects (resource.k8s.io/v1 DeviceClass, ResourceSlice,
// ResourceClaim, ResourceClaimTemplate), in the shape an allocator reads them. Decoded by
// decode.h like every other kind.
//
// The strings an allocator compares for every device (driver, pool and device names, attribute
// and capacity names) are interned, so that matching a device against a claim compares integers.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/api/objects.h"
#include "scheduler/api/quantity.h"
#include "scheduler/api/symbol.h"

namespace kubesched::api {

// --- Devices (ResourceSlice) -----------------------------------------------------------------

// A device attribute's value is exactly one of these (DeviceAttribute: int, bool, string,
// version).
enum class DeviceAttributeType : uint8_t { kInt, kBool, kString, kVersion };

struct DeviceAttribute {
  // Fully qualified ("gpu.nvidia.com/productName"): a name given without a domain is the
  // driver's, as upstream qualifies it, so that selectors and constraints find either spelling.
  Symbol name = kEmptySymbol;
  DeviceAttributeType type = DeviceAttributeType::kString;
  int64_t int_value = 0;
  bool bool_value = false;
  std::string string_value;  // kString, and kVersion's semantic version text ("1.2.3")
};

struct DeviceCapacity {
  Symbol name = kEmptySymbol;  // fully qualified, as attribute names
  Quantity value;
};

// A device's content as a selector sees it (its driver, attributes and capacity), interned:
// devices that carry the same content share one shape, so that a selector's verdict on a device
// can be remembered once for all of them, on every node, for every pod. Shapes are never freed.
using DeviceShape = uint32_t;
inline constexpr DeviceShape kNoShape = 0;  // not interned: nothing may be remembered

struct Device {
  Symbol name = kEmptySymbol;
  std::vector<DeviceAttribute> attributes;  // sorted by name
  std::vector<DeviceCapacity> capacity;     // sorted by name
  DeviceShape shape = kNoShape;             // set by the decoder (InternDeviceShape)

  // Null when the device has no such attribute (`qualified_name` as DeviceAttribute::name).
  const DeviceAttribute* FindAttribute(Symbol qualified_name) const {
    const auto it =
        std::lower_bound(attributes.begin(), attributes.end(), qualified_name,
                         [](const DeviceAttribute& a, Symbol wanted) { return a.name < wanted; });
    return it != attributes.end() && it->name == qualified_name ? &*it : nullptr;
  }
  const DeviceCapacity* FindCapacity(Symbol qualified_name) const {
    const auto it =
        std::lower_bound(capacity.begin(), capacity.end(), qualified_name,
                         [](const DeviceCapacity& c, Symbol wanted) { return c.name < wanted; });
    return it != capacity.end() && it->name == qualified_name ? &*it : nullptr;
  }
};

// The shape of `device` published by `driver`: equal for equal content, whatever the device's
// name. Thread-safe.
DeviceShape InternDeviceShape(Symbol driver, const Device& device);

// spec.pool: the slices of one pool share a name and generation; only the newest generation
// counts, and it is complete when resource_slice_count slices of it are seen.
struct ResourcePool {
  Symbol name = kEmptySymbol;
  int64_t generation = 0;
  int64_t resource_slice_count = 0;
};

struct ResourceSlice {
  ObjectMeta meta;
  Symbol driver = kEmptySymbol;
  ResourcePool pool;
  // Where the devices are: exactly one of these is set (per-device node selection is kept as a
  // flag; its per-device fields are not read).
  std::string node_name;
  std::optional<NodeSelector> node_selector;
  bool all_nodes = false;
  bool per_device_node_selection = false;
  std::vector<Device> devices;
};

// A device by (driver, pool, device name), as an allocation result names it.
struct DeviceId {
  Symbol driver = kEmptySymbol;
  Symbol pool = kEmptySymbol;
  Symbol device = kEmptySymbol;

  friend bool operator==(const DeviceId& a, const DeviceId& b) {
    return a.driver == b.driver && a.pool == b.pool && a.device == b.device;
  }
  template <typename H>
  friend H AbslHashValue(H h, const DeviceId& id) {
    return H::combine(std::move(h), id.driver, id.pool, id.device);
  }
};

// --- Requests (DeviceClass, ResourceClaim) ---------------------------------------------------

// selectors[].cel.expression: a CEL expression over `device`, compiled by the allocator.
struct DeviceSelector {
  std::string cel_expression;
};

// config[].opaque: parameters for the driver, passed on as JSON text and never interpreted.
struct OpaqueDeviceConfiguration {
  std::string driver;
  std::string parameters_json;
};

struct DeviceClass {
  ObjectMeta meta;
  std::vector<DeviceSelector> selectors;
  std::vector<OpaqueDeviceConfiguration> config;
  std::string extended_resource_name;  // spec.extendedResourceName, "" when absent
};

enum class DeviceAllocationMode : uint8_t { kExactCount, kAll };

// What one request (exactly) or sub-request (firstAvailable[]) asks for.
struct DeviceRequestSpec {
  std::string device_class_name;
  std::vector<DeviceSelector> selectors;
  DeviceAllocationMode allocation_mode = DeviceAllocationMode::kExactCount;
  int64_t count = 1;  // kExactCount only
};

struct DeviceSubRequest {
  std::string name;
  DeviceRequestSpec spec;
};

struct DeviceRequest {
  std::string name;
  // Exactly one of these is given: one kind of device, or alternatives in order of preference.
  std::optional<DeviceRequestSpec> exactly;
  bool admin_access = false;  // exactly.adminAccess
  std::vector<DeviceSubRequest> first_available;
};

// constraints[]: the devices of `requests` (all requests when empty) must agree on the attribute.
struct DeviceConstraint {
  std::vector<std::string> requests;
  Symbol match_attribute = kEmptySymbol;  // fully qualified; kEmptySymbol when absent
};

struct DeviceClaimConfiguration {
  std::vector<std::string> requests;  // empty: all
  OpaqueDeviceConfiguration opaque;
};

struct ResourceClaimSpec {
  std::vector<DeviceRequest> requests;
  std::vector<DeviceConstraint> constraints;
  std::vector<DeviceClaimConfiguration> config;
};

// --- Allocation (ResourceClaim status) ---------------------------------------------------------

struct DeviceRequestAllocationResult {
  std::string request;  // "<request>" or "<request>/<subrequest>"
  Symbol driver = kEmptySymbol;
  Symbol pool = kEmptySymbol;
  Symbol device = kEmptySymbol;
  bool admin_access = false;
};

// devices.config[]: a class's or the claim's configuration of the allocated devices, for the
// driver (source FromClass or FromClaim). Written with an allocation, never read back.
struct DeviceAllocationConfiguration {
  bool from_class = false;
  std::vector<std::string> requests;  // empty: all of the claim's
  OpaqueDeviceConfiguration opaque;
};

struct AllocationResult {
  std::vector<DeviceRequestAllocationResult> devices;  // devices.results
  std::vector<DeviceAllocationConfiguration> config;   // devices.config
  std::optional<NodeSelector> node_selector;           // where the devices can be used
};

// status.reservedFor[]: a consumer of the claim (a pod, named by uid).
struct ResourceClaimConsumer {
  std::string api_group;
  std::string resource;
  std::string name;
  std::string uid;
};

// Upstream's ResourceClaimReservedForMaxSize: a claim may be reserved for this many consumers.
inline constexpr size_t kResourceClaimReservedForMaxSize = 256;

struct ResourceClaim {
  ObjectMeta meta;
  ResourceClaimSpec spec;
  std::optional<AllocationResult> allocation;  // status.allocation
  std::vector<ResourceClaimConsumer> reserved_for;

  std::string Key() const { return meta.namespace_name + "/" + meta.name; }
};

// A template from which the ResourceClaim controller creates one claim per pod.
struct ResourceClaimTemplate {
  ObjectMeta meta;
  ResourceClaimSpec spec;  // spec.spec

  std::string Key() const { return meta.namespace_name + "/" + meta.name; }
};

}  // namespace kubesched::api
