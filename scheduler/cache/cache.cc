#include "scheduler/cache/cache.h"

#include <utility>

#include "absl/container/btree_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "scheduler/api/storage.h"

namespace kubesched::cache {
namespace {

using framework::NodeInfo;
using framework::PodInfoPtr;

// A NodeInfo plus its place in the recency list: nodes are kept most-recently-changed first, so
// that UpdateSnapshot walks only the nodes changed since the snapshot's generation (upstream's
// headNode list).
struct NodeItem {
  NodeInfo info;
  NodeItem* prev = nullptr;  // more recently changed
  NodeItem* next = nullptr;  // less recently changed
};

struct PodState {
  PodInfoPtr pod;
  std::string node;
  bool assumed = false;
  bool binding_finished = false;
  absl::Time deadline = absl::InfiniteFuture();  // meaningful once binding_finished
  // When the pod was placed on its node (see "Load" in cache.h).
  absl::Time placed_at = absl::InfinitePast();
};

// Whether a pod placed at `placed_at` is too recent for the node's metrics sample to show it.
bool PlacedSinceSample(const NodeInfo& info, absl::Time placed_at) {
  return info.metrics().has_value() && placed_at >= info.metrics()->timestamp;
}

// Whether copying `fresh` over `stale` changes which snapshot lists the node belongs to.
bool ListMembershipChanges(const NodeInfo& stale, const NodeInfo& fresh) {
  return (stale.node() == nullptr) != (fresh.node() == nullptr) ||
         stale.pods_with_affinity().empty() != fresh.pods_with_affinity().empty() ||
         stale.pods_with_required_anti_affinity().empty() !=
             fresh.pods_with_required_anti_affinity().empty();
}

}  // namespace

struct Cache::Impl {
  Impl(const util::Clock* c, absl::Duration ttl) : clock(c), assumed_ttl(ttl) {}

  const util::Clock* const clock;
  const absl::Duration assumed_ttl;

  // Guards everything below. Held only for map updates and the snapshot copy, never for I/O.
  mutable absl::Mutex mu;
  // Bumped on every change; each changed NodeInfo takes the new value.
  int64_t generation ABSL_GUARDED_BY(mu) = 0;
  absl::flat_hash_map<std::string, std::unique_ptr<NodeItem>> nodes ABSL_GUARDED_BY(mu);
  NodeItem* head ABSL_GUARDED_BY(mu) = nullptr;  // most recently changed
  // Nodes with a node object; placeholders (only pods known) are not counted.
  size_t node_objects ABSL_GUARDED_BY(mu) = 0;
  absl::flat_hash_map<std::string, PodState> pods ABSL_GUARDED_BY(mu);
  absl::flat_hash_set<std::string> assumed ABSL_GUARDED_BY(mu);
  absl::flat_hash_map<api::Symbol, api::LabelSet> namespaces ABSL_GUARDED_BY(mu);
  int64_t namespaces_generation ABSL_GUARDED_BY(mu) = 0;
  absl::btree_map<std::string, std::shared_ptr<const api::PodDisruptionBudget>> pdbs
      ABSL_GUARDED_BY(mu);
  int64_t pdbs_generation ABSL_GUARDED_BY(mu) = 0;
  // The writer side of the snapshots' StorageState; published when storage_generation moved.
  framework::StorageState storage ABSL_GUARDED_BY(mu);
  int64_t storage_generation ABSL_GUARDED_BY(mu) = 0;
  SnapshotUpdateStats last_update ABSL_GUARDED_BY(mu);
  // Sums over the nodes with a node object (placeholders add nothing), kept exact by ChangeNode.
  ClusterTotals totals ABSL_GUARDED_BY(mu);
  // The latest metrics sample per node name, with or without a NodeInfo.
  absl::flat_hash_map<std::string, framework::MetricsSample> metrics ABSL_GUARDED_BY(mu);

