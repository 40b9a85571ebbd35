#include "plugins/default_preemption/gang_victims.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "plugins/default_preemption/victims.h"

namespace kubesched::plugins::preemption {

std::unique_ptr<GangVictims> GangVictims::Collect(const framework::Snapshot& snapshot,
                                                  const VictimPolicy& policy) {
  bool any_placed = false;
  snapshot.gangs().ForEachCounts([&](const std::string&, const framework::GangCounts& counts) {
    any_placed = any_placed || counts.assigned > 0;
  });
  if (!any_placed) return nullptr;
  auto collected = std::make_unique<GangVictims>();
  for (const framework::NodeInfo* node : snapshot.nodes()) {
    for (const framework::PodInfoPtr& pod : node->pods()) {
      const int32_t min_member = framework::MinMemberOf(*pod, snapshot.gangs());
      // A member being deleted is gone already for its group.
      if (min_member <= 0 || pod->get().meta.deletion_timestamp.has_value()) continue;
      Group& group = collected->groups_[pod->gang.key];
      group.min_member = min_member;
      group.may_go = group.may_go && policy.MayPreempt(*pod);
      group.placed.push_back(pod.get());
    }
  }
  return collected;
}

bool GangVictims::WholeGroupMayGo(const framework::PodInfo& member) const {
  if (!member.gang.InGroup()) return true;
  const auto it = groups_.find(member.gang.key);
  return it == groups_.end() || it->second.may_go;
}

void GangVictims::Expand(std::vector<const framework::PodInfo*>* victims) const {
  absl::flat_hash_map<const Group*, int32_t> taken;
  for (const framework::PodInfo* victim : *victims) {
    if (!victim->gang.InGroup()) continue;
    if (const auto it = groups_.find(victim->gang.key); it != groups_.end()) ++taken[&it->second];
  }
  if (taken.empty()) return;
  absl::flat_hash_set<const framework::PodInfo*> chosen(victims->begin(), victims->end());
  bool added = false;
  for (const auto& [group, count] : taken) {
    if (static_cast<int32_t>(group->placed.size()) - count >= group->min_member) continue;
    for (const framework::PodInfo* member : group->placed) {
      if (chosen.insert(member).second) {
        victims->push_back(member);
        added = true;
      }
    }
  }
  if (!added) return;
  std::sort(victims->begin(), victims->end(),
            [](const framework::PodInfo* a, const framework::PodInfo* b) {
              return MoreImportant(*a, *b);
            });
}

int32_t MembersToPlace(const framework::PodInfo& pod, const framework::Snapshot& snapshot) {
  if (!pod.gang.InGroup()) return 1;
  const int32_t min_member = framework::MinMemberOf(pod, snapshot.gangs());
  const int32_t placed = snapshot.gangs().CountsOf(pod.gang.key).assigned;
  return std::max(1, min_member - placed);
}

}  // namespace kubesched::plugins::preemption
