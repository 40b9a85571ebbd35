// QuotaTracker: pod group quota, all at once. A group's whole need is checked against its queue
// and every ancestor before its first member is placed, then held so that other pods and groups
// cannot take the room while the members are placed one by one.

#include "absl/strings/str_cat.h"
#include "scheduler/quota/quota_tracker.h"
#include "scheduler/quota/quota_tracker_internal.h"
#include "scheduler/quota/wait_keys.h"
#include "scheduler/util/strings.h"

namespace kubesched::quota {
namespace {

using internal::LabelText;
using internal::UsedAndMax;
using util::Absl;

// The part of `need` that quota holds: typed per-model keys stay checked per member per node.
api::ResourceList UntypedNeed(const QueueTree& tree, const api::ResourceList& need) {
  api::ResourceList untyped;
  need.ForEachNonZero([&](api::ResourceId id, int64_t amount) {
    if (amount > 0 && !tree.AsTyped(id).has_value()) untyped.Set(id, amount);
  });
  return untyped;
}

// need - covered, floored at 0 per resource.
api::ResourceList Uncovered(const api::ResourceList& need, const api::ResourceList& covered) {
  api::ResourceList uncovered;
  need.ForEachNonZero([&](api::ResourceId id, int64_t amount) {
    if (amount > covered.Get(id)) uncovered.Set(id, amount - covered.Get(id));
  });
  return uncovered;
}

}  // namespace

api::ResourceList QuotaTracker::UncoveredGangNeedLocked(const framework::PodInfo& member,
                                                        const api::ResourceList& gang_need) const {
  api::ResourceList remaining = UntypedNeed(tree_, gang_need);
  if (!member.gang.InGroup()) return remaining;
  if (auto it = gang_charged_.find(member.gang.key); it != gang_charged_.end()) {
    remaining = Uncovered(remaining, it->second.amounts);
  }
  return remaining;
}

api::ResourceList WithMemberPods(api::ResourceList need, int32_t min_member) {
  if (need.Get(api::kPods) < min_member) need.Set(api::kPods, min_member);
  return need;
}

Admission QuotaTracker::CheckGangLocked(const framework::PodInfo& member, const Resolution& where,
                                        const api::ResourceList& gang_need, absl::Time now) {
  Admission admission;
  if (where.queue < 0) {
    admission.verdict = Verdict::kNoQueue;
    admission.message = where.error;
    return admission;
  }
  admission.queue = tree_.node(where.queue).path;
  const std::string& gang_key = member.gang.InGroup() ? member.gang.key : member.key;
  const api::ResourceList remaining = UncoveredGangNeedLocked(member, gang_need);
  const GangHold* own = member.gang.InGroup() ? HoldOfLocked(gang_key) : nullptr;
  if (auto shortfall = FindShortfallLocked(where.queue, remaining, own)) {
    const QueueNode& node = tree_.node(shortfall->queue);
    const api::ResourceId id = shortfall->resource;
    admission.verdict = Verdict::kOverQuota;
    admission.blocking_queue = node.path;
    admission.message =
        absl::StrCat("queue ", node.path, ": insufficient quota for pod group ", gang_key, ": ",
                     Absl(api::ResourceName(id)), " (",
                     UsedAndMax(id, shortfall->used, shortfall->held, node.max.Get(id)),
                     ", group needs ", api::FormatAmount(id, shortfall->wanted), ")");
    return admission;
  }
  CheckBudgetsLocked(where.queue, remaining, now, /*typed_too=*/false, &admission);
  return admission;
}

Admission QuotaTracker::AdmitGang(const framework::PodInfo& member,
                                  const api::ResourceList& gang_need, int32_t min_member) {
  const absl::Time now = clock_->Now();
  const api::ResourceList need = WithMemberPods(gang_need, min_member);
  absl::MutexLock lock(&mu_);
  const Resolution where = ResolvePodLocked(member);
  return CheckGangLocked(member, where, need, now);
}

absl::Status QuotaTracker::HoldGang(const framework::PodInfo& member,
                                    const api::ResourceList& gang_need) {
  if (!member.gang.InGroup()) {
    return absl::InvalidArgumentError(absl::StrCat("pod ", member.key, " is in no pod group"));
  }
  const absl::Time now = clock_->Now();
  const api::Pod& p = member.get();
  absl::MutexLock lock(&mu_);
  if (holds_.contains(member.gang.key)) return absl::OkStatus();
  GangHold hold;
  hold.namespace_name = p.meta.namespace_name;
  hold.label_queue = LabelText(p.meta.labels, kQueueLabel);
  const Resolution where = ResolveLocked(hold.namespace_name, hold.label_queue);
  const Admission admission = CheckGangLocked(member, where, gang_need, now);
  switch (admission.verdict) {
    case Verdict::kNoQueue:
      return absl::FailedPreconditionError(admission.message);
    case Verdict::kOverQuota:
    case Verdict::kOverBudget:
      return absl::ResourceExhaustedError(admission.message);
    case Verdict::kFits:
      break;
  }
  hold.queue = where.queue;
  hold.need = UntypedNeed(tree_, gang_need);
  holds_.emplace(member.gang.key, std::move(hold));
  RefreshHoldLocked(member.gang.key);
  return absl::OkStatus();
}

void QuotaTracker::ReleaseGang(const std::string& gang_key) {
  std::vector<std::string> keys;
  {
    absl::MutexLock lock(&mu_);
    auto it = holds_.find(gang_key);
    if (it == holds_.end()) return;
    for (int q = it->second.queue; q >= 0; q = tree_.node(q).parent) {
      held_[q].Subtract(it->second.amounts);
      keys.push_back(QuotaKey(tree_.node(q).path));
    }
    holds_.erase(it);
  }
  Wake(keys);
}

std::vector<QueueUsage> QuotaTracker::GangPathUsage(const framework::PodInfo& member) {
  const absl::Time now = clock_->Now();
  absl::MutexLock lock(&mu_);
  const Resolution where = ResolvePodLocked(member);
  std::vector<QueueUsage> path;
  if (where.queue < 0) return path;
  // A group's members and its hold count in its queue and every ancestor: the member's path.
  const GangHold* own = member.gang.InGroup() ? HoldOfLocked(member.gang.key) : nullptr;
  const auto charged = gang_charged_.find(member.gang.key);
  for (int q = where.queue; q >= 0; q = tree_.node(q).parent) {
    QueueUsage usage = UsageOfLocked(q, now);
    if (member.gang.InGroup() && charged != gang_charged_.end()) {
      usage.used.Subtract(charged->second.amounts);
    }
    if (own != nullptr) usage.held.Subtract(own->amounts);
    path.push_back(std::move(usage));
  }
  return path;
}

void QuotaTracker::RefreshHoldLocked(const std::string& gang_key) {
  auto it = holds_.find(gang_key);
  if (it == holds_.end()) return;
  GangHold& hold = it->second;
  static const api::ResourceList kNothing;
  auto charged = gang_charged_.find(gang_key);
  api::ResourceList amounts =
      Uncovered(hold.need, charged == gang_charged_.end() ? kNothing : charged->second.amounts);
  if (amounts == hold.amounts) return;
  for (int q = hold.queue; q >= 0; q = tree_.node(q).parent) {
    held_[q].Subtract(hold.amounts);
    held_[q].Add(amounts);
  }
  hold.amounts = std::move(amounts);
}

void QuotaTracker::ResetHoldsLocked() {
  gang_charged_.clear();
  for (auto it = holds_.begin(); it != holds_.end();) {
    GangHold& hold = it->second;
    const Resolution where = ResolveLocked(hold.namespace_name, hold.label_queue);
    if (where.queue < 0) {
      holds_.erase(it++);
      continue;
    }
    hold.queue = where.queue;
    hold.need = UntypedNeed(tree_, hold.need);  // a new modelLabels may type a key
    hold.amounts.Clear();                       // held_ was cleared with the old tree
    ++it;
  }
}

void QuotaTracker::RefreshAllHoldsLocked() {
  for (const auto& [gang_key, hold] : holds_) RefreshHoldLocked(gang_key);
}

}  // namespace kubesched::quota
