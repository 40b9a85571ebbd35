#pragma once

// The Dynamic Resource Allocation objects a scheduling cycle reads (device classes, resource
// slices, resource claims and their templates), as an immutable part of the snapshot, published
// by the cache as StorageState is: a publication copies shard pointers only, and a change copies
// one shard at most once per publication. A pod without claims never reads it.

#include <string>
#include <string_view>

#include "scheduler/api/dra.h"
#include "scheduler/framework/storage_state.h"

namespace kubesched::framework {

struct DraState {
  // Classes and slices by name; claims and templates by "namespace/name".
  ShardedObjectMap<api::DeviceClass> classes;
  ShardedObjectMap<api::ResourceSlice> slices;
  ShardedObjectMap<api::ResourceClaim> claims;
  ShardedObjectMap<api::ResourceClaimTemplate> templates;

  static std::string Key(std::string_view namespace_name, std::string_view name) {
    return StorageState::ClaimKey(namespace_name, name);
  }
  const api::ResourceClaim* Claim(std::string_view namespace_name, std::string_view name) const {
    return claims.Find(Key(namespace_name, name));
  }
  const api::ResourceClaimTemplate* Template(std::string_view namespace_name,
                                             std::string_view name) const {
    return templates.Find(Key(namespace_name, name));
  }
  const api::DeviceClass* Class(std::string_view name) const { return classes.Find(name); }
  bool empty() const {
    return classes.size() == 0 && slices.size() == 0 && claims.size() == 0 && templates.size() == 0;
  }
};

}  // namespace kubesched::framework
