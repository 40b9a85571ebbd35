// The cache's nodes, pods, namespaces and budgets, and the snapshots taken from them. The volume
// objects are in cache_volumes.cc; the state both share is in cache_internal.h.

#include "scheduler/cache/cache.h"

#include <algorithm>
#include <utility>

#include "scheduler/cache/cache_internal.h"
#include "scheduler/framework/pod_groups.h"

namespace kubesched::cache {

Cache::Cache(const util::Clock* clock) : impl_(std::make_unique<Impl>(clock)) {}

Cache::~Cache() = default;

void Cache::AddNode(std::shared_ptr<const api::Node> node) {
  absl::MutexLock lock(&impl_->mu);
  NodeItem* item = impl_->GetOrCreateNode(node->meta.name);
  if (item->info.node() == nullptr) ++impl_->node_objects;
  // Status updates rarely change the images: count them again only when they did.
  const std::vector<framework::NodeImage> before = item->info.images();
  const int64_t stamp = impl_->NextGeneration();
  impl_->ChangeNode(item, [&](NodeInfo& info) { info.SetNode(std::move(node), stamp); });
  if (!SameImageNames(before, item->info.images())) {
    impl_->CountImages(before, -1);
    impl_->CountImages(item->info.images(), +1);
  }
  impl_->RecountDevices(item->info.name());
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
  impl_->CountImages(item->info.images(), -1);
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

absl::Status Cache::SetTerminating(const std::string& pod_key, const std::string& uid,
                                   std::optional<absl::Time> since) {
  absl::MutexLock lock(&impl_->mu);
  auto it = impl_->pods.find(pod_key);
  if (it == impl_->pods.end() || it->second.assumed || it->second.pod->get().meta.uid != uid) {
    return absl::NotFoundError(absl::StrCat("pod ", pod_key, " (uid ", uid, ") is not bound here"));
  }
  const framework::PodInfoPtr& cached = it->second.pod;
  if (cached->get().meta.deletion_timestamp == since) return absl::OkStatus();
  auto pod = std::make_shared<api::Pod>(cached->get());
  pod->meta.deletion_timestamp = since;
  auto info = std::make_shared<framework::PodInfo>(*cached);
  // Selectors and spreading tell terminating pods apart by their label group.
  info->label_group =
      framework::InternLabelGroup(pod->meta.namespace_symbol, pod->meta.labels, since.has_value());
  info->pod = std::move(pod);
  const absl::Time placed_at = it->second.placed_at;
  absl::Status removed = impl_->RemovePodLocked(pod_key);
  if (!removed.ok()) return removed;
  impl_->AddPodLocked(std::move(info), /*is_assumed=*/false, placed_at);
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

absl::Status Cache::FinishBinding(const std::string& pod_key, std::string_view uid) {
  absl::MutexLock lock(&impl_->mu);
  auto it = impl_->pods.find(pod_key);
  if (it == impl_->pods.end() || it->second.pod->get().meta.uid != uid) {
    return absl::NotFoundError(absl::StrCat("pod ", pod_key, " is not cached"));
  }
  // Already confirmed by the informer (it can beat the bind call's return): nothing to wait for.
  if (!it->second.assumed) return absl::OkStatus();
  it->second.binding_finished = true;
  it->second.binding_finished_at = impl_->clock->Now();
  return absl::OkStatus();
}

absl::Status Cache::ForgetPod(const std::string& pod_key, std::string_view uid) {
  absl::MutexLock lock(&impl_->mu);
  auto it = impl_->pods.find(pod_key);
  if (it == impl_->pods.end() || it->second.pod->get().meta.uid != uid) {
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

Cache::UnconfirmedBinds Cache::BindsAwaitingConfirmation() const {
  absl::MutexLock lock(&impl_->mu);
  UnconfirmedBinds unconfirmed;
  const absl::Time now = impl_->clock->Now();
  for (const std::string& key : impl_->assumed) {
    const PodState& state = impl_->pods.at(key);
    if (!state.binding_finished) continue;
    ++unconfirmed.count;
    unconfirmed.longest_wait = std::max(unconfirmed.longest_wait, now - state.binding_finished_at);
  }
  return unconfirmed;
}

std::shared_ptr<const api::Node> Cache::GetNode(const std::string& name) const {
  absl::MutexLock lock(&impl_->mu);
  auto it = impl_->nodes.find(name);
  return it == impl_->nodes.end() ? nullptr : it->second->info.node_ptr();
}

std::optional<std::string> Cache::NodeOfPod(const std::string& pod_key) const {
  absl::MutexLock lock(&impl_->mu);
  auto it = impl_->pods.find(pod_key);
  if (it == impl_->pods.end()) return std::nullopt;
  return std::string(api::SymbolText(it->second.node));
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
  // The timestamp comes from the node's clock. One ahead of ours would leave every pod placed
  // from now until that instant out of the node's load, and MostAvailable would pile pods onto
  // the node; no sample can be newer than its arrival, so it counts as taken now.
  const absl::Time taken = std::min(metrics.timestamp.value_or(now), now);
  framework::MetricsSample sample{taken, metrics.usage};
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

void Cache::SetPodGroup(std::shared_ptr<const api::PodGroup> group) {
  absl::MutexLock lock(&impl_->mu);
  impl_->gangs.Set(std::move(group));
  impl_->gangs_generation = impl_->NextGeneration();
}

void Cache::SetGangMember(const framework::GangMembership& gang, framework::GangMember member) {
  absl::MutexLock lock(&impl_->mu);
  if (gang.implicit) impl_->implicit_gangs[gang.key] = gang.min_member;
  auto [it, inserted] = impl_->gang_members.try_emplace(member.pod_key, gang.key);
  if (!inserted && it->second == gang.key) return;
  if (!inserted) {  // the pod moved to another group
    impl_->CountGang(it->second, -1, 0);
    impl_->gangs.RemoveMember(it->second, member.pod_key);
    impl_->ForgetGangIfEmpty(it->second);
    it->second = gang.key;
  }
  impl_->CountGang(gang.key, 1, 0);
  impl_->gangs.SetMember(gang.key, std::move(member));
  impl_->gangs_generation = impl_->NextGeneration();
}

std::optional<std::string> Cache::RemoveGangMember(const std::string& pod_key) {
  absl::MutexLock lock(&impl_->mu);
  auto it = impl_->gang_members.find(pod_key);
  if (it == impl_->gang_members.end()) return std::nullopt;
  std::string gang_key = std::move(it->second);
  impl_->gang_members.erase(it);
  impl_->CountGang(gang_key, -1, 0);
  impl_->gangs.RemoveMember(gang_key, pod_key);
  impl_->gangs_generation = impl_->NextGeneration();
  if (!impl_->ForgetGangIfEmpty(gang_key)) return std::nullopt;
  return gang_key;
}

std::shared_ptr<const api::PodGroup> Cache::PodGroupOf(std::string_view gang_key) const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->gangs.Get(gang_key);
}

framework::GangCounts Cache::GangCountsOf(const std::string& gang_key) const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->CurrentGangCounts(gang_key);
}

void Cache::ForEachGang(absl::FunctionRef<void(const GangView&)> fn) const {
  absl::MutexLock lock(&impl_->mu);
  impl_->gangs.ForEach([&](const std::string& key, const api::PodGroup& group) {
    fn(GangView{key, &group, impl_->CurrentGangCounts(key), group.min_member});
  });
  for (const auto& [key, min_member] : impl_->implicit_gangs) {
    if (impl_->gangs.Find(key) != nullptr) continue;  // the object names the group
    fn(GangView{key, nullptr, impl_->CurrentGangCounts(key), min_member});
  }
}

void Cache::RemovePodGroup(const std::string& key) {
  absl::MutexLock lock(&impl_->mu);
  if (impl_->gangs.Find(key) == nullptr) return;
  impl_->gangs.Remove(key);
  impl_->gangs_generation = impl_->NextGeneration();
}

// Walks the recency list from the head and stops at the first node the snapshot already has.
void Cache::Impl::CopyChangedNodes(framework::SnapshotBuilder& builder, int64_t since,
                                   SnapshotUpdateStats& stats, std::vector<NodeInfo*>& copied) {
  for (NodeItem* item = head; item != nullptr && item->info.generation() > since;
       item = item->next) {
    const NodeInfo& fresh = item->info;
    // Placeholders are not scheduling targets; RemoveDeletedNodes drops a stale copy.
    if (fresh.node() == nullptr) continue;
    NodeInfo* copy = builder.Find(fresh.name());
    bool affinity_lists = false;
    if (copy == nullptr) {
      copy = builder.Upsert(fresh.name());
      stats.lists_rebuilt = true;
    } else if (NodePresenceChanges(*copy, fresh)) {
      stats.lists_rebuilt = true;
    } else {
      affinity_lists = AffinityListsChange(*copy, fresh);
    }
    *copy = fresh;
    builder.RefreshRow(copy);
    // A node's first pod with affinity (or its last leaving) moves no other node.
    if (affinity_lists) builder.RefreshAffinityLists(copy);
    ++stats.nodes_copied;
    copied.push_back(copy);
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
  impl_->ApplyGangDeltas();
  framework::SnapshotBuilder builder(snapshot);
  const int64_t since = snapshot->generation();
  SnapshotUpdateStats stats;
  if (refreshed != nullptr) refreshed->clear();
  std::vector<NodeInfo*>& copied = impl_->copied_scratch;
  copied.clear();
  impl_->CopyChangedNodes(builder, since, stats, copied);
  if (refreshed != nullptr) refreshed->assign(copied.begin(), copied.end());
  impl_->RemoveDeletedNodes(builder, stats);
  if (impl_->namespaces_generation > since) impl_->CopyNamespaces(*snapshot, builder);
  if (impl_->pdbs_generation > since) {
    std::vector<std::shared_ptr<const api::PodDisruptionBudget>> pdbs;
    pdbs.reserve(impl_->pdbs.size());
    for (const auto& [key, pdb] : impl_->pdbs) pdbs.push_back(pdb);
    builder.SetPdbs(std::move(pdbs));
  }
  if (impl_->images_generation > since) {
    builder.SetImageNodeCounts(std::make_shared<const absl::flat_hash_map<api::Symbol, int32_t>>(
        impl_->image_node_counts));
  }
  if (impl_->storage_generation > since) {
    builder.SetStorage(std::make_shared<const framework::StorageState>(impl_->storage));
  }
  if (impl_->dra_generation > since) {
    builder.SetDra(std::make_shared<const framework::DraState>(impl_->dra));
  }
  if (impl_->gangs_generation > since) {
    builder.SetGangs(std::make_shared<const framework::GangState>(impl_->gangs));
  }
  if (stats.lists_rebuilt) builder.RebuildLists();
  builder.RecordChanges(impl_->generation, copied);
  builder.SetClusterTotals(impl_->totals.allocatable, impl_->totals.requested);
  builder.SetNodeGroups(impl_->grouping.Published());
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

void Cache::EnableNodeGroups(const std::vector<std::string>& label_keys) {
  std::vector<api::Symbol> keys;
  keys.reserve(label_keys.size());
  for (const std::string& key : label_keys) keys.push_back(api::Intern(key));
  absl::MutexLock lock(&impl_->mu);
  impl_->grouping.Enable(std::move(keys));
  for (auto& [name, item] : impl_->nodes) {
    impl_->RegroupNode(item.get());
    impl_->grouping.Count(item->group, item->info, +1);
  }
}

std::shared_ptr<const framework::NodeGroups> Cache::NodeGroups() const {
  absl::MutexLock lock(&impl_->mu);
  return impl_->grouping.Published();
}

void Cache::ReservePods(size_t pods) {
  absl::MutexLock lock(&impl_->mu);
  impl_->pods.reserve(pods);
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

}  // namespace kubesched::cache
