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

// How many pods of a gang the scheduler knows (its members), and how many of them are on a node:
// bound, or assumed by kubesched (binding, or waiting at Permit).
struct GangCounts {
  int32_t pods = 0;      // members not finished: pending, waiting, binding or running
  int32_t assigned = 0;  // members bound or assumed
};

// Threads: a published GangState is read-only and may be read from any number of threads.
class GangState {
 public:
  // The PodGroup by "namespace/name" (GangMembership::key), or null when there is none.
  const api::PodGroup* Find(std::string_view key) const { return groups_.Find(key); }
  std::shared_ptr<const api::PodGroup> Get(std::string_view key) const { return groups_.Get(key); }
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

  // The member counts of the gang "namespace/name" (implicit groups too); zero when none is known.
  GangCounts CountsOf(std::string_view key) const {
    const GangCounts* counts = counts_.Find(key);
    return counts == nullptr ? GangCounts{} : *counts;
  }
  // The writer side: changes the gang's counts by the deltas.
  void AddToCounts(const std::string& key, int32_t pods, int32_t assigned) {
    GangCounts counts = CountsOf(key);
    counts.pods += pods;
    counts.assigned += assigned;
    if (counts.pods == 0 && counts.assigned == 0) {
      counts_.Remove(key);
    } else {
      counts_.Set(key, std::make_shared<const GangCounts>(counts));
    }
  }

 private:
  ShardedObjectMap<api::PodGroup> groups_;
  ShardedObjectMap<GangCounts> counts_;
};

}  // namespace kubesched::framework
