#include "scheduler/framework/snapshot.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "scheduler/util/strings.h"

namespace kubesched::framework {

const NodeInfo* Snapshot::Get(std::string_view node_name) const {
  auto it = index_by_name_.find(util::Absl(node_name));
  if (it == index_by_name_.end()) return nullptr;
  const NodeInfo* info = storage_[it->second].get();
  return info->node() != nullptr ? info : nullptr;
}

const api::LabelSet* Snapshot::NamespaceLabels(api::Symbol namespace_symbol) const {
  auto it = namespace_labels_.find(namespace_symbol);
  return it == namespace_labels_.end() ? nullptr : &it->second;
}

NodeInfo* SnapshotBuilder::Upsert(std::string_view name) {
  auto [it, inserted] =
      snapshot_->index_by_name_.try_emplace(util::Absl(name), snapshot_->storage_.size());
  if (inserted) snapshot_->storage_.push_back(std::make_unique<NodeInfo>());
  return snapshot_->storage_[it->second].get();
}

NodeInfo* SnapshotBuilder::Find(std::string_view name) const {
  auto it = snapshot_->index_by_name_.find(util::Absl(name));
  return it == snapshot_->index_by_name_.end() ? nullptr : snapshot_->storage_[it->second].get();
}

void SnapshotBuilder::Remove(std::string_view name) {
  const NodeInfo* target = Find(name);
  if (target == nullptr) return;
  RemoveIf([target](const NodeInfo& info) { return &info == target; });
}

// The index is rewritten from a position map rather than from NodeInfo::name(), because a
// NodeInfo created by Upsert has no name until it is filled.
void SnapshotBuilder::RemoveIf(const std::function<bool(const NodeInfo&)>& pred) {
  constexpr size_t kGone = SIZE_MAX;
  auto& storage = snapshot_->storage_;
  std::vector<size_t> new_position(storage.size(), kGone);
  size_t kept = 0;
  for (size_t i = 0; i < storage.size(); ++i) {
    if (pred(*storage[i])) continue;
    new_position[i] = kept;
    if (kept != i) storage[kept] = std::move(storage[i]);
    ++kept;
  }
  if (kept == storage.size()) return;
  snapshot_->changes_.Invalidate();
  storage.resize(kept);
  auto& index = snapshot_->index_by_name_;
  for (auto it = index.begin(); it != index.end();) {
    const size_t position = new_position[it->second];
    if (position == kGone) {
      index.erase(it++);
    } else {
      it->second = position;
      ++it;
    }
  }
}

void SnapshotBuilder::SetNamespaceLabels(api::Symbol namespace_symbol, api::LabelSet labels) {
  snapshot_->namespace_labels_[namespace_symbol] = std::move(labels);
  snapshot_->changes_.Invalidate();
}

void SnapshotBuilder::RemoveNamespace(api::Symbol namespace_symbol) {
  snapshot_->namespace_labels_.erase(namespace_symbol);
  snapshot_->changes_.Invalidate();
}

void SnapshotBuilder::SetClusterTotals(const api::ResourceList& allocatable,
                                       const api::ResourceList& requested) {
  snapshot_->cluster_allocatable_ = allocatable;
  snapshot_->cluster_requested_ = requested;
}

void SnapshotBuilder::RecomputeClusterTotals() {
  api::ResourceList allocatable;
  api::ResourceList requested;
  for (const auto& info : snapshot_->storage_) {
    if (info->node() == nullptr) continue;
    allocatable.Add(info->allocatable());
    requested.Add(info->requested());
  }
  SetClusterTotals(allocatable, requested);
}

void SnapshotBuilder::RefreshRow(NodeInfo* info) {
  const uint32_t position = info->snapshot_position();
  if (position >= snapshot_->rows_.size() || snapshot_->nodes_[position] != info) return;
  NodeRow& row = snapshot_->rows_[position];
  row = info->own_row();
  info->set_table_row(&row);
}

void SnapshotBuilder::RefreshAffinityLists(const NodeInfo* info) {
  const uint32_t position = info->snapshot_position();
  if (position >= snapshot_->nodes_.size() || snapshot_->nodes_[position] != info) return;
  const auto place = [&](std::vector<const NodeInfo*>& list, bool member) {
    const auto it = std::lower_bound(
        list.begin(), list.end(), position,
        [](const NodeInfo* node, uint32_t p) { return node->snapshot_position() < p; });
    const bool present = it != list.end() && *it == info;
    if (member && !present) list.insert(it, info);
    if (!member && present) list.erase(it);
  };
  place(snapshot_->nodes_with_affinity_pods_, !info->pods_with_affinity().empty());
  place(snapshot_->nodes_with_required_anti_affinity_pods_,
        !info->pods_with_required_anti_affinity().empty());
}

void SnapshotBuilder::RebuildLists() {
  snapshot_->nodes_.clear();
  snapshot_->nodes_with_affinity_pods_.clear();
  snapshot_->nodes_with_required_anti_affinity_pods_.clear();
  bool moved = false;
  for (const auto& info : snapshot_->storage_) {
    const uint32_t before = info->snapshot_position();
    info->set_snapshot_position(SnapshotPosition::kNone);
    info->set_table_row(nullptr);
    if (info->node() != nullptr) {
      info->set_snapshot_position(static_cast<uint32_t>(snapshot_->nodes_.size()));
    }
    moved |= info->snapshot_position() != before;
    if (info->node() == nullptr) continue;
    snapshot_->nodes_.push_back(info.get());
    if (!info->pods_with_affinity().empty()) {
      snapshot_->nodes_with_affinity_pods_.push_back(info.get());
    }
    if (!info->pods_with_required_anti_affinity().empty()) {
      snapshot_->nodes_with_required_anti_affinity_pods_.push_back(info.get());
    }
  }
  // Rows are written once the table has its final size, so that no pointer outlives a move.
  auto& rows = snapshot_->rows_;
  rows.resize(snapshot_->nodes_.size());
  for (const auto& info : snapshot_->storage_) {
    const uint32_t position = info->snapshot_position();
    if (position == SnapshotPosition::kNone) continue;
    rows[position] = info->own_row();
    info->set_table_row(&rows[position]);
  }
  if (moved) snapshot_->changes_.Invalidate();
}

void SnapshotBuilder::RecordChanges(int64_t generation, const std::vector<NodeInfo*>& changed) {
  std::vector<uint32_t> positions;
  positions.reserve(changed.size());
  for (const NodeInfo* info : changed) {
    const uint32_t position = info->snapshot_position();
    if (position != SnapshotPosition::kNone) positions.push_back(position);
  }
  // Beyond twice the node count, recounting every node is cheaper than following the record.
  snapshot_->changes_.Record(generation, positions, 2 * snapshot_->nodes_.size() + 1024);
}

}  // namespace kubesched::framework
