#pragma once

// Pods nominated to nodes by preemption (they wait for their victims to leave), as one scheduling
// cycle sees them, and the Filter phase that counts them (upstream's
// RunFilterPluginsWithNominatedPods).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/container/node_hash_map.h"
#include "absl/types/span.h"
#include "scheduler/framework/plugin.h"
#include "scheduler/queue/scheduling_queue.h"
#include "scheduler/runtime/framework.h"
#include "scheduler/util/parallel.h"

namespace kubesched::scheduler {

class NominatedPods {
 public:
  // The pods nominated to one node.
  struct Entry {
    // What the Filter phase asks of every node first, without touching the pods: the lowest and
    // highest priority among them and the hashes of their keys (is the pod itself nominated here?).
    int32_t min_priority = 0;
    int32_t max_priority = 0;
    absl::InlinedVector<size_t, 2> key_hashes;
    // The node's generation `with_all` and the sums below were made at (-1: none).
    int64_t with_all_generation = -1;
    // What `with_all` holds, as sums: its pods' requests and their number. A cycle whose filters
    // judge by requests (Framework::FiltersJudgeByRequests) reads these instead of the copy, which
    // lies elsewhere in memory: every node with nominated pods would cost a cache miss more.
    api::ResourceList requested_with_all;
    int64_t pods_with_all = 0;
    std::vector<framework::PodInfoPtr> pods;
    // The sum of their requests: what they take of the node when every one counts.
    api::ResourceList requests;
    // The snapshot's node of that name, or null.
    const framework::NodeInfo* node = nullptr;
    // `node` with every pod of `pods` added: what the Filter phase runs on for a pod that is not
    // among them and ranks no higher than any of them (the usual case); null without a node.
    // Kept from cycle to cycle while the node (by generation) and its nominations stay the same,
    // so that filtering a node with nominated pods does not copy it every time.
    std::unique_ptr<const framework::NodeInfo> with_all;
    uint64_t epoch = 0;  // of the last Reset that listed it
    // Drawn anew, from a count of the whole process, whenever `pods` or `node` is assigned: two
    // entries with one stamp hold the same pods (CycleFilterHost::NominationStamp).
    uint64_t stamp = 0;
  };

  // `by_node`: the queue's nominations (node name -> pods). Entries whose node and pods are
  // unchanged keep their `with_all`.
  void Reset(std::vector<std::pair<std::string, std::vector<framework::PodInfoPtr>>> by_node,
             const framework::Snapshot& snapshot);
  // Brings the entries up to date in proportion to what changed: `delta` is the queue's
  // NominationsSince(version()); `refreshed` the snapshot nodes the last snapshot update copied
  // (their `with_all` is rebuilt); `node_set_changed` whether it added or removed nodes (every
  // entry looks its node up again).
  void Sync(queue::NominationDelta delta, const framework::Snapshot& snapshot,
            absl::Span<const framework::NodeInfo* const> refreshed, bool node_set_changed);
  // The queue's nomination version the entries reflect.
  uint64_t version() const { return version_; }
  bool empty() const { return by_name_.empty(); }
  // The pods nominated to `node` (a snapshot node, found by its snapshot position: no look-up by
  // string or hash per node), or null. ForName looks a node up by name (tests).
  const Entry* For(const framework::NodeInfo* node) const { return Find(node); }
  // The same for the snapshot node at `position`, without reading the NodeInfo.
  const Entry* ForPosition(size_t position, const framework::NodeInfo* node) const {
    if (position >= by_position_.size()) return nullptr;
    const Entry* entry = by_position_[position];
    return entry != nullptr && entry->node == node ? entry : nullptr;
  }
  const Entry* ForName(const std::string& node_name) const;
  // Whether `pod` may be among the nominated pods of some node (its key's hash is).
  bool MayHold(const framework::PodInfo& pod) const { return key_counts_.contains(pod.key_hash); }
  // StampFor the snapshot node at `position`, read without its entry, for a pod that is nowhere
  // among the nominated pods (MayHold is false). It changes whenever the entry at `position`
  // changes or is assigned anew, so equal stamps at one position mean the same nominations.
  uint64_t StampAt(size_t position) const {
    return position < stamp_by_position_.size() ? stamp_by_position_[position] : 0;
  }
  // A number that changes whenever the pods of `entry` (null: none) change, for `pod`'s verdict
  // on its node: 0 for none; none when `pod` is among them (the filters then leave it out).
  static std::optional<uint64_t> StampFor(const Entry* entry, const framework::PodInfo& pod) {
    // Stamps start at 1: 0 stands for no pod nominated to the node.
    if (entry == nullptr) return 0;
    const auto& hashes = entry->key_hashes;
    if (std::find(hashes.begin(), hashes.end(), pod.key_hash) != hashes.end()) return std::nullopt;
    return entry->stamp;
  }

 private:
  // node_hash_map: by_node_ points into it.
  absl::node_hash_map<std::string, Entry> by_name_;
  // Sets the entry of `name` to `pods` on `node` (recomputing what is derived from them).
  void Assign(Entry& entry, std::vector<framework::PodInfoPtr> pods,
              const framework::NodeInfo* node);
  void RebuildWithAll(Entry& entry);