  int64_t NextGeneration() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) { return ++generation; }

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
    if (item->info.node() != nullptr) {
      totals.allocatable.Subtract(item->info.allocatable());
      totals.requested.Subtract(item->info.requested());
    }
    change(item->info);
    if (item->info.node() != nullptr) {
      totals.allocatable.Add(item->info.allocatable());
      totals.requested.Add(item->info.requested());
    }
    MoveToHead(item);
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
      if (PlacedSinceSample(info, placed_at)) info.AddVirtualSinceSample(pod->virtual_request);
    });
    if (is_assumed) assumed.insert(pod->key);
    std::string key = pod->key;  // read before the move below
    pods[std::move(key)] = PodState{
        .pod = std::move(pod), .node = node, .assumed = is_assumed, .placed_at = placed_at};
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
        if (state.placed_at >= sample->timestamp) since.Add(pod->virtual_request);
      }
    }
    const int64_t stamp = NextGeneration();
    ChangeNode(item, [&](NodeInfo& info) { info.SetMetrics(sample, since, stamp); });
  }

  absl::Status RemovePodLocked(const std::string& key) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu) {
    auto it = pods.find(key);
    if (it == pods.end()) return absl::NotFoundError(absl::StrCat("pod ", key, " is not cached"));
    const std::string node = std::move(it->second.node);
    const absl::Time placed_at = it->second.placed_at;
    const PodInfoPtr pod = std::move(it->second.pod);  // alive until the node has dropped it
    pods.erase(it);
    assumed.erase(key);
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
        info.SubtractVirtualSinceSample(pod->virtual_request);
      }
      status = info.RemovePod(key, stamp);
    });
    DropNodeIfEmpty(node);
    return status;
  }

  void CopyChangedNodes(framework::SnapshotBuilder& builder, int64_t since,
                        SnapshotUpdateStats& stats, std::vector<const NodeInfo*>* refreshed)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  void RemoveDeletedNodes(framework::SnapshotBuilder& builder, SnapshotUpdateStats& stats)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
  void CopyNamespaces(const framework::Snapshot& snapshot, framework::SnapshotBuilder& builder)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);
};

Cache::Cache(const util::Clock* clock, absl::Duration assumed_ttl)
    : impl_(std::make_unique<Impl>(clock, assumed_ttl)) {}

Cache::~Cache() = default;

void Cache::AddNode(std::shared_ptr<const api::Node> node) {
  absl::MutexLock lock(&impl_->mu);
  NodeItem* item = impl_->GetOrCreateNode(node->meta.name);
  if (item->info.node() == nullptr) ++impl_->node_objects;
  const int64_t stamp = impl_->NextGeneration();
  impl_->ChangeNode(item, [&](NodeInfo& info) { info.SetNode(std::move(node), stamp); });
}

void Cache::UpdateNode(std::shared_ptr<const api::Node> node) { AddNode(std::move(node)); }

void Cache::RemoveNode(const std::string& name) {
  absl::MutexLock lock(&impl_->mu);
  auto it = impl_->nodes.find(name);
  if (it == impl_->nodes.end() || it->second->info.node() == nullptr) return;
  NodeItem* item = it->second.get();
  --impl_->node_objects;
  impl_->metrics.erase(name);  // a node that comes back waits for its next sample
  // Pods still bound to the node keep a placeholder until the informer removes them (upstream).
  const int64_t stamp = impl_->NextGeneration();
  impl_->ChangeNode(item, [&](NodeInfo& info) { info.ClearNode(stamp); });
  impl_->DropNodeIfEmpty(name);
}

absl::Status Cache::AddPod(framework::PodInfoPtr pod) {
  if (pod->get().spec.node_name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("pod ", pod->key, " is not bound to a node"));
  }
  absl::MutexLock lock(&impl_->mu);
  auto it = impl_->pods.find(pod->key);
  // A pod we did not assume was placed before we knew of it (see "Load" in cache.h).
  absl::Time placed_at = absl::InfinitePast();
  if (it != impl_->pods.end()) {
    if (!it->second.assumed) {
      return absl::AlreadyExistsError(absl::StrCat("pod ", pod->key, " was already added"));
    }
    // Confirmation of an assumed pod: take the informer's copy (and node) over the assumed one,
    // keeping the time we placed it.
    placed_at = it->second.placed_at;
    absl::Status removed = impl_->RemovePodLocked(pod->key);
    if (!removed.ok()) return removed;
  }
  impl_->AddPodLocked(std::move(pod), /*is_assumed=*/false, placed_at);
  return absl::OkStatus();
}

