#include "scheduler/framework/gang_state.h"

#include <algorithm>
#include <tuple>

namespace kubesched::framework {
namespace {

bool Earlier(const GangMember& a, const GangMember& b) {
  return std::tie(a.created, a.pod_key) < std::tie(b.created, b.pod_key);
}

}  // namespace

api::ResourceList GangState::RequestsOfFirst(std::string_view key, int32_t count) const {
  api::ResourceList total;
  const GangMembers* members = members_.Find(key);
  if (members == nullptr) return total;
  const size_t n = std::min(members->size(), static_cast<size_t>(std::max(count, 0)));
  for (size_t i = 0; i < n; ++i) total.Add((*members)[i].requests);
  return total;
}

void GangState::SetMember(const std::string& key, GangMember member) {
  const GangMembers* old = members_.Find(key);
  auto members =
      old == nullptr ? std::make_shared<GangMembers>() : std::make_shared<GangMembers>(*old);
  std::erase_if(*members, [&](const GangMember& m) { return m.pod_key == member.pod_key; });
  const auto at = std::lower_bound(members->begin(), members->end(), member, Earlier);
  members->insert(at, std::move(member));
  members_.Set(key, std::move(members));
}

void GangState::RemoveMember(const std::string& key, std::string_view pod_key) {
  const GangMembers* old = members_.Find(key);
  if (old == nullptr) return;
  auto members = std::make_shared<GangMembers>(*old);
  std::erase_if(*members, [&](const GangMember& m) { return m.pod_key == pod_key; });
  if (members->empty()) {
    members_.Remove(key);
  } else {
    members_.Set(key, std::move(members));
  }
}

}  // namespace kubesched::framework
