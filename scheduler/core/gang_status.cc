// The PodGroup status the scheduler owns: how many members it has placed, and whether that makes
// the group scheduled. What happens after binding (Running, Finished) is the group's controller's
// to write, and is kept. And what the observer hears of groups: members bound, groups released.

#include <string>

#include "scheduler/core/scheduler.h"

namespace kubesched::scheduler {

void Scheduler::ReportGangStatus(const framework::PodInfo& member) {
  if (deps_.pod_group_status == nullptr || !member.gang.InGroup() || member.gang.implicit) return;
  const std::shared_ptr<const api::PodGroup> group = cache_->PodGroupOf(member.gang.key);
  if (group == nullptr || !group->error.empty()) return;
  const framework::GangCounts counts = cache_->GangCountsOf(member.gang.key);
  api::PodGroupStatus status = group->status;
  status.scheduled = counts.assigned;
  status.phase = std::string(framework::GangPhase(status.phase, counts, group->min_member));
  if (counts.assigned > 0 && !status.schedule_start_time.has_value()) {
    status.schedule_start_time = deps_.clock->Now();
  }
  if (status == group->status) return;
  deps_.pod_group_status->WriteStatus(group->meta.namespace_name, group->meta.name, status);
}

void Scheduler::ReportGangMemberBound(const framework::PodInfo& member) {
  if (deps_.observer == nullptr || !member.gang.InGroup() || !member.gang.error.empty()) return;
  int32_t min_member = member.gang.min_member;
  if (!member.gang.implicit) {
    const std::shared_ptr<const api::PodGroup> group = cache_->PodGroupOf(member.gang.key);
    if (group == nullptr || !group->error.empty()) return;
    min_member = group->min_member;
  }
  deps_.observer->OnGangMemberBound(member, min_member);
}

void Scheduler::ReportGangReleased(const std::string& gang_key) {
  if (deps_.observer != nullptr) deps_.observer->OnGangReleased(gang_key);
}

}  // namespace kubesched::scheduler
