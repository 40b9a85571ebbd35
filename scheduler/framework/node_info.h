#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "scheduler/api/objects.h"
#include "scheduler/framework/device_profiles.h"
#include "scheduler/framework/node_table.h"
#include "scheduler/framework/pod_info.h"

namespace kubesched::framework {

struct NodeDeviceSummary;  // dra_state.h

// The DRA devices a node's own ResourceSlices offer (DraState's NodeDeviceSummary of the node;
// null when they offer none) and which of them claims hold: bit i for summary->devices[i], for the
// first kHeldBits devices (a node with more has its holds looked up in DraState). The cache keeps
// it from DraState (DraState::OwnDevicesOf) as slices and claims change.
struct OwnDevices {
  static constexpr size_t kHeldBits = 64;
  std::shared_ptr<const NodeDeviceSummary> summary;
  uint64_t held = 0;
  friend bool operator==(const OwnDevices& a, const OwnDevices& b) {
    return a.summary == b.summary && a.held == b.held;
  }
};

// Host ports in use on a node. 0.0.0.0 (or "") conflicts with every address.
class HostPorts {
 public:
  void Add(std::string_view ip, api::Protocol protocol, int32_t port);
  void Remove(std::string_view ip, api::Protocol protocol, int32_t port);
  bool Conflicts(std::string_view ip, api::Protocol protocol, int32_t port) const;
  bool empty() const { return entries_.empty(); }

 private:
  struct Entry {
    std::string ip;
    api::Protocol protocol;
    int32_t port;
  };
  std::vector<Entry> entries_;
};

// Pods of one node that look alike to any label selector (same namespace, labels and terminating
// state), counted,
// so that a plugin matches a selector once per group rather than once per pod.
struct LabelGroupCount {
  LabelGroupId id = 0;
  int32_t count = 0;
  const PodInfo* sample = nullptr;  // one pod of the group, for matching; owned by pods()
};

// The pod (anti-)affinity terms of the pods on one node, which InterPodAffinity applies in
// reverse (an existing pod's terms that may select the incoming pod), grouped by content, kind
// and weight and counted.
enum class TermKind : uint8_t {
  kRequiredAffinity,
  kRequiredAntiAffinity,
  kPreferredAffinity,
  kPreferredAntiAffinity
};
struct TermGroupCount {
  TermId id = 0;
  TermKind kind = TermKind::kRequiredAffinity;
  int32_t weight = 0;  // of a preferred term; 0 for a required one
  int32_t count = 0;
  const AffinityTerm* sample = nullptr;  // the term of one pod of the group; owned by pods()
};

// A volume the pods on one node use (see PodVolumeRef): each claim once, with the number of pod
// volumes that name it; each inline disk once per pod volume, since disks conflict or count by
// fields only the volume plugins compare.
struct VolumeRefCount {
  const PodVolumeRef* ref = nullptr;  // of one pod of the node that uses it; owned by pods()
  int32_t count = 0;
};

// A node's latest metrics.k8s.io/v1beta1 NodeMetrics sample: measured usage at `timestamp`.
struct MetricsSample {
  absl::Time timestamp = absl::InfinitePast();
  api::ResourceList usage{};
};

// What load awareness (MostAvailable) keeps of a node: its latest sample and the VirtualRequests
// placed after it. Held apart from NodeInfo, only for nodes that have a sample.
struct NodeLoad {
  std::optional<MetricsSample> metrics;
  api::ResourceList virtual_requested_since_sample;
};

// A node's position in its snapshot's node list, written by the snapshot alone. Copying a
// NodeInfo into a snapshot's slot keeps the slot's position, and a copy made elsewhere (a
// preemption what-if) has none: the position belongs to the snapshot's storage, not the contents.
class SnapshotPosition {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;
  SnapshotPosition() = default;
  SnapshotPosition(const SnapshotPosition& /*other*/) {}
  SnapshotPosition& operator=(const SnapshotPosition& /*other*/) { return *this; }
  uint32_t get() const { return value_; }
  void set(uint32_t value) { value_ = value; }

 private:
  uint32_t value_ = kNone;
};

// Where a snapshot's NodeInfo finds its row in the snapshot's flat table, written by the snapshot
// alone after it wrote the row. A copy, or a NodeInfo assigned to, has none until the snapshot
// writes the row again, so a row is never read stale: NodeInfo's own row stands in meanwhile.
class TableRowRef {
 public:
  TableRowRef() = default;
  TableRowRef(const TableRowRef& /*other*/) {}
  TableRowRef& operator=(const TableRowRef& /*other*/) {
    row_ = nullptr;
    return *this;
  }
  const NodeRow* get() const { return row_; }
  void set(const NodeRow* row) { row_ = row; }