  Entry* Find(const framework::NodeInfo* node) const {
    const uint32_t position = node->snapshot_position();
    if (position >= by_position_.size()) return nullptr;
    Entry* entry = by_position_[position];
    return entry != nullptr && entry->node == node ? entry : nullptr;
  }
  // Points `node`'s position at `entry`.
  void Index(const framework::NodeInfo* node, Entry* entry);
  void Unindex(const framework::NodeInfo* node);
  // Unindexes every node (their positions may have moved) of a snapshot of `num_nodes`.
  void UnindexAll(size_t num_nodes);
  // Adds `sign` for each key hash of `entry` to key_counts_.
  void CountKeys(const Entry& entry, int sign);

  // Indexed by snapshot position; an entry counts only for the node it names (a stale position
  // after the node list changed is overwritten when the list is re-indexed).
  std::vector<Entry*> by_position_;
  // The stamp of by_position_'s entry (0: none), so that a verdict kept for a node is checked
  // without reading the entry.
  std::vector<uint64_t> stamp_by_position_;
  // How many entries hold each key hash (MayHold).
  absl::flat_hash_map<size_t, int> key_counts_;
  uint64_t epoch_ = 0;
  uint64_t version_ = 0;
};

// Runs `fw`'s filters for `pod` on `node`. When pods of priority >= the pod's (other than itself)
// are nominated to the node, the filters must pass twice: with those pods added to a copy of the
// node (they will take their room), and on the node as it is (a pod's affinity must not rest on
// pods that are not there yet). When a plugin with PreFilter extensions runs for the pod, the
// first pass uses a copy of the cycle state that has seen the nominated pods added (upstream's
// addGENominatedPods). `nominated` may be null. When `node` is the entry's snapshot node
// and every nominated pod counts, the entry's `with_all` serves as the copy; otherwise the copy is
// made in a buffer of the calling thread.
framework::Status RunFiltersWithNominated(const runtime::Framework& fw,
                                          const framework::CycleState& state,
                                          const framework::PodInfo& pod,
                                          const framework::NodeInfo& node,
                                          const runtime::FilterSkips& skip,
                                          const NominatedPods::Entry* nominated);
// The same, written into `out` (see Framework::RunFilterInto). `by_requests`: every filter that
// runs judges by requests and no PreFilter extension is active (NominatedFiltersJudgeByRequests);
// the pass with every nominated pod of the entry's own node then reads the entry's sums instead of
// `with_all`, for the same verdict.
void RunFiltersWithNominatedInto(const runtime::Framework& fw, const framework::CycleState& state,
                                 const framework::PodInfo& pod, const framework::NodeInfo& node,
                                 const runtime::FilterSkips& skip,
                                 const NominatedPods::Entry* nominated, framework::Status& out,
                                 bool by_requests = false);
// Whether a cycle whose filter skips are `skip` may pass `by_requests` above.
bool NominatedFiltersJudgeByRequests(const runtime::Framework& fw,
                                     const runtime::FilterSkips& skip);

// The PostFilterHost of one cycle: the profile's filters with the cycle's PreFilter skips and
// nominations, and the scheduler's worker pool for ParallelFor.
//
// Threads: RunFilters may be called concurrently. ParallelFor is called from the scheduling
// thread (the pool's only caller) while no Filter or Score phase runs on the pool; with a null
// pool (or a pool of one thread) it runs inline.
class CycleFilterHost final : public framework::PostFilterHost {
 public:
  CycleFilterHost(const runtime::Framework& fw, const runtime::FilterSkips& skip,
                  const NominatedPods& nominated, util::WorkerPool* pool = nullptr);
  framework::Status RunFilters(const framework::CycleState& state, const framework::PodInfo& pod,
                               const framework::NodeInfo& what_if,
                               const framework::NodeInfo& node) const override;
  bool StateFollowsPods() const override { return state_follows_pods_; }
  framework::Status PodRemoved(framework::CycleState& state, const framework::PodInfo& pod,
                               const framework::PodInfo& removed,
                               const framework::NodeInfo& what_if) const override {
    return fw_.RunPreFilterExtensionRemovePod(state, pod, removed, what_if, skip_);
  }
  framework::Status PodAdded(framework::CycleState& state, const framework::PodInfo& pod,
                             const framework::PodInfo& added,
                             const framework::NodeInfo& what_if) const override {
    return fw_.RunPreFilterExtensionAddPod(state, pod, added, what_if, skip_);
  }
  bool CannotFitWithout(const framework::CycleState& state, const framework::PodInfo& pod,
                        const framework::NodeInfo& node, const api::ResourceList& freed,
                        size_t freed_pods) const override;
  bool JudgesByRequests() const override { return judges_by_requests_; }
  std::optional<framework::VerdictScope> VerdictScopeFor(
      const framework::CycleState& state, const framework::PodInfo& pod) const override;
  uint64_t NominationStamp(const framework::PodInfo& pod, const framework::NodeInfo& node,
                           uint32_t position) const override;
  framework::Status RunFiltersWithout(const framework::CycleState& state,
                                      const framework::PodInfo& pod,
                                      const framework::NodeInfo& node,
                                      const api::ResourceList& freed,
                                      size_t freed_pods) const override;
  void ParallelFor(size_t n,
                   const std::function<void(size_t begin, size_t end)>& fn) const override;

 private:
  const runtime::Framework& fw_;
  const runtime::FilterSkips& skip_;
  const NominatedPods& nominated_;
  util::WorkerPool* const pool_;
  // Whether NodeResourcesFit's Filter runs in this cycle (CannotFitWithout relies on it).
  bool resource_fit_runs_ = false;
  bool state_follows_pods_ = false;
  bool judges_by_requests_ = false;
};

}  // namespace kubesched::scheduler
