// QuotaTracker: admission, whether a pod fits its queue's limits and budgets (counting pod groups'
// holds), and the wait keys of a pod that does not.

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"
#include "scheduler/quota/quota_tracker.h"
#include "scheduler/quota/quota_tracker_internal.h"
#include "scheduler/quota/wait_keys.h"
#include "scheduler/util/strings.h"

namespace kubesched::quota {
namespace {

using internal::BaseAmounts;
using internal::FormatHours;
using internal::Hours;
using internal::LabelText;
using internal::UsedAndMax;
using util::Absl;

}  // namespace

int64_t QuotaTracker::CountedLocked(int q, api::ResourceId id, const GangHold* own) const {
  int64_t counted = used_[q].Get(id) + held_[q].Get(id);
  if (own == nullptr) return counted;
  // The group's own hold counts only in its queue and that queue's ancestors.
  for (int on_path = own->queue; on_path >= 0; on_path = tree_.node(on_path).parent) {
    if (on_path == q) return counted - own->amounts.Get(id);
  }
  return counted;
}

const QuotaTracker::GangHold* QuotaTracker::HoldOfLocked(const std::string& gang_key) const {
  if (gang_key.empty()) return nullptr;
  auto it = holds_.find(gang_key);
  return it == holds_.end() ? nullptr : &it->second;
}

std::optional<QuotaTracker::Shortfall> QuotaTracker::FindShortfallLocked(
    int leaf, const api::ResourceList& wanted, const GangHold* own) const {
  // Deepest queue first, so the wait is on the smallest subtree that blocks.
  for (int q = leaf; q >= 0; q = tree_.node(q).parent) {
    const QueueNode& node = tree_.node(q);
    for (api::ResourceId id : node.limited) {
      const int64_t amount = wanted.Get(id);
      if (amount <= 0) continue;
      const int64_t counted = CountedLocked(q, id, own);
      if (counted + amount <= node.max.Get(id)) continue;
      return Shortfall{q, id, used_[q].Get(id), counted - used_[q].Get(id), amount};
    }
  }
  return std::nullopt;
}

std::string QuotaTracker::BudgetMessageLocked(int q, size_t b, double spent) const {
  // Called after SpentLocked, so the period start is the current one.
  const QueueNode& node = tree_.node(q);
  const config::BudgetLimit& limit = node.budget[b];
  std::string message = absl::StrCat("queue ", node.path, ": budget for ",
                                     Absl(api::ResourceName(limit.resource)), " used up (used ",
                                     FormatHours(Hours(limit.resource, spent)), " of ", limit.text);
  if (const std::string per = DescribePeriod(node.period); !per.empty()) {
    absl::StrAppend(&message, " ", per);
  }
  absl::StrAppend(&message, ")");
  if (auto reset = PeriodEnd(node.period, budgets_[q][b].period_start); reset.has_value()) {
    absl::StrAppend(&message, "; budget spent, resets at ", FormatResetTime(*reset));
  } else {
    absl::StrAppend(&message, "; budget spent, it has no period and never resets");
  }
  return message;
}

bool QuotaTracker::CheckBudgetsLocked(int leaf, const api::ResourceList& wanted, absl::Time now,
                                      bool typed_too, Admission* admission) {
  const auto budget_message = [this](int q, size_t b, double spent) {
    return BudgetMessageLocked(q, b, spent);
  };
  for (int q = leaf; q >= 0; q = tree_.node(q).parent) {
    const QueueNode& node = tree_.node(q);
    for (size_t b = 0; b < node.budget.size(); ++b) {
      const config::BudgetLimit& limit = node.budget[b];
      auto typed = tree_.AsTyped(limit.resource);
      if (typed.has_value() && !typed_too) continue;
      const api::ResourceId asked = typed.has_value() ? typed->generic : limit.resource;
      if (wanted.Get(asked) <= 0) continue;
      const double spent = SpentLocked(q, b, now);
      if (spent < limit.unit_seconds) continue;
      if (typed.has_value()) {
        admission->blocked_models.push_back({typed->label_key, typed->label_value,
                                             budget_message(q, b, spent), node.path, true,
                                             tree_.shared_model_names()});
        continue;
      }
      admission->verdict = Verdict::kOverBudget;
      admission->blocking_queue = node.path;
      admission->message = budget_message(q, b, spent);
      return true;
    }
  }
  return false;
}

Admission QuotaTracker::CheckLocked(const framework::PodInfo& pod, const Resolution& where,
                                    absl::Time now) {
  Admission admission;
  if (where.queue < 0) {
    admission.verdict = Verdict::kNoQueue;
    admission.message = where.error;
    return admission;
  }
  admission.queue = tree_.node(where.queue).path;
  const api::ResourceList request = BaseAmounts(pod);
  if (auto shortfall = FindShortfallLocked(where.queue, request, HoldOfLocked(pod.gang.key))) {
    const QueueNode& node = tree_.node(shortfall->queue);
    const api::ResourceId id = shortfall->resource;
    admission.verdict = Verdict::kOverQuota;
    admission.blocking_queue = node.path;
    admission.message =
        absl::StrCat("queue ", node.path, ": insufficient quota for ", Absl(api::ResourceName(id)),
                     " (", UsedAndMax(id, shortfall->used, shortfall->held, node.max.Get(id)),
                     ", requested ", api::FormatAmount(id, shortfall->wanted), ")");
    return admission;
  }
  if (CheckBudgetsLocked(where.queue, request, now, /*typed_too=*/true, &admission)) {
    return admission;
  }
  for (int q = where.queue; q >= 0; q = tree_.node(q).parent) {
    const QueueNode& node = tree_.node(q);
    for (const TypedKey& key : node.typed_limited) {
      const int64_t wanted = request.Get(key.generic);
      const int64_t used = used_[q].Get(key.typed);
      if (wanted <= 0 || used + wanted <= node.max.Get(key.typed)) continue;
      admission.blocked_models.push_back(
          {key.label_key, key.label_value,
           absl::StrCat("queue ", node.path, ": insufficient quota for ",
                        Absl(api::ResourceName(key.typed)), " (used ",
                        api::FormatAmount(key.generic, used), ", max ",
                        api::FormatAmount(key.generic, node.max.Get(key.typed)), ", requested ",
                        api::FormatAmount(key.generic, wanted), ")"),
           node.path, false, tree_.shared_model_names()});
    }
  }
  AddDeviceLimitsLocked(pod, where.queue, request, now, &admission);
  return admission;
}

Admission QuotaTracker::Admit(const framework::PodInfo& pod) {
  const absl::Time now = clock_->Now();
  absl::MutexLock lock(&mu_);
  const Resolution where = ResolvePodLocked(pod);
  return CheckLocked(pod, where, now);
}

std::vector<std::string> AdmissionWaitKeys(const Admission& admission) {
  switch (admission.verdict) {
    case Verdict::kOverQuota:
      return {QuotaKey(admission.blocking_queue)};
    case Verdict::kOverBudget:
      return {BudgetKey(admission.blocking_queue)};
    case Verdict::kNoQueue:
      return {std::string(kPlacementKey)};
    case Verdict::kFits:
      break;
  }
  std::vector<std::string> keys;
  const auto add = [&keys](bool budget, const std::string& queue) {
    std::string key = budget ? BudgetKey(queue) : QuotaKey(queue);
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(std::move(key));
  };
  for (const auto& blocked : admission.blocked_models) add(blocked.budget, blocked.queue);
  // Which of them held the pod back on some node is not known here: any may.
  for (const auto& limit : admission.device_limits) add(limit.budget, limit.queue);
  return keys;
}

std::vector<std::string> QuotaTracker::WaitKeys(const framework::PodInfo& pod) {
  return AdmissionWaitKeys(Admit(pod));
}

}  // namespace kubesched::quota
