#pragma once

// The PodGroup objects a scheduling cycle reads (the gang plugin), as an immutable part of the
// snapshot. Like StorageState, the cache keeps the writer side and publishes a copy when a group
// changed: the copy shares every shard the change did not touch (ShardedObjectMap), so neither a
// publication nor a change costs in proportion to the number of groups in the cluster.

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "scheduler/api/pod_group.h"
#include "scheduler/framework/storage_state.h"

namespace kubesched::framework {

// Threads: a published GangState is read-only and may be read from any number of threads.
class GangState {
 public:
  // The PodGroup by "namespace/name" (GangMembership::key), or null when there is none.
  const api::PodGroup* Find(std::string_view key) const { return groups_.Find(key); }
  size_t size() const { return groups_.size(); }
  // Calls fn(key, group) for every group, in no particular order.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    groups_.ForEach(std::forward<Fn>(fn));
  }

  // The writer side (the cache), on its own copy.
  void Set(std::shared_ptr<const api::PodGroup> group) {
    const std::string key = group->Key();
    groups_.Set(key, std::move(group));
  }
  void Remove(std::string_view key) { groups_.Remove(key); }

 private:
  ShardedObjectMap<api::PodGroup> groups_;
};

}  // namespace kubesched::framework