 private:
  const NodeRow* row_ = nullptr;
};

// An image the node holds (status.images), under one of its names.
struct NodeImage {
  api::Symbol name = api::kEmptySymbol;
  int64_t size_bytes = 0;
};

// The scheduler's view of one node: the node object plus the pods on it (bound and assumed) and
// the sums derived from them. Owned by the cache; snapshots hold copies that are updated in place
// when the generation moves on. Aligned to a cache line, so that the fields the Filter phase
// reads first share one line.
class alignas(64) NodeInfo {
 public:
  NodeInfo() = default;

  // The node object; null while only pods naming the node are known.
  const api::Node* node() const { return node_.get(); }
  const std::shared_ptr<const api::Node>& node_ptr() const { return node_; }
  const std::string& name() const { return name_; }
  // The node's spec.unschedulable, kept beside the sums so that the Filter phase's first check
  // does not reach into the node object.
  bool unschedulable() const { return row().unschedulable; }
  // Whether the node has a NoSchedule or NoExecute taint (TaintToleration's Filter reads the
  // taints only then).
  bool hard_taints() const { return row().hard_taints; }
  // What the default plugins' Filter and Score read, in one cache line: for a node of a snapshot,
  // its row in the snapshot's flat table (contiguous with the other nodes' rows), else this
  // NodeInfo's own copy. Both hold the same values.
  const NodeRow& row() const {
    const NodeRow* table_row = table_row_.get();
    return table_row != nullptr ? *table_row : own_row_;
  }
  // Amounts of one resource as Filter and Score read them: cpu and memory from row(), the others
  // from the lists above. The same values as allocatable().Get(id), requested().Get(id) and
  // non_zero_requested().Get(id) for cpu and memory, requested().Get(id) for the others.
  int64_t allocatable_amount(api::ResourceId id) const { return allocatable_amount(id, row()); }
  int64_t requested_amount(api::ResourceId id) const { return requested_amount(id, row()); }
  // The non-zero sum for cpu and memory, the real one for the others (upstream's scoring).
  int64_t scoring_requested_amount(api::ResourceId id) const {
    return scoring_requested_amount(id, row());
  }
  // The same with this node's row given (it holds row()'s values: RowFilterPlugin,
  // RowScorePlugin), so that cpu and memory never touch this NodeInfo.
  int64_t allocatable_amount(api::ResourceId id, const NodeRow& row) const {
    if (id == api::kCpu) return row.allocatable_cpu;
    if (id == api::kMemory) return row.allocatable_memory;
    return allocatable_.Get(id);
  }
  int64_t requested_amount(api::ResourceId id, const NodeRow& row) const {
    if (id == api::kCpu) return row.requested_cpu;
    if (id == api::kMemory) return row.requested_memory;
    return requested_.Get(id);
  }
  int64_t scoring_requested_amount(api::ResourceId id, const NodeRow& row) const {
    if (id == api::kCpu) return row.non_zero_requested_cpu;
    if (id == api::kMemory) return row.non_zero_requested_memory;
    return requested_.Get(id);
  }
  // This NodeInfo's own row, which the snapshot copies into its table.
  const NodeRow& own_row() const { return own_row_; }
  // Points row() at the snapshot's copy of own_row(); the snapshot alone calls it.
  void set_table_row(const NodeRow* row) { table_row_.set(row); }

  const std::vector<PodInfoPtr>& pods() const { return pods_; }
  const std::vector<PodInfoPtr>& pods_with_affinity() const { return pods_with_affinity_; }
  const std::vector<PodInfoPtr>& pods_with_required_anti_affinity() const {
    return pods_with_required_anti_affinity_;
  }
  const std::vector<LabelGroupCount>& label_groups() const { return label_groups_; }
  const std::vector<TermGroupCount>& term_groups() const { return term_groups_; }

  const api::ResourceList& allocatable() const { return allocatable_; }
  // Sum of the real requests of the pods on the node.
  const api::ResourceList& requested() const { return requested_; }
  // Sum with the non-zero defaults for cpu and memory (for scoring): requested() with the row's
  // cpu and memory. Built on each call; Filter and Score read scoring_requested_amount().
  api::ResourceList non_zero_requested() const;
  const HostPorts& used_ports() const { return used_ports_; }
  // Every name of every image the node holds, sorted by name (ImageLocality). Built once per node
  // object and shared by the snapshot's copies.
  const std::vector<NodeImage>& images() const;
  // The claims and inline disks of the pods on the node, kept as pods come and go, so that the
  // volume plugins never walk the pods; empty (and never touched) while no pod has a volume.
  const std::vector<VolumeRefCount>& volume_refs() const { return volume_refs_; }

  // Load awareness (MostAvailable): the node's latest metrics sample, if any, and the sum of the
  // VirtualRequests of the pods placed on the node after that sample's timestamp, which the
  // sample cannot show yet. Both are kept by the cache, which knows when each pod was placed.
  const std::optional<MetricsSample>& metrics() const;
  const api::ResourceList& virtual_requested_since_sample() const;

