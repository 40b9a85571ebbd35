// The cache's Dynamic Resource Allocation objects, published to snapshots as a DraState, and the
// claim allocations DynamicResources assumed (framework::ClaimAssumeCache), all under the cache's
// one mutex.

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "scheduler/cache/cache.h"
#include "scheduler/cache/cache_internal.h"
#include "scheduler/util/strings.h"

namespace kubesched::cache {
namespace {

using framework::DraState;
using util::Absl;

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

// Slices and claims go through DraState's writers, which keep its indexes.
void Store(DraState& state, const std::string& key, std::shared_ptr<const api::DeviceClass> o) {
  state.classes.Set(key, std::move(o));
}
void Store(DraState& state, const std::string& key, std::shared_ptr<const api::ResourceSlice> o) {
  state.SetSlice(key, std::move(o));
}
void Store(DraState& state, const std::string& key, std::shared_ptr<const api::ResourceClaim> o) {
  state.SetClaim(key, std::move(o));
}
void Store(DraState& state, const std::string& key,
           std::shared_ptr<const api::ResourceClaimTemplate> o) {
  state.templates.Set(key, std::move(o));
}
// Whether `key` was there to erase.
bool Erase(DraState& state, const std::string& key, const api::DeviceClass*) {
  if (state.classes.Find(key) == nullptr) return false;
  state.classes.Remove(key);
  return true;
}
bool Erase(DraState& state, const std::string& key, const api::ResourceSlice*) {
  if (state.slices.Find(key) == nullptr) return false;
  state.RemoveSlice(key);
  return true;
}
bool Erase(DraState& state, const std::string& key, const api::ResourceClaim*) {
  if (state.claims.Find(key) == nullptr) return false;
  state.RemoveClaim(key);
  return true;
}
bool Erase(DraState& state, const std::string& key, const api::ResourceClaimTemplate*) {
  if (state.templates.Find(key) == nullptr) return false;
  state.templates.Remove(key);
  return true;
}

// The stored object of a kind whose changes move the nodes' device counts (slices, claims); null
// for the others, which count nothing.
template <typename T>
std::shared_ptr<const T> Current(const DraState& state, const std::string& key) {
  if constexpr (std::is_same_v<T, api::ResourceSlice>) {
    return state.slices.Get(key);
  } else if constexpr (std::is_same_v<T, api::ResourceClaim>) {
    return state.claims.Get(key);
  } else {
    return nullptr;
  }
}

// Whether resourceVersion `a` is newer than `b`. Versions are opaque to clients, but every API
// server (and the embedded cluster) hands out increasing integers, which upstream's assume cache
// compares too; versions that are not integers count as newer whenever they differ.
bool Newer(const std::string& a, const std::string& b) {
  int64_t x = 0;
  int64_t y = 0;
  if (absl::SimpleAtoi(a, &x) && absl::SimpleAtoi(b, &y)) return x > y;
  return a != b;
}

// Drops `key` from the pod's list of assumed claims.
void DropFromPod(ClaimAssumptions& assumptions, const std::string& pod_key,
                 const std::string& key) {
  auto pod = assumptions.by_pod.find(pod_key);
  if (pod == assumptions.by_pod.end()) return;
  auto& keys = pod->second;
  keys.erase(std::remove(keys.begin(), keys.end(), key), keys.end());
  if (keys.empty()) assumptions.by_pod.erase(pod);
}

absl::Status CheckAssumable(const DraState& dra, const ClaimAssumptions& assumptions,
                            std::string_view pod_key, const api::ResourceClaim& wanted) {
  const std::string key = KeyOf(wanted);
  const api::ResourceClaim* current = dra.claims.Find(key);
  if (current == nullptr) {
    return absl::NotFoundError(absl::StrCat("resourceclaim \"", key, "\" not found"));
  }
  const auto conflict = [&key](std::string_view why) {
    return absl::AbortedError(
        absl::StrCat("cannot assume resourceclaim \"", key, "\": ", Absl(why)));
  };
  if (auto it = assumptions.claims.find(key);
      it != assumptions.claims.end() && it->second.pod_key != pod_key) {
    return conflict(absl::StrCat("assumed for pod ", it->second.pod_key));
  }
  if (current->meta.resource_version != wanted.meta.resource_version) {
    return conflict(absl::StrCat("it changed (resourceVersion ", current->meta.resource_version,
                                 ", decided on ", wanted.meta.resource_version, ")"));
  }
  if (current->allocation.has_value()) return conflict("it is allocated already");
  return absl::OkStatus();
}

}  // namespace

template <typename T>
void Cache::SetDraObject(std::shared_ptr<const T> object) {
  absl::MutexLock lock(&impl_->mu);
  const std::string key = KeyOf(*object);
  if constexpr (std::is_same_v<T, api::ResourceClaim>) {
    ClaimAssumptions& assumptions = impl_->assumed_claims;
    if (auto it = assumptions.claims.find(key); it != assumptions.claims.end()) {
      AssumedClaim& assumed = it->second;
      const std::string& assumed_version = impl_->dra.claims.Find(key)->meta.resource_version;
      const std::string& delivered = object->meta.resource_version;
      // A written claim is confirmed by its own version; one in flight only by a newer one (the
      // version it was decided on may be delivered again by a relist).
      const bool informers_win =
          assumed.written ? !Newer(assumed_version, delivered) : Newer(delivered, assumed_version);
      if (!informers_win) {
        assumed.observed = std::move(object);
        return;
      }
      impl_->dra.pending_allocations.Remove(key);
      DropFromPod(assumptions, assumed.pod_key, key);
      assumptions.claims.erase(it);
    }
  }
  const std::shared_ptr<const T> before = Current<T>(impl_->dra, key);
  [[maybe_unused]] const T* after = object.get();
  Store(impl_->dra, key, std::move(object));
  impl_->dra_generation = impl_->NextGeneration();
  if constexpr (std::is_same_v<T, api::ResourceSlice>) {
    impl_->SliceChanged(before.get(), after);
  } else if constexpr (std::is_same_v<T, api::ResourceClaim>) {
    impl_->RecountClaimNodes(before.get(), after);
  }
}

template <typename T>
void Cache::RemoveDraObject(const T& object) {
  absl::MutexLock lock(&impl_->mu);
  const std::string key = KeyOf(object);
  if constexpr (std::is_same_v<T, api::ResourceClaim>) {
    ClaimAssumptions& assumptions = impl_->assumed_claims;
    if (auto it = assumptions.claims.find(key); it != assumptions.claims.end()) {
      impl_->dra.pending_allocations.Remove(key);
      DropFromPod(assumptions, it->second.pod_key, key);
      assumptions.claims.erase(it);
    }
  }
  const std::shared_ptr<const T> before = Current<T>(impl_->dra, key);
  if (!Erase(impl_->dra, key, &object)) return;
  impl_->dra_generation = impl_->NextGeneration();
  if constexpr (std::is_same_v<T, api::ResourceSlice>) {
    impl_->SliceChanged(before.get(), nullptr);
  } else if constexpr (std::is_same_v<T, api::ResourceClaim>) {
    impl_->RecountClaimNodes(before.get(), nullptr);
  }
}

#define KUBESCHED_DRA_KIND(T)                                     \
  template void Cache::SetDraObject<T>(std::shared_ptr<const T>); \
  template void Cache::RemoveDraObject<T>(const T&);
KUBESCHED_DRA_KIND(api::DeviceClass)
KUBESCHED_DRA_KIND(api::ResourceSlice)
KUBESCHED_DRA_KIND(api::ResourceClaim)
KUBESCHED_DRA_KIND(api::ResourceClaimTemplate)
#undef KUBESCHED_DRA_KIND

absl::Status Cache::AssumeClaims(
    std::string_view pod_key,
    const std::vector<std::shared_ptr<const api::ResourceClaim>>& claims) {
  absl::MutexLock lock(&impl_->mu);
  DraState& dra = impl_->dra;
  ClaimAssumptions& assumptions = impl_->assumed_claims;
  // Every claim is checked before any is assumed: all or none.
  for (const auto& claim : claims) {
    if (absl::Status status = CheckAssumable(dra, assumptions, pod_key, *claim); !status.ok()) {
      return status;
    }
  }
  if (claims.empty()) return absl::OkStatus();
  const std::string pod(pod_key);
  for (const auto& claim : claims) {
    const std::string key = KeyOf(*claim);
    AssumedClaim& assumed = assumptions.claims[key];
    // Assumed twice by one pod: the first entry already holds the informers' version.
    if (assumed.observed == nullptr) {
      assumed = {pod, dra.claims.Get(key), false};
      assumptions.by_pod[pod].push_back(key);
    }
    const std::shared_ptr<const api::ResourceClaim> before = dra.claims.Get(key);
    dra.SetClaim(key, claim);
    dra.pending_allocations.Set(key, std::make_shared<const std::string>(pod));
    impl_->RecountClaimNodes(before.get(), claim.get());
  }
  impl_->dra_generation = impl_->NextGeneration();
  return absl::OkStatus();
}

void Cache::ClaimWritten(std::string_view pod_key,
                         std::shared_ptr<const api::ResourceClaim> stored) {
  absl::MutexLock lock(&impl_->mu);
  DraState& dra = impl_->dra;
  ClaimAssumptions& assumptions = impl_->assumed_claims;
  const std::string key = KeyOf(*stored);
  auto it = assumptions.claims.find(key);
  if (it == assumptions.claims.end()) {
    // Not assumed (a reservation of an allocated claim), or the informers won meanwhile: the
    // write stands in for them only if they have not shown it yet.
    const std::shared_ptr<const api::ResourceClaim> current = dra.claims.Get(key);
    if (current == nullptr ||
        !Newer(stored->meta.resource_version, current->meta.resource_version)) {
      return;
    }
    const std::string pod(pod_key);
    it = assumptions.claims.emplace(key, AssumedClaim{pod, current, true}).first;
    assumptions.by_pod[pod].push_back(key);
  }
  it->second.written = true;
  dra.pending_allocations.Remove(key);
  const std::shared_ptr<const api::ResourceClaim> before = dra.claims.Get(key);
  const api::ResourceClaim* after = stored.get();
  dra.SetClaim(key, std::move(stored));
  impl_->RecountClaimNodes(before.get(), after);
  impl_->dra_generation = impl_->NextGeneration();
}

void Cache::ForgetClaims(std::string_view pod_key) {
  absl::MutexLock lock(&impl_->mu);
  DraState& dra = impl_->dra;
  ClaimAssumptions& assumptions = impl_->assumed_claims;
  const auto pod = assumptions.by_pod.find(Absl(pod_key));
  if (pod == assumptions.by_pod.end()) return;
  std::vector<std::string> kept;
  bool changed = false;
  for (const std::string& key : pod->second) {
    auto it = assumptions.claims.find(key);
    if (it == assumptions.claims.end()) continue;
    // The server holds a written allocation: its devices stay taken until the informers show it.
    if (it->second.written) {
      kept.push_back(key);
      continue;
    }
    const std::shared_ptr<const api::ResourceClaim> before = dra.claims.Get(key);
    const std::shared_ptr<const api::ResourceClaim> after = it->second.observed;
    if (after != nullptr) {
      dra.SetClaim(key, after);
    } else {
      dra.RemoveClaim(key);
    }
    impl_->RecountClaimNodes(before.get(), after.get());
    dra.pending_allocations.Remove(key);
    assumptions.claims.erase(it);
    changed = true;
  }
  if (kept.empty()) {
    assumptions.by_pod.erase(pod);
  } else {
    pod->second = std::move(kept);
  }
  if (changed) impl_->dra_generation = impl_->NextGeneration();
}

void Cache::ReadDra(absl::FunctionRef<void(const framework::DraState&)> fn) const {
  absl::MutexLock lock(&impl_->mu);
  fn(impl_->dra);
}

size_t Cache::AssumedClaimCount() const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->assumed_claims.claims.size();
}

}  // namespace kubesched::cache
