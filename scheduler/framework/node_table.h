#pragma once

// What the default plugins' Filter and Score read per node, packed into one cache line
// (NodeRow), and the interned taint sets it names. The snapshot keeps one row per node in a flat
// array indexed by the node's snapshot position, so that the per-node loop reads contiguous
// memory instead of each node's NodeInfo, its resource lists and its Node object.

#include <cstdint>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "scheduler/api/objects.h"

namespace kubesched::framework {

// An interned list of taints: equal lists (same taints in the same order) share one id. Id 0 is
// the empty list.
using TaintSetId = uint32_t;
inline constexpr TaintSetId kNoTaints = 0;

// The process's taint sets. Ids are never reused, so a verdict cached per id for one pod holds
// for every node of a snapshot. Thread-safe.
class TaintSets {
 public:
  static TaintSetId Intern(const std::vector<api::Taint>& taints);
  // Calls fn(id, taints) for every id handed out so far, in id order, and returns their number;
  // fn must not call back into TaintSets.
  template <typename Fn>
  static size_t ForEach(Fn&& fn) {
    absl::MutexLock lock(&Mu());
    const auto& sets = Sets();
    for (size_t id = 0; id < sets.size(); ++id) fn(static_cast<TaintSetId>(id), sets[id]);
    return sets.size();
  }
  // Ids handed out so far (every id below this is valid).
  static size_t Count();

 private:
  static absl::Mutex& Mu();
  static const std::vector<std::vector<api::Taint>>& Sets() ABSL_EXCLUSIVE_LOCKS_REQUIRED(Mu());
};

// One node's hot data. The amounts are those of NodeInfo (allocatable, requested and
// non-zero requested cpu and memory, allocatable pods and the pod count); other resources stay in
// NodeInfo's lists.
struct alignas(64) NodeRow {
  int64_t allocatable_cpu = 0;
  int64_t allocatable_memory = 0;
  int64_t requested_cpu = 0;
  int64_t requested_memory = 0;
  int64_t non_zero_requested_cpu = 0;
  int64_t non_zero_requested_memory = 0;
  int32_t allocatable_pods = 0;
  int32_t pod_count = 0;
  TaintSetId taints = kNoTaints;
  bool has_node = false;
  bool unschedulable = false;
  // A NoSchedule or NoExecute taint / a PreferNoSchedule taint.
  bool hard_taints = false;
  bool prefer_taints = false;
};
static_assert(sizeof(NodeRow) == 64);

}  // namespace kubesched::framework
