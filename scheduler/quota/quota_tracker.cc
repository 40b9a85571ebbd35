#include "scheduler/quota/quota_tracker.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "rapidjson/document.h"
#include "scheduler/api/quantity.h"
#include "scheduler/util/strings.h"

namespace kubesched::quota {
namespace {

using util::Absl;

constexpr std::string_view kPlacementKey = "placement";

std::string QuotaKey(std::string_view path) { return absl::StrCat("quota:", Absl(path)); }
std::string BudgetKey(std::string_view path) { return absl::StrCat("budget:", Absl(path)); }

// Canonical units per whole unit: cpu is counted in milli-cores.
double UnitScale(api::ResourceId id) { return api::CountsInMilli(id) ? 1000.0 : 1.0; }

double Hours(api::ResourceId id, double unit_seconds) {
  return unit_seconds / 3600.0 / UnitScale(id);
}

std::string FormatHours(double hours) { return absl::StrFormat("%.6gh", hours); }

// The pod's request as quota counts it: its effective requests plus one `pods`.
api::ResourceList BaseAmounts(const framework::PodInfo& pod) {
  api::ResourceList amounts = pod.requests;
  amounts.Add(api::kPods, 1);
  return amounts;
}

std::string LabelText(const api::LabelSet& labels, std::string_view key) {
  const api::Symbol symbol = api::FindSymbol(key);
  if (symbol == api::kNoSuchSymbol) return "";
  auto value = labels.Get(symbol);
  return value.has_value() ? std::string(api::SymbolText(*value)) : std::string();
}

std::string Annotation(const api::ObjectMeta& meta, std::string_view key) {
  auto it = meta.annotations.find(std::string(key));
  return it == meta.annotations.end() ? std::string() : it->second;
}

// kubesched.io/namespace-quota: a JSON object of resource quantities.
absl::Status ParseNamespaceQuota(std::string_view text, api::ResourceList* max,
                                 std::vector<api::ResourceId>* limited) {
  rapidjson::Document doc;
  doc.Parse(text.data(), text.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return absl::InvalidArgumentError("must be a JSON object of resource quantities");
  }
  for (auto it = doc.MemberBegin(); it != doc.MemberEnd(); ++it) {
    const std::string name(it->name.GetString(), it->name.GetStringLength());
    std::string value;
    if (it->value.IsString()) {
      value.assign(it->value.GetString(), it->value.GetStringLength());
    } else if (it->value.IsInt64()) {
      value = absl::StrCat(it->value.GetInt64());
    } else if (it->value.IsDouble()) {
      value = absl::StrFormat("%.17g", it->value.GetDouble());
    } else {
      return absl::InvalidArgumentError(absl::StrCat(name, ": not a quantity"));
    }
    auto quantity = api::Quantity::Parse(value);
    if (!quantity.ok() || quantity->milli() < 0) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": \"", value, "\" is not a quantity"));
    }
    const api::ResourceId id = api::InternResource(name);
    if (std::find(limited->begin(), limited->end(), id) == limited->end()) limited->push_back(id);
    max->Set(id, api::CanonicalAmount(id, *quantity));
  }
  return absl::OkStatus();
}

}  // namespace

std::string NormalizeQueuePath(std::string_view name) {
  if (name == kRootQueue || name.starts_with("root.")) return std::string(name);
  return absl::StrCat(kRootQueue, ".", Absl(name));
}

QuotaTracker::QuotaTracker(const util::Clock* clock, config::QueuesConfig config) : clock_(clock) {
  absl::MutexLock lock(&mu_);
  config_ = std::move(config);
  RebuildLocked();
}

// ---------------------------------------------------------------------------------------------
// Inputs

void QuotaTracker::SetConfig(config::QueuesConfig config) {
  {
    absl::MutexLock lock(&mu_);
    config_ = std::move(config);
    RebuildLocked();
  }
  Wake({std::string(kWakeAll)});
}

