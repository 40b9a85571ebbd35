#pragma once

// The volume objects a scheduling cycle reads (claims, volumes, storage classes, CSINodes,
// volume attachments), as an immutable part of the snapshot. The cache keeps the writer side and
// publishes a new state when something changed; a publication copies a fixed number of shard
// pointers, and a change copies one shard at most once per publication, so neither costs in
// proportion to the number of volumes in the cluster.

#include <array>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "scheduler/api/storage.h"

namespace kubesched::framework {

// A fixed number of shards (each a `Shard`, a hash map), shared between copies of the holder and
// copied on the first write after a copy: copying the holder copies the shard pointers only. The
// copy-on-write part of ShardedObjectMap and of DraState's sharded counts and values.
//
// Threads: a copy may be read from any number of threads while another copy is written; one
// copy is written by one thread at a time.
template <typename Shard>
class CopyOnWriteShards {
 public:
  static constexpr size_t kShards = 64;

  // Null when the shard was never written.
  const Shard* Find(size_t index) const { return shards_[index].get(); }
  // The shard at `index`, owned by this copy alone (copied first if another copy shares it; a
  // reader that drops its copy meanwhile only makes the copy unnecessary, never unsafe).
  Shard& Writable(size_t index) {
    std::shared_ptr<Shard>& shard = shards_[index];
    if (shard == nullptr) {
      shard = std::make_shared<Shard>();
    } else if (shard.use_count() > 1) {
      shard = std::make_shared<Shard>(*shard);
    }
    return *shard;
  }
  // Calls fn(shard) for every shard written so far.
  template <typename Fn>
  void ForEachShard(Fn&& fn) const {
    for (const auto& shard : shards_) {
      if (shard != nullptr) fn(*shard);
    }
  }

 private:
  std::array<std::shared_ptr<Shard>, kShards> shards_;
};

// A map from key to shared immutable object, split in shards that are shared between copies and
// copied on the first write after a copy. Copying the map copies the shard pointers only.
//
// Threads: a copy may be read from any number of threads while another copy is written; one
// copy is written by one thread at a time.
template <typename T>
class ShardedObjectMap {
 public:
  using Shard = absl::flat_hash_map<std::string, std::shared_ptr<const T>>;

  // Null when absent.
  const T* Find(std::string_view key) const {
    const Shard* shard = shards_.Find(ShardOf(key));
    if (shard == nullptr) return nullptr;
    const auto it = shard->find(absl::string_view(key.data(), key.size()));
    return it == shard->end() ? nullptr : it->second.get();
  }
  std::shared_ptr<const T> Get(std::string_view key) const {
    const Shard* shard = shards_.Find(ShardOf(key));
    if (shard == nullptr) return nullptr;
    const auto it = shard->find(absl::string_view(key.data(), key.size()));
    return it == shard->end() ? nullptr : it->second;
  }
  size_t size() const { return size_; }

  void Set(const std::string& key, std::shared_ptr<const T> object) {
    Shard& shard = shards_.Writable(ShardOf(key));
    const auto [it, inserted] = shard.insert_or_assign(key, std::move(object));
    if (inserted) ++size_;
  }
  void Remove(std::string_view key) {
    const size_t index = ShardOf(key);
    const Shard* shard = shards_.Find(index);
    if (shard == nullptr || !shard->contains(absl::string_view(key.data(), key.size()))) return;
    shards_.Writable(index).erase(std::string(key));
    --size_;
  }

  // Calls fn(key, object) for every entry, in no particular order.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    shards_.ForEachShard([&fn](const Shard& shard) {
      for (const auto& [key, object] : shard) fn(key, *object);
    });
  }

 private:
  static size_t ShardOf(std::string_view key) {
    return absl::Hash<absl::string_view>()(absl::string_view(key.data(), key.size())) %
           CopyOnWriteShards<Shard>::kShards;
  }

  CopyOnWriteShards<Shard> shards_;
  size_t size_ = 0;
};

// The VolumeAttachments of one node.
using AttachmentList = std::vector<std::shared_ptr<const api::VolumeAttachment>>;

struct StorageState {
  // Claims by "namespace/name"; volumes, classes, CSINodes (by node name) and attachments by name.
  ShardedObjectMap<api::PersistentVolumeClaim> claims;
  ShardedObjectMap<api::PersistentVolume> volumes;
  ShardedObjectMap<api::StorageClass> classes;
  ShardedObjectMap<api::CsiNode> csi_nodes;
  ShardedObjectMap<api::VolumeAttachment> attachments;
  // The attachments again by spec.nodeName, so that what is attached to one node is found without
  // scanning every attachment (NodeVolumeLimits). Write attachments through SetAttachment and
  // RemoveAttachment, which keep both maps; a change copies one node's list.
  ShardedObjectMap<AttachmentList> attachments_by_node;

  void SetAttachment(const std::string& name, std::shared_ptr<const api::VolumeAttachment> object) {
    RemoveAttachment(name);
    const std::string& node = object->node_name;
    const AttachmentList* old = attachments_by_node.Find(node);
    auto list = old == nullptr ? std::make_shared<AttachmentList>()
                               : std::make_shared<AttachmentList>(*old);
    list->push_back(object);
    attachments_by_node.Set(node, std::move(list));
    attachments.Set(name, std::move(object));
  }
  void RemoveAttachment(std::string_view name) {
    const api::VolumeAttachment* old = attachments.Find(name);
    if (old == nullptr) return;
    const std::string node = old->node_name;  // `old` goes with the removal below
    if (const AttachmentList* list = attachments_by_node.Find(node)) {
      auto rest = std::make_shared<AttachmentList>();
      for (const auto& a : *list) {
        if (a.get() != old) rest->push_back(a);
      }
      if (rest->empty()) {
        attachments_by_node.Remove(node);
      } else {
        attachments_by_node.Set(node, std::move(rest));
      }
    }
    attachments.Remove(name);
  }

  static std::string ClaimKey(std::string_view namespace_name, std::string_view name) {
    std::string key;
    key.reserve(namespace_name.size() + 1 + name.size());
    key.append(namespace_name).append("/").append(name);
    return key;
  }
  const api::PersistentVolumeClaim* Claim(std::string_view namespace_name,
                                          std::string_view name) const {
    return claims.Find(ClaimKey(namespace_name, name));
  }
};

}  // namespace kubesched::framework
