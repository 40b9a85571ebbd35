#pragma once

// The record a snapshot keeps of its nodes that changed in place, so that a plugin may keep a
// result from one cycle to the next and bring it up to date by recounting only those nodes
// (InterPodAffinity's and PodTopologySpread's counts per topology domain) instead of every node
// for every pod.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace kubesched::framework {

// Which node positions changed at which snapshot generation. The snapshot's writer (the cache)
// calls Record once per update; a snapshot whose writer never does answers every question with
// "cannot tell", so a plugin then counts afresh each time.
//
// Threads: written by the snapshot's writer between cycles, read by the scheduling thread.
class NodeChangeLog {
 public:
  // Appends to `positions` the snapshot positions of the nodes changed in place after
  // generation `since` (a node may be listed more than once) and returns true; false when the
  // log cannot tell: positions moved (nodes were added or removed), namespaces changed, or
  // `since` is older than the log reaches.
  bool ChangedSince(int64_t since, std::vector<uint32_t>* positions) const;

  // A number naming the stretch of changes the log describes: no other log of the process, and
  // no stretch of this one before or after an Invalidate, carries it. A result computed within one
  // stretch can be brought up to date only within it.
  uint64_t epoch() const { return epoch_; }

  // Anything that the log does not describe changed (positions, namespaces): a new stretch
  // begins, whose answers start at the next Record.
  void Invalidate() {
    broken_ = true;
    epoch_ = NextEpoch();
  }
  // The update to `generation` is complete and changed the nodes at `positions` in place. After
  // Invalidate, the log starts at `generation` instead: a result computed on the snapshot from
  // then on can be brought up to date again. Keeps at most about `max_entries` entries, dropping
  // the oldest generations first.
  void Record(int64_t generation, const std::vector<uint32_t>& positions, size_t max_entries);

 private:
  struct Entry {
    int64_t generation = 0;
    uint32_t position = 0;
  };
  std::vector<Entry> entries_;  // by generation, ascending
  // The oldest generation from which every change is in entries_.
  int64_t complete_since_ = std::numeric_limits<int64_t>::max();
  bool broken_ = true;
  uint64_t epoch_ = NextEpoch();

  static uint64_t NextEpoch();
};

}  // namespace kubesched::framework