bool QuotaTracker::SetNamespace(const api::Namespace& ns) {
  NamespaceInfo info;
  info.queue = Annotation(ns.meta, kQueueAnnotation);
  info.parent = Annotation(ns.meta, kParentQueueAnnotation);
  info.quota_text = Annotation(ns.meta, kNamespaceQuotaAnnotation);
  if (!info.quota_text.empty()) {
    if (auto s = ParseNamespaceQuota(info.quota_text, &info.max, &info.limited); !s.ok()) {
      info.quota_error = absl::StrCat("namespace ", ns.meta.name, ": annotation ",
                                      kNamespaceQuotaAnnotation, ": ", s.message());
    }
  }
  {
    absl::MutexLock lock(&mu_);
    auto it = namespaces_.find(ns.meta.name);
    if (it != namespaces_.end() && it->second.SameQueueSettings(info)) return false;
    const bool had_settings = it != namespaces_.end() || !info.queue.empty() ||
                              !info.parent.empty() || !info.quota_text.empty();
    namespaces_[ns.meta.name] = std::move(info);
    if (!had_settings) return false;
    RebuildLocked();
  }
  Wake({std::string(kWakeAll)});
  return true;
}

bool QuotaTracker::RemoveNamespace(const std::string& name) {
  {
    absl::MutexLock lock(&mu_);
    auto it = namespaces_.find(name);
    if (it == namespaces_.end()) return false;
    const bool had_settings =
        !it->second.queue.empty() || !it->second.parent.empty() || !it->second.quota_text.empty();
    namespaces_.erase(it);
    if (!had_settings) return false;
    RebuildLocked();
  }
  Wake({std::string(kWakeAll)});
  return true;
}

void QuotaTracker::SetNode(const api::Node& node) {
  absl::MutexLock lock(&mu_);
  std::vector<std::pair<api::ResourceId, api::ResourceId>> models;
  for (const auto& model : tree_.model_resources()) {
    auto value = node.meta.labels.Get(model.label_key);
    if (!value.has_value()) continue;
    models.emplace_back(model.resource, api::InternResource(absl::StrCat(
                                            model.prefix, Absl(api::SymbolText(*value)))));
  }
  node_models_[node.meta.name] = std::move(models);
  node_labels_[node.meta.name] = node.meta.labels;
}

void QuotaTracker::RemoveNode(const std::string& name) {
  absl::MutexLock lock(&mu_);
  node_models_.erase(name);
  node_labels_.erase(name);
}

// ---------------------------------------------------------------------------------------------
// Placement

QuotaTracker::Resolution QuotaTracker::ResolveLocked(std::string_view ns,
                                                     std::string_view label_queue) {
  auto named = [&](const std::string& path, std::string_view source) {
    Resolution r;
    const int index = tree_.Find(path);
    if (index < 0) {
      r.account = tree_.DeepestExisting(path);
      r.error = absl::StrCat("queue ", path, " (", Absl(source), ") does not exist");
    } else if (tree_.node(index).has_children) {
      r.account = index;
      r.error = absl::StrCat("queue ", path, " (", Absl(source),
                             ") is a parent queue; pods go to leaf queues only");
    } else {
      r.queue = r.account = index;
    }
    return r;
  };
  if (!label_queue.empty()) {
    return named(NormalizeQueuePath(label_queue), absl::StrCat("pod label ", kQueueLabel));
  }
  const auto it = namespaces_.find(Absl(ns));
  const NamespaceInfo* info = it == namespaces_.end() ? nullptr : &it->second;
  if (info != nullptr && !info->queue.empty()) {
    return named(NormalizeQueuePath(info->queue),
                 absl::StrCat("annotation ", kQueueAnnotation, " of namespace ", Absl(ns)));
  }
  Resolution r;
  if (!config_.auto_create) {
    r.error = absl::StrCat("the pod names no queue (label ", kQueueLabel,
                           ", or the namespace annotation) and queues.autoCreate is off");
    return r;
  }
  int parent = 0;
  if (info != nullptr && !info->parent.empty()) {
    parent = tree_.Find(NormalizeQueuePath(info->parent));
    if (parent < 0) {
      r.account = tree_.DeepestExisting(NormalizeQueuePath(info->parent));
      r.error =
          absl::StrCat("queue ", NormalizeQueuePath(info->parent), " (annotation ",
                       kParentQueueAnnotation, " of namespace ", Absl(ns), ") does not exist");
      return r;
    }
  }
  if (info != nullptr && !info->quota_error.empty()) {
    r.account = parent;
    r.error = info->quota_error;
    return r;
  }
  static const api::ResourceList kNoMax;
  static const std::vector<api::ResourceId> kNoLimits;
  const int index = tree_.AddAutoQueue(parent, ns, info != nullptr ? info->max : kNoMax,
                                       info != nullptr ? info->limited : kNoLimits);
  EnsureBudgetStatesLocked(clock_->Now());
  if (tree_.node(index).has_children) {
    r.account = index;
    r.error = absl::StrCat("queue ", tree_.node(index).path, " (created for namespace ", Absl(ns),
                           ") is a parent queue; pods go to leaf queues only");
    return r;
  }
  r.queue = r.account = index;
  return r;
}

