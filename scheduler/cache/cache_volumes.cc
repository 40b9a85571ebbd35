// The cache's volume objects (published to snapshots as a StorageState) and the volumes
// VolumeBinding assumed (framework::VolumeAssumeCache), all under the cache's one mutex.

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/cache/cache.h"
#include "scheduler/cache/cache_internal.h"
#include "scheduler/util/status_macros.h"
#include "scheduler/util/strings.h"

namespace kubesched::cache {
namespace {

using framework::StorageState;
using util::Absl;

// The map of one kind, by a null pointer of that kind (S: StorageState, const or not).
template <typename S>
auto& MapOf(S& state, const api::PersistentVolumeClaim*) {
  return state.claims;
}
template <typename S>
auto& MapOf(S& state, const api::PersistentVolume*) {
  return state.volumes;
}
template <typename S>
auto& MapOf(S& state, const api::StorageClass*) {
  return state.classes;
}
template <typename S>
auto& MapOf(S& state, const api::CsiNode*) {
  return state.csi_nodes;
}
template <typename S>
auto& MapOf(S& state, const api::VolumeAttachment*) {
  return state.attachments;
}
template <typename A>
auto& AssumedOf(A& a, const api::PersistentVolume*) {
  return a.volumes;
}
template <typename A>
auto& AssumedOf(A& a, const api::PersistentVolumeClaim*) {
  return a.claims;
}
auto& PodKeysOf(VolumeAssumptions::PodKeys& k, const api::PersistentVolume*) { return k.volumes; }
auto& PodKeysOf(VolumeAssumptions::PodKeys& k, const api::PersistentVolumeClaim*) {
  return k.claims;
}

std::string KeyOf(const api::PersistentVolumeClaim& claim) {
  return StorageState::ClaimKey(claim.meta.namespace_name, claim.meta.name);
}
template <typename T>
std::string KeyOf(const T& object) {
  return object.meta.name;
}

std::string_view KindOf(const api::PersistentVolume*) { return "persistentvolume"; }
std::string_view KindOf(const api::PersistentVolumeClaim*) { return "persistentvolumeclaim"; }

// The informers delivered `key` again: an assumption of it ends, since the API server's version
// is newer than the one it was made on.
template <typename T>
void DropAssumption(VolumeAssumptions& assumptions, const std::string& key) {
  auto& assumed = AssumedOf(assumptions, static_cast<const T*>(nullptr));
  auto it = assumed.find(key);
  if (it == assumed.end()) return;
  if (auto pod = assumptions.by_pod.find(it->second.pod_key); pod != assumptions.by_pod.end()) {
    auto& keys = PodKeysOf(pod->second, static_cast<const T*>(nullptr));
    keys.erase(std::remove(keys.begin(), keys.end(), key), keys.end());
    if (pod->second.volumes.empty() && pod->second.claims.empty()) assumptions.by_pod.erase(pod);
  }
  assumed.erase(it);
}
// Other kinds are never assumed.
template <typename T>
void DropAssumptionOf(VolumeAssumptions& assumptions, const std::string& key) {
  if constexpr (std::is_same_v<T, api::PersistentVolume> ||
                std::is_same_v<T, api::PersistentVolumeClaim>) {
    DropAssumption<T>(assumptions, key);
  }
}

template <typename T>
absl::Status Conflict(const T& object, std::string_view why) {
  return absl::AbortedError(absl::StrCat("cannot assume ", Absl(KindOf(&object)), " \"",
                                         KeyOf(object), "\": ", Absl(why)));
}

// Whether `pod_key` may assume `wanted` over the cache's current version of it.
template <typename T>
absl::Status CheckAssumable(const StorageState& storage, const VolumeAssumptions& assumptions,
                            std::string_view pod_key, const T& wanted) {
  const std::string key = KeyOf(wanted);
  const T* current = MapOf(storage, &wanted).Find(key);
  if (current == nullptr) {
    return absl::NotFoundError(absl::StrCat(Absl(KindOf(&wanted)), " \"", key, "\" not found"));
  }
  const auto& assumed = AssumedOf(assumptions, &wanted);
  if (auto it = assumed.find(key); it != assumed.end() && it->second.pod_key != pod_key) {
    return Conflict(wanted, absl::StrCat("assumed for pod ", it->second.pod_key));
  }
  if (current->meta.resource_version != wanted.meta.resource_version) {
    return Conflict(wanted,
                    absl::StrCat("it changed (resourceVersion ", current->meta.resource_version,
                                 ", decided on ", wanted.meta.resource_version, ")"));
  }
  if constexpr (std::is_same_v<T, api::PersistentVolume>) {
    const auto& ref = current->claim_ref;
    if (ref.has_value() && wanted.claim_ref.has_value() &&
        (ref->name != wanted.claim_ref->name ||
         ref->namespace_name != wanted.claim_ref->namespace_name)) {
      return Conflict(wanted, absl::StrCat("taken by claim ", ref->namespace_name, "/", ref->name));
    }
  } else {
    if (!current->volume_name.empty()) return Conflict(wanted, "it is bound already");
    const auto node = current->meta.annotations.find(api::kSelectedNodeAnnotation);
    const auto wanted_node = wanted.meta.annotations.find(api::kSelectedNodeAnnotation);
    if (node != current->meta.annotations.end() &&
        (wanted_node == wanted.meta.annotations.end() || wanted_node->second != node->second)) {
      return Conflict(wanted, absl::StrCat("provisioning was asked for on node ", node->second));
    }
  }
  return absl::OkStatus();
}

template <typename T>
void Apply(StorageState& storage, VolumeAssumptions& assumptions, const std::string& pod_key,
           const std::shared_ptr<const T>& wanted) {
  const std::string key = KeyOf(*wanted);
  auto& map = MapOf(storage, wanted.get());
  auto& entry = AssumedOf(assumptions, wanted.get())[key];
  // Assumed twice by one pod: the first entry already holds the informers' version.
  if (entry.observed == nullptr) entry = {pod_key, map.Get(key)};
  map.Set(key, wanted);
  auto& keys = PodKeysOf(assumptions.by_pod[pod_key], wanted.get());
  if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
}

// Puts the informers' version back for each of `keys` still assumed by `pod_key`.
template <typename T>
bool Restore(StorageState& storage, VolumeAssumptions& assumptions, const std::string& pod_key,
             const std::vector<std::string>& keys) {
  auto& assumed = AssumedOf(assumptions, static_cast<const T*>(nullptr));
  bool changed = false;
  for (const std::string& key : keys) {
    auto it = assumed.find(key);
    if (it == assumed.end() || it->second.pod_key != pod_key) continue;
    MapOf(storage, static_cast<const T*>(nullptr)).Set(key, std::move(it->second.observed));
    assumed.erase(it);
    changed = true;
  }
  return changed;
}

template <typename T>
std::shared_ptr<const T> Observed(const StorageState& storage, const VolumeAssumptions& assumptions,
                                  std::string_view key) {
  const auto& assumed = AssumedOf(assumptions, static_cast<const T*>(nullptr));
  if (auto it = assumed.find(Absl(key)); it != assumed.end()) return it->second.observed;
  return MapOf(storage, static_cast<const T*>(nullptr)).Get(key);
}

// Attachments go through StorageState's own writers, which index them by node as well.
template <typename T>
void Store(StorageState& state, const std::string& key, std::shared_ptr<const T> object) {
  MapOf(state, static_cast<const T*>(nullptr)).Set(key, std::move(object));
}
void Store(StorageState& state, const std::string& key,
           std::shared_ptr<const api::VolumeAttachment> object) {
  state.SetAttachment(key, std::move(object));
}
template <typename T>
void Erase(StorageState& state, const std::string& key) {
  MapOf(state, static_cast<const T*>(nullptr)).Remove(key);
}
template <>
void Erase<api::VolumeAttachment>(StorageState& state, const std::string& key) {
  state.RemoveAttachment(key);
}

}  // namespace

template <typename T>
void Cache::SetStorageObject(std::shared_ptr<const T> object) {
  absl::MutexLock lock(&impl_->mu);
  const std::string key = KeyOf(*object);
  DropAssumptionOf<T>(impl_->assumed_volumes, key);
  Store(impl_->storage, key, std::move(object));
  impl_->StorageChanged();
}

template <typename T>
void Cache::RemoveStorageObject(const T& object) {
  absl::MutexLock lock(&impl_->mu);
  const std::string key = KeyOf(object);
  DropAssumptionOf<T>(impl_->assumed_volumes, key);
  Erase<T>(impl_->storage, key);
  impl_->StorageChanged();
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

absl::Status Cache::AssumeVolumes(std::string_view pod_key,
                                  const framework::VolumeAssumption& assumption) {
  absl::MutexLock lock(&impl_->mu);
  // Every object is checked before any is assumed: all or none.
  for (const auto& volume : assumption.volumes) {
    KUBESCHED_RETURN_IF_ERROR(
        CheckAssumable(impl_->storage, impl_->assumed_volumes, pod_key, *volume));
  }
  for (const auto& claim : assumption.claims) {
    KUBESCHED_RETURN_IF_ERROR(
        CheckAssumable(impl_->storage, impl_->assumed_volumes, pod_key, *claim));
  }
  if (assumption.volumes.empty() && assumption.claims.empty()) return absl::OkStatus();
  const std::string pod(pod_key);
  for (const auto& volume : assumption.volumes) {
    Apply(impl_->storage, impl_->assumed_volumes, pod, volume);
  }
  for (const auto& claim : assumption.claims) {
    Apply(impl_->storage, impl_->assumed_volumes, pod, claim);
  }
  impl_->StorageChanged();
  return absl::OkStatus();
}

void Cache::ForgetVolumes(std::string_view pod_key) {
  absl::MutexLock lock(&impl_->mu);
  VolumeAssumptions& assumptions = impl_->assumed_volumes;
  const auto it = assumptions.by_pod.find(Absl(pod_key));
  if (it == assumptions.by_pod.end()) return;
  const VolumeAssumptions::PodKeys keys = std::move(it->second);
  assumptions.by_pod.erase(it);
  const std::string pod(pod_key);
  bool changed = Restore<api::PersistentVolume>(impl_->storage, assumptions, pod, keys.volumes);
  changed |= Restore<api::PersistentVolumeClaim>(impl_->storage, assumptions, pod, keys.claims);
  if (changed) impl_->StorageChanged();
}

std::shared_ptr<const api::PersistentVolumeClaim> Cache::ObservedClaim(std::string_view key) const {
  absl::MutexLock lock(&impl_->mu);
  return Observed<api::PersistentVolumeClaim>(impl_->storage, impl_->assumed_volumes, key);
}

std::shared_ptr<const api::PersistentVolume> Cache::ObservedVolume(std::string_view name) const {
  absl::MutexLock lock(&impl_->mu);
  return Observed<api::PersistentVolume>(impl_->storage, impl_->assumed_volumes, name);
}

int64_t Cache::StorageVersion() const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->storage_generation;
}

bool Cache::AwaitStorageChange(int64_t seen, absl::Time deadline) {
  absl::MutexLock lock(&impl_->mu);
  while (impl_->storage_generation == seen && !impl_->storage_waits_stopped) {
    if (impl_->storage_changed.WaitWithDeadline(&impl_->mu, deadline)) break;  // timed out
  }
  return impl_->storage_generation != seen && !impl_->storage_waits_stopped;
}

void Cache::StopStorageWaits() {
  absl::MutexLock lock(&impl_->mu);
  impl_->storage_waits_stopped = true;
  impl_->storage_changed.SignalAll();
}

size_t Cache::AssumedVolumeCount() const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->assumed_volumes.volumes.size() + impl_->assumed_volumes.claims.size();
}

}  // namespace kubesched::cache
