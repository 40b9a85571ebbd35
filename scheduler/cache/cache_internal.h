#pragma once

// The cache's state (Cache::Impl) and its parts, shared by the files that implement Cache:
// cache.cc (nodes, pods, namespaces, budgets, snapshots) and cache_volumes.cc (the volume objects
// and the volumes VolumeBinding assumed). Internal to scheduler/cache/: nothing else includes it.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "scheduler/api/storage.h"
#include "scheduler/cache/cache.h"
#include "scheduler/cache/node_grouping.h"
#include "scheduler/framework/device_resources.h"
#include "scheduler/framework/dra_state.h"
#include "scheduler/framework/gang_state.h"
#include "scheduler/framework/storage_state.h"
#include "scheduler/util/strings.h"

namespace kubesched::cache {

using framework::NodeInfo;
using framework::PodInfoPtr;

// A NodeInfo plus its place in the recency list: nodes are kept most-recently-changed first, so
// that UpdateSnapshot walks only the nodes changed since the snapshot's generation (upstream's
// headNode list).
struct NodeItem {
  NodeInfo info;
  NodeItem* prev = nullptr;  // more recently changed
  NodeItem* next = nullptr;  // less recently changed
  // The node's group (NodeGrouping) and the Node object it was worked out for.
  int32_t group = NodeGrouping::kNoGroup;
  const api::Node* grouped_node = nullptr;
};

struct PodState {
  PodInfoPtr pod;
  // The node's name, interned: one per pod, and node names are few.
  api::Symbol node = api::kEmptySymbol;
  bool assumed = false;
  bool binding_finished = false;
  absl::Time binding_finished_at = absl::InfiniteFuture();  // meaningful once binding_finished
  // When the pod was placed on its node (see "Load" in cache.h).
  absl::Time placed_at = absl::InfinitePast();
};

// Whether a pod placed at `placed_at` is too recent for the node's metrics sample to show it.
inline bool PlacedSinceSample(const NodeInfo& info, absl::Time placed_at) {
  return info.metrics().has_value() && placed_at >= info.metrics()->timestamp;
}

// Whether two image lists hold the same names (a node status update rarely changes them).
inline bool SameImageNames(const std::vector<framework::NodeImage>& a,
                           const std::vector<framework::NodeImage>& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const auto& x, const auto& y) { return x.name == y.name; });
}

inline bool NodePresenceChanges(const NodeInfo& stale, const NodeInfo& fresh) {
  return (stale.node() == nullptr) != (fresh.node() == nullptr);
}
// Whether copying `fresh` over `stale` moves the node into or out of the snapshot's affinity
// lists (SnapshotBuilder::RefreshAffinityLists; no other node moves).
inline bool AffinityListsChange(const NodeInfo& stale, const NodeInfo& fresh) {
  return stale.pods_with_affinity().empty() != fresh.pods_with_affinity().empty() ||
         stale.pods_with_required_anti_affinity().empty() !=
             fresh.pods_with_required_anti_affinity().empty();
}

// One object VolumeBinding assumed for a pod, and the informers' version it hides (restored when
// the pod's assumptions are forgotten).
template <typename T>
struct AssumedObject {
  std::string pod_key;
  std::shared_ptr<const T> observed;
};

// The volumes assumed by pods that are still in their binding cycle. An entry ends when its pod
// forgets it (Unreserve) or the informers deliver the object again (the API server's word wins).
struct VolumeAssumptions {
  absl::flat_hash_map<std::string, AssumedObject<api::PersistentVolume>> volumes;      // by name
  absl::flat_hash_map<std::string, AssumedObject<api::PersistentVolumeClaim>> claims;  // by key
  struct PodKeys {
    std::vector<std::string> volumes;
    std::vector<std::string> claims;
  };
  absl::flat_hash_map<std::string, PodKeys> by_pod;
};

// A claim DynamicResources assumed for a pod: the informers' version it hides, and whether the
// API server stored the assumed version already (PreBind's write), after which forgetting the pod
// keeps it.
struct AssumedClaim {
  std::string pod_key;
  std::shared_ptr<const api::ResourceClaim> observed;
  bool written = false;
};

// The claims assumed by pods in their binding cycle, by claim key, and the keys by pod.
struct ClaimAssumptions {
  absl::flat_hash_map<std::string, AssumedClaim> claims;
  absl::flat_hash_map<std::string, std::vector<std::string>> by_pod;
};

struct Cache::Impl {
  explicit Impl(const util::Clock* c) : clock(c) {}

  const util::Clock* const clock;