// ---------------------------------------------------------------------------------------------
// Checks

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

// ---------------------------------------------------------------------------------------------
// Charges

api::ResourceList QuotaTracker::TypedAmounts(const api::ResourceList& base,
                                             const std::string& node) const {
  api::ResourceList amounts = base;
  auto it = node_models_.find(node);
  if (it == node_models_.end()) return amounts;
  for (const auto& [generic, typed] : it->second) {
    if (base.Get(generic) > 0) amounts.Add(typed, base.Get(generic));
  }
  return amounts;
}

void QuotaTracker::ApplyLocked(const PodCharge& charge, int sign, absl::Time now) {
  for (int q = charge.queue; q >= 0; q = tree_.node(q).parent) {
    if (sign > 0) {
      used_[q].Add(charge.amounts);
    } else {
      used_[q].Subtract(charge.amounts);
    }
    const QueueNode& node = tree_.node(q);
    for (size_t b = 0; b < node.budget.size(); ++b) {
      SpentLocked(q, b, now);  // folds what accrued at the old rate
      budgets_[q][b].rate +=
          sign * static_cast<double>(charge.amounts.Get(node.budget[b].resource));
    }
  }
}

absl::Status QuotaTracker::Reserve(const framework::PodInfo& pod, std::string_view node) {
  const absl::Time now = clock_->Now();
  const api::Pod& p = pod.get();
  absl::MutexLock lock(&mu_);
  PodCharge charge;
  charge.namespace_name = p.meta.namespace_name;
  charge.label_queue = LabelText(p.meta.labels, kQueueLabel);
  charge.node = std::string(node);
  const Resolution where = ResolveLocked(charge.namespace_name, charge.label_queue);
  const Admission admission = CheckLocked(pod, where, now);
  if (admission.verdict != Verdict::kFits) return absl::ResourceExhaustedError(admission.message);
  if (auto labels = node_labels_.find(charge.node); labels != node_labels_.end()) {
    for (const auto& blocked : admission.blocked_models) {
      if (labels->second.Get(blocked.label_key) == blocked.label_value) {
        return absl::ResourceExhaustedError(blocked.message);
      }
    }
  }
  if (auto old = charges_.find(pod.key); old != charges_.end()) {
    ApplyLocked(old->second, -1, now);
    charges_.erase(old);
  }
  charge.base = BaseAmounts(pod);
  charge.amounts = TypedAmounts(charge.base, charge.node);
  charge.queue = where.queue;
  ApplyLocked(charge, +1, now);
  charges_.emplace(pod.key, std::move(charge));
  return absl::OkStatus();
}

void QuotaTracker::ChargeBound(const framework::PodInfo& pod) {
  const absl::Time now = clock_->Now();
  const api::Pod& p = pod.get();
  absl::MutexLock lock(&mu_);
  if (auto it = charges_.find(pod.key); it != charges_.end()) {
    if (it->second.node == p.spec.node_name) {
      it->second.assumed = false;
      return;
    }
    ApplyLocked(it->second, -1, now);
    charges_.erase(it);
  }
  PodCharge charge;
  charge.namespace_name = p.meta.namespace_name;
  charge.label_queue = LabelText(p.meta.labels, kQueueLabel);
  charge.node = p.spec.node_name;
  charge.assumed = false;
  const Resolution where = ResolveLocked(charge.namespace_name, charge.label_queue);
  charge.queue = where.queue >= 0 ? where.queue : where.account;
  charge.base = BaseAmounts(pod);
  charge.amounts = TypedAmounts(charge.base, charge.node);
  ApplyLocked(charge, +1, now);
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
              static_cast<double>(charge.amounts.Get(node.budget[b].resource)) * seconds;
        }
      }
    }
  }
  charges_.emplace(pod.key, std::move(charge));
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
    charges_.erase(it);
  }
  Wake(keys);
  return keys;
}

