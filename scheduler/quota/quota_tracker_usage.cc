// QuotaTracker: usage accounting, what each queue's subtree uses. Pods are charged when reserved
// or seen bound and refunded when released (a pod group member's charge shrinks its group's
// hold); Usage and PathUsage report both.

#include <algorithm>

#include "scheduler/quota/quota_tracker.h"
#include "scheduler/quota/quota_tracker_internal.h"
#include "scheduler/quota/wait_keys.h"
#include "scheduler/util/strings.h"

namespace kubesched::quota {
namespace {

using internal::BaseAmounts;
using internal::Hours;
using internal::LabelSymbol;

// The pod's group as its charge names it: empty outside a group.
api::Symbol GangSymbol(const framework::PodInfo& pod) {
  return pod.gang.InGroup() ? api::Intern(pod.gang.key) : api::kEmptySymbol;
}

}  // namespace

api::ResourceList QuotaTracker::TypedAmounts(const api::ResourceList& base,
                                             std::string_view node) const {
  api::ResourceList amounts = base;
  auto it = node_models_.find(util::Absl(node));
  if (it == node_models_.end()) return amounts;
  for (const auto& [generic, typed] : it->second) {
    if (base.Get(generic) > 0) amounts.Add(typed, base.Get(generic));
  }
  return amounts;
}

void QuotaTracker::ApplyLocked(const PodCharge& charge, int sign, absl::Time now) {
  for (int q = charge.queue; q >= 0; q = tree_.node(q).parent) {
    if (sign > 0) {
      used_[q].Add(charge.amounts());
    } else {
      used_[q].Subtract(charge.amounts());
    }
    const QueueNode& node = tree_.node(q);
    for (size_t b = 0; b < node.budget.size(); ++b) {
      SpentLocked(q, b, now);  // folds what accrued at the old rate
      budgets_[q][b].rate +=
          sign * static_cast<double>(charge.amounts().Get(node.budget[b].resource));
    }
  }
  if (charge.gang == api::kEmptySymbol) return;
  const std::string gang(api::SymbolText(charge.gang));
  GangCharged& members = gang_charged_[gang];
  if (sign > 0) {
    members.amounts.Add(charge.base);
    ++members.members;
  } else {
    members.amounts.Subtract(charge.base);
    if (--members.members <= 0) gang_charged_.erase(gang);
  }
  // The member's charge replaces that much of its group's hold (and a refund gives it back).
  RefreshHoldLocked(gang);
}

api::ResourceId QuotaTracker::DeviceTypedKeyLocked(api::ResourceId resource,
                                                   api::Symbol model) const {
  if (model == api::kEmptySymbol) return 0;
  for (const ModelResource& typed : tree_.model_resources()) {
    if (typed.resource == resource) return TypedResource(typed, model);
  }
  return 0;
}

api::ResourceList QuotaTracker::ChargeAmountsLocked(const PodCharge& charge) const {
  api::ResourceList amounts = TypedAmounts(charge.base, api::SymbolText(charge.node));
  for (const DeviceCount& devices : charge.devices.tally.counts()) {
    amounts.Add(devices.resource, devices.count);
    if (const api::ResourceId typed = DeviceTypedKeyLocked(devices.resource, devices.model)) {
      amounts.Add(typed, devices.count);
    }
  }
  return amounts;
}

absl::Status QuotaTracker::Reserve(const framework::PodInfo& pod, std::string_view node,
                                   const DeviceTally& devices) {
  const absl::Time now = clock_->Now();
  const api::Pod& p = pod.get();
  absl::MutexLock lock(&mu_);
  PodCharge charge;
  charge.namespace_name = api::Intern(p.meta.namespace_name);
  charge.label_queue = LabelSymbol(p.meta.labels, kQueueLabel);
  charge.node = api::Intern(node);
  charge.gang = GangSymbol(pod);
  charge.priority = pod.priority;
  const Resolution where =
      ResolveLocked(p.meta.namespace_name, api::SymbolText(charge.label_queue));
  const Admission admission = CheckLocked(pod, where, now);
  if (admission.verdict != Verdict::kFits) return absl::ResourceExhaustedError(admission.message);
  if (auto labels = node_labels_.find(util::Absl(node)); labels != node_labels_.end()) {
    for (const auto& blocked : admission.blocked_models) {
      if (blocked.model_names->Names(labels->second.Get(blocked.label_key), blocked.label_value)) {
        return absl::ResourceExhaustedError(blocked.message);
      }
    }
  }
  if (auto over = DeviceShortfallLocked(admission, devices, pod, std::string(node))) {
    return absl::ResourceExhaustedError(*over);
  }
  if (auto old = charges_.find(pod.key); old != charges_.end()) {
    ApplyLocked(old->second, -1, now);
    EraseChargeLocked(old);
  }
  charge.base = BaseAmounts(pod);
  charge.devices.tally = devices;
  charge.SetAmounts(ChargeAmountsLocked(charge));
  charge.queue = where.queue;
  ApplyLocked(charge, +1, now);
  AddChargeLocked(pod.key, std::move(charge));
  return absl::OkStatus();
}

void QuotaTracker::ChargeBound(const framework::PodInfo& pod, const PodDevices& devices) {
  const absl::Time now = clock_->Now();
  const api::Pod& p = pod.get();
  absl::MutexLock lock(&mu_);
  if (auto it = charges_.find(pod.key); it != charges_.end()) {
    if (api::SymbolText(it->second.node) == p.spec.node_name) {
      it->second.assumed = false;
      // The claims written before the binding show the devices Reserve charged; a claim the
      // cache does not show yet keeps them until it does (SetPodDevices).
      if (!devices.tally.empty() && !(devices == it->second.devices)) {
        ApplyLocked(it->second, -1, now);
        it->second.devices = devices;
        it->second.SetAmounts(ChargeAmountsLocked(it->second));
        ApplyLocked(it->second, +1, now);
      }
      if (devices.unresolved) unresolved_devices_.insert(pod.key);
      return;
    }
    ApplyLocked(it->second, -1, now);
    EraseChargeLocked(it);
  }
  PodCharge charge;
  charge.namespace_name = api::Intern(p.meta.namespace_name);
  charge.label_queue = LabelSymbol(p.meta.labels, kQueueLabel);
  charge.node = api::Intern(p.spec.node_name);
  charge.assumed = false;
  charge.gang = GangSymbol(pod);
  charge.priority = pod.priority;
  const Resolution where =
      ResolveLocked(p.meta.namespace_name, api::SymbolText(charge.label_queue));
  charge.queue = where.queue >= 0 ? where.queue : where.account;
  charge.base = BaseAmounts(pod);
  charge.devices = devices;
  charge.SetAmounts(ChargeAmountsLocked(charge));
  ApplyLocked(charge, +1, now);
  if (devices.unresolved) unresolved_devices_.insert(pod.key);
  // Running since before this process saw it: what it spent since the ledger was written (or
  // since it started, if later) counts too.
  if (ledger_written_at_.has_value() && p.status.start_time.has_value()) {
    const absl::Time since = std::max(*ledger_written_at_, *p.status.start_time);
    const double seconds = absl::ToDoubleSeconds(now - since);
    if (seconds > 0) {
      for (int q = charge.queue; q >= 0; q = tree_.node(q).parent) {
        const QueueNode& node = tree_.node(q);
        for (size_t b = 0; b < node.budget.size(); ++b) {
          budgets_[q][b].spent +=
              static_cast<double>(charge.amounts().Get(node.budget[b].resource)) * seconds;
        }
      }
    }
  }
  AddChargeLocked(pod.key, std::move(charge));
}

void QuotaTracker::AddChargeLocked(const std::string& pod_key, PodCharge charge) {
  charged_priorities_.insert(charge.priority);
  charges_.emplace(pod_key, std::move(charge));
}

void QuotaTracker::EraseChargeLocked(absl::node_hash_map<std::string, PodCharge>::iterator it) {
  charged_priorities_.erase(charged_priorities_.find(it->second.priority));
  unresolved_devices_.erase(it->first);
  charges_.erase(it);
}

std::vector<std::string> QuotaTracker::Release(const std::string& pod_key, bool assumed_only) {
  const absl::Time now = clock_->Now();
  std::vector<std::string> keys;
  {
    absl::MutexLock lock(&mu_);
    auto it = charges_.find(pod_key);
    if (it == charges_.end() || (assumed_only && !it->second.assumed)) return {};
    ApplyLocked(it->second, -1, now);
    for (int q = it->second.queue; q >= 0; q = tree_.node(q).parent) {
      keys.push_back(QuotaKey(tree_.node(q).path));
    }
    EraseChargeLocked(it);
  }
  Wake(keys);
  return keys;
}

QueueUsage QuotaTracker::UsageOfLocked(int q, absl::Time now) {
  const QueueNode& node = tree_.node(q);
  QueueUsage usage;
  usage.path = node.path;
  usage.leaf = !node.has_children;
  usage.auto_created = node.auto_created;
  usage.max = node.max;
  usage.limited = node.limited;
  for (const auto& typed : node.typed_limited) usage.limited.push_back(typed.typed);
  usage.used = used_[q];
  usage.held = held_[q];
  for (size_t b = 0; b < node.budget.size(); ++b) {
    const auto& limit = node.budget[b];
    BudgetUsage budget;
    budget.resource = limit.resource;
    budget.limit = limit.text;
    budget.limit_hours = Hours(limit.resource, limit.unit_seconds);
    budget.used_hours = Hours(limit.resource, SpentLocked(q, b, now));
    budget.period = node.period.length;
    budget.align_to = node.period.align;
    if (node.period.Resets()) {
      budget.period_start = budgets_[q][b].period_start;
      budget.next_reset = PeriodEnd(node.period, budgets_[q][b].period_start);
    }
    usage.budgets.push_back(std::move(budget));
  }
  return usage;
}

std::vector<QueueUsage> QuotaTracker::Usage() {
  const absl::Time now = clock_->Now();
  absl::MutexLock lock(&mu_);
  std::vector<QueueUsage> all;
  for (size_t q = 0; q < tree_.size(); ++q) all.push_back(UsageOfLocked(static_cast<int>(q), now));
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
  return all;
}

std::vector<QueueUsage> QuotaTracker::PathUsage(const framework::PodInfo& pod) {
  const absl::Time now = clock_->Now();
  absl::MutexLock lock(&mu_);
  const Resolution where = ResolvePodLocked(pod);
  std::vector<QueueUsage> path;
  for (int q = where.queue >= 0 ? where.queue : where.account; q >= 0; q = tree_.node(q).parent) {
    path.push_back(UsageOfLocked(q, now));
  }
  return path;
}

}  // namespace kubesched::quota
