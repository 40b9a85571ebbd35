#include "scheduler/simulate/group_report.h"

#include <algorithm>
#include <map>
#include <utility>

namespace kubesched::scheduler {
namespace {

// What is known of one group while its members are gathered.
struct GroupAcc {
  const api::PodGroup* object = nullptr;
  std::vector<const GroupMember*> members;  // sorted by name
};

using GroupName = std::pair<std::string, std::string>;  // namespace, name

GroupName NameOf(const framework::GangMembership& gang) {
  const size_t slash = gang.key.find('/');
  return {gang.key.substr(0, slash), gang.name};
}

std::string KindOf(const GroupAcc& acc) {
  if (acc.object != nullptr) return "PodGroup";
  const bool labelled = std::any_of(acc.members.begin(), acc.members.end(),
                                    [](const GroupMember* m) { return !m->gang.implicit; });
  return labelled ? "PodGroup" : "implicit";
}

// The object's minMember, else the first member (by name) that gives a usable one.
std::optional<int32_t> MinMemberOf(const GroupAcc& acc) {
  if (acc.object != nullptr) return acc.object->min_member;
  for (const GroupMember* member : acc.members) {
    if (member->gang.implicit && member->gang.error.empty()) return member->gang.min_member;
  }
  return std::nullopt;
}

std::string StateOf(const GroupAcc& acc, const GroupResult& result) {
  const bool member_error =
      std::any_of(acc.members.begin(), acc.members.end(),
                  [](const GroupMember* m) { return !m->gang.error.empty(); });
  if (member_error || (acc.object != nullptr && !acc.object->error.empty())) return kGroupInvalid;
  if (acc.object == nullptr && result.kind == "PodGroup") return kGroupMissing;
  if (result.min_member.has_value() && result.placed >= *result.min_member) return kGroupScheduled;
  if (result.placed == 0) return kGroupPending;
  return kGroupPartial;
}

// The message of the first pending member, by name, that has one.
std::string ReasonOf(const GroupAcc& acc) {
  for (const GroupMember* member : acc.members) {
    if (!member->placed && member->message.has_value() && !member->message->empty()) {
      return *member->message;
    }
  }
  return "";
}

GroupResult ResultOf(const GroupName& name, const GroupAcc& acc) {
  GroupResult result;
  result.namespace_name = name.first;
  result.name = name.second;
  result.kind = KindOf(acc);
  result.min_member = MinMemberOf(acc);
  result.members = static_cast<int>(acc.members.size());
  result.placed = static_cast<int>(std::count_if(acc.members.begin(), acc.members.end(),
                                                 [](const GroupMember* m) { return m->placed; }));
  result.state = StateOf(acc, result);
  if (result.state != kGroupScheduled) result.reason = ReasonOf(acc);
  return result;
}

}  // namespace

std::vector<GroupResult> BuildGroupResults(std::vector<GroupMember> members,
                                           const framework::GangState& groups) {
  std::sort(members.begin(), members.end(),
            [](const GroupMember& a, const GroupMember& b) { return a.name < b.name; });
  std::map<GroupName, GroupAcc> by_name;
  groups.ForEach([&](const auto& /*key*/, const api::PodGroup& group) {
    by_name[{group.meta.namespace_name, group.meta.name}].object = &group;
  });
  for (const GroupMember& member : members) {
    if (!member.gang.InGroup()) continue;
    by_name[NameOf(member.gang)].members.push_back(&member);
  }
  std::vector<GroupResult> results;
  results.reserve(by_name.size());
  for (const auto& [name, acc] : by_name) results.push_back(ResultOf(name, acc));
  return results;
}

}  // namespace kubesched::scheduler
