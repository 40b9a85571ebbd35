#pragma once

// The Dynamic Resource Allocation objects a scheduling cycle reads (device classes, resource
// slices, resource claims and their templates), as an immutable part of the snapshot, published
// by the cache as StorageState is: a publication copies shard pointers only, and a change copies
// one shard at most once per publication. A pod without claims never reads it.
//
// Besides the objects, the state keeps what the DynamicResources plugin would otherwise gather by
// scanning every object for every pod: the slices by the node they publish devices for, and the
// devices that allocated claims hold. Both follow every write (SetSlice, SetClaim and their
// removals) at a cost proportional to the object written.

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/types/span.h"
#include "scheduler/api/dra.h"
#include "scheduler/framework/device_profiles.h"
#include "scheduler/framework/node_info.h"
#include "scheduler/framework/storage_state.h"

namespace kubesched::framework {

class DeviceResources;  // device_resources.h

// A multiset of keys (a key counts as present while its count is above zero), in copy-on-write
// shards (CopyOnWriteShards). Threads: as CopyOnWriteShards.
template <typename K>
class ShardedCounts {
 public:
  bool Contains(const K& key) const {
    const Shard* shard = shards_.Find(ShardOf(key));
    return shard != nullptr && shard->contains(key);
  }
  int32_t Count(const K& key) const {
    const Shard* shard = shards_.Find(ShardOf(key));
    if (shard == nullptr) return 0;
    const auto it = shard->find(key);
    return it == shard->end() ? 0 : it->second;
  }
  // Adds `delta` to the key's count; a count that reaches zero or less removes the key.
  void Add(const K& key, int32_t delta) {
    const size_t index = ShardOf(key);
    if (delta < 0 && !Contains(key)) return;
    Shard& shard = shards_.Writable(index);
    int32_t& count = shard[key];
    count += delta;
    if (count <= 0) shard.erase(key);
  }
  // Keys present; O(shards).
  size_t size() const {
    size_t total = 0;
    shards_.ForEachShard([&total](const Shard& shard) { total += shard.size(); });
    return total;
  }

 private:
  using Shard = absl::flat_hash_map<K, int32_t>;
  static size_t ShardOf(const K& key) {
    return absl::Hash<K>()(key) % CopyOnWriteShards<Shard>::kShards;
  }

  CopyOnWriteShards<Shard> shards_;
};

// A map whose values are copied with their shard, in copy-on-write shards (CopyOnWriteShards).
// Threads: as CopyOnWriteShards.
template <typename K, typename V>
class ShardedValues {
 public:
  // Null when absent.
  const V* Find(const K& key) const {
    const Shard* shard = shards_.Find(ShardOf(key));
    if (shard == nullptr) return nullptr;
    const auto it = shard->find(key);
    return it == shard->end() ? nullptr : &it->second;
  }
  // The value to change, default-constructed when absent.
  V& Mutable(const K& key) { return shards_.Writable(ShardOf(key))[key]; }
  void Remove(const K& key) {
    if (Find(key) == nullptr) return;
    shards_.Writable(ShardOf(key)).erase(key);
  }

 private:
  using Shard = absl::flat_hash_map<K, V>;
  static size_t ShardOf(const K& key) {
    return absl::Hash<K>()(key) % CopyOnWriteShards<Shard>::kShards;
  }

  CopyOnWriteShards<Shard> shards_;
};

// A pool, by driver and name.
struct PoolId {
  api::Symbol driver = api::kEmptySymbol;
  api::Symbol pool = api::kEmptySymbol;
  friend bool operator==(const PoolId& a, const PoolId& b) {
    return a.driver == b.driver && a.pool == b.pool;
  }
  template <typename H>
  friend H AbslHashValue(H h, const PoolId& id) {
    return H::combine(std::move(h), id.driver, id.pool);
  }
};

// The devices of one pool that allocations hold, by device name, with how many claims hold each.
using PoolAllocations = std::vector<std::pair<api::Symbol, int32_t>>;

// ResourceSlices, shared with the state's maps.
using SliceList = std::vector<std::shared_ptr<const api::ResourceSlice>>;

// The generations the slices of one pool carry, over every node, and how many slices carry each:
// whether a generation one node sees part of is complete, or already replaced elsewhere.
struct PoolGenerations {
  std::vector<std::pair<int64_t, int32_t>> slices;  // (generation, slices), by generation
};

// The devices a node's own slices (spec.nodeName) offer, kept per node as DraState's slices
// change, so that a pod's Filter reads them instead of gathering them: the newest generation of
// each pool, when it is complete among those slices and names no device twice. Such a pool is
// gathered the same way whatever other nodes publish (node_devices.h); a pool that is not
// (`self_contained()` false) needs the census of every node, and the full gathering.
struct NodeDeviceSummary {
  struct Pool {
    PoolId id;
    uint32_t first_device = 0;  // [first_device, end_device) in `devices`
    uint32_t end_device = 0;
  };
  struct Device {
    api::Symbol name = api::kEmptySymbol;
    api::DeviceShape shape = api::kNoShape;
  };
  std::vector<Pool> pools;
  std::vector<Device> devices;  // pool by pool, by name (symbol order) within a pool
  // The devices' shapes in that order, shared with nodes that offer alike devices;
  // DeviceProfiles::Uncountable() when not self-contained. Never null once summarized.
  const DeviceProfile* profile = nullptr;
  bool self_contained() const { return profile->countable; }
};

// The order in which slices are gathered, here and by the DynamicResources plugin: a pool's slices
// together (pools by driver and name as text, so that the order does not depend on interning
// order), the newest generation first, then by slice name; a pool's announced slice count is
// read from its first slice.
bool SliceGatherOrder(const api::ResourceSlice* a, const api::ResourceSlice* b);

// Calls fn(first, newest_end) for each pool of `slices`, sorted by SliceGatherOrder: the slices
// of the pool's newest generation are [first, newest_end); older ones follow.
template <typename Fn>
void ForEachPool(absl::Span<const api::ResourceSlice* const> slices, Fn&& fn) {
  size_t i = 0;
  while (i < slices.size()) {
    const api::ResourceSlice& first = *slices[i];
    const size_t first_slice = i;
    size_t newest_end = i;
    for (; i < slices.size() && slices[i]->driver == first.driver &&
           slices[i]->pool.name == first.pool.name;
         ++i) {
      if (slices[i]->pool.generation == first.pool.generation) newest_end = i + 1;
    }
    fn(first_slice, newest_end);
  }
}

// Calls fn(d) for each device d of `pool` in `summary` that `held` (the pool's held devices)
// names. Both lists are by name (symbol order): one pass over the pool's devices and its holds.
template <typename Fn>
void ForEachHeldDevice(const NodeDeviceSummary& summary, const NodeDeviceSummary::Pool& pool,
                       const PoolAllocations& held, Fn&& fn) {
  size_t next_held = 0;
  for (uint32_t d = pool.first_device; d < pool.end_device && next_held < held.size(); ++d) {
    const api::Symbol name = summary.devices[d].name;
    while (next_held < held.size() && held[next_held].first < name) ++next_held;
    if (next_held < held.size() && held[next_held].first == name) fn(d);
  }
}

struct DraState {
  // Classes and slices by name; claims and templates by "namespace/name". Write slices and
  // claims through SetSlice/RemoveSlice and SetClaim/RemoveClaim, which keep the indexes below.
  ShardedObjectMap<api::DeviceClass> classes;
  ShardedObjectMap<api::ResourceSlice> slices;
  ShardedObjectMap<api::ResourceClaim> claims;
  ShardedObjectMap<api::ResourceClaimTemplate> templates;

