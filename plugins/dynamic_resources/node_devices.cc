#include "plugins/dynamic_resources/node_devices.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "scheduler/util/strings.h"

namespace kubesched::plugins::dynamic_resources {

std::string DeviceIdText(const DeviceId& id) {
  return absl::StrCat(util::Absl(api::SymbolText(id.driver)), "/",
                      util::Absl(api::SymbolText(id.pool)), "/",
                      util::Absl(api::SymbolText(id.device)));
}

bool SliceAppliesToNode(const api::ResourceSlice& slice, std::string_view node_name,
                        const api::LabelSet& node_labels) {
  if (slice.per_device_node_selection) return false;
  if (!slice.node_name.empty()) return slice.node_name == node_name;
  if (slice.node_selector.has_value()) return slice.node_selector->Matches(node_labels, node_name);
  return slice.all_nodes;
}

void NodeDevices::Gather(absl::Span<const api::ResourceSlice* const> slices,
                         std::string_view node_name, const api::LabelSet& node_labels) {
  slices_.clear();
  for (const api::ResourceSlice* slice : slices) {
    if (SliceAppliesToNode(*slice, node_name, node_labels)) slices_.push_back(slice);
  }
  std::sort(slices_.begin(), slices_.end(), framework::SliceGatherOrder);
  BuildPools([slices](api::Symbol driver, api::Symbol pool, int64_t generation) {
    Census census;
    for (const api::ResourceSlice* slice : slices) {
      if (slice->driver != driver || slice->pool.name != pool) continue;
      census.slices += slice->pool.generation == generation ? 1 : 0;
      census.newer = census.newer || slice->pool.generation > generation;
    }
    return census;
  });
}

void NodeDevices::Gather(const framework::SliceList* local, const framework::SliceList& shared,
                         std::string_view node_name, const api::LabelSet& node_labels,
                         const framework::DraState& state) {
  slices_.clear();
  if (local != nullptr) {
    for (const auto& slice : *local) {
      if (SliceAppliesToNode(*slice, node_name, node_labels)) slices_.push_back(slice.get());
    }
  }
  for (const auto& slice : shared) {
    if (SliceAppliesToNode(*slice, node_name, node_labels)) slices_.push_back(slice.get());
  }
  std::sort(slices_.begin(), slices_.end(), framework::SliceGatherOrder);
  BuildPools([&state](api::Symbol driver, api::Symbol pool, int64_t generation) {
    return Census{state.PoolSlices(driver, pool, generation),
                  state.NewerPoolGeneration(driver, pool, generation)};
  });
}

// A pool whose slices for this node are all of its newest generation is complete without asking
// further; only a pool seen in part asks the census (upstream's checkSlicesInPool).
void NodeDevices::BuildPools(CensusFn census) {
  pools_.clear();
  devices_.clear();
  has_invalid_pool_ = false;
  framework::ForEachPool(slices_, [&](size_t first_slice, size_t newest_end) {
    const api::ResourceSlice& first = *slices_[first_slice];
    const int64_t announced = first.pool.resource_slice_count;
    Pool pool{first.driver, first.pool.name, false, false, devices_.size(), devices_.size()};
    if (static_cast<int64_t>(newest_end - first_slice) != announced) {
      const Census seen = census(first.driver, first.pool.name, first.pool.generation);
      if (seen.newer) return;  // replaced elsewhere: the node's part is out of date
      pool.incomplete = seen.slices != announced;
    }
    pool.invalid = newest_end - first_slice > 1 && DuplicateDevice(first_slice, newest_end);
    has_invalid_pool_ = has_invalid_pool_ || pool.invalid;
    const auto pool_index = static_cast<uint32_t>(pools_.size());
    if (pool.usable()) {
      for (size_t s = first_slice; s < newest_end; ++s) {
        for (const api::Device& device : slices_[s]->devices) {
          devices_.push_back({slices_[s], &device, pool_index});
        }
      }
    }
    pool.end_device = devices_.size();
    pools_.push_back(pool);
  });
}

// Whether two slices of [first_slice, end_slice) name one device (upstream's invalid pool; names
// within one slice are unique by the API server's validation).
bool NodeDevices::DuplicateDevice(size_t first_slice, size_t end_slice) {
  names_.clear();
  for (size_t s = first_slice; s < end_slice; ++s) {
    for (const api::Device& device : slices_[s]->devices) names_.push_back(device.name);
  }
  std::sort(names_.begin(), names_.end());
  return std::adjacent_find(names_.begin(), names_.end()) != names_.end();
}

}  // namespace kubesched::plugins::dynamic_resources
