#pragma once

// The volume binding protocol's two services, as the VolumeBinding plugin sees them (upstream's
// SchedulerVolumeBinder split by who owns the state):
//
//   - VolumeAssumeCache, owned by the scheduler's cache: the PV and claim changes the plugin has
//     decided on in Reserve but the API server has not shown yet ("assumed"), so that the next
//     scheduling cycle already sees a chosen PV as taken; and the informers' own view of the
//     volume objects, for PreBind's wait.
//   - VolumeBinder, the API side: the writes that start a binding (a PV's claimRef, a claim's
//     selected-node annotation), made by the API client in `run` and by the embedded cluster in
//     `simulate`.

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "scheduler/api/storage.h"

namespace kubesched::framework {

// What one pod's Reserve decided: PVs as they are to be written (spec.claimRef naming their
// claim) and claims to provision (annotated with the selected node). Only objects that change.
struct VolumeAssumption {
  std::vector<std::shared_ptr<const api::PersistentVolume>> volumes;
  std::vector<std::shared_ptr<const api::PersistentVolumeClaim>> claims;
};

// Implemented by the scheduler's cache (cache::Cache).
//
// An assumed object replaces the informers' version in every snapshot taken after Assume until
// one of these happens: the informers deliver a newer version or a deletion of it (the API
// server's word wins, as in upstream's assume cache), or the pod's assumptions are forgotten
// (its Unreserve), which restores the informers' version.
//
// Threads: every method is thread-safe. AssumeVolumes and ForgetVolumes are called by the
// scheduling thread (Reserve, Unreserve) or a bind worker (Unreserve after a failed binding
// cycle); the Observed* and wait methods by bind workers (PreBind). AwaitStorageChange blocks:
// never call it on the scheduling thread.
class VolumeAssumeCache {
 public:
  virtual ~VolumeAssumeCache() = default;

  // Assumes every object of `assumption` for `pod_key`, all or none. Aborted when an object
  // changed since the plugin read it (another resourceVersion), a PV is taken by another claim
  // (or assumed by another pod), or a claim got bound or another selected node meanwhile;
  // NotFound when an object is gone.
  virtual absl::Status AssumeVolumes(std::string_view pod_key,
                                     const VolumeAssumption& assumption) = 0;
  // Restores the informers' version of every object `pod_key` still has assumed. Idempotent.
  virtual void ForgetVolumes(std::string_view pod_key) = 0;

  // The informers' latest version of a claim ("namespace/name") or a PV, assumptions left out;
  // null when absent.
  virtual std::shared_ptr<const api::PersistentVolumeClaim> ObservedClaim(
      std::string_view key) const = 0;
  virtual std::shared_ptr<const api::PersistentVolume> ObservedVolume(
      std::string_view name) const = 0;

  // A counter that moves whenever a volume object changes (informers, assumptions).
  virtual int64_t StorageVersion() const = 0;
  // Blocks until StorageVersion() differs from `seen` (true) or until `deadline` passes or the
  // waits are stopped at shutdown (false).
  virtual bool AwaitStorageChange(int64_t seen, absl::Time deadline) = 0;
};

// The objects as the API server stored them after a write; null where the write did not show
// them.
struct VolumeWriteResult {
  std::shared_ptr<const api::PersistentVolume> volume;
  std::shared_ptr<const api::PersistentVolumeClaim> claim;
};

// The writes of the volume binding protocol. Implemented by client::ApiVolumeBinder (run) and
// cluster::EmbeddedCluster (simulate, which also plays the PV controller).
//
// Threads: thread-safe; called by bind workers (PreBind), never on the scheduling thread (the
// API client waits on the network).
class VolumeBinder {
 public:
  virtual ~VolumeBinder() = default;

  // Writes `volume`'s spec.claimRef and annotations, with its resourceVersion as a precondition
  // (Aborted, the API's 409, when the PV changed meanwhile: another scheduler or pod took it).
  // The result holds the PV as stored, and the claim when the writer binds it at once.
  virtual absl::StatusOr<VolumeWriteResult> BindVolume(const api::PersistentVolume& volume) = 0;
  // Sets the selected-node annotation `claim` carries, so that its provisioner creates a PV
  // there. The result holds the claim as stored, and the PV when the writer provisions at once.
  virtual absl::StatusOr<VolumeWriteResult> SelectNode(const api::PersistentVolumeClaim& claim) = 0;
  // True when the writes complete the binding before they return (the embedded cluster): then
  // nothing is waited for, and a binding not complete after the writes is an error at once.
  virtual bool BindsAtOnce() const { return false; }
};

}  // namespace kubesched::framework
