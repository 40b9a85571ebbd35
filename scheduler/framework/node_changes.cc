#include "scheduler/framework/node_changes.h"

#include <algorithm>
#include <atomic>

namespace kubesched::framework {

uint64_t NodeChangeLog::NextEpoch() {
  static std::atomic<uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

bool NodeChangeLog::ChangedSince(int64_t since, std::vector<uint32_t>* positions) const {
  if (broken_ || since < complete_since_) return false;
  const auto first = std::upper_bound(
      entries_.begin(), entries_.end(), since,
      [](int64_t generation, const Entry& entry) { return generation < entry.generation; });
  for (auto it = first; it != entries_.end(); ++it) positions->push_back(it->position);
  return true;
}

void NodeChangeLog::Record(int64_t generation, const std::vector<uint32_t>& positions,
                           size_t max_entries) {
  if (broken_) {
    entries_.clear();
    complete_since_ = generation;
    broken_ = false;
    return;
  }
  for (const uint32_t position : positions) entries_.push_back({generation, position});
  if (entries_.size() <= max_entries) return;
  // Drop the older half, whole generations at a time: answers then start where the kept
  // entries begin.
  const int64_t dropped = entries_[entries_.size() / 2].generation;
  const auto kept =
      std::upper_bound(entries_.begin(), entries_.end(), dropped,
                       [](int64_t g, const Entry& entry) { return g < entry.generation; });
  entries_.erase(entries_.begin(), kept);
  complete_since_ = dropped;
}

}  // namespace kubesched::framework
