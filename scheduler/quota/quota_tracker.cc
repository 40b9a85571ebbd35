// QuotaTracker: construction, its inputs (configuration, namespaces, nodes) and the rebuild they
// cause. Placement, admission, usage, budgets and preemption are in the quota_tracker_*.cc files
// and quota_preemption.cc.

#include "scheduler/quota/quota_tracker.h"

#include "absl/strings/str_cat.h"
#include "scheduler/quota/namespace_quota.h"
#include "scheduler/util/strings.h"

namespace kubesched::quota {
namespace {

using util::Absl;

std::string Annotation(const api::ObjectMeta& meta, std::string_view key) {
  auto it = meta.annotations.find(std::string(key));
  return it == meta.annotations.end() ? std::string() : it->second;
}

}  // namespace

std::string NormalizeQueuePath(std::string_view name) {
  if (name == kRootQueue || name.starts_with("root.")) return std::string(name);
  return absl::StrCat(kRootQueue, ".", Absl(name));
}

QuotaTracker::QuotaTracker(const util::Clock* clock, config::QueuesConfig config)
    : clock_(clock), device_resources_(CompileDeviceResources(config)) {
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

api::ResourceId QuotaTracker::TypedResource(const ModelResource& model,
                                            api::Symbol label_value) const {
  const api::Symbol named = tree_.model_names().Resolve(label_value);
  return api::InternResource(absl::StrCat(model.prefix, Absl(api::SymbolText(named))));
}

void QuotaTracker::SetNode(const api::Node& node) {
  absl::MutexLock lock(&mu_);
  std::vector<std::pair<api::ResourceId, api::ResourceId>> models;
  for (const auto& model : tree_.model_resources()) {
    auto value = node.meta.labels.Get(model.label_key);
    if (!value.has_value()) continue;
    models.emplace_back(model.resource, TypedResource(model, *value));
  }
  // Only nodes with a model are kept: a node without one charges nothing typed.
  if (models.empty()) {
    node_models_.erase(node.meta.name);
  } else {
    node_models_[node.meta.name] = std::move(models);
  }
  node_labels_[node.meta.name] = node.meta.labels;
}

void QuotaTracker::RemoveNode(const std::string& name) {
  absl::MutexLock lock(&mu_);
  node_models_.erase(name);
  node_labels_.erase(name);
}

void QuotaTracker::ReservePods(size_t pods) {
  absl::MutexLock lock(&mu_);
  charges_.reserve(pods);
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
  held_.clear();
  budgets_.clear();
  EnsureBudgetStatesLocked(now);
  for (size_t q = 0; q < tree_.size(); ++q) {
    const QueueNode& node = tree_.node(static_cast<int>(q));
    for (size_t b = 0; b < node.budget.size(); ++b) {
      auto it = kept.find(
          absl::StrCat(node.path, "\n", Absl(api::ResourceName(node.budget[b].resource))));
      if (it == kept.end()) continue;
      budgets_[q][b].spent = it->second.spent;
      // A budget newly aligned starts its period at the boundary that held the kept start.
      budgets_[q][b].period_start = AlignedPeriodStart(node.period, it->second.period_start);
      budgets_[q][b].announced_start = it->second.announced_start;
    }
  }
  // Model labels may have changed: recompute each node's typed keys.
  node_models_.clear();
  for (const auto& [name, labels] : node_labels_) {
    std::vector<std::pair<api::ResourceId, api::ResourceId>> models;
    for (const auto& model : tree_.model_resources()) {
      auto value = labels.Get(model.label_key);
      if (!value.has_value()) continue;
      models.emplace_back(model.resource, TypedResource(model, *value));
    }
    if (!models.empty()) node_models_[name] = std::move(models);
  }
  ResetHoldsLocked();
  for (auto& [key, charge] : charges_) {
    const Resolution where =
        ResolveLocked(api::SymbolText(charge.namespace_name), api::SymbolText(charge.label_queue));
    charge.queue = where.queue >= 0 ? where.queue : where.account;
    charge.SetAmounts(ChargeAmountsLocked(charge));
    ApplyLocked(charge, +1, now);
  }
  RefreshAllHoldsLocked();
}

}  // namespace kubesched::quota
