#include "scheduler/quota/device_usage.h"

#include <algorithm>
#include <string_view>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/quota/model_names.h"

namespace kubesched::quota {
namespace {

constexpr std::string_view kPods = "pods";

bool IsPodConsumer(const api::ResourceClaimConsumer& consumer) {
  return consumer.api_group.empty() && consumer.resource == kPods;
}

// Whether the claim's first pod consumer is `pod` (by UID; by name for a pod without one, as
// simulate's workload pods may be).
bool FirstConsumerIs(const api::ResourceClaim& claim, const api::Pod& pod) {
  for (const api::ResourceClaimConsumer& consumer : claim.reserved_for) {
    if (!IsPodConsumer(consumer)) continue;
    if (!pod.meta.uid.empty()) return consumer.uid == pod.meta.uid;
    return consumer.uid.empty() && consumer.name == pod.meta.name;
  }
  return false;
}

// The name of the claim behind each of the pod's entries (resourceClaimName, or the generated
// claim its status names), each once.
std::vector<std::string_view> ClaimNames(const api::Pod& pod) {
  std::vector<std::string_view> names;
  for (const api::PodResourceClaim& entry : pod.spec.resource_claims) {
    std::string_view name = entry.resource_claim_name;
    if (name.empty()) {
      for (const api::PodResourceClaimStatus& status : pod.status.resource_claim_statuses) {
        if (status.name == entry.name) name = status.resource_claim_name;
      }
    }
    if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end()) {
      names.push_back(name);
    }
  }
  return names;
}

}  // namespace

void DeviceTally::Add(api::ResourceId resource, api::Symbol model, int64_t count) {
  if (count == 0) return;
  const auto it = std::lower_bound(
      counts_.begin(), counts_.end(), std::pair(resource, model),
      [](const DeviceCount& c, const auto& key) { return std::pair(c.resource, c.model) < key; });
  if (it != counts_.end() && it->resource == resource && it->model == model) {
    it->count += count;
    if (it->count == 0) counts_.erase(it);
    return;
  }
  counts_.insert(it, DeviceCount{resource, model, count});
}

void DeviceTally::Add(const DeviceTally& other, int sign) {
  for (const DeviceCount& count : other.counts_)
    Add(count.resource, count.model, sign * count.count);
}

void DeviceTally::AddDevice(const framework::DeviceResources::Kind& kind,
                            const api::Device& device) {
  framework::AttributeTextBuffer buffer;
  const std::string_view model = framework::DeviceResources::ModelText(kind, device, buffer);
  Add(kind.resource, model.empty() ? api::kEmptySymbol : api::Intern(NormalizeDeviceModel(model)),
      1);
}

std::shared_ptr<const framework::DeviceResources> CompileDeviceResources(
    const config::QueuesConfig& config) {
  if (config.devices.empty()) return nullptr;
  std::vector<framework::DeviceResources::Kind> kinds;
  for (const config::DeviceResourceSpec& spec : config.devices) {
    framework::DeviceResources::Kind kind;
    kind.driver = api::Intern(spec.driver);
    kind.resource = api::InternResource(spec.resource);
    if (!spec.model_attribute.empty()) kind.model_attribute = api::Intern(spec.model_attribute);
    for (const auto& [name, value] : spec.attributes) {
      kind.attributes.emplace_back(api::Intern(name), value);
    }
    kinds.push_back(std::move(kind));
  }
  return std::make_shared<const framework::DeviceResources>(std::move(kinds));
}

PodDevices CountPodDevices(const framework::DeviceResources& resources, const api::Pod& pod,
                           const framework::DraState& dra) {
  PodDevices devices;
  for (const std::string_view name : ClaimNames(pod)) {
    const api::ResourceClaim* claim = dra.Claim(pod.meta.namespace_name, name);
    if (claim == nullptr || !claim->allocation.has_value() || !FirstConsumerIs(*claim, pod)) {
      continue;
    }
    for (const api::DeviceRequestAllocationResult& result : claim->allocation->devices) {
      if (result.admin_access) continue;
      const framework::FoundDevice found = framework::FindDevice(
          dra, pod.spec.node_name, {result.driver, result.pool, result.device});
      if (found.device == nullptr) {
        devices.unresolved = true;
        continue;
      }
      if (const auto* kind = resources.KindOf(found.slice->driver, *found.device)) {
        devices.tally.AddDevice(*kind, *found.device);
      }
    }
  }
  return devices;
}

DeviceTally CountSliceDevices(const framework::DeviceResources& resources,
                              const api::ResourceSlice& slice) {
  DeviceTally tally;
  for (const api::Device& device : slice.devices) {
    if (const auto* kind = resources.KindOf(slice.driver, device)) tally.AddDevice(*kind, device);
  }
  return tally;
}

std::string FirstConsumerKey(const api::ResourceClaim& claim) {
  for (const api::ResourceClaimConsumer& consumer : claim.reserved_for) {
    if (IsPodConsumer(consumer)) return absl::StrCat(claim.meta.namespace_name, "/", consumer.name);
  }
  return std::string();
}

}  // namespace kubesched::quota