absl::Status Cache::UpdatePod(framework::PodInfoPtr pod) {
  if (pod->get().spec.node_name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("pod ", pod->key, " is not bound to a node"));
  }
  absl::MutexLock lock(&impl_->mu);
  // An update of a pod we have not seen (missed add) or only assumed is still a bound pod seen
  // by the informer, so it is added or confirmed rather than rejected.
  const absl::Time placed_at = impl_->PlacedAt(pod->key);
  if (impl_->pods.contains(pod->key)) {
    absl::Status removed = impl_->RemovePodLocked(pod->key);
    if (!removed.ok()) return removed;
  }
  impl_->AddPodLocked(std::move(pod), /*is_assumed=*/false, placed_at);
  return absl::OkStatus();
}

absl::Status Cache::RemovePod(const std::string& pod_key) {
  absl::MutexLock lock(&impl_->mu);
  return impl_->RemovePodLocked(pod_key);
}

absl::Status Cache::AssumePod(framework::PodInfoPtr pod) {
  if (pod->get().spec.node_name.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("assumed pod ", pod->key, " has no spec.nodeName"));
  }
  absl::MutexLock lock(&impl_->mu);
  if (impl_->pods.contains(pod->key)) {
    return absl::AlreadyExistsError(absl::StrCat("pod ", pod->key, " is already in the cache"));
  }
  impl_->AddPodLocked(std::move(pod), /*is_assumed=*/true, impl_->clock->Now());
  return absl::OkStatus();
}

absl::Status Cache::FinishBinding(const std::string& pod_key) {
  absl::MutexLock lock(&impl_->mu);
  auto it = impl_->pods.find(pod_key);
  if (it == impl_->pods.end()) {
    return absl::NotFoundError(absl::StrCat("pod ", pod_key, " is not cached"));
  }
  // Already confirmed by the informer (it can beat the bind call's return): nothing to expire.
  if (!it->second.assumed) return absl::OkStatus();
  it->second.binding_finished = true;
  it->second.deadline = impl_->clock->Now() + impl_->assumed_ttl;
  return absl::OkStatus();
}

absl::Status Cache::ForgetPod(const std::string& pod_key) {
  absl::MutexLock lock(&impl_->mu);
  auto it = impl_->pods.find(pod_key);
  if (it == impl_->pods.end()) {
    return absl::NotFoundError(absl::StrCat("pod ", pod_key, " is not cached"));
  }
  if (!it->second.assumed) {
    return absl::FailedPreconditionError(
        absl::StrCat("pod ", pod_key, " is bound, not assumed; it cannot be forgotten"));
  }
  return impl_->RemovePodLocked(pod_key);
}

bool Cache::IsAssumed(const std::string& pod_key) const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->assumed.contains(pod_key);
}

std::vector<std::string> Cache::CleanupExpiredAssumedPods() {
  absl::MutexLock lock(&impl_->mu);
  const absl::Time now = impl_->clock->Now();
  std::vector<std::string> expired;
  for (const std::string& key : impl_->assumed) {
    const PodState& state = impl_->pods.at(key);
    if (state.binding_finished && now > state.deadline) expired.push_back(key);
  }
  for (const std::string& key : expired) impl_->RemovePodLocked(key).IgnoreError();
  return expired;
}

std::optional<std::string> Cache::NodeOfPod(const std::string& pod_key) const {
  absl::MutexLock lock(&impl_->mu);
  auto it = impl_->pods.find(pod_key);
  if (it == impl_->pods.end()) return std::nullopt;
  return it->second.node;
}

framework::PodInfoPtr Cache::GetPod(const std::string& pod_key) const {
  absl::MutexLock lock(&impl_->mu);
  auto it = impl_->pods.find(pod_key);
  return it == impl_->pods.end() ? nullptr : it->second.pod;
}

std::vector<framework::PodInfoPtr> Cache::Pods() const {
  absl::MutexLock lock(&impl_->mu);
  std::vector<framework::PodInfoPtr> pods;
  pods.reserve(impl_->pods.size());
  for (const auto& [key, state] : impl_->pods) pods.push_back(state.pod);
  return pods;
}

