// QuotaTracker: reports for users, read off the scheduling path: typed limits that match no known
// node's model (a likely typo or a missing `models` entry), and the pending pods of each queue.

#include <algorithm>
#include <tuple>

#include "absl/container/flat_hash_set.h"
#include "scheduler/quota/quota_tracker.h"

namespace kubesched::quota {

std::string UnmatchedTypedLimit::Message() const {
  return absl::StrCat("queue ", queue, ": the ", budget ? "budget" : "max", " on ", resource,
                      " matches no node: no node's model label names model ", model,
                      devices ? " and no ResourceSlice publishes a device of it" : "",
                      " (check the queue configuration's models)");
}

std::vector<UnmatchedTypedLimit> QuotaTracker::UnmatchedTypedLimits() {
  absl::MutexLock lock(&mu_);
  absl::flat_hash_set<api::ResourceId> present;
  for (const auto& [node, models] : node_models_) {
    for (const auto& [generic, typed] : models) present.insert(typed);
  }
  // DRA devices' models are models that exist as much as nodes' labels.
  for (const DeviceCount& devices : published_devices_.counts()) {
    if (const api::ResourceId typed = DeviceTypedKeyLocked(devices.resource, devices.model)) {
      present.insert(typed);
    }
  }
  std::vector<UnmatchedTypedLimit> unmatched;
  auto add = [&](const QueueNode& node, const TypedKey& key, bool budget) {
    if (present.contains(key.typed)) return;
    const bool devices = device_resources_ != nullptr && device_resources_->Counts(key.generic);
    unmatched.push_back({node.path, std::string(api::ResourceName(key.typed)),
                         std::string(api::SymbolText(key.label_value)), budget, devices});
  };
  for (size_t q = 0; q < tree_.size(); ++q) {
    const QueueNode& node = tree_.node(static_cast<int>(q));
    for (const TypedKey& key : node.typed_limited) add(node, key, false);
    for (const config::BudgetLimit& limit : node.budget) {
      if (auto typed = tree_.AsTyped(limit.resource); typed.has_value()) add(node, *typed, true);
    }
  }
  std::sort(unmatched.begin(), unmatched.end(), [](const auto& a, const auto& b) {
    return std::tie(a.queue, a.resource, a.budget) < std::tie(b.queue, b.resource, b.budget);
  });
  return unmatched;
}

absl::flat_hash_map<std::string, int64_t> QuotaTracker::PendingByQueue(
    const std::vector<const framework::PodInfo*>& pending) {
  // In slices, each under the lock once: a scrape with many pods pending never holds the
  // scheduling cycle's quota checks up for more than a slice. Each slice is counted by queue index
  // (no path hashed per pod) and turned into paths before the lock goes, as a reload may renumber.
  constexpr size_t kSlice = 4096;
  absl::flat_hash_map<std::string, int64_t> counts;
  std::vector<int64_t> by_index;
  for (size_t begin = 0; begin < pending.size(); begin += kSlice) {
    const size_t end = std::min(pending.size(), begin + kSlice);
    absl::MutexLock lock(&mu_);
    by_index.assign(tree_.size(), 0);
    for (size_t i = begin; i < end; ++i) {
      const Resolution where = ResolvePodLocked(*pending[i]);
      const int q = where.queue >= 0 ? where.queue : where.account;
      if (q >= 0 && static_cast<size_t>(q) < by_index.size()) ++by_index[q];
    }
    for (size_t q = 0; q < by_index.size(); ++q) {
      if (by_index[q] > 0) counts[tree_.node(static_cast<int>(q)).path] += by_index[q];
    }
  }
  return counts;
}

}  // namespace kubesched::quota
