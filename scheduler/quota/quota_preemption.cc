// Quota-aware preemption: QuotaPreemption's check and the view QuotaTracker::PreemptionView takes
// of the tracker's numbers.

#include "scheduler/quota/quota_tracker.h"
#include "scheduler/quota/quota_tracker_internal.h"

namespace kubesched::quota {
namespace {

using internal::BaseAmounts;
using internal::LabelText;

// "root.a.b" is in the subtree of "root.a" (and of itself), not of "root.ab".
bool InSubtree(std::string_view queue, std::string_view top) {
  return queue == top ||
         (queue.size() > top.size() && queue.starts_with(top) && queue[top.size()] == '.');
}

}  // namespace

bool QuotaPreemption::FitsWithout(const std::vector<std::string>& victims) const {
  for (const Level& level : path_) {
    api::ResourceList used = level.used;
    for (const auto& key : victims) {
      auto it = charges_.find(key);
      if (it != charges_.end() && InSubtree(it->second.queue, level.path)) {
        used.Subtract(it->second.amounts);
      }
    }
    for (api::ResourceId id : level.limited) {
      const int64_t wanted = request_.Get(id);
      if (wanted > 0 && used.Get(id) + wanted > level.max.Get(id)) return false;
    }
  }
  return true;
}

std::optional<QuotaPreemption> QuotaTracker::PreemptionView(const framework::PodInfo& pod) {
  const absl::Time now = clock_->Now();
  absl::MutexLock lock(&mu_);
  const Resolution where = ResolvePodLocked(pod);
  const Admission admission = CheckLocked(pod, where, now);
  if (admission.verdict != Verdict::kOverQuota) return std::nullopt;
  return PreemptionViewLocked(pod, where.queue, admission.blocking_queue, BaseAmounts(pod));
}

std::optional<QuotaPreemption> QuotaTracker::GangPreemptionView(const framework::PodInfo& member,
                                                                const api::ResourceList& gang_need,
                                                                int32_t min_member) {
  const absl::Time now = clock_->Now();
  const api::ResourceList need = WithMemberPods(gang_need, min_member);
  absl::MutexLock lock(&mu_);
  const Resolution where = ResolvePodLocked(member);
  const Admission admission = CheckGangLocked(member, where, need, now);
  if (admission.verdict != Verdict::kOverQuota) return std::nullopt;
  return PreemptionViewLocked(member, where.queue, admission.blocking_queue,
                              UncoveredGangNeedLocked(member, need));
}

QuotaPreemption QuotaTracker::PreemptionViewLocked(const framework::PodInfo& pod, int leaf,
                                                   std::string blocking_queue,
                                                   api::ResourceList request) const {
  QuotaPreemption view;
  view.blocking_queue_ = std::move(blocking_queue);
  view.request_ = std::move(request);
  const GangHold* own = HoldOfLocked(pod.gang.key);
  for (int q = leaf; q >= 0; q = tree_.node(q).parent) {
    const QueueNode& node = tree_.node(q);
    // Other groups' holds count as used; preempting pods does not shrink them.
    api::ResourceList counted = used_[q];
    for (api::ResourceId id : node.limited) counted.Set(id, CountedLocked(q, id, own));
    view.path_.push_back({node.path, node.limited, node.max, std::move(counted)});
  }
  const bool anyone_below =
      !charged_priorities_.empty() && *charged_priorities_.begin() < pod.priority;
  if (!anyone_below) return view;
  for (const auto& [key, charge] : charges_) {
    const std::string& queue = tree_.node(charge.queue).path;
    if (charge.priority < pod.priority && InSubtree(queue, view.blocking_queue_)) {
      view.charges_[key] = {queue, charge.amounts()};
    }
  }
  return view;
}

}  // namespace kubesched::quota
