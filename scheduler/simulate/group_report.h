#pragma once

// Simulate's report of gangs (pod groups): for every group with a pod in the simulation and every
// PodGroup object in the dump, how many of its members were placed, and what state that leaves
// the group in.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/framework/gang_membership.h"
#include "scheduler/framework/gang_state.h"

namespace kubesched::scheduler {

// A group's state at the end of a simulation.
inline constexpr char kGroupScheduled[] = "Scheduled";  // at least minMember members placed
inline constexpr char kGroupPending[] = "Pending";      // no member placed
// Some members placed, fewer than minMember: the gang plugin never leaves a group so.
inline constexpr char kGroupPartial[] = "Partial";
// The PodGroup object's spec or a member's group label/annotations cannot be used.
inline constexpr char kGroupInvalid[] = "Invalid";
inline constexpr char kGroupMissing[] = "Missing";  // members name a PodGroup the dump lacks

struct GroupResult {
  std::string namespace_name;
  std::string name;
  std::string kind;                   // "PodGroup" or "implicit"
  std::optional<int32_t> min_member;  // unknown when no object or member says it
  int members = 0;                    // the group's pods in the simulation (not finished)
  int placed = 0;                     // members bound at the end
  std::string state;                  // one of kGroup*
  // Why a group that is not Scheduled is not: the message of its first pending member (by name)
  // that has one; empty otherwise.
  std::string reason;
};

// One pod of a group, as the simulation left it.
struct GroupMember {
  std::string name;  // the pod's name
  framework::GangMembership gang;
  bool placed = false;                 // bound to a node
  std::optional<std::string> message;  // the pod's FailedScheduling (or skip/gate) message
};

// The groups of `members` and every PodGroup of `groups`, sorted by namespace/name.
std::vector<GroupResult> BuildGroupResults(std::vector<GroupMember> members,
                                           const framework::GangState& groups);

}  // namespace kubesched::scheduler