void Cache::SetNodeMetrics(const api::NodeMetrics& metrics) {
  const absl::Time now = impl_->clock->Now();
  framework::MetricsSample sample{metrics.timestamp.value_or(now), metrics.usage};
  absl::MutexLock lock(&impl_->mu);
  auto [stored, inserted] = impl_->metrics.try_emplace(metrics.meta.name, sample);
  if (!inserted) {
    if (sample.timestamp < stored->second.timestamp) return;
    stored->second = sample;
  }
  auto it = impl_->nodes.find(metrics.meta.name);
  if (it != impl_->nodes.end()) impl_->ApplyMetrics(it->second.get(), sample);
}

void Cache::RemoveNodeMetrics(const std::string& node_name) {
  absl::MutexLock lock(&impl_->mu);
  if (impl_->metrics.erase(node_name) == 0) return;
  auto it = impl_->nodes.find(node_name);
  if (it != impl_->nodes.end()) impl_->ApplyMetrics(it->second.get(), std::nullopt);
}

void Cache::SetNamespace(api::Symbol namespace_symbol, api::LabelSet labels) {
  absl::MutexLock lock(&impl_->mu);
  impl_->namespaces[namespace_symbol] = std::move(labels);
  impl_->namespaces_generation = impl_->NextGeneration();
}

void Cache::RemoveNamespace(api::Symbol namespace_symbol) {
  absl::MutexLock lock(&impl_->mu);
  if (impl_->namespaces.erase(namespace_symbol) == 0) return;
  impl_->namespaces_generation = impl_->NextGeneration();
}

void Cache::SetPdb(std::shared_ptr<const api::PodDisruptionBudget> pdb) {
  absl::MutexLock lock(&impl_->mu);
  impl_->pdbs[absl::StrCat(pdb->meta.namespace_name, "/", pdb->meta.name)] = std::move(pdb);
  impl_->pdbs_generation = impl_->NextGeneration();
}

void Cache::RemovePdb(const std::string& key) {
  absl::MutexLock lock(&impl_->mu);
  if (impl_->pdbs.erase(key) == 0) return;
  impl_->pdbs_generation = impl_->NextGeneration();
}

// Walks the recency list from the head and stops at the first node the snapshot already has.
void Cache::Impl::CopyChangedNodes(framework::SnapshotBuilder& builder, int64_t since,
                                   SnapshotUpdateStats& stats,
                                   std::vector<const NodeInfo*>* refreshed) {
  for (NodeItem* item = head; item != nullptr && item->info.generation() > since;
       item = item->next) {
    const NodeInfo& fresh = item->info;
    // Placeholders are not scheduling targets; RemoveDeletedNodes drops a stale copy.
    if (fresh.node() == nullptr) continue;
    NodeInfo* copy = builder.Find(fresh.name());
    if (copy == nullptr) {
      copy = builder.Upsert(fresh.name());
      stats.lists_rebuilt = true;
    } else if (ListMembershipChanges(*copy, fresh)) {
      stats.lists_rebuilt = true;
    }
    *copy = fresh;
    ++stats.nodes_copied;
    if (refreshed != nullptr) refreshed->push_back(copy);
  }
}

// After CopyChangedNodes the snapshot holds every node of the cache; holding more means some
// were deleted (or lost their node object). Only then is the snapshot scanned (upstream does
// the same).
void Cache::Impl::RemoveDeletedNodes(framework::SnapshotBuilder& builder,
                                     SnapshotUpdateStats& stats) {
  if (builder.size() <= node_objects) return;
  const size_t before = builder.size();
  builder.RemoveIf([this](const NodeInfo& copy) ABSL_NO_THREAD_SAFETY_ANALYSIS {
    auto it = nodes.find(copy.name());
    return it == nodes.end() || it->second->info.node() == nullptr;
  });
  stats.nodes_removed = before - builder.size();
  stats.lists_rebuilt = true;
}

void Cache::Impl::CopyNamespaces(const framework::Snapshot& snapshot,
                                 framework::SnapshotBuilder& builder) {
  std::vector<api::Symbol> gone;
  for (const auto& [symbol, labels] : snapshot.namespace_labels()) {
    if (!namespaces.contains(symbol)) gone.push_back(symbol);
  }
  for (api::Symbol symbol : gone) builder.RemoveNamespace(symbol);
  for (const auto& [symbol, labels] : namespaces) builder.SetNamespaceLabels(symbol, labels);
}

