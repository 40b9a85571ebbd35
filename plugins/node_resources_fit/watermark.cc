#include "plugins/node_resources_fit/watermark.h"

#include <algorithm>

#include "absl/container/inlined_vector.h"
#include "scheduler/api/symbol.h"
#include "scheduler/framework/node_groups.h"

namespace kubesched::plugins {
namespace {

// The default pool keeps at most this many classes (distinct sets of tolerated groups); beyond,
// the classes start again from spread. Real clusters have a few.
constexpr size_t kMaxDefaultClasses = 1024;

}  // namespace

Watermark::Watermark(const config::WatermarkThresholds& config,
                     const std::vector<Weight>& resources)
    : thresholds_(config) {
  for (const Weight& r : resources) {
    if (r.id != api::kPods) resources_.push_back(r);  // the scorer leaves pods out too
  }
  for (const config::WatermarkPool& pool : config.pools) {
    Pool compiled{pool.name, {}, pool.high, pool.low};
    for (const auto& [key, value] : pool.node_selector) {
      compiled.selector.emplace_back(api::Intern(key), api::Intern(value));
    }
    pools_.push_back(std::move(compiled));
  }
  absl::MutexLock lock(&mu_);
  pool_states_.resize(pools_.size());
}

Watermark::Mode Watermark::NextMode(Mode previous, double ratio, double high, double low) {
  if (ratio >= high) return Mode::kStack;
  if (ratio < low) return Mode::kSpread;
  return previous;  // between low and high: keep the mode (hysteresis)
}

std::vector<std::string> Watermark::LabelKeys() const {
  std::vector<std::string> keys;
  for (const config::WatermarkPool& pool : thresholds_.pools) {
    for (const auto& [key, value] : pool.node_selector) keys.push_back(key);
  }
  return keys;
}

double Watermark::Ratio(const api::ResourceList& allocatable,
                        const api::ResourceList& requested) const {
  double weighted = 0;
  int64_t weight_sum = 0;
  for (const Weight& r : resources_) {
    const int64_t capacity = allocatable.Get(r.id);
    if (capacity <= 0) continue;  // none of it: no meaningful fill level
    weighted += static_cast<double>(r.weight) * static_cast<double>(requested.Get(r.id)) /
                static_cast<double>(capacity);
    weight_sum += r.weight;
  }
  return weight_sum == 0 ? 0 : weighted / static_cast<double>(weight_sum);
}

int Watermark::PoolOf(const framework::NodeGroup& group) const {
  for (size_t i = 0; i < pools_.size(); ++i) {
    const bool matches = std::all_of(
        pools_[i].selector.begin(), pools_[i].selector.end(),
        [&](const auto& label) { return group.pool_labels.Get(label.first) == label.second; });
    if (matches) return static_cast<int>(i);
  }
  return -1;
}

Watermark::Status Watermark::Move(Kept& kept, std::string_view pool, double ratio, double high,
                                  double low) {
  kept.mode = NextMode(kept.mode, ratio, high, low);
  kept.ratio = ratio;
  kept.observed = true;
  last_mode_.store(kept.mode, std::memory_order_relaxed);
  return Status{pool, kept.mode, ratio};
}

Watermark::Status Watermark::Observe(const framework::Snapshot& snapshot,
                                     const std::vector<api::Toleration>& tolerations) {
  const framework::NodeGroups& groups = snapshot.node_groups();
  if (groups.empty()) {
    const double ratio = Ratio(snapshot.cluster_allocatable(), snapshot.cluster_requested());
    absl::MutexLock lock(&mu_);
    Status status = Move(default_states_[0], config::kDefaultWatermarkPool, ratio, thresholds_.high,
                         thresholds_.low);
    last_default_ = default_states_[0];
    return status;
  }
  // The groups the pod may use, with their pools; the pod's pool is the first one among them.
  absl::InlinedVector<std::pair<const framework::NodeGroup*, int>, 8> usable;
  int chosen = -1;
  for (const framework::NodeGroup& group : groups) {
    if (!framework::ToleratesGroup(tolerations, group)) continue;
    const int pool = PoolOf(group);
    usable.emplace_back(&group, pool);
    if (pool >= 0 && (chosen < 0 || pool < chosen)) chosen = pool;
  }
  api::ResourceList allocatable;
  api::ResourceList requested;
  uint64_t class_key = 1469598103934665603ull;
  for (const auto& [group, pool] : usable) {
    if (pool != chosen) continue;
    allocatable.Add(group->allocatable);
    requested.Add(group->requested);
    class_key = (class_key ^ static_cast<uint64_t>(group->id + 1)) * 1099511628211ull;
  }
  const double ratio = Ratio(allocatable, requested);
  absl::MutexLock lock(&mu_);
  if (chosen >= 0) {
    const Pool& pool = pools_[static_cast<size_t>(chosen)];
    return Move(pool_states_[static_cast<size_t>(chosen)], pool.name, ratio, pool.high, pool.low);
  }
  if (default_states_.size() >= kMaxDefaultClasses && !default_states_.contains(class_key)) {
    default_states_.clear();
  }
  Kept& kept = default_states_[class_key];
  Status status =
      Move(kept, config::kDefaultWatermarkPool, ratio, thresholds_.high, thresholds_.low);
  last_default_ = kept;
  return status;
}

std::vector<Watermark::Status> Watermark::Last() const {
  std::vector<Status> out;
  absl::MutexLock lock(&mu_);
  for (size_t i = 0; i < pools_.size(); ++i) {
    const Kept& kept = pool_states_[i];
    if (kept.observed) out.push_back({pools_[i].name, kept.mode, kept.ratio});
  }
  // Before any cycle the default pool reports its initial state (spread, 0).
  if (last_default_.observed || out.empty()) {
    out.insert(out.begin(),
               Status{config::kDefaultWatermarkPool, last_default_.mode, last_default_.ratio});
  }
  return out;
}

}  // namespace kubesched::plugins
