// DRA devices counted as resources on each node (NodeInfo::device_allocatable and
// device_requested), for the scores and the watermark that weigh the resource: kept as slices and
// claim allocations change, in proportion to the devices of the nodes they touch, never by a scan
// of the cluster. Off (and free) unless the queue configuration counts devices.

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/cache/cache.h"
#include "scheduler/cache/cache_internal.h"

namespace kubesched::cache {
namespace {

bool NodeLocal(const api::ResourceSlice& slice) {
  return !slice.node_name.empty() && !slice.per_device_node_selection;
}

// Whether `slice` is of its pool's newest generation among `slices`.
bool Newest(const api::ResourceSlice& slice, const framework::SliceList& slices) {
  return std::none_of(slices.begin(), slices.end(), [&slice](const auto& other) {
    return other->driver == slice.driver && other->pool.name == slice.pool.name &&
           other->pool.generation > slice.pool.generation;
  });
}

}  // namespace

void Cache::EnableDeviceResources(std::shared_ptr<const framework::DeviceResources> resources) {
  absl::MutexLock lock(&impl_->mu);
  if (resources == nullptr || resources->empty()) return;
  impl_->device_resources = resources;
  impl_->dra.device_resources = std::move(resources);
  impl_->dra_generation = impl_->NextGeneration();
}

void Cache::Impl::RecountDevices(const std::string& node_name) {
  if (device_resources == nullptr) return;
  const auto it = nodes.find(node_name);
  if (it == nodes.end() || it->second->info.node() == nullptr) return;
  api::ResourceList allocatable;
  api::ResourceList requested;
  if (const framework::SliceList* slices = dra.NodeSlices(node_name)) {
    for (const auto& slice : *slices) {
      if (!Newest(*slice, *slices)) continue;
      for (const api::Device& device : slice->devices) {
        const auto* kind = device_resources->KindOf(slice->driver, device);
        if (kind == nullptr) continue;
        allocatable.Add(kind->resource, 1);
        if (dra.allocated_devices.Contains({slice->driver, slice->pool.name, device.name})) {
          requested.Add(kind->resource, 1);
        }
      }
    }
  }
  NodeItem* item = it->second.get();
  if (allocatable == item->info.device_allocatable() &&
      requested == item->info.device_requested()) {
    return;
  }
  const int64_t stamp = NextGeneration();
  ChangeNode(item, [&](NodeInfo& info) {
    info.SetDeviceAmounts(std::move(allocatable), std::move(requested), stamp);
  });
}

void Cache::Impl::RecountClaimNodes(const api::ResourceClaim* before,
                                    const api::ResourceClaim* after) {
  if (device_resources == nullptr) return;
  std::vector<std::string> touched;
  for (const api::ResourceClaim* claim : {before, after}) {
    if (claim == nullptr || !claim->allocation.has_value()) continue;
    for (const api::DeviceRequestAllocationResult& result : claim->allocation->devices) {
      const auto node = pool_nodes.find(std::pair(result.driver, result.pool));
      if (node == pool_nodes.end()) continue;
      if (std::find(touched.begin(), touched.end(), node->second) == touched.end()) {
        touched.push_back(node->second);
      }
    }
  }
  for (const std::string& name : touched) RecountDevices(name);
}

void Cache::Impl::SliceChanged(const api::ResourceSlice* before, const api::ResourceSlice* after) {
  if (device_resources == nullptr) return;
  std::vector<std::string> touched;
  if (before != nullptr && NodeLocal(*before)) {
    const framework::SliceList* rest = dra.NodeSlices(before->node_name);
    const bool pool_left =
        rest == nullptr || std::none_of(rest->begin(), rest->end(), [before](const auto& slice) {
          return slice->driver == before->driver && slice->pool.name == before->pool.name;
        });
    if (pool_left) pool_nodes.erase(std::pair(before->driver, before->pool.name));
    touched.push_back(before->node_name);
  }
  if (after != nullptr && NodeLocal(*after)) {
    pool_nodes[std::pair(after->driver, after->pool.name)] = after->node_name;
    if (touched.empty() || touched.front() != after->node_name) {
      touched.push_back(after->node_name);
    }
  }
  for (const std::string& name : touched) RecountDevices(name);
}

}  // namespace kubesched::cache
