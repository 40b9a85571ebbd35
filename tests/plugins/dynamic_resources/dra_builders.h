#pragma once

// Small builders for DRA objects in allocator tests: devices with attributes, slices per node,
// classes and claims, and a World that runs the allocator for one node.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "plugins/dynamic_resources/allocator.h"
#include "plugins/dynamic_resources/node_devices.h"
#include "plugins/dynamic_resources/selector_cache.h"
#include "scheduler/api/dra.h"
#include "scheduler/api/labels.h"

namespace kubesched::plugins::dynamic_resources::testing {

inline api::DeviceAttribute StringAttribute(const std::string& name, const std::string& value) {
  api::DeviceAttribute attribute;
  attribute.name = api::Intern(name);
  attribute.type = api::DeviceAttributeType::kString;
  attribute.string_value = value;
  return attribute;
}

inline api::DeviceAttribute IntAttribute(const std::string& name, int64_t value) {
  api::DeviceAttribute attribute;
  attribute.name = api::Intern(name);
  attribute.type = api::DeviceAttributeType::kInt;
  attribute.int_value = value;
  return attribute;
}

inline api::DeviceAttribute VersionAttribute(const std::string& name, const std::string& value) {
  api::DeviceAttribute attribute = StringAttribute(name, value);
  attribute.type = api::DeviceAttributeType::kVersion;
  return attribute;
}

inline api::Device MakeDevice(const std::string& name,
                              std::vector<api::DeviceAttribute> attributes = {}) {
  api::Device device;
  device.name = api::Intern(name);
  std::sort(attributes.begin(), attributes.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  device.attributes = std::move(attributes);
  return device;
}

struct SliceBuilder {
  api::ResourceSlice slice;

  SliceBuilder(const std::string& name, const std::string& driver, const std::string& pool) {
    slice.meta.name = name;
    slice.driver = api::Intern(driver);
    slice.pool.name = api::Intern(pool);
    slice.pool.generation = 1;
    slice.pool.resource_slice_count = 1;
  }
  SliceBuilder& Node(const std::string& node) {
    slice.node_name = node;
    return *this;
  }
  SliceBuilder& AllNodes() {
    slice.all_nodes = true;
    return *this;
  }
  // Nodes whose label `key` has `value`.
  SliceBuilder& Selecting(const std::string& key, const std::string& value) {
    api::Requirement requirement;
    requirement.key = api::Intern(key);
    requirement.values = {api::Intern(value)};
    api::NodeSelector selector;
    selector.terms.push_back({{requirement}, {}});
    slice.node_selector = selector;
    return *this;
  }
  SliceBuilder& Generation(int64_t generation, int64_t slice_count = 1) {
    slice.pool.generation = generation;
    slice.pool.resource_slice_count = slice_count;
    return *this;
  }
  SliceBuilder& Add(api::Device device) {
    slice.devices.push_back(std::move(device));
    return *this;
  }
  api::ResourceSlice Build() const { return slice; }
};

inline api::DeviceClass MakeClass(const std::string& name,
                                  const std::vector<std::string>& selectors = {}) {
  api::DeviceClass device_class;
  device_class.meta.name = name;
  for (const std::string& expression : selectors) device_class.selectors.push_back({expression});
  return device_class;
}

inline api::DeviceRequestSpec Spec(const std::string& device_class, int64_t count = 1,
                                   const std::vector<std::string>& selectors = {}) {
  api::DeviceRequestSpec spec;
  spec.device_class_name = device_class;
  spec.count = count;
  for (const std::string& expression : selectors) spec.selectors.push_back({expression});
  return spec;
}

inline api::DeviceRequestSpec AllSpec(const std::string& device_class,
                                      const std::vector<std::string>& selectors = {}) {
  api::DeviceRequestSpec spec = Spec(device_class, 0, selectors);
  spec.allocation_mode = api::DeviceAllocationMode::kAll;
  return spec;
}

inline api::DeviceRequest Exactly(const std::string& name, api::DeviceRequestSpec spec,
                                  bool admin_access = false) {
  api::DeviceRequest request;
  request.name = name;
  request.exactly = std::move(spec);
  request.admin_access = admin_access;
  return request;
}

inline api::DeviceRequest FirstAvailable(
    const std::string& name, std::vector<std::pair<std::string, api::DeviceRequestSpec>> subs) {
  api::DeviceRequest request;
  request.name = name;
  for (auto& [sub_name, spec] : subs) request.first_available.push_back({sub_name, spec});
  return request;
}

inline api::DeviceConstraint MatchAttribute(const std::string& attribute,
                                            std::vector<std::string> requests = {}) {
  return {std::move(requests), api::Intern(attribute)};
}

inline api::ResourceClaim MakeClaim(const std::string& name,
                                    std::vector<api::DeviceRequest> requests,
                                    std::vector<api::DeviceConstraint> constraints = {}) {
  api::ResourceClaim claim;
  claim.meta.name = name;
  claim.meta.namespace_name = "default";
  claim.spec.requests = std::move(requests);
  claim.spec.constraints = std::move(constraints);
  return claim;
}

// The cluster as one node sees it.
struct World {
  std::string node = "node-1";
  api::LabelSet node_labels;
  std::vector<api::ResourceSlice> slices;
  std::vector<api::DeviceClass> classes;
  std::vector<api::ResourceClaim> claims;
  DeviceIdSet allocated;
  // Behind pointers so that a World can be returned by value.
  std::unique_ptr<SelectorCache> selectors = std::make_unique<SelectorCache>();
  std::unique_ptr<Allocator> allocator = std::make_unique<Allocator>(selectors.get());
  NodeDevices devices;

  void Allocated(const std::string& driver, const std::string& pool, const std::string& device) {
    allocated.insert({api::Intern(driver), api::Intern(pool), api::Intern(device)});
  }

  absl::StatusOr<std::vector<ClaimAllocation>> Run() {
    std::vector<const api::ResourceSlice*> slice_pointers;
    for (const api::ResourceSlice& slice : slices) slice_pointers.push_back(&slice);
    std::vector<const api::ResourceClaim*> claim_pointers;
    for (const api::ResourceClaim& claim : claims) claim_pointers.push_back(&claim);
    devices.Gather(slice_pointers, node, node_labels);
    auto find_class = [this](std::string_view name) -> const api::DeviceClass* {
      for (const api::DeviceClass& device_class : classes) {
        if (device_class.meta.name == name) return &device_class;
      }
      return nullptr;
    };
    return allocator->Allocate({claim_pointers, find_class, &allocated}, devices);
  }
};

// "request driver/pool/device" per result, for compact expectations.
inline std::vector<std::string> Results(const api::AllocationResult& allocation) {
  std::vector<std::string> out;
  for (const api::DeviceRequestAllocationResult& result : allocation.devices) {
    out.push_back(result.request + " " + DeviceIdText({result.driver, result.pool, result.device}));
  }
  return out;
}

}  // namespace kubesched::plugins::dynamic_resources::testing
