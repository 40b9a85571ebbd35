#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "scheduler/framework/claim_binding.h"
#include "scheduler/framework/device_resources.h"
#include "scheduler/framework/gang_membership.h"
#include "scheduler/framework/node_info.h"
#include "scheduler/framework/snapshot.h"
#include "scheduler/framework/volume_binding.h"
#include "scheduler/util/clock.h"

namespace kubesched::cache {

// The scheduler's model of the cluster: NodeInfo per node (the node plus its bound and assumed
// pods) and namespace labels.
//
// Assumed pods: the scheduling loop assumes a pod on a node the moment it picks it, so the next
// cycle already sees the room taken; the informer's "pod bound" event later confirms it
// (AddPod). An assumed pod leaves the cache only when the API says so: the informer shows it
// bound (AddPod) or deleted (RemovePod), or the binder got an explicit refusal (ForgetPod). It
// never expires on a timer, since room handed out again while a bind may have succeeded
// over-commits the node; a pod watch that lags shows up as binds awaiting confirmation
// (BindsAwaitingConfirmation), which the scheduler reports.
//
// Threads: written by informer threads and the scheduling thread; one mutex guards all state.
// Snapshots are refreshed with UpdateSnapshot, which copies only nodes whose generation moved
// past the snapshot's (cost per cycle = changed nodes).
//
// Cluster sums: Σ allocatable and Σ requested (real requests of bound and assumed pods) over the
// nodes that have a node object, updated on every node and pod change (O(resources) each) and
// copied into every snapshot (Snapshot::cluster_allocatable / cluster_requested). The Watermark
// scoring strategy reads its allocated ratios from them, never by scanning nodes: per group of
// alike nodes (same hard taints, cordon and pool labels; EnableNodeGroups) when enabled.
//
// Load (MostAvailable): each node's latest metrics.k8s.io NodeMetrics sample, and on each NodeInfo
// the sum of the VirtualRequests (framework/virtual_request.h) of its pods placed at or after the
// sample's timestamp. "Placed" is when this scheduler assumed the pod (kept when the informer
// confirms it); a pod the informer shows bound without our assuming it (bound before we started,
// or by someone else) counts as placed before any sample, i.e. already in the measured usage.
// Kept incrementally: a pod add/remove adjusts its node's sum in O(resources); a new sample
// recomputes only its own node's sum, O(pods on the node). Samples live by node name, so a
// sample that arrives before its Node object is applied when the node appears.
//
// Assumed volumes (framework::VolumeAssumeCache, for VolumeBinding; cache_volumes.cc): Reserve's
// PV claimRefs and selected-node annotations replace the informers' versions in the StorageState
// that snapshots get, so that the next cycle sees a chosen PV as taken, until the informers
// deliver the object again (the API server's version wins) or the pod's Unreserve forgets them
// (the informers' version comes back). Guarded by the same mutex as everything else; PreBind's
// wait for the informers blocks on a condition variable of that mutex, on a bind worker.
//
// Assumed claim allocations (framework::ClaimAssumeCache, for DynamicResources; cache_dra.cc):
// the same for ResourceClaims: Reserve's allocations replace the informers' claims in the
// DraState that snapshots get (their devices taken, the claims in flight) until the informers
// deliver a newer version, or Unreserve forgets those not written yet.
class Cache : public framework::VolumeAssumeCache, public framework::ClaimAssumeCache {
 public:
  explicit Cache(const util::Clock* clock);
  ~Cache() override;

  void AddNode(std::shared_ptr<const api::Node> node);
  void UpdateNode(std::shared_ptr<const api::Node> node);
  void RemoveNode(const std::string& name);

  // A bound pod seen by the informer (spec.nodeName set, non-terminal). Confirms an assumed pod
  // with the same key (moving it if the informer says another node).
  absl::Status AddPod(framework::PodInfoPtr pod);
  absl::Status UpdatePod(framework::PodInfoPtr pod);
  absl::Status RemovePod(const std::string& pod_key);
  // Shows the bound pod `pod_key` with `uid` as terminating since `since` (its deletionTimestamp),
  // or as not terminating (nullopt), keeping its room, as the pod watch shows a pod being deleted:
  // preemption's victims count as terminating from the moment their deletion is decided, not when
  // the watch catches up. NotFound unless such a pod is cached and not assumed.
  absl::Status SetTerminating(const std::string& pod_key, const std::string& uid,
                              std::optional<absl::Time> since);