// ---------------------------------------------------------------------------------------------
// Budgets

double QuotaTracker::SpentLocked(int queue, size_t budget, absl::Time now) {
  BudgetState& state = budgets_[queue][budget];
  const auto& period = tree_.node(queue).period;
  if (period.has_value() && now >= state.period_start + *period) {
    absl::Duration remainder;
    const int64_t periods = absl::IDivDuration(now - state.period_start, *period, &remainder);
    state.period_start += *period * periods;
    state.spent = 0;
    state.last = std::max(state.last, state.period_start);
  }
  if (now > state.last) {
    state.spent += state.rate * absl::ToDoubleSeconds(now - state.last);
    state.last = now;
  }
  return state.spent;
}

void QuotaTracker::FoldBudgetsLocked(absl::Time now) {
  for (size_t q = 0; q < budgets_.size(); ++q) {
    for (size_t b = 0; b < budgets_[q].size(); ++b) SpentLocked(static_cast<int>(q), b, now);
  }
}

void QuotaTracker::EnsureBudgetStatesLocked(absl::Time now) {
  const size_t old_size = budgets_.size();
  used_.resize(tree_.size());
  budgets_.resize(tree_.size());
  for (size_t q = old_size; q < tree_.size(); ++q) {
    budgets_[q].assign(tree_.node(static_cast<int>(q)).budget.size(),
                       BudgetState{0, 0, now, now, now});
  }
}

std::vector<std::string> QuotaTracker::Tick() {
  const absl::Time now = clock_->Now();
  std::vector<std::string> keys;
  {
    absl::MutexLock lock(&mu_);
    for (size_t q = 0; q < budgets_.size(); ++q) {
      for (size_t b = 0; b < budgets_[q].size(); ++b) {
        SpentLocked(static_cast<int>(q), b, now);
        BudgetState& state = budgets_[q][b];
        if (state.period_start != state.announced_start) {
          state.announced_start = state.period_start;
          keys.push_back(BudgetKey(tree_.node(static_cast<int>(q)).path));
        }
      }
    }
  }
  Wake(keys);
  return keys;
}

void QuotaTracker::RebuildLocked() {
  const absl::Time now = clock_->Now();
  FoldBudgetsLocked(now);
  absl::flat_hash_map<std::string, BudgetState> kept;  // "<path>\n<resource>"
  for (size_t q = 0; q < budgets_.size(); ++q) {
    const QueueNode& node = tree_.node(static_cast<int>(q));
    for (size_t b = 0; b < budgets_[q].size(); ++b) {
      kept[absl::StrCat(node.path, "\n", Absl(api::ResourceName(node.budget[b].resource)))] =
          budgets_[q][b];
    }
  }
  tree_ = QueueTree::Build(config_);
  used_.clear();
  budgets_.clear();
  EnsureBudgetStatesLocked(now);
  for (size_t q = 0; q < tree_.size(); ++q) {
    const QueueNode& node = tree_.node(static_cast<int>(q));
    for (size_t b = 0; b < node.budget.size(); ++b) {
      auto it = kept.find(
          absl::StrCat(node.path, "\n", Absl(api::ResourceName(node.budget[b].resource))));
      if (it == kept.end()) continue;
      budgets_[q][b].spent = it->second.spent;
      budgets_[q][b].period_start = it->second.period_start;
      budgets_[q][b].announced_start = it->second.announced_start;
    }
  }
  // Model labels may have changed: recompute each node's typed keys.
  node_models_.clear();
  for (const auto& [name, labels] : node_labels_) {
    auto& models = node_models_[name];
    for (const auto& model : tree_.model_resources()) {
      auto value = labels.Get(model.label_key);
      if (!value.has_value()) continue;
      models.emplace_back(model.resource, api::InternResource(absl::StrCat(
                                              model.prefix, Absl(api::SymbolText(*value)))));
    }
  }
  for (auto& [key, charge] : charges_) {
    const Resolution where = ResolveLocked(charge.namespace_name, charge.label_queue);
    charge.queue = where.queue >= 0 ? where.queue : where.account;
    charge.amounts = TypedAmounts(charge.base, charge.node);
    ApplyLocked(charge, +1, now);
  }
}

