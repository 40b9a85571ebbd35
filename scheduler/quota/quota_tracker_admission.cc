// QuotaTracker: admission, whether a pod fits its queue's limits and budgets, and the wait keys of
// a pod that does not.

#include <algorithm>

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
using util::Absl;

}  // namespace

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
  // Untyped limits, deepest queue first, so the wait is on the smallest subtree that blocks.
  for (int q = where.queue; q >= 0; q = tree_.node(q).parent) {
    const QueueNode& node = tree_.node(q);
    for (api::ResourceId id : node.limited) {
      const int64_t wanted = request.Get(id);
      if (wanted <= 0 || used_[q].Get(id) + wanted <= node.max.Get(id)) continue;
      admission.verdict = Verdict::kOverQuota;
      admission.blocking_queue = node.path;
      admission.message = absl::StrCat("queue ", node.path, ": insufficient quota for ",
                                       Absl(api::ResourceName(id)), " (used ",
                                       api::FormatAmount(id, used_[q].Get(id)), ", max ",
                                       api::FormatAmount(id, node.max.Get(id)), ", requested ",
                                       api::FormatAmount(id, wanted), ")");
      return admission;
    }
  }
  auto budget_message = [&](const QueueNode& node, const config::BudgetLimit& limit, double spent) {
    std::string message = absl::StrCat(
        "queue ", node.path, ": budget for ", Absl(api::ResourceName(limit.resource)),
        " used up (used ", FormatHours(Hours(limit.resource, spent)), " of ", limit.text);
    if (node.period.has_value()) {
      absl::StrAppend(&message, " per ", absl::FormatDuration(*node.period));
    }
    absl::StrAppend(&message, ")");
    return message;
  };
  for (int q = where.queue; q >= 0; q = tree_.node(q).parent) {
    const QueueNode& node = tree_.node(q);
    for (size_t b = 0; b < node.budget.size(); ++b) {
      const config::BudgetLimit& limit = node.budget[b];
      auto typed = tree_.AsTyped(limit.resource);
      const api::ResourceId asked = typed.has_value() ? typed->generic : limit.resource;
      if (request.Get(asked) <= 0) continue;
      const double spent = SpentLocked(q, b, now);
      if (spent < limit.unit_seconds) continue;
      if (typed.has_value()) {
        admission.blocked_models.push_back({typed->label_key, typed->label_value,
                                            budget_message(node, limit, spent), node.path, true});
        continue;
      }
      admission.verdict = Verdict::kOverBudget;
      admission.blocking_queue = node.path;
      admission.message = budget_message(node, limit, spent);
      return admission;
    }
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
           node.path, false});
    }
  }
  return admission;
}

Admission QuotaTracker::Admit(const framework::PodInfo& pod) {
  const absl::Time now = clock_->Now();
  const api::Pod& p = pod.get();
  absl::MutexLock lock(&mu_);
  const Resolution where =
      ResolveLocked(p.meta.namespace_name, LabelText(p.meta.labels, kQueueLabel));
  return CheckLocked(pod, where, now);
}

std::vector<std::string> QuotaTracker::WaitKeys(const framework::PodInfo& pod) {
  const Admission admission = Admit(pod);
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
  for (const auto& blocked : admission.blocked_models) {
    std::string key = blocked.budget ? BudgetKey(blocked.queue) : QuotaKey(blocked.queue);
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(std::move(key));
  }
  return keys;
}

}  // namespace kubesched::quota