  // `pod` must have spec.nodeName set to the chosen node. AlreadyExists if the key is cached.
  absl::Status AssumePod(framework::PodInfoPtr pod);
  // The bind call succeeded; the pod waits for the informer to confirm it from now. `uid` is the
  // bound pod's: a pod of the same name created since (another UID) is left alone.
  absl::Status FinishBinding(const std::string& pod_key, std::string_view uid);
  // Removes an assumed pod (bind failed). NotFound / FailedPrecondition if not assumed, and
  // NotFound when the cached pod of that name has another UID: a pod deleted and re-created under
  // its name (a StatefulSet's) must not lose the reservation its successor holds.
  absl::Status ForgetPod(const std::string& pod_key, std::string_view uid);
  bool IsAssumed(const std::string& pod_key) const;
  // Assumed pods whose bind succeeded and that the informer has not shown bound yet.
  struct UnconfirmedBinds {
    size_t count = 0;
    absl::Duration longest_wait = absl::ZeroDuration();  // since the oldest of them was bound
  };
  // O(assumed pods); for the periodic upkeep and metrics.
  UnconfirmedBinds BindsAwaitingConfirmation() const;

  // The node object; null when the node is not known (deleted, or only its pods seen).
  std::shared_ptr<const api::Node> GetNode(const std::string& name) const;
  // Node the cached pod is on, if the pod is cached (bound or assumed).
  std::optional<std::string> NodeOfPod(const std::string& pod_key) const;
  framework::PodInfoPtr GetPod(const std::string& pod_key) const;
  // Every pod, bound or assumed (O(pods); for rare refreshes such as a PriorityClass change).
  std::vector<framework::PodInfoPtr> Pods() const;

  // A node's metrics sample. A sample without a timestamp, or with one ahead of the cache's clock
  // (the node's clock runs ahead), counts as taken now; one older than the node's current sample
  // is ignored (out-of-order delivery).
  void SetNodeMetrics(const api::NodeMetrics& metrics);
  void RemoveNodeMetrics(const std::string& node_name);

  void SetNamespace(api::Symbol namespace_symbol, api::LabelSet labels);
  void RemoveNamespace(api::Symbol namespace_symbol);
  // PodDisruptionBudgets by "namespace/name", handed to snapshots when they change.
  void SetPdb(std::shared_ptr<const api::PodDisruptionBudget> pdb);
  void RemovePdb(const std::string& key);
  // The volume objects, handed to snapshots when they change (framework::StorageState): claims by
  // "namespace/name", the others by name. T is one of the api volume kinds.
  template <typename T>
  void SetStorageObject(std::shared_ptr<const T> object);
  template <typename T>
  void RemoveStorageObject(const T& object);
  // The Dynamic Resource Allocation objects, handed to snapshots when they change
  // (framework::DraState): claims and templates by "namespace/name", classes and slices by name.
  // T is one of api::DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate.
  template <typename T>
  void SetDraObject(std::shared_ptr<const T> object);
  template <typename T>
  void RemoveDraObject(const T& object);
  // Starts counting, on every node, the DRA devices of the kinds in `resources` that its own
  // slices publish and claims hold (NodeInfo::device_allocatable, device_requested; in the
  // cluster and group sums as their resource), and publishes `resources` in the snapshots'
  // DraState. Called once at start-up, before events flow, when the queue configuration counts
  // devices; otherwise the cache counts none and pays nothing for it.
  void EnableDeviceResources(std::shared_ptr<const framework::DeviceResources> resources);
  // Calls fn with the DRA objects as the next snapshot gets them (assumed claims included), under
  // the cache's lock: fn must not call the cache. For what the quota counts of a bound pod's
  // claims.
  void ReadDra(absl::FunctionRef<void(const framework::DraState&)> fn) const;
  // PodGroups by "namespace/name", handed to snapshots when they change (framework::GangState);
  // a snapshot copies only the shards changed since the last one.
  void SetPodGroup(std::shared_ptr<const api::PodGroup> group);
  void RemovePodGroup(const std::string& key);
  // The pods of gangs, pending or not, so that snapshots count each gang's members
  // (framework::GangCounts) and know the requests of their first members (a group's need):
  // SetGangMember when a member appears (idempotent: a known member keeps the requests it came
  // with), RemoveGangMember when it is deleted or finished. Placed members are counted as the
  // cache places them. An implicit group's minMember is the one its member set last says.
  void SetGangMember(const framework::GangMembership& gang, framework::GangMember member);
  // Returns the key of the pod's gang when the pod was its last member; nullopt otherwise.
  std::optional<std::string> RemoveGangMember(const std::string& pod_key);
  // The PodGroup object of a gang (null if none), and its member counts now (changes not yet in
  // a snapshot included).
  std::shared_ptr<const api::PodGroup> PodGroupOf(std::string_view gang_key) const;
  framework::GangCounts GangCountsOf(const std::string& gang_key) const;

