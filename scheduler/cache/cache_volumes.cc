// The cache's volume objects, published to snapshots as a StorageState.

#include "scheduler/cache/cache.h"
#include "scheduler/cache/cache_internal.h"

namespace kubesched::cache {
namespace {

using framework::StorageState;

auto& MapOf(StorageState& state, const api::PersistentVolumeClaim*) { return state.claims; }
auto& MapOf(StorageState& state, const api::PersistentVolume*) { return state.volumes; }
auto& MapOf(StorageState& state, const api::StorageClass*) { return state.classes; }
auto& MapOf(StorageState& state, const api::CsiNode*) { return state.csi_nodes; }
auto& MapOf(StorageState& state, const api::VolumeAttachment*) { return state.attachments; }

std::string KeyOf(const api::PersistentVolumeClaim& claim) {
  return StorageState::ClaimKey(claim.meta.namespace_name, claim.meta.name);
}
template <typename T>
std::string KeyOf(const T& object) {
  return object.meta.name;
}

}  // namespace

template <typename T>
void Cache::SetStorageObject(std::shared_ptr<const T> object) {
  absl::MutexLock lock(&impl_->mu);
  const std::string key = KeyOf(*object);
  MapOf(impl_->storage, static_cast<const T*>(nullptr)).Set(key, std::move(object));
  impl_->storage_generation = impl_->NextGeneration();
}

template <typename T>
void Cache::RemoveStorageObject(const T& object) {
  absl::MutexLock lock(&impl_->mu);
  MapOf(impl_->storage, static_cast<const T*>(nullptr)).Remove(KeyOf(object));
  impl_->storage_generation = impl_->NextGeneration();
}

#define KUBESCHED_STORAGE_KIND(T)                                     \
  template void Cache::SetStorageObject<T>(std::shared_ptr<const T>); \
  template void Cache::RemoveStorageObject<T>(const T&);
KUBESCHED_STORAGE_KIND(api::PersistentVolumeClaim)
KUBESCHED_STORAGE_KIND(api::PersistentVolume)
KUBESCHED_STORAGE_KIND(api::StorageClass)
KUBESCHED_STORAGE_KIND(api::CsiNode)
KUBESCHED_STORAGE_KIND(api::VolumeAttachment)
#undef KUBESCHED_STORAGE_KIND

}  // namespace kubesched::cache
