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

}  // namespace

void DraState::SetSlice(const std::string& name, std::shared_ptr<const api::ResourceSlice> slice) {
  RemoveSlice(name);
  if (NodeLocal(*slice)) {
    const SliceList* old = slices_by_node.Find(slice->node_name);
    auto list = old == nullptr ? std::make_shared<SliceList>() : std::make_shared<SliceList>(*old);
    list->push_back(slice);
    slices_by_node.Set(slice->node_name, std::move(list));
  } else {
    auto list = std::make_shared<SliceList>(*shared_slices);
    list->push_back(slice);
    shared_slices = std::move(list);
  }
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
    }
  } else {
    std::shared_ptr<const SliceList> rest = Without(*shared_slices, old.get());
    shared_slices = rest != nullptr ? std::move(rest) : std::make_shared<const SliceList>();
  }
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

void DraState::CountAllocation(const api::ResourceClaim& claim, int32_t delta) {
  if (!claim.allocation.has_value()) return;
  for (const api::DeviceRequestAllocationResult& result : claim.allocation->devices) {
    if (result.admin_access) continue;
    allocated_devices.Add({result.driver, result.pool, result.device}, delta);
  }
}

}  // namespace kubesched::framework
