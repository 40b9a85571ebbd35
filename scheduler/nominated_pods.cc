#include "scheduler/nominated_pods.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <string_view>

namespace kubesched::scheduler {

namespace {

// The node copy of the calling thread for RunFiltersWithNominated: assigned over and over, so its
// buffers are reused rather than allocated for every node.
framework::NodeInfo& ThreadNodeBuffer() {
  thread_local framework::NodeInfo buffer;
  return buffer;
}

// Which of the pods nominated to a node the Filter phase counts for `pod`: those of priority >= its
// own, other than itself.
enum class Counted { kNone, kAll, kSome };

Counted CountedFor(const framework::PodInfo& pod, const NominatedPods::Entry& nominated) {
  if (nominated.max_priority < pod.priority) return Counted::kNone;
  if (nominated.min_priority >= pod.priority) {
    // Each pod counts unless it is `pod`; a key hash that differs rules that out.
    const size_t hash = std::hash<std::string_view>()(pod.key);
    if (std::find(nominated.key_hashes.begin(), nominated.key_hashes.end(), hash) ==
        nominated.key_hashes.end()) {
      return Counted::kAll;
    }
  }
  size_t counted = 0;
  for (const auto& other : nominated.pods) {
    if (other->priority >= pod.priority && other->key != pod.key) ++counted;
  }
  if (counted == 0) return Counted::kNone;
  return counted == nominated.pods.size() ? Counted::kAll : Counted::kSome;
}

}  // namespace

void NominatedPods::Reset(
    std::vector<std::pair<std::string, std::vector<framework::PodInfoPtr>>> by_node,
    const framework::Snapshot& snapshot) {
  ++epoch_;
  by_node_.clear();
  for (auto& [name, pods] : by_node) {
    auto [it, inserted] = by_name_.try_emplace(name);
    Entry& entry = it->second;
    const framework::NodeInfo* node = snapshot.Get(name);
    const bool unchanged = !inserted && entry.node == node && entry.pods == pods &&
                           entry.with_all != nullptr && node != nullptr &&
                           entry.with_all->generation() == node->generation();
    entry.epoch = epoch_;
    if (unchanged) {
      by_node_[node] = &entry;
      continue;
    }
    entry.pods = std::move(pods);
    entry.node = node;
    entry.min_priority = std::numeric_limits<int32_t>::max();
    entry.max_priority = std::numeric_limits<int32_t>::min();
    entry.key_hashes.clear();
    for (const auto& other : entry.pods) {
      entry.min_priority = std::min(entry.min_priority, other->priority);
      entry.max_priority = std::max(entry.max_priority, other->priority);
      entry.key_hashes.push_back(std::hash<std::string_view>()(other->key));
    }
    entry.with_all.reset();
    if (node == nullptr) continue;
    auto with_all = std::make_unique<framework::NodeInfo>(*node);
    for (const auto& other : entry.pods) with_all->AddPod(other, node->generation());
    entry.with_all = std::move(with_all);
    by_node_[node] = &entry;
  }
  // Names in `by_node` are distinct: when there are as many entries as names, none is stale.
  if (by_name_.size() != by_node.size()) {
    absl::erase_if(by_name_, [this](const auto& item) { return item.second.epoch != epoch_; });
  }
}

const NominatedPods::Entry* NominatedPods::For(const framework::NodeInfo* node) const {
  if (by_node_.empty()) return nullptr;
  auto it = by_node_.find(node);
  return it == by_node_.end() ? nullptr : it->second;
}

const NominatedPods::Entry* NominatedPods::ForName(const std::string& node_name) const {
  auto it = by_name_.find(node_name);
  return it == by_name_.end() ? nullptr : &it->second;
}

framework::Status RunFiltersWithNominated(const runtime::Framework& fw,
                                          const framework::CycleState& state,
                                          const framework::PodInfo& pod,
                                          const framework::NodeInfo& node,
                                          const std::vector<bool>& skip,
                                          const NominatedPods::Entry* nominated) {
  const Counted counted = nominated == nullptr ? Counted::kNone : CountedFor(pod, *nominated);
  if (counted != Counted::kNone) {
    const framework::NodeInfo* with_nominated = nullptr;
    if (counted == Counted::kAll && &node == nominated->node && nominated->with_all != nullptr &&
        nominated->with_all->generation() == node.generation()) {
      with_nominated = nominated->with_all.get();
    } else {
      framework::NodeInfo& buffer = ThreadNodeBuffer();
      buffer = node;
      for (const auto& other : nominated->pods) {
        if (other->priority < pod.priority || other->key == pod.key) continue;
        buffer.AddPod(other, node.generation());
      }
      with_nominated = &buffer;
    }
    framework::Status status = fw.RunFilter(state, pod, *with_nominated, skip);
    if (!status.IsSuccess()) return status;
  }
  return fw.RunFilter(state, pod, node, skip);
}

framework::Status CycleFilterHost::RunFilters(const framework::CycleState& state,
                                              const framework::PodInfo& pod,
                                              const framework::NodeInfo& node) const {
  return RunFiltersWithNominated(fw_, state, pod, node, skip_,
                                 nominated_.empty() ? nullptr : nominated_.ForName(node.name()));
}

void CycleFilterHost::ParallelFor(size_t n,
                                  const std::function<void(size_t begin, size_t end)>& fn) const {
  if (n == 0) return;
  if (pool_ == nullptr || pool_->threads() <= 1) {
    fn(0, n);
    return;
  }
  // Small chunks, handed out one at a time: per-index work (a dry run on a node) varies a lot, and
  // a chunk costs one atomic increment.
  const size_t chunk = std::clamp<size_t>(n / (4 * static_cast<size_t>(pool_->threads())), 1, 8);
  pool_->ParallelFor(n, chunk, fn);
}

}  // namespace kubesched::scheduler