  // The slices that publish devices of one node (spec.nodeName), by node name: a change copies
  // that node's list. Every other slice (a node selector, allNodes, devices placed one by one) is
  // in `shared_slices`, a list copied on each of their (rare) changes; drivers publish most
  // devices node by node.
  ShardedObjectMap<SliceList> slices_by_node;
  std::shared_ptr<const SliceList> shared_slices = std::make_shared<const SliceList>();
  // What each node's own slices offer (NodeDeviceSummary), by node name; rebuilt from the node's
  // list in `slices_by_node` when one of them changes. Absent for a node without slices.
  ShardedObjectMap<NodeDeviceSummary> device_summaries;
  // The devices that claims' allocations hold, as the claims in `claims` say (allocations the
  // scheduler assumed included: the cache writes them there); devices allocated with admin access
  // hold nothing, as upstream counts them.
  ShardedCounts<api::DeviceId> allocated_devices;
  // The same devices by pool, sorted by name: one look-up per pool answers for all of its
  // devices, where the search of a node asks about each.
  ShardedValues<PoolId, PoolAllocations> allocated_by_pool;
  // Claims whose allocation the scheduler decided on (Reserve) and has not written yet, by claim
  // key: the key of the pod they are being allocated for. No other pod may use such a claim until
  // the write ends, as upstream's in-flight allocations.
  ShardedObjectMap<std::string> pending_allocations;
  // The generations of every pool (PoolGenerations), by PoolKey; a slice's write changes its
  // pool's entry only.
  ShardedObjectMap<PoolGenerations> pool_generations;
  // The kinds of devices that count as a resource (the queue configuration's `devices`), as the
  // cache counts them on each node (NodeInfo::device_allocatable); null when none do. Set once.
  std::shared_ptr<const DeviceResources> device_resources;

  void SetSlice(const std::string& name, std::shared_ptr<const api::ResourceSlice> slice);
  void RemoveSlice(std::string_view name);
  void SetClaim(const std::string& key, std::shared_ptr<const api::ResourceClaim> claim);
  void RemoveClaim(std::string_view key);

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
  // The node-local slices of `node_name`; null when it has none.
  const SliceList* NodeSlices(std::string_view node_name) const {
    return slices_by_node.Find(node_name);
  }
  // What the node's own slices offer; null when it has none.
  const NodeDeviceSummary* DeviceSummary(std::string_view node_name) const {
    return device_summaries.Find(node_name);
  }
  // What the node's own slices offer and which of those devices claims hold, for its NodeInfo:
  // O(the node's devices).
  OwnDevices OwnDevicesOf(std::string_view node_name) const;
  // The pod whose allocation of the claim is in flight; null when none is.
  const std::string* PendingAllocation(std::string_view claim_key) const {
    return pending_allocations.Find(claim_key);
  }
  // How many slices of the pool carry `generation`, counted over every node.
  int32_t PoolSlices(api::Symbol driver, api::Symbol pool, int64_t generation) const;
  // Whether a slice of the pool, for any node, carries a newer generation than `generation`.
  bool NewerPoolGeneration(api::Symbol driver, api::Symbol pool, int64_t generation) const;
  static std::string PoolKey(api::Symbol driver, api::Symbol pool);
  bool empty() const {
    return classes.size() == 0 && slices.size() == 0 && claims.size() == 0 && templates.size() == 0;
  }

 private:
  void CountAllocation(const api::ResourceClaim& claim, int32_t delta);
  void CountSlice(const api::ResourceSlice& slice, int32_t delta);
  void SummarizeNode(const std::string& node_name);
  void CountInPool(const api::DeviceRequestAllocationResult& result, int32_t delta);
};

}  // namespace kubesched::framework
