#pragma once

// For plugins that keep a per-pod result from one cycle to the next (the counts per topology
// domain of InterPodAffinity and PodTopologySpread) and bring it up to date by recounting only
// the nodes that changed, instead of recounting every node for every pod. The next pod of the
// same template then costs its plugin as much as the nodes changed since the last one (usually
// the last pod's node), not as much as the cluster.
//
// Threads: a plugin keeps and updates its results in PreFilter or PreScore, which run on the
// scheduling thread only; states hand them to Filter and Score as shared immutable data.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "scheduler/framework/snapshot.h"

namespace kubesched::framework {

// Which snapshot, at which generation, a kept result was last brought up to date with.
class SnapshotMark {
 public:
  // Returns true when the result is up to date with `snapshot` once the nodes at the positions
  // left in `changed` are recounted; false when it must be computed afresh (another
  // snapshot, positions moved, namespaces changed, a record that does not reach back). Either
  // way the mark then names `snapshot`: the caller must do the work before the next call.
  bool CatchUp(const Snapshot& snapshot, std::vector<uint32_t>* changed) {
    changed->clear();
    const bool same = snapshot_id_ == snapshot.id() && generation_ <= snapshot.generation() &&
                      snapshot.NodesChangedSince(generation_, changed);
    snapshot_id_ = snapshot.id();
    generation_ = snapshot.generation();
    return same;
  }
  // The result is not to be trusted any more (its computation failed half-way).
  void Forget() { snapshot_id_ = 0; }

 private:
  uint64_t snapshot_id_ = 0;  // snapshot ids start at 1
  int64_t generation_ = 0;
};

// The results kept for the last few pod templates, most recently used first: pods of several
// templates may alternate in the queue. `Entry` has `bool Serves(const Key&) const`.
template <typename Entry>
class KeptResults {
 public:
  explicit KeptResults(size_t capacity) : capacity_(capacity) {}

  // The entry serving `key`, moved to the front; null if none.
  template <typename Key>
  Entry* Find(const Key& key) {
    const auto it = std::find_if(entries_.begin(), entries_.end(),
                                 [&](const auto& entry) { return entry->Serves(key); });
    if (it == entries_.end()) return nullptr;
    std::rotate(entries_.begin(), it, it + 1);
    return entries_.front().get();
  }
  // Adds `entry` at the front, dropping the least recently used beyond the capacity.
  Entry& Add(std::unique_ptr<Entry> entry) {
    if (entries_.size() >= capacity_) entries_.pop_back();
    entries_.insert(entries_.begin(), std::move(entry));
    return *entries_.front();
  }
  size_t size() const { return entries_.size(); }

 private:
  size_t capacity_;
  std::vector<std::unique_ptr<Entry>> entries_;
};

}  // namespace kubesched::framework
