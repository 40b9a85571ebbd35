#pragma once

// DefaultPreemption and pod groups (README "Gangs" › Preemption). A group is worth something only
// with minMember members placed, so its members are victims only together: preempting a member
// that would leave its group short preempts every placed member of the group, and a group none of
// whose members may all go (one is NonPreemptible, or of the preemptor's priority or above) gives
// no victim at all. A member of a group being placed preempts only when the victims make room for
// every member still missing.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::plugins::preemption {

struct VictimPolicy;

// The placed members (bound, or assumed: binding or waiting at Permit) of the snapshot's groups.
// Read-only once collected: the dry run's threads share it.
class GangVictims {
 public:
  // Null when no group has a placed member, which costs a look at each group's counts. Otherwise
  // walks the snapshot's pods once. `policy` says who may go (its own `gangs` is not read).
  static std::unique_ptr<GangVictims> Collect(const framework::Snapshot& snapshot,
                                              const VictimPolicy& policy);

  // Whether every placed member of `member`'s group may be preempted. True for a pod outside
  // any group.
  bool WholeGroupMayGo(const framework::PodInfo& member) const;
  // Adds the other placed members of every group that `victims` would leave with fewer than
  // minMember placed members, and keeps the list most important first.
  void Expand(std::vector<const framework::PodInfo*>* victims) const;

 private:
  struct Group {
    int32_t min_member = 0;
    bool may_go = true;
    std::vector<const framework::PodInfo*> placed;
  };
  absl::flat_hash_map<std::string, Group> groups_;
};

// How many members of `pod`'s group must still find room, `pod` included: minMember less the
// members placed. 1 for a pod outside any group, or in a group that has minMember placed.
int32_t MembersToPlace(const framework::PodInfo& pod, const framework::Snapshot& snapshot);

}  // namespace kubesched::plugins::preemption
