#pragma once

// Which Dynamic Resource Allocation devices count as a resource (the queue configuration's
// `devices`, config::DeviceResourceSpec): a GPU published through DRA counts as `nvidia.com/gpu`
// in queue quota, in budgets, and in the scores that weigh the resource, as a device plugin's GPU
// does. Built once at start-up and immutable afterwards; shared by the quota tracker, the cache
// (which counts each node's devices) and, through the snapshot's DraState, the plugins.

#include <array>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scheduler/api/dra.h"
#include "scheduler/api/resource.h"
#include "scheduler/api/symbol.h"
#include "scheduler/framework/dra_state.h"

namespace kubesched::framework {

// Room for the text of an attribute that is not held as text (an integer).
using AttributeTextBuffer = std::array<char, 24>;

// The text of an attribute as the configuration compares it: strings and versions as held,
// integers in decimal, booleans "true" or "false". Allocates nothing: an integer is written into
// `buffer`, which the result may point into.
std::string_view AttributeText(const api::DeviceAttribute& attribute, AttributeTextBuffer& buffer);

class DeviceResources {
 public:
  struct Kind {
    api::Symbol driver = api::kEmptySymbol;
    api::ResourceId resource = 0;
    api::Symbol model_attribute = api::kEmptySymbol;  // kEmptySymbol: no model
    // Fully qualified attribute name and the text its value must have (see AttributeText).
    std::vector<std::pair<api::Symbol, std::string>> attributes;
  };

  DeviceResources() = default;
  explicit DeviceResources(std::vector<Kind> kinds);

  bool empty() const { return kinds_.empty(); }
  const std::vector<Kind>& kinds() const { return kinds_; }
  // The first kind that counts `device`, published by a slice of `driver`; null when none does.
  // Allocates nothing: Filter and Score call it per device.
  const Kind* KindOf(api::Symbol driver, const api::Device& device) const;
  // Whether some kind counts as `resource`.
  bool Counts(api::ResourceId resource) const;
  // The value of the kind's model attribute (AttributeText): empty when the kind names none or
  // the device lacks it. As the driver wrote it: ModelNames reads it as a label value.
  static std::string_view ModelText(const Kind& kind, const api::Device& device,
                                    AttributeTextBuffer& buffer);

 private:
  std::vector<Kind> kinds_;
  std::vector<api::ResourceId> resources_;  // sorted, unique
};

// A device as an allocation result names it, found in the slices that offer devices to
// `node_name` (the node's own slices, then the others): the newest generation of its pool that
// publishes it. Both null when no slice does (the driver took it away, or its slice has not been
// seen yet).
struct FoundDevice {
  const api::ResourceSlice* slice = nullptr;
  const api::Device* device = nullptr;
};
FoundDevice FindDevice(const DraState& dra, std::string_view node_name, const api::DeviceId& id);

}  // namespace kubesched::framework
