#include "scheduler/framework/dra_state.h"

#include <algorithm>
#include <utility>

namespace kubesched::framework {
namespace {

bool NodeLocal(const api::ResourceSlice& slice) {
  return !slice.node_name.empty() && !slice.per_device_node_selection;
}

// `list` without `slice`; null when nothing is left.
std::shared_ptr<const SliceList> Without(const SliceList& list, const api::ResourceSlice* slice) {
  auto rest = std::make_shared<SliceList>();
  rest->reserve(list.size());
  for (const auto& kept : list) {
    if (kept.get() != slice) rest->push_back(kept);
  }
  if (rest->empty()) return nullptr;
  return rest;
}

// What one node's own slices offer. A pool incomplete among them, or naming a device twice, makes
// the summary not self-contained: its devices then depend on other nodes' slices, or the pool
// fails the node with its own message, and the plugin gathers them in full.
std::shared_ptr<const NodeDeviceSummary> Summarize(const SliceList& list) {
  std::vector<const api::ResourceSlice*> slices;
  slices.reserve(list.size());
  for (const auto& slice : list) slices.push_back(slice.get());
  std::sort(slices.begin(), slices.end(), SliceGatherOrder);
  auto summary = std::make_shared<NodeDeviceSummary>();
  std::vector<NodeDeviceSummary::Device>& devices = summary->devices;
  bool self_contained = true;
  ForEachPool(slices, [&](size_t first_slice, size_t newest_end) {
    const api::ResourceSlice& first = *slices[first_slice];
    if (static_cast<int64_t>(newest_end - first_slice) != first.pool.resource_slice_count) {
      self_contained = false;
      return;
    }
    NodeDeviceSummary::Pool pool{
        {first.driver, first.pool.name}, static_cast<uint32_t>(devices.size()), 0};
    for (size_t s = first_slice; s < newest_end; ++s) {
      for (const api::Device& device : slices[s]->devices) {
        devices.push_back({device.name, device.shape});
      }
    }
    const auto by_name = [](const NodeDeviceSummary::Device& a,
                            const NodeDeviceSummary::Device& b) { return a.name < b.name; };
    const auto begin = devices.begin() + pool.first_device;
    std::sort(begin, devices.end(), by_name);
    const auto same_name = [](const NodeDeviceSummary::Device& a,
                              const NodeDeviceSummary::Device& b) { return a.name == b.name; };
    if (std::adjacent_find(begin, devices.end(), same_name) != devices.end()) {
      self_contained = false;
    }
    pool.end_device = static_cast<uint32_t>(devices.size());
    summary->pools.push_back(pool);
  });
  if (self_contained) {
    std::vector<api::DeviceShape> shapes;
    shapes.reserve(devices.size());
    for (const NodeDeviceSummary::Device& device : devices) shapes.push_back(device.shape);
    summary->profile = DeviceProfiles::Intern(std::move(shapes));
  } else {
    summary->profile = DeviceProfiles::Uncountable();
  }
  return summary;
}

}  // namespace

bool SliceGatherOrder(const api::ResourceSlice* a, const api::ResourceSlice* b) {
  if (a->driver != b->driver) return api::SymbolText(a->driver) < api::SymbolText(b->driver);
  if (a->pool.name != b->pool.name) {
    return api::SymbolText(a->pool.name) < api::SymbolText(b->pool.name);
  }
  if (a->pool.generation != b->pool.generation) return a->pool.generation > b->pool.generation;
  return a->meta.name < b->meta.name;
}

OwnDevices DraState::OwnDevicesOf(std::string_view node_name) const {
  OwnDevices own{device_summaries.Get(node_name), 0};
  if (own.summary == nullptr) return own;
  for (const NodeDeviceSummary::Pool& pool : own.summary->pools) {
    const PoolAllocations* held = allocated_by_pool.Find(pool.id);
    if (held == nullptr) continue;
    ForEachHeldDevice(*own.summary, pool, *held, [&own](uint32_t d) {
      if (d < OwnDevices::kHeldBits) own.held |= uint64_t{1} << d;
    });
  }
  return own;
}

void DraState::SummarizeNode(const std::string& node_name) {
  const SliceList* list = slices_by_node.Find(node_name);
  if (list == nullptr) {
    device_summaries.Remove(node_name);
  } else {
    device_summaries.Set(node_name, Summarize(*list));
  }
}

void DraState::SetSlice(const std::string& name, std::shared_ptr<const api::ResourceSlice> slice) {
  RemoveSlice(name);
  if (NodeLocal(*slice)) {
    const SliceList* old = slices_by_node.Find(slice->node_name);
    auto list = old == nullptr ? std::make_shared<SliceList>() : std::make_shared<SliceList>(*old);
    list->push_back(slice);
    slices_by_node.Set(slice->node_name, std::move(list));
    SummarizeNode(slice->node_name);
  } else {
    auto list = std::make_shared<SliceList>(*shared_slices);
    list->push_back(slice);
    shared_slices = std::move(list);
  }
  CountSlice(*slice, +1);
  slices.Set(name, std::move(slice));
}

void DraState::RemoveSlice(std::string_view name) {
  const std::shared_ptr<const api::ResourceSlice> old = slices.Get(name);
  if (old == nullptr) return;
  if (NodeLocal(*old)) {
    if (const SliceList* list = slices_by_node.Find(old->node_name)) {
      std::shared_ptr<const SliceList> rest = Without(*list, old.get());
      if (rest == nullptr) {
        slices_by_node.Remove(old->node_name);
      } else {
        slices_by_node.Set(old->node_name, std::move(rest));
      }
      SummarizeNode(old->node_name);
    }
  } else {
    std::shared_ptr<const SliceList> rest = Without(*shared_slices, old.get());
    shared_slices = rest != nullptr ? std::move(rest) : std::make_shared<const SliceList>();
  }
  CountSlice(*old, -1);
  slices.Remove(name);
}

void DraState::SetClaim(const std::string& key, std::shared_ptr<const api::ResourceClaim> claim) {
  if (const api::ResourceClaim* old = claims.Find(key)) CountAllocation(*old, -1);
  CountAllocation(*claim, +1);
  claims.Set(key, std::move(claim));
}

void DraState::RemoveClaim(std::string_view key) {
  const api::ResourceClaim* old = claims.Find(key);
  if (old == nullptr) return;
  CountAllocation(*old, -1);
  claims.Remove(key);
}

std::string DraState::PoolKey(api::Symbol driver, api::Symbol pool) {
  std::string key(api::SymbolText(driver));
  key += '/';
  key += api::SymbolText(pool);
  return key;
}

int32_t DraState::PoolSlices(api::Symbol driver, api::Symbol pool, int64_t generation) const {
  const PoolGenerations* generations = pool_generations.Find(PoolKey(driver, pool));
  if (generations == nullptr) return 0;
  for (const auto& [seen, count] : generations->slices) {
    if (seen == generation) return count;
  }
  return 0;
}

bool DraState::NewerPoolGeneration(api::Symbol driver, api::Symbol pool, int64_t generation) const {
  const PoolGenerations* generations = pool_generations.Find(PoolKey(driver, pool));
  return generations != nullptr && !generations->slices.empty() &&
         generations->slices.back().first > generation;
}

void DraState::CountSlice(const api::ResourceSlice& slice, int32_t delta) {
  const std::string key = PoolKey(slice.driver, slice.pool.name);
  const PoolGenerations* old = pool_generations.Find(key);
  auto updated = old == nullptr ? std::make_shared<PoolGenerations>()
                                : std::make_shared<PoolGenerations>(*old);
  auto& entries = updated->slices;
  auto it = std::lower_bound(entries.begin(), entries.end(), slice.pool.generation,
                             [](const auto& entry, int64_t g) { return entry.first < g; });
  if (it == entries.end() || it->first != slice.pool.generation) {
    if (delta < 0) return;
    it = entries.insert(it, {slice.pool.generation, 0});
  }
  it->second += delta;
  if (it->second <= 0) entries.erase(it);
  if (entries.empty()) {
    pool_generations.Remove(key);
  } else {
    pool_generations.Set(key, std::move(updated));
  }
}

void DraState::CountInPool(const api::DeviceRequestAllocationResult& result, int32_t delta) {
  const PoolId pool{result.driver, result.pool};
  const PoolAllocations* held = allocated_by_pool.Find(pool);
  if (delta < 0 && held == nullptr) return;
  PoolAllocations& devices = allocated_by_pool.Mutable(pool);
  auto it =
      std::lower_bound(devices.begin(), devices.end(), result.device,
                       [](const auto& entry, api::Symbol name) { return entry.first < name; });
  if (it == devices.end() || it->first != result.device) {
    if (delta < 0) return;
    it = devices.insert(it, {result.device, 0});
  }
  it->second += delta;
  if (it->second <= 0) devices.erase(it);
  if (devices.empty()) allocated_by_pool.Remove(pool);
}

void DraState::CountAllocation(const api::ResourceClaim& claim, int32_t delta) {
  if (!claim.allocation.has_value()) return;
  for (const api::DeviceRequestAllocationResult& result : claim.allocation->devices) {
    if (result.admin_access) continue;
    allocated_devices.Add({result.driver, result.pool, result.device}, delta);
    CountInPool(result, delta);
  }
}

}  // namespace kubesched::framework
