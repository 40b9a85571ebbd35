#pragma once

// The two services of the DynamicResources plugin's binding, split by who owns the state (as
// volume_binding.h splits VolumeBinding's):
//
//   - ClaimAssumeCache, owned by the scheduler's cache: the allocations Reserve decided on and the
//     API server has not shown yet ("assumed"), so that the next scheduling cycle already sees
//     their devices taken (DraState::allocated_devices) and the claims in flight
//     (DraState::pending_allocations); and the claims PreBind wrote, until the informers show
//     them.
//   - ClaimStatusWriter, the API side: PreBind's write of a claim's status.allocation and
//     status.reservedFor, Unreserve's removal of the pod from status.reservedFor and PostFilter's
//     deallocation, made by the API client in `run` and by the embedded cluster in `simulate`.

#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "scheduler/api/dra.h"

namespace kubesched::framework {

// Implemented by the scheduler's cache (cache::Cache).
//
// An assumed claim replaces the informers' version in every snapshot taken after it is assumed,
// until one of these happens: the informers deliver a newer version of it (by resourceVersion) or
// its deletion (the API server's word wins), or, for a claim not written yet, the pod's
// assumptions are forgotten (its Unreserve), which restores the informers' version. A claim the
// API server stored (ClaimWritten) is never restored: the server holds its allocation, so its
// devices stay taken until the informers deliver that version or a newer one.
//
// Threads: every method is thread-safe. AssumeClaims is called by the scheduling thread
// (Reserve), ClaimWritten by bind workers (PreBind, Unreserve after it, PostFilter's writes),
// ForgetClaims by either (Unreserve).
class ClaimAssumeCache {
 public:
  virtual ~ClaimAssumeCache() = default;

  // Assumes every claim of `claims` (each as Reserve decided it: the cache's version of the claim,
  // same resourceVersion, with status.allocation set) for `pod_key`, all or none, and marks them
  // in flight. Aborted when a claim changed since the plugin read it (another resourceVersion)
  // or is assumed by another pod; NotFound when one is gone.
  virtual absl::Status AssumeClaims(
      std::string_view pod_key,
      const std::vector<std::shared_ptr<const api::ResourceClaim>>& claims) = 0;
  // The API server stored `stored` for `pod_key` (PreBind's write): it stands in for the
  // informers' version from now on, and is no longer in flight. Ignored when the informers have
  // already shown that version or a newer one.
  virtual void ClaimWritten(std::string_view pod_key,
                            std::shared_ptr<const api::ResourceClaim> stored) = 0;
  // Restores the informers' version of every claim `pod_key` assumed and did not write.
  // Idempotent.
  virtual void ForgetClaims(std::string_view pod_key) = 0;
};

// The plugin's writes to a claim's status. Implemented by client::ApiClaimStatusWriter (run) and
// cluster::EmbeddedCluster (simulate).
//
// Threads: thread-safe; called by bind workers (PreBind, Unreserve in a binding cycle, the
// writes PostFilter asks for), never on the scheduling thread (the API client waits on the
// network).
class ClaimStatusWriter {
 public:
  virtual ~ClaimStatusWriter() = default;

  // Adds `consumer` to `claim`'s status.reservedFor and, when `allocation` is given, sets
  // status.allocation to it (the claim must have none: an allocation is never rewritten), with
  // `claim`'s resourceVersion as a precondition. Returns the claim as the server stored it.
  // Aborted (the API's 409) when the claim changed since the scheduler read it; NotFound when it
  // is gone; InvalidArgument when the server refuses the status (422).
  virtual absl::StatusOr<std::shared_ptr<const api::ResourceClaim>> WriteReservation(
      const api::ResourceClaim& claim, const api::AllocationResult* allocation,
      const api::ResourceClaimConsumer& consumer) = 0;
  // Takes the consumer with `consumer_uid` out of `claim`'s status.reservedFor, leaving the rest
  // of the claim (its allocation too) as it is: upstream's Unreserve after a failed binding, so
  // that the devices of a claim reserved for a pod that did not get bound are not kept for it.
  // Returns the claim as the server stored it. NotFound when it is gone.
  virtual absl::StatusOr<std::shared_ptr<const api::ResourceClaim>> RemoveReservation(
      const api::ResourceClaim& claim, std::string_view consumer_uid) = 0;
  // Clears `claim`'s status.allocation, status.reservedFor and status.devices, with `claim`'s
  // resourceVersion as a precondition: upstream's PostFilter deallocation of a claim allocated
  // for a node where its pod cannot go. Returns the claim as the server stored it. Aborted when
  // the claim changed since the scheduler read it (a pod may have reserved it since); NotFound
  // when it is gone.
  virtual absl::StatusOr<std::shared_ptr<const api::ResourceClaim>> Deallocate(
      const api::ResourceClaim& claim) = 0;
};

}  // namespace kubesched::framework
