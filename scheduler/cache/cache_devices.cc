// Each node's DRA devices as its NodeInfo carries them, kept as slices and claim allocations
// change, in proportion to the devices of the nodes they touch, never by a scan of the cluster:
// what its own slices offer and which of those claims hold (NodeInfo::own_devices, which
// DynamicResources' Filter counts), and the devices counted as resources
// (NodeInfo::device_allocatable and device_requested, for the scores and the watermark that weigh
// the resource; off unless the queue configuration counts devices). Clusters without DRA objects
// never come here.

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

void Cache::Impl::CountDeviceAmounts(const std::string& node_name, api::ResourceList& allocatable,
                                     api::ResourceList& requested) const {
  const framework::SliceList* slices = dra.NodeSlices(node_name);
  if (device_resources == nullptr || slices == nullptr) return;
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

void Cache::Impl::RecountDevices(const std::string& node_name) {
  const auto it = nodes.find(node_name);
  if (it == nodes.end() || it->second->info.node() == nullptr) return;
  framework::OwnDevices own = dra.OwnDevicesOf(node_name);
  api::ResourceList allocatable;
  api::ResourceList requested;
  CountDeviceAmounts(node_name, allocatable, requested);
  NodeItem* item = it->second.get();
  if (own == item->info.own_devices() && allocatable == item->info.device_allocatable() &&
      requested == item->info.device_requested()) {
    return;
  }
  const int64_t stamp = NextGeneration();
  ChangeNode(item, [&](NodeInfo& info) {
    info.SetOwnDevices(std::move(own), stamp);
    info.SetDeviceAmounts(std::move(allocatable), std::move(requested), stamp);
  });
}

// Nodes are touched once each, in the order met: a claim's devices are mostly of one node.
void Cache::Impl::RecountClaimNodes(const api::ResourceClaim* before,
                                    const api::ResourceClaim* after) {
  std::vector<std::string> touched;
  for (const api::ResourceClaim* claim : {before, after}) {
    if (claim == nullptr || !claim->allocation.has_value()) continue;
    for (const api::DeviceRequestAllocationResult& result : claim->allocation->devices) {
      const auto pool = pool_nodes.find(std::pair(result.driver, result.pool));
      if (pool == pool_nodes.end()) continue;
      for (const std::string& node : pool->second) {
        if (std::find(touched.begin(), touched.end(), node) == touched.end()) {
          touched.push_back(node);
        }
      }
    }
  }
  for (const std::string& name : touched) RecountDevices(name);
}

// A pool's node-local slices are normally one node's; the index keeps every node that has one.
void Cache::Impl::SliceChanged(const api::ResourceSlice* before, const api::ResourceSlice* after) {
  std::vector<std::string> touched;
  if (before != nullptr && NodeLocal(*before)) {
    const framework::SliceList* rest = dra.NodeSlices(before->node_name);
    const bool pool_left =
        rest == nullptr || std::none_of(rest->begin(), rest->end(), [before](const auto& slice) {
          return slice->driver == before->driver && slice->pool.name == before->pool.name;
        });
    if (pool_left) ForgetPoolNode(std::pair(before->driver, before->pool.name), before->node_name);
    touched.push_back(before->node_name);
  }
  if (after != nullptr && NodeLocal(*after)) {
    std::vector<std::string>& pool_of = pool_nodes[std::pair(after->driver, after->pool.name)];
    if (std::find(pool_of.begin(), pool_of.end(), after->node_name) == pool_of.end()) {
      pool_of.push_back(after->node_name);
    }
    if (touched.empty() || touched.front() != after->node_name) {
      touched.push_back(after->node_name);
    }
  }
  for (const std::string& name : touched) RecountDevices(name);
}

void Cache::Impl::ForgetPoolNode(const std::pair<api::Symbol, api::Symbol>& pool,
                                 const std::string& node_name) {
  const auto it = pool_nodes.find(pool);
  if (it == pool_nodes.end()) return;
  std::vector<std::string>& nodes_of_pool = it->second;
  nodes_of_pool.erase(std::remove(nodes_of_pool.begin(), nodes_of_pool.end(), node_name),
                      nodes_of_pool.end());
  if (nodes_of_pool.empty()) pool_nodes.erase(it);
}

}  // namespace kubesched::cache
