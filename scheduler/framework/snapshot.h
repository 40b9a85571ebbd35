#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "scheduler/api/labels.h"
#include "scheduler/framework/dra_state.h"
#include "scheduler/framework/gang_state.h"
#include "scheduler/framework/node_changes.h"
#include "scheduler/framework/node_groups.h"
#include "scheduler/framework/node_info.h"
#include "scheduler/framework/storage_state.h"

namespace kubesched::framework {

// An immutable view of the cluster for one scheduling cycle. Plugins read only this.
// Built and refreshed by the cache (cache::Cache::UpdateSnapshot); between refreshes it is read by
// the scheduling thread and the filter/score workers, never written.
class Snapshot {
 public:
  // Every node that has a Node object, in a stable order (the order nodes were added).
  const std::vector<const NodeInfo*>& nodes() const { return nodes_; }
  // Nodes that host at least one pod with (anti-)affinity terms / required anti-affinity.
  const std::vector<const NodeInfo*>& nodes_with_affinity_pods() const {
    return nodes_with_affinity_pods_;
  }
  const std::vector<const NodeInfo*>& nodes_with_required_anti_affinity_pods() const {
    return nodes_with_required_anti_affinity_pods_;
  }
  // The hot data of nodes()[i] at rows()[i] (see NodeRow); plugins read it through
  // NodeInfo::row().
  const std::vector<NodeRow>& rows() const { return rows_; }
  // null if there is no such node (or only pods naming it are known: no node object).
  const NodeInfo* Get(std::string_view node_name) const;
  // Labels of a namespace; null if the namespace is unknown.
  const api::LabelSet* NamespaceLabels(api::Symbol namespace_symbol) const;
  const absl::flat_hash_map<api::Symbol, api::LabelSet>& namespace_labels() const {
    return namespace_labels_;
  }
  int64_t generation() const { return generation_; }
  // A number naming this snapshot's node positions and namespaces: no other Snapshot of the
  // process carries it, nor this one once nodes moved or namespaces changed. With generation(),
  // it names the state that a result kept from one cycle to the next was computed on.
  uint64_t id() const { return changes_.epoch(); }
  // The positions of the nodes changed in place after generation `since`, for plugins that bring
  // such a result up to date node by node; false when the snapshot cannot tell (see
  // NodeChangeLog::ChangedSince): then the result must be computed afresh.
  bool NodesChangedSince(int64_t since, std::vector<uint32_t>* positions) const {
    return changes_.ChangedSince(since, positions);
  }
  // How many nodes hold each image name (ImageLocality's spread); empty when no node reports
  // images.
  const absl::flat_hash_map<api::Symbol, int32_t>& image_node_counts() const {
    return *image_node_counts_;
  }
  // The volume objects (claims, volumes, classes, CSINodes, attachments), for the volume plugins.
  const StorageState& storage() const { return *storage_state_; }
  // The Dynamic Resource Allocation objects (classes, slices, claims, templates).
  const DraState& dra() const { return *dra_state_; }
  // The PodGroup objects by "namespace/name", for the gang plugin.
  const GangState& gangs() const { return *gang_state_; }
  // Every PodDisruptionBudget, for preemption (which prefers victims that violate none).
  const std::vector<std::shared_ptr<const api::PodDisruptionBudget>>& pdbs() const { return pdbs_; }

  // Cluster-wide sums over the nodes that have a Node object: allocatable, and the real requests
  // of the pods (bound and assumed) on them. The cache keeps them incrementally and copies them in
  // on every update (O(resources)), so cluster-wide ratios cost nothing per pod or per node.
  const api::ResourceList& cluster_allocatable() const { return cluster_allocatable_; }
  const api::ResourceList& cluster_requested() const { return cluster_requested_; }
  // The same sums per group of alike nodes (see NodeGroup), kept by the cache as incrementally;
  // empty unless a profile uses the Watermark strategy.
  const NodeGroups& node_groups() const { return *node_groups_; }

  // The cache's clock when the snapshot was last refreshed: the "now" against which a cycle
  // judges time-dependent state (the age of a node's metrics sample), so that every node of one
  // cycle is judged at the same instant and plugins never read a clock.
  absl::Time time() const { return time_; }

 private:
  friend class SnapshotBuilder;  // the cache's writer side