  // Guards everything below. Held only for map updates and the snapshot copy, never for I/O.
  mutable absl::Mutex mu;
  // Bumped on every change; each changed NodeInfo takes the new value.
  int64_t generation ABSL_GUARDED_BY(mu) = 0;
  absl::flat_hash_map<std::string, std::unique_ptr<NodeItem>> nodes ABSL_GUARDED_BY(mu);
  NodeItem* head ABSL_GUARDED_BY(mu) = nullptr;  // most recently changed
  // Nodes with a node object; placeholders (only pods known) are not counted.
  size_t node_objects ABSL_GUARDED_BY(mu) = 0;
  // Every pod of the cluster: a node per pod keeps a slot of the table one pointer wide, so that
  // growing it (old and new table at once) costs little. The key views the pod's key in the
  // entry's own PodInfo, which the entry keeps alive: an entry never gets another PodInfo in place
  // (a changed pod is removed and added again), so the view never outlives its string.
  absl::node_hash_map<absl::string_view, PodState> pods ABSL_GUARDED_BY(mu);
  absl::flat_hash_set<std::string> assumed ABSL_GUARDED_BY(mu);
  absl::flat_hash_map<api::Symbol, api::LabelSet> namespaces ABSL_GUARDED_BY(mu);
  int64_t namespaces_generation ABSL_GUARDED_BY(mu) = 0;
  absl::btree_map<std::string, std::shared_ptr<const api::PodDisruptionBudget>> pdbs
      ABSL_GUARDED_BY(mu);
  int64_t pdbs_generation ABSL_GUARDED_BY(mu) = 0;
  // Nodes holding each image name, kept as nodes come, change and go; published when
  // images_generation moved.
  absl::flat_hash_map<api::Symbol, int32_t> image_node_counts ABSL_GUARDED_BY(mu);
  int64_t images_generation ABSL_GUARDED_BY(mu) = 0;
  // Adds `delta` for every image name of a node (its images before or after a change).
  void CountImages(const std::vector<framework::NodeImage>& images, int32_t delta)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (images.empty()) return;
    for (const framework::NodeImage& image : images) {
      int32_t& count = image_node_counts[image.name];
      count += delta;
      if (count == 0) image_node_counts.erase(image.name);
    }
    images_generation = NextGeneration();
  }
  // The writer side of the snapshots' StorageState (cache_volumes.cc): the informers' volume
  // objects, except where a volume VolumeBinding assumed replaces the informers' version;
  // published when storage_generation moved.
  framework::StorageState storage ABSL_GUARDED_BY(mu);
  int64_t storage_generation ABSL_GUARDED_BY(mu) = 0;
  VolumeAssumptions assumed_volumes ABSL_GUARDED_BY(mu);
  // The writer side of the snapshots' DraState (cache_dra.cc): the informers' DRA objects,
  // except where a claim DynamicResources assumed replaces the informers' version; published
  // when dra_generation moved.
  framework::DraState dra ABSL_GUARDED_BY(mu);
  int64_t dra_generation ABSL_GUARDED_BY(mu) = 0;
  ClaimAssumptions assumed_claims ABSL_GUARDED_BY(mu);
  // The writer side of the snapshots' GangState: the informers' PodGroups; published when
  // gangs_generation moved.
  framework::GangState gangs ABSL_GUARDED_BY(mu);
  int64_t gangs_generation ABSL_GUARDED_BY(mu) = 0;
  // The gang members the scheduler told of (SetGangMember), by pod key: their gang's key.
  absl::flat_hash_map<std::string, std::string> gang_members ABSL_GUARDED_BY(mu);
  // The implicit groups (formed by annotations, no object) with a member, by key: the minMember
  // their member set last gives (0 when unusable). An entry goes with the group's last member.
  absl::flat_hash_map<std::string, int32_t> implicit_gangs ABSL_GUARDED_BY(mu);

  // Member count changes since the last snapshot, applied once per snapshot: a pod's assume and
  // its confirmation (removed, then added) cancel out, and the copy-on-write GangState is written
  // once per cycle rather than once per change.
  absl::flat_hash_map<std::string, std::pair<int32_t, int32_t>> gang_deltas ABSL_GUARDED_BY(mu);

  void CountGang(const std::string& gang_key, int32_t members, int32_t assigned)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    auto& delta = gang_deltas[gang_key];
    delta.first += members;
    delta.second += assigned;
  }

  // The gang's counts now: the published ones plus the changes since.
  framework::GangCounts CurrentGangCounts(std::string_view gang_key) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    framework::GangCounts counts = gangs.CountsOf(gang_key);
    if (auto it = gang_deltas.find(util::Absl(gang_key)); it != gang_deltas.end()) {
      counts.pods += it->second.first;
      counts.assigned += it->second.second;
    }
    return counts;
  }

  // Whether the gang has no member left (placed ones may still be counted until the cache drops
  // them); if so, its implicit minMember goes with it.
  bool ForgetGangIfEmpty(const std::string& gang_key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (CurrentGangCounts(gang_key).pods > 0) return false;
    implicit_gangs.erase(gang_key);
    return true;
  }

  void ApplyGangDeltas() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (gang_deltas.empty()) return;
    bool changed = false;
    for (const auto& [key, delta] : gang_deltas) {
      if (delta.first == 0 && delta.second == 0) continue;
      gangs.AddToCounts(key, delta.first, delta.second);
      changed = true;
    }
    gang_deltas.clear();
    if (changed) gangs_generation = NextGeneration();
  }
  // Signalled (mu held) whenever storage_generation moves or the waits stop: PreBind's wait.
  absl::CondVar storage_changed;
  bool storage_waits_stopped ABSL_GUARDED_BY(mu) = false;
  SnapshotUpdateStats last_update ABSL_GUARDED_BY(mu);
  // The snapshot copies one UpdateSnapshot wrote, kept to spare an allocation per update.
  std::vector<NodeInfo*> copied_scratch ABSL_GUARDED_BY(mu);
  // Sums over the nodes with a node object (placeholders add nothing), kept exact by ChangeNode.
  ClusterTotals totals ABSL_GUARDED_BY(mu);
  // The same sums per group of alike nodes, for the Watermark strategy; off unless enabled.
  NodeGrouping grouping ABSL_GUARDED_BY(mu);
  // The latest metrics sample per node name, with or without a NodeInfo.
  absl::flat_hash_map<std::string, framework::MetricsSample> metrics ABSL_GUARDED_BY(mu);

  int64_t NextGeneration() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return ++generation; }

  // Every change to `storage` ends here: the next snapshot takes the new state, and PreBind's
  // waits look again.
  void StorageChanged() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    storage_generation = NextGeneration();
    storage_changed.SignalAll();
  }

  void Unlink(NodeItem* item) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (item->prev != nullptr) item->prev->next = item->next;
    if (item->next != nullptr) item->next->prev = item->prev;
    if (head == item) head = item->next;
    item->prev = item->next = nullptr;
  }

  // Called after every change to item->info, so the list stays ordered by generation.
  void MoveToHead(NodeItem* item) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (head == item) return;
    Unlink(item);
    item->next = head;
    if (head != nullptr) head->prev = item;
    head = item;
  }

  // Every change to a NodeInfo goes through here, so that the cluster sums stay exact without a
  // scan: the node's old contribution is taken out, the change applied, the new one added back
  // (O(resources) per change), and the node moves to the head of the recency list.
  template <typename Change>
  void ChangeNode(NodeItem* item, Change&& change) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (item->info.node() != nullptr) CountTotals(item->info, -1);
    grouping.Count(item->group, item->info, -1);
    change(item->info);
    // A node's group changes only with its Node object: pod changes keep it.
    if (item->info.node() != item->grouped_node) RegroupNode(item);
    grouping.Count(item->group, item->info, +1);
    if (item->info.node() != nullptr) CountTotals(item->info, +1);
    MoveToHead(item);
  }

  void CountTotals(const NodeInfo& info, int sign) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    if (sign > 0) {
      totals.allocatable.Add(info.allocatable());
      totals.requested.Add(info.requested());
    } else {
      totals.allocatable.Subtract(info.allocatable());
      totals.requested.Subtract(info.requested());
    }
    // DRA devices that count as a resource count in the sums as that resource.
    if (device_resources == nullptr) return;
    if (sign > 0) {
      totals.allocatable.Add(info.device_allocatable());
      totals.requested.Add(info.device_requested());
    } else {
      totals.allocatable.Subtract(info.device_allocatable());
      totals.requested.Subtract(info.device_requested());
    }
  }

  // Each node's DRA devices (cache_devices.cc). Devices counted as resources are off (null)
  // unless the queue configuration counts devices (EnableDeviceResources). The nodes of each
  // node-local pool, by (driver, pool), say where an allocated device is.
  std::shared_ptr<const framework::DeviceResources> device_resources ABSL_GUARDED_BY(mu);
  absl::flat_hash_map<std::pair<api::Symbol, api::Symbol>, std::vector<std::string>> pool_nodes
      ABSL_GUARDED_BY(mu);
  // Sets `node_name`'s own devices (NodeInfo::own_devices) and counts the devices its own slices
  // publish, and those allocated, again: O(the node's devices). A node without a Node object is
  // counted when it gets one.
  void RecountDevices(const std::string& node_name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // The devices counted as resources that the node's own slices publish, and those held; adds
  // nothing unless the queue configuration counts devices.
  void CountDeviceAmounts(const std::string& node_name, api::ResourceList& allocatable,
                          api::ResourceList& requested) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // A claim's allocation changed (`before` or `after` may be null): the nodes of the devices of
  // either are counted again.
  void RecountClaimNodes(const api::ResourceClaim* before, const api::ResourceClaim* after)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  // A slice came, changed or went: the pool index follows and its node is counted again.
  void SliceChanged(const api::ResourceSlice* before, const api::ResourceSlice* after)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  void ForgetPoolNode(const std::pair<api::Symbol, api::Symbol>& pool, const std::string& node_name)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  void RegroupNode(NodeItem* item) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    item->group = grouping.GroupOf(item->info.node());
    item->grouped_node = item->info.node();
  }

  NodeItem* GetOrCreateNode(const std::string& name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    auto& slot = nodes[name];
    if (slot == nullptr) {
      slot = std::make_unique<NodeItem>();
      // A sample that arrived before the node: no pods yet, so nothing placed since it.
      if (auto it = metrics.find(name); it != metrics.end()) {
        slot->info.SetMetrics(it->second, api::ResourceList(), generation);
      }
    }
    return slot.get();
  }

  // Drops a NodeInfo that has neither a node object nor pods. The snapshot notices through the
  // node count (see UpdateSnapshot).
  void DropNodeIfEmpty(const std::string& name) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    auto it = nodes.find(name);
    if (it == nodes.end()) return;
    NodeItem* item = it->second.get();
    if (item->info.node() != nullptr || !item->info.pods().empty()) return;
    Unlink(item);
    nodes.erase(it);
  }

  void AddPodLocked(PodInfoPtr pod, bool is_assumed, absl::Time placed_at)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    const std::string node = pod->get().spec.node_name;
    NodeItem* item = GetOrCreateNode(node);
    const int64_t stamp = NextGeneration();
    // A bad annotation has fallen back to the requests already (the plugin reports it).
    ChangeNode(item, [&](NodeInfo& info) {
      info.AddPod(pod, stamp);
      if (PlacedSinceSample(info, placed_at))
        info.AddVirtualSinceSample(pod->VirtualRequestAmounts());
    });
    if (is_assumed) assumed.insert(pod->key);
    if (pod->gang.InGroup()) CountGang(pod->gang.key, 0, 1);
    const absl::string_view key(pod->key);  // the string stays where it is: the entry holds `pod`
    pods.erase(key);  // never there (callers remove a pod before adding it again); kept safe
    pods.emplace(key, PodState{.pod = std::move(pod),
                               .node = api::Intern(node),
                               .assumed = is_assumed,
                               .placed_at = placed_at});
  }

  // When a cached pod was placed; InfinitePast if not cached.
  absl::Time PlacedAt(const std::string& key) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    auto it = pods.find(key);
    return it == pods.end() ? absl::InfinitePast() : it->second.placed_at;
  }

  // Installs `sample` (or none) on the node and recomputes its VirtualRequest sum from its pods.
  void ApplyMetrics(NodeItem* item, const std::optional<framework::MetricsSample>& sample)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    api::ResourceList since;
    if (sample.has_value()) {
      for (const PodInfoPtr& pod : item->info.pods()) {
        const PodState& state = pods.at(pod->key);
        if (state.placed_at >= sample->timestamp) since.Add(pod->VirtualRequestAmounts());
      }
    }
    const int64_t stamp = NextGeneration();
    ChangeNode(item, [&](NodeInfo& info) { info.SetMetrics(sample, since, stamp); });
  }

  absl::Status RemovePodLocked(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    auto it = pods.find(key);
    if (it == pods.end()) return absl::NotFoundError(absl::StrCat("pod ", key, " is not cached"));
    const std::string node(api::SymbolText(it->second.node));
    const absl::Time placed_at = it->second.placed_at;
    const PodInfoPtr pod = std::move(it->second.pod);  // alive until the node has dropped it
    pods.erase(it);
    assumed.erase(key);
    if (pod->gang.InGroup()) CountGang(pod->gang.key, 0, -1);
    auto node_it = nodes.find(node);
    if (node_it == nodes.end()) {
      return absl::InternalError(absl::StrCat("pod ", key, " names unknown node ", node));
    }
    NodeItem* item = node_it->second.get();
    const int64_t stamp = NextGeneration();
    absl::Status status;
    ChangeNode(item, [&](NodeInfo& info) {
      // Checked before the removal: the pod counted iff it was placed since the sample.
      if (PlacedSinceSample(info, placed_at)) {
        info.SubtractVirtualSinceSample(pod->VirtualRequestAmounts());
      }
      status = info.RemovePod(key, stamp);
    });
    DropNodeIfEmpty(node);
    return status;
  }

  // Appends the snapshot's copies it wrote to `copied`.
  void CopyChangedNodes(framework::SnapshotBuilder& builder, int64_t since,
                        SnapshotUpdateStats& stats, std::vector<NodeInfo*>& copied)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  void RemoveDeletedNodes(framework::SnapshotBuilder& builder, SnapshotUpdateStats& stats)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  void CopyNamespaces(const framework::Snapshot& snapshot, framework::SnapshotBuilder& builder)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
};

}  // namespace kubesched::cache
