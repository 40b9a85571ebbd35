#include "scheduler/framework/device_resources.h"

#include <algorithm>
#include <charconv>

namespace kubesched::framework {
namespace {

// The device in `slice`, when the slice is of the id's driver and pool; null otherwise.
const api::Device* InSlice(const api::ResourceSlice& slice, const api::DeviceId& id) {
  if (slice.driver != id.driver || slice.pool.name != id.pool) return nullptr;
  for (const api::Device& device : slice.devices) {
    if (device.name == id.device) return &device;
  }
  return nullptr;
}

void Consider(const SliceList& slices, const api::DeviceId& id, FoundDevice& found) {
  for (const auto& slice : slices) {
    const api::Device* device = InSlice(*slice, id);
    if (device == nullptr) continue;
    if (found.slice == nullptr || slice->pool.generation > found.slice->pool.generation) {
      found = {slice.get(), device};
    }
  }
}

}  // namespace

std::string_view AttributeText(const api::DeviceAttribute& attribute, AttributeTextBuffer& buffer) {
  switch (attribute.type) {
    case api::DeviceAttributeType::kString:
    case api::DeviceAttributeType::kVersion:
      return attribute.string_value;
    case api::DeviceAttributeType::kBool:
      return attribute.bool_value ? "true" : "false";
    case api::DeviceAttributeType::kInt: {
      const auto [end, error] =
          std::to_chars(buffer.data(), buffer.data() + buffer.size(), attribute.int_value);
      if (error != std::errc()) return {};
      return std::string_view(buffer.data(), static_cast<size_t>(end - buffer.data()));
    }
  }
  return {};
}

DeviceResources::DeviceResources(std::vector<Kind> kinds) : kinds_(std::move(kinds)) {
  for (const Kind& kind : kinds_) resources_.push_back(kind.resource);
  std::sort(resources_.begin(), resources_.end());
  resources_.erase(std::unique(resources_.begin(), resources_.end()), resources_.end());
}

const DeviceResources::Kind* DeviceResources::KindOf(api::Symbol driver,
                                                     const api::Device& device) const {
  AttributeTextBuffer buffer;
  for (const Kind& kind : kinds_) {
    if (kind.driver != driver) continue;
    const bool matches =
        std::all_of(kind.attributes.begin(), kind.attributes.end(), [&](const auto& wanted) {
          const api::DeviceAttribute* attribute = device.FindAttribute(wanted.first);
          return attribute != nullptr && AttributeText(*attribute, buffer) == wanted.second;
        });
    if (matches) return &kind;
  }
  return nullptr;
}

bool DeviceResources::Counts(api::ResourceId resource) const {
  return std::binary_search(resources_.begin(), resources_.end(), resource);
}

std::string_view DeviceResources::ModelText(const Kind& kind, const api::Device& device,
                                            AttributeTextBuffer& buffer) {
  if (kind.model_attribute == api::kEmptySymbol) return {};
  const api::DeviceAttribute* attribute = device.FindAttribute(kind.model_attribute);
  return attribute == nullptr ? std::string_view() : AttributeText(*attribute, buffer);
}

FoundDevice FindDevice(const DraState& dra, std::string_view node_name, const api::DeviceId& id) {
  FoundDevice found;
  if (const SliceList* local = dra.NodeSlices(node_name)) Consider(*local, id, found);
  if (found.slice == nullptr) Consider(*dra.shared_slices, id, found);
  return found;
}

}  // namespace kubesched::framework
