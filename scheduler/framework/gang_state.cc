#include "scheduler/framework/gang_state.h"

#include <algorithm>
#include <tuple>

#include "scheduler/framework/pod_info.h"

namespace kubesched::framework {
namespace {

bool Earlier(const GangMember& a, const GangMember& b) {
  return std::tie(a.created, a.pod_key) < std::tie(b.created, b.pod_key);
}

}  // namespace

api::ResourceList GangState::RequestsOfFirst(std::string_view key, int32_t count) const {
  api::ResourceList total;
  const GangMembers* members = members_.get().Find(key);
  if (members == nullptr) return total;
  const size_t n = std::min(members->size(), static_cast<size_t>(std::max(count, 0)));
  for (size_t i = 0; i < n; ++i) total.Add((*members)[i].requests);
  return total;
}

void GangState::SetMember(const std::string& key, GangMember member) {
  const GangMembers* old = members_.get().Find(key);
  auto members =
      old == nullptr ? std::make_shared<GangMembers>() : std::make_shared<GangMembers>(*old);
  std::erase_if(*members, [&](const GangMember& m) { return m.pod_key == member.pod_key; });
  const auto at = std::lower_bound(members->begin(), members->end(), member, Earlier);
  members->insert(at, std::move(member));
  members_.mutable_get().Set(key, std::move(members));
}

void GangState::RemoveMember(const std::string& key, std::string_view pod_key) {
  const GangMembers* old = members_.get().Find(key);
  if (old == nullptr) return;
  auto members = std::make_shared<GangMembers>(*old);
  std::erase_if(*members, [&](const GangMember& m) { return m.pod_key == pod_key; });
  if (members->empty()) {
    members_.mutable_get().Remove(key);
  } else {
    members_.mutable_get().Set(key, std::move(members));
  }
}

int32_t MinMemberOf(const PodInfo& member, const GangState& gangs) {
  if (!member.gang.InGroup() || !member.gang.error.empty()) return 0;
  if (member.gang.implicit) return member.gang.min_member;
  const api::PodGroup* group = gangs.Find(member.gang.key);
  return group == nullptr || !group->error.empty() ? 0 : group->min_member;
}

api::ResourceList GangNeedOf(const PodInfo& member, const GangState& gangs) {
  const int32_t min_member = MinMemberOf(member, gangs);
  if (min_member <= 0) return {};
  if (!member.gang.implicit) {
    const api::PodGroup* group = gangs.Find(member.gang.key);
    if (!group->min_resources.IsZero()) return group->min_resources;
  }
  return gangs.RequestsOfFirst(member.gang.key, min_member);
}

}  // namespace kubesched::framework