// ---------------------------------------------------------------------------------------------
// Preemption

namespace {
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
  const api::Pod& p = pod.get();
  absl::MutexLock lock(&mu_);
  const Resolution where =
      ResolveLocked(p.meta.namespace_name, LabelText(p.meta.labels, kQueueLabel));
  const Admission admission = CheckLocked(pod, where, now);
  if (admission.verdict != Verdict::kOverQuota) return std::nullopt;
  QuotaPreemption view;
  view.blocking_queue_ = admission.blocking_queue;
  view.request_ = BaseAmounts(pod);
  for (int q = where.queue; q >= 0; q = tree_.node(q).parent) {
    const QueueNode& node = tree_.node(q);
    view.path_.push_back({node.path, node.limited, node.max, used_[q]});
  }
  for (const auto& [key, charge] : charges_) {
    const std::string& queue = tree_.node(charge.queue).path;
    if (InSubtree(queue, view.blocking_queue_)) view.charges_[key] = {queue, charge.amounts};
  }
  return view;
}

// ---------------------------------------------------------------------------------------------
// Reports and the ledger

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
  for (size_t b = 0; b < node.budget.size(); ++b) {
    const auto& limit = node.budget[b];
    BudgetUsage budget;
    budget.resource = limit.resource;
    budget.limit = limit.text;
    budget.limit_hours = Hours(limit.resource, limit.unit_seconds);
    budget.used_hours = Hours(limit.resource, SpentLocked(q, b, now));
    budget.period = node.period;
    if (node.period.has_value()) budget.period_start = budgets_[q][b].period_start;
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
  const api::Pod& p = pod.get();
  absl::MutexLock lock(&mu_);
  const Resolution where =
      ResolveLocked(p.meta.namespace_name, LabelText(p.meta.labels, kQueueLabel));
  std::vector<QueueUsage> path;
  for (int q = where.queue >= 0 ? where.queue : where.account; q >= 0; q = tree_.node(q).parent) {
    path.push_back(UsageOfLocked(q, now));
  }
  return path;
}

Ledger QuotaTracker::ExportLedger() {
  const absl::Time now = clock_->Now();
  absl::MutexLock lock(&mu_);
  Ledger ledger;
  ledger.written_at = now;
  for (size_t q = 0; q < budgets_.size(); ++q) {
    const QueueNode& node = tree_.node(static_cast<int>(q));
    for (size_t b = 0; b < budgets_[q].size(); ++b) {
      const double spent = SpentLocked(static_cast<int>(q), b, now);
      ledger.entries.push_back({node.path, std::string(api::ResourceName(node.budget[b].resource)),
                                spent, budgets_[q][b].period_start});
    }
  }
  return ledger;
}

void QuotaTracker::ImportLedger(const Ledger& ledger) {
  const absl::Time now = clock_->Now();
  absl::MutexLock lock(&mu_);
  for (const auto& entry : ledger.entries) {
    const int q = tree_.Find(entry.queue);
    if (q < 0) continue;
    const QueueNode& node = tree_.node(q);
    for (size_t b = 0; b < node.budget.size(); ++b) {
      if (api::ResourceName(node.budget[b].resource) != entry.resource) continue;
      BudgetState& state = budgets_[q][b];
      SpentLocked(q, b, now);
      state.spent = entry.used_unit_seconds;
      state.period_start = std::min(entry.period_start, now);
      state.last = now;
      SpentLocked(q, b, now);  // a period that ended while the ledger sat unread resets
    }
  }
  ledger_written_at_ = ledger.written_at;
}

}  // namespace kubesched::quota