  // Storage: NodeInfos are owned here and updated in place; the pointer vectors index them.
  std::vector<std::unique_ptr<NodeInfo>> storage_;
  absl::flat_hash_map<std::string, size_t> index_by_name_;
  std::vector<const NodeInfo*> nodes_;
  std::vector<NodeRow> rows_;
  std::vector<const NodeInfo*> nodes_with_affinity_pods_;
  std::vector<const NodeInfo*> nodes_with_required_anti_affinity_pods_;
  absl::flat_hash_map<api::Symbol, api::LabelSet> namespace_labels_;
  std::vector<std::shared_ptr<const api::PodDisruptionBudget>> pdbs_;
  std::shared_ptr<const StorageState> storage_state_ = std::make_shared<const StorageState>();
  std::shared_ptr<const GangState> gang_state_ = std::make_shared<const GangState>();
  std::shared_ptr<const DraState> dra_state_ = std::make_shared<const DraState>();
  std::shared_ptr<const absl::flat_hash_map<api::Symbol, int32_t>> image_node_counts_ =
      std::make_shared<const absl::flat_hash_map<api::Symbol, int32_t>>();
  api::ResourceList cluster_allocatable_;
  api::ResourceList cluster_requested_;
  std::shared_ptr<const NodeGroups> node_groups_ = std::make_shared<const NodeGroups>();
  absl::Time time_ = absl::UnixEpoch();
  int64_t generation_ = 0;
  NodeChangeLog changes_;
};

// The only writer of a Snapshot's internals. Exposed so that the cache and test builders can fill
// a snapshot without the read side growing setters.
class SnapshotBuilder {
 public:
  explicit SnapshotBuilder(Snapshot* snapshot) : snapshot_(snapshot) {}

  // Returns the snapshot's NodeInfo for `name`, creating an empty one at the end of the order.
  NodeInfo* Upsert(std::string_view name);
  // The stored NodeInfo for `name` (with or without a node object); null if absent. Never creates.
  NodeInfo* Find(std::string_view name) const;
  // Removes `name` if present; keeps the order of the others. O(nodes).
  void Remove(std::string_view name);
  // Removes every stored NodeInfo for which `pred` is true, in one O(nodes) pass.
  void RemoveIf(const std::function<bool(const NodeInfo&)>& pred);
  // Number of stored NodeInfos, including any without a node object.
  size_t size() const { return snapshot_->storage_.size(); }
  void SetNamespaceLabels(api::Symbol namespace_symbol, api::LabelSet labels);
  void RemoveNamespace(api::Symbol namespace_symbol);
  void SetPdbs(std::vector<std::shared_ptr<const api::PodDisruptionBudget>> pdbs) {
    snapshot_->pdbs_ = std::move(pdbs);
  }
  void SetImageNodeCounts(std::shared_ptr<const absl::flat_hash_map<api::Symbol, int32_t>> counts) {
    snapshot_->image_node_counts_ = std::move(counts);
  }
  void SetStorage(std::shared_ptr<const StorageState> storage) {
    snapshot_->storage_state_ = std::move(storage);
  }
  void SetDra(std::shared_ptr<const DraState> dra) { snapshot_->dra_state_ = std::move(dra); }
  void SetGangs(std::shared_ptr<const GangState> gangs) {
    snapshot_->gang_state_ = std::move(gangs);
  }
  void set_generation(int64_t generation) { snapshot_->generation_ = generation; }
  void set_time(absl::Time time) { snapshot_->time_ = time; }
  // The cache's incrementally kept cluster sums (see Snapshot::cluster_allocatable).
  void SetClusterTotals(const api::ResourceList& allocatable, const api::ResourceList& requested);
  void SetNodeGroups(std::shared_ptr<const NodeGroups> groups) {
    snapshot_->node_groups_ = std::move(groups);
  }
  // Recomputes the cluster sums from the stored nodes: O(nodes). For builders that fill a
  // snapshot without the cache (tests); the cache never calls it.
  void RecomputeClusterTotals();
  // Recomputes nodes(), rows() and the affinity lists from storage; call after a batch of
  // changes. Cost: O(nodes) writes, only when the set of nodes or affinity membership changed.
  void RebuildLists();
  // Rewrites the row of `info` (a NodeInfo of this snapshot just changed in place) from its own
  // row, unless the lists are to be rebuilt anyway (a node that has no position yet). O(1).
  void RefreshRow(NodeInfo* info);
  // Puts `info` (a NodeInfo of this snapshot, changed in place) into or out of the affinity lists
  // as its pods now say, keeping the lists in node order: O(log nodes) look-ups and the list's
  // pointers moved, no row rewritten. Unless the lists are to be rebuilt anyway (a node that has
  // no position yet).
  void RefreshAffinityLists(const NodeInfo* info);
  // The update to `generation` is complete, and `changed` (NodeInfos of this snapshot) changed in
  // place (see Snapshot::NodesChangedSince). The cache calls it at the end of every update, after
  // the lists are final. A writer that never calls it leaves the snapshot unable to tell what
  // changed, which is always safe. Removing nodes, positions that move and namespace changes make
  // the record start again here.
  void RecordChanges(int64_t generation, const std::vector<NodeInfo*>& changed);

 private:
  Snapshot* snapshot_;
};

}  // namespace kubesched::framework
