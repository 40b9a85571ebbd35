#pragma once

// The PodGroup objects a scheduling cycle reads (the gang plugin), as an immutable part of the
// snapshot. Like StorageState, the cache keeps the writer side and publishes a copy when a group
// changed: the copy shares every shard the change did not touch (ShardedObjectMap), so neither a
// publication nor a change costs in proportion to the number of groups in the cluster.

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/time/time.h"
#include "scheduler/api/pod_group.h"
#include "scheduler/api/resource.h"
#include "scheduler/framework/storage_state.h"

namespace kubesched::framework {

// How many pods of a gang the scheduler knows (its members), and how many of them are on a node:
// bound, or assumed by kubesched (binding, or waiting at Permit).
struct GangCounts {
  int32_t pods = 0;      // members not finished: pending, waiting, binding or running
  int32_t assigned = 0;  // members bound or assumed
};

// A member of a gang as its group's need counts it: the first minMember members by creation
// make up a group's need when its PodGroup names no minResources.
struct GangMember {
  absl::Time created;  // InfinitePast when the pod has no creationTimestamp
  std::string pod_key;
  api::ResourceList requests;  // as when the member appeared (framework::PodRequests)
};
// Ordered by creation, then key.
using GangMembers = std::vector<GangMember>;

// The phases of a pod group (scheduler-plugins' PodGroupPhase) that kubesched knows. The scheduler
// gives the first three from its members placed (bound or assumed); the group's controller sets
// the last three once the pods run, and the scheduler keeps them.
inline constexpr std::string_view kGangPending = "Pending";        // no member placed
inline constexpr std::string_view kGangScheduling = "Scheduling";  // fewer than minMember placed
inline constexpr std::string_view kGangScheduled = "Scheduled";    // minMember placed
inline constexpr std::string_view kGangRunning = "Running";
inline constexpr std::string_view kGangFinished = "Finished";
inline constexpr std::string_view kGangFailed = "Failed";

// A PodGroup status phase that only the group's controller sets.
inline bool IsControllerGangPhase(std::string_view phase) {
  return phase == kGangRunning || phase == kGangFinished || phase == kGangFailed;
}

// The phase of a group whose PodGroup says `controller_phase` ("" for an implicit group): that
// phase when the controller set it, else what `counts.assigned` makes of `min_member`.
inline std::string_view GangPhase(std::string_view controller_phase, GangCounts counts,
                                  int32_t min_member) {
  if (IsControllerGangPhase(controller_phase)) return controller_phase;
  if (counts.assigned == 0) return kGangPending;
  return min_member > 0 && counts.assigned >= min_member ? kGangScheduled : kGangScheduling;
}

// A copy-on-write handle: copies share the object until one of them writes. Lets a GangState
// copy (one per snapshot while members are placed) share whichever of its maps did not change.
template <typename T>
class CopyOnWrite {
 public:
  const T& get() const { return *object_; }
  T& mutable_get() {
    if (object_.use_count() > 1) object_ = std::make_shared<T>(*object_);
    return *object_;
  }

 private:
  std::shared_ptr<T> object_ = std::make_shared<T>();
};

// Threads: a published GangState is read-only and may be read from any number of threads.
class GangState {
 public:
  // The PodGroup by "namespace/name" (GangMembership::key), or null when there is none.
  const api::PodGroup* Find(std::string_view key) const { return groups_.get().Find(key); }
  std::shared_ptr<const api::PodGroup> Get(std::string_view key) const {
    return groups_.get().Get(key);
  }
  size_t size() const { return groups_.get().size(); }
  // Calls fn(key, group) for every group, in no particular order.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    groups_.get().ForEach(std::forward<Fn>(fn));
  }

  // The writer side (the cache), on its own copy.
  void Set(std::shared_ptr<const api::PodGroup> group) {
    const std::string key = group->Key();
    groups_.mutable_get().Set(key, std::move(group));
  }
  void Remove(std::string_view key) { groups_.mutable_get().Remove(key); }

  // The member counts of the gang "namespace/name" (implicit groups too); zero when none is known.
  GangCounts CountsOf(std::string_view key) const {
    const GangCounts* counts = counts_.get().Find(key);
    return counts == nullptr ? GangCounts{} : *counts;
  }
  // Calls fn(key, counts) for every gang with members, in no particular order.
  template <typename Fn>
  void ForEachCounts(Fn&& fn) const {
    counts_.get().ForEach(std::forward<Fn>(fn));
  }
  // The writer side: changes the gang's counts by the deltas.
  void AddToCounts(const std::string& key, int32_t pods, int32_t assigned) {
    GangCounts counts = CountsOf(key);
    counts.pods += pods;
    counts.assigned += assigned;
    if (counts.pods == 0 && counts.assigned == 0) {
      counts_.mutable_get().Remove(key);
    } else {
      counts_.mutable_get().Set(key, std::make_shared<const GangCounts>(counts));
    }
  }

  // The requests of the gang's first `count` members (by creation, then key), summed; of all of
  // them when it has fewer.
  api::ResourceList RequestsOfFirst(std::string_view key, int32_t count) const;
  // The writer side: adds or replaces the member `member.pod_key` of gang `key`.
  void SetMember(const std::string& key, GangMember member);
  void RemoveMember(const std::string& key, std::string_view pod_key);

 private:
  CopyOnWrite<ShardedObjectMap<api::PodGroup>> groups_;
  // Changes with every member placed: a snapshot copies these alone while groups are placed.
  CopyOnWrite<ShardedObjectMap<GangCounts>> counts_;
  // A change copies one gang's list: members come and go far less often than pods are placed.
  CopyOnWrite<ShardedObjectMap<GangMembers>> members_;
};

struct PodInfo;

// The minMember of `member`'s group: its PodGroup's, or the annotation's for an implicit group;
// 0 when the pod is in no group or its group is missing or invalid.
int32_t MinMemberOf(const PodInfo& member, const GangState& gangs);
// The group's whole need: its PodGroup's spec.minResources, else the requests of its first
// minMember members by creation (README "Gangs"). Empty when MinMemberOf is 0.
api::ResourceList GangNeedOf(const PodInfo& member, const GangState& gangs);

}  // namespace kubesched::framework