  // DRA devices of the kinds that count as a resource (framework::DeviceResources): those the
  // node's own ResourceSlices publish (their pools' newest generation), and those of them that
  // claims hold, by resource. Kept by the cache when the queue configuration counts devices, for
  // the scores and the watermark that weigh the resource; empty otherwise. Apart from
  // allocatable() and requested(), which NodeResourcesFit reads: a DRA GPU is no device plugin's.
  const api::ResourceList& device_allocatable() const { return device_allocatable_; }
  const api::ResourceList& device_requested() const { return device_requested_; }
  // What DynamicResources' Filter counts on this node (OwnDevices), read here so that the
  // per-node loop finds it without looking the node up by name: the profile of the summary's
  // devices (null when the node offers none) and the held bits lie beside the fields every
  // Filter reads; the summary itself (device names) is read only for a node with more devices
  // than held bits.
  const DeviceProfile* device_profile() const { return device_profile_; }
  uint64_t held_devices() const { return held_devices_; }
  const NodeDeviceSummary* device_summary() const { return device_summary_.get(); }
  OwnDevices own_devices() const { return {device_summary_, held_devices_}; }

  // Bumped on every change; the snapshot copies nodes whose generation is newer than its own.
  int64_t generation() const { return generation_; }
  // The index of this node in its snapshot's nodes(), so that per-node side tables are flat
  // arrays rather than maps; SnapshotPosition::kNone outside a snapshot's node list.
  uint32_t snapshot_position() const { return position_.get(); }
  void set_snapshot_position(uint32_t position) { position_.set(position); }

  void SetNode(std::shared_ptr<const api::Node> node, int64_t generation);
  void ClearNode(int64_t generation);
  void AddPod(PodInfoPtr pod, int64_t generation);
  // NotFound if the pod (by key) is not on this node.
  absl::Status RemovePod(std::string_view pod_key, int64_t generation);
  // The same for the very PodInfo that was added (found by address: no key comparison), as
  // preemption's what-if copies remove and re-add their own pods.
  absl::Status RemovePod(const PodInfo& pod, int64_t generation);
  // A new sample (or none) with the VirtualRequest sum of the pods placed after it.
  void SetMetrics(std::optional<MetricsSample> sample, const api::ResourceList& virtual_since,
                  int64_t generation);
  // Adjust the VirtualRequest sum for a pod placed after the sample being added or removed; called
  // by the cache within the same change as AddPod / RemovePod (which set the generation).
  void AddVirtualSinceSample(const api::ResourceList& amounts);
  void SubtractVirtualSinceSample(const api::ResourceList& amounts);
  void SetDeviceAmounts(api::ResourceList allocatable, api::ResourceList requested,
                        int64_t generation);
  void SetOwnDevices(OwnDevices devices, int64_t generation);

 private:
  void RemoveAt(std::vector<PodInfoPtr>::iterator it, int64_t generation);
  // Adds (sign +1) or subtracts (-1) the pod's requests and count in own_row_.
  void CountInRow(const PodInfo& pod, int sign);
  void AddToGroups(const PodInfo& pod);
  void RemoveFromGroups(const PodInfo& pod);
  void AddVolumeRefs(const PodInfo& pod);
  void RemoveVolumeRefs(const PodInfo& pod);

  // What every Filter call reads comes first, in as few cache lines as possible (the Filter
  // phase touches every node): the node, the flags, the pods and the two resource sums.
  // row() reads table_row_ first: it shares the first cache line with node_ and with what
  // DynamicResources counts (device_profile_, held_devices_); own_row_ (read for copies outside a
  // snapshot) comes after the lists.
  TableRowRef table_row_;
  std::shared_ptr<const api::Node> node_;
  SnapshotPosition position_;
  const DeviceProfile* device_profile_ = nullptr;
  uint64_t held_devices_ = 0;
  int64_t generation_ = 0;
  std::vector<PodInfoPtr> pods_;
  api::ResourceList allocatable_;
  api::ResourceList requested_;
  NodeRow own_row_;
  std::string name_;
  std::vector<PodInfoPtr> pods_with_affinity_;
  std::vector<PodInfoPtr> pods_with_required_anti_affinity_;
  std::vector<LabelGroupCount> label_groups_;
  std::vector<TermGroupCount> term_groups_;
  HostPorts used_ports_;
  std::vector<VolumeRefCount> volume_refs_;
  // Absent for a node without a metrics sample; copies share it until one of them changes it.
  api::SharedOptional<NodeLoad> load_;
  std::shared_ptr<const std::vector<NodeImage>> images_;  // null: none
  api::ResourceList device_allocatable_{};
  api::ResourceList device_requested_{};
  std::shared_ptr<const NodeDeviceSummary> device_summary_;
};

}  // namespace kubesched::framework