  // One gang as the cache knows it now (changes not yet in a snapshot included).
  struct GangView {
    std::string_view key;                  // "namespace/name"
    const api::PodGroup* group = nullptr;  // null for an implicit group
    framework::GangCounts counts;
    int32_t min_member = 0;  // the PodGroup's, else the members' annotation; 0 when unusable
  };
  // Calls fn for every PodGroup object and every implicit group with a member, in no particular
  // order, under the cache's lock: fn must not call the cache. O(groups), never O(members);
  // members naming a PodGroup that does not exist are no group. For metrics.
  void ForEachGang(absl::FunctionRef<void(const GangView&)> fn) const;

  // framework::VolumeAssumeCache (see there and the class comment).
  absl::Status AssumeVolumes(std::string_view pod_key,
                             const framework::VolumeAssumption& assumption) override;
  void ForgetVolumes(std::string_view pod_key) override;
  std::shared_ptr<const api::PersistentVolumeClaim> ObservedClaim(
      std::string_view key) const override;
  std::shared_ptr<const api::PersistentVolume> ObservedVolume(std::string_view name) const override;
  int64_t StorageVersion() const override;
  bool AwaitStorageChange(int64_t seen, absl::Time deadline) override;
  // Shutdown: every AwaitStorageChange, now and later, returns false at once.
  void StopStorageWaits();
  // PVs and claims assumed and not yet delivered again by the informers (tests).
  size_t AssumedVolumeCount() const;

  // framework::ClaimAssumeCache (see there and the class comment).
  absl::Status AssumeClaims(
      std::string_view pod_key,
      const std::vector<std::shared_ptr<const api::ResourceClaim>>& claims) override;
  void ClaimWritten(std::string_view pod_key,
                    std::shared_ptr<const api::ResourceClaim> stored) override;
  void ForgetClaims(std::string_view pod_key) override;
  // Claims assumed (in flight or written) and not yet delivered again by the informers (tests).
  size_t AssumedClaimCount() const;

  // What an UpdateSnapshot did.
  struct SnapshotUpdateStats {
    size_t nodes_copied = 0;     // NodeInfos copied into the snapshot
    size_t nodes_removed = 0;    // NodeInfos dropped from the snapshot (node deleted)
    bool lists_rebuilt = false;  // nodes() / affinity lists recomputed (O(nodes) pointer writes)
  };
  // Brings `snapshot` up to date. Only nodes changed since the snapshot's generation are copied.
  // Returns what it did; `refreshed` (optional) receives the snapshot nodes it copied.
  SnapshotUpdateStats UpdateSnapshot(framework::Snapshot* snapshot,
                                     std::vector<const framework::NodeInfo*>* refreshed = nullptr);
  // What the last UpdateSnapshot did, for tests and metrics.
  SnapshotUpdateStats LastSnapshotUpdate() const;

  struct ClusterTotals {
    api::ResourceList allocatable{};
    api::ResourceList requested{};
  };
  // The incrementally kept cluster sums (for tests and metrics).
  ClusterTotals Totals() const;

  // Starts keeping the cluster sums per group of alike nodes (framework::NodeGroup), told apart
  // by NoSchedule/NoExecute taints, cordon and the values of `label_keys` (the keys watermark
  // pools select on), and handing them to every snapshot. Called once at start when a profile
  // uses the Watermark strategy; O(nodes) once, then O(resources) per node or pod change.
  void EnableNodeGroups(const std::vector<std::string>& label_keys);
  // The groups as the next snapshot gets them (for tests).
  std::shared_ptr<const framework::NodeGroups> NodeGroups() const;

  // Makes room for `pods` pods when a cluster's size is known up front (a simulation's input), so
  // that the pod map is not rehashed while it fills: at 250,000 pods one rehash holds the
  // scheduling thread for tens of milliseconds (bench/RESULTS.md).
  void ReservePods(size_t pods);

  size_t NodeCount() const;
  size_t PodCount() const;
  size_t AssumedCount() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace kubesched::cache
