#include "plugins/dynamic_resources/node_devices.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "scheduler/util/strings.h"

namespace kubesched::plugins::dynamic_resources {
namespace {

// Pools by driver and name (as text, so the order does not depend on interning order), the newest
// generation first, then slices by name.
bool SliceOrder(const api::ResourceSlice* a, const api::ResourceSlice* b) {
  if (a->driver != b->driver) return api::SymbolText(a->driver) < api::SymbolText(b->driver);
  if (a->pool.name != b->pool.name) {
    return api::SymbolText(a->pool.name) < api::SymbolText(b->pool.name);
  }
  if (a->pool.generation != b->pool.generation) return a->pool.generation > b->pool.generation;
  return a->meta.name < b->meta.name;
}

bool SamePool(const api::ResourceSlice& a, const api::ResourceSlice& b) {
  return a.driver == b.driver && a.pool.name == b.pool.name;
}

}  // namespace

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
  std::sort(slices_.begin(), slices_.end(), SliceOrder);
  BuildPools();
}

void NodeDevices::Gather(const framework::SliceList* local, const framework::SliceList& shared,
                         std::string_view node_name, const api::LabelSet& node_labels) {
  slices_.clear();
  if (local != nullptr) {
    for (const auto& slice : *local) {
      if (SliceAppliesToNode(*slice, node_name, node_labels)) slices_.push_back(slice.get());
    }
  }
  for (const auto& slice : shared) {
    if (SliceAppliesToNode(*slice, node_name, node_labels)) slices_.push_back(slice.get());
  }
  std::sort(slices_.begin(), slices_.end(), SliceOrder);
  BuildPools();
}

void NodeDevices::BuildPools() {
  pools_.clear();
  devices_.clear();
  size_t i = 0;
  while (i < slices_.size()) {
    const api::ResourceSlice& first = *slices_[i];
    Pool pool{first.driver, first.pool.name, false, devices_.size(), devices_.size()};
    int64_t newest_slices = 0;
    const auto pool_index = static_cast<uint32_t>(pools_.size());
    for (; i < slices_.size() && SamePool(*slices_[i], first); ++i) {
      const api::ResourceSlice& slice = *slices_[i];
      if (slice.pool.generation != first.pool.generation) continue;  // outdated
      ++newest_slices;
      for (const api::Device& device : slice.devices) {
        devices_.push_back({&slice, &device, pool_index});
      }
    }
    pool.incomplete = newest_slices != first.pool.resource_slice_count;
    pool.end_device = devices_.size();
    pools_.push_back(pool);
  }
}

}  // namespace kubesched::plugins::dynamic_resources