Cache::SnapshotUpdateStats Cache::UpdateSnapshot(framework::Snapshot* snapshot,
                                                 std::vector<const NodeInfo*>* refreshed) {
  absl::MutexLock lock(&impl_->mu);
  framework::SnapshotBuilder builder(snapshot);
  const int64_t since = snapshot->generation();
  SnapshotUpdateStats stats;
  if (refreshed != nullptr) refreshed->clear();
  impl_->CopyChangedNodes(builder, since, stats, refreshed);
  impl_->RemoveDeletedNodes(builder, stats);
  if (impl_->namespaces_generation > since) impl_->CopyNamespaces(*snapshot, builder);
  if (impl_->pdbs_generation > since) {
    std::vector<std::shared_ptr<const api::PodDisruptionBudget>> pdbs;
    pdbs.reserve(impl_->pdbs.size());
    for (const auto& [key, pdb] : impl_->pdbs) pdbs.push_back(pdb);
    builder.SetPdbs(std::move(pdbs));
  }
  if (impl_->storage_generation > since) {
    builder.SetStorage(std::make_shared<const framework::StorageState>(impl_->storage));
  }
  if (stats.lists_rebuilt) builder.RebuildLists();
  builder.SetClusterTotals(impl_->totals.allocatable, impl_->totals.requested);
  builder.set_generation(impl_->generation);
  builder.set_time(impl_->clock->Now());
  impl_->last_update = stats;
  return stats;
}

Cache::SnapshotUpdateStats Cache::LastSnapshotUpdate() const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->last_update;
}

Cache::ClusterTotals Cache::Totals() const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->totals;
}

size_t Cache::NodeCount() const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->node_objects;
}

size_t Cache::PodCount() const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->pods.size();
}

size_t Cache::AssumedCount() const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->assumed.size();
}

// ---------------------------------------------------------------------------------------------
// Volume objects
namespace {

using framework::StorageState;

auto& MapOf(StorageState& state, const api::PersistentVolumeClaim*) { return state.claims; }
auto& MapOf(StorageState& state, const api::PersistentVolume*) { return state.volumes; }
auto& MapOf(StorageState& state, const api::StorageClass*) { return state.classes; }
auto& MapOf(StorageState& state, const api::CsiNode*) { return state.csi_nodes; }

std::string KeyOf(const api::PersistentVolumeClaim& claim) {
  return StorageState::ClaimKey(claim.meta.namespace_name, claim.meta.name);
}
template <typename T>
std::string KeyOf(const T& object) {
  return object.meta.name;
}

// Attachments go through StorageState's own writers, which index them by node as well.
template <typename T>
void Store(StorageState& state, const std::string& key, std::shared_ptr<const T> object) {
  MapOf(state, static_cast<const T*>(nullptr)).Set(key, std::move(object));
}
void Store(StorageState& state, const std::string& key,
           std::shared_ptr<const api::VolumeAttachment> object) {
  state.SetAttachment(key, std::move(object));
}
template <typename T>
void Erase(StorageState& state, const T& object) {
  MapOf(state, static_cast<const T*>(nullptr)).Remove(KeyOf(object));
}
void Erase(StorageState& state, const api::VolumeAttachment& object) {
  state.RemoveAttachment(object.meta.name);
}

}  // namespace

template <typename T>
void Cache::SetStorageObject(std::shared_ptr<const T> object) {
  absl::MutexLock lock(&impl_->mu);
  const std::string key = KeyOf(*object);
  Store(impl_->storage, key, std::move(object));
  impl_->storage_generation = impl_->NextGeneration();
}

template <typename T>
void Cache::RemoveStorageObject(const T& object) {
  absl::MutexLock lock(&impl_->mu);
  Erase(impl_->storage, object);
  impl_->storage_generation = impl_->NextGeneration();
}

#define KUBESCHED_STORAGE_KIND(T)                                     \
  template void Cache::SetStorageObject<T>(std::shared_ptr<const T>); \
  template void Cache::RemoveStorageObject<T>(const T&);
KUBESCHED_STORAGE_KIND(api::PersistentVolumeClaim)
KUBESCHED_STORAGE_KIND(api::PersistentVolume)
KUBESCHED_STORAGE_KIND(api::StorageClass)
KUBESCHED_STORAGE_KIND(api::CsiNode)
KUBESCHED_STORAGE_KIND(api::VolumeAttachment)
#undef KUBESCHED_STORAGE_KIND

}  // namespace kubesched::cache
