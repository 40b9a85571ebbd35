// The cache's Dynamic Resource Allocation objects, published to snapshots as a DraState.

#include <string>
#include <utility>

#include "scheduler/cache/cache.h"
#include "scheduler/cache/cache_internal.h"

namespace kubesched::cache {
namespace {

using framework::DraState;

// The map of one kind, by a null pointer of that kind.
auto& MapOf(DraState& state, const api::DeviceClass*) { return state.classes; }
auto& MapOf(DraState& state, const api::ResourceSlice*) { return state.slices; }
auto& MapOf(DraState& state, const api::ResourceClaim*) { return state.claims; }
auto& MapOf(DraState& state, const api::ResourceClaimTemplate*) { return state.templates; }

// Namespaced kinds by "namespace/name", the cluster-scoped ones by name.
template <typename T>
std::string KeyOf(const T& object) {
  if constexpr (std::is_same_v<T, api::ResourceClaim> ||
                std::is_same_v<T, api::ResourceClaimTemplate>) {
    return DraState::Key(object.meta.namespace_name, object.meta.name);
  } else {
    return object.meta.name;
  }
}

}  // namespace

template <typename T>
void Cache::SetDraObject(std::shared_ptr<const T> object) {
  absl::MutexLock lock(&impl_->mu);
  const std::string key = KeyOf(*object);
  MapOf(impl_->dra, object.get()).Set(key, std::move(object));
  impl_->dra_generation = impl_->NextGeneration();
}

template <typename T>
void Cache::RemoveDraObject(const T& object) {
  absl::MutexLock lock(&impl_->mu);
  auto& map = MapOf(impl_->dra, &object);
  const std::string key = KeyOf(object);
  if (map.Find(key) == nullptr) return;
  map.Remove(key);
  impl_->dra_generation = impl_->NextGeneration();
}

#define KUBESCHED_DRA_KIND(T)                                     \
  template void Cache::SetDraObject<T>(std::shared_ptr<const T>); \
  template void Cache::RemoveDraObject<T>(const T&);
KUBESCHED_DRA_KIND(api::DeviceClass)
KUBESCHED_DRA_KIND(api::ResourceSlice)
KUBESCHED_DRA_KIND(api::ResourceClaim)
KUBESCHED_DRA_KIND(api::ResourceClaimTemplate)
#undef KUBESCHED_DRA_KIND

}  // namespace kubesched::cache
