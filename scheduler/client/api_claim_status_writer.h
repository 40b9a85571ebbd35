#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/api/dra.h"
#include "scheduler/client/http_transport.h"
#include "scheduler/framework/claim_binding.h"

namespace kubesched::client {

// DynamicResources' PreBind write through the API server, as upstream makes it:
//   - for a claim allocated now, first the delete-protection finalizer (a strategic merge patch of
//     metadata.finalizers on the claim, which adds to the list), so that the claim cannot vanish
//     while its devices are in use;
//   - then PATCH apis/resource.k8s.io/v1/namespaces/{ns}/resourceclaims/{name}/status with a JSON
//     merge patch of status.reservedFor (the claim's list plus the pod) and, for a claim
//     allocated now, status.allocation (device results, the classes' and the claim's
//     configuration, node selector).
// Both patches carry the resourceVersion they build on, so that the API server refuses them (409,
// Aborted) when the claim changed since the scheduler read it: another scheduler allocated it, or
// another pod reserved it. Patches rather than upstream's PUTs: kubesched's claim object does not
// keep every field, and a PUT would drop those it lacks (the drivers' status.devices among them).
// NotFound for 404, InvalidArgument for 422; the transport retries 429/5xx and transport
// failures. deploy/base/rbac.yaml grants patch on resourceclaims and resourceclaims/status.
//
// Unreserve's removal of a pod from status.reservedFor is upstream's strategic merge patch that
// deletes the pod's entry by uid (reservedFor merges by uid), with the claim's uid as the
// precondition: other consumers added meanwhile stay. PostFilter's deallocation is a JSON merge
// patch that clears status.allocation, reservedFor and devices, on the claim's resourceVersion.
//
// Thread-safe: stateless apart from the transport; bind workers call it concurrently. Waits on
// the network, so never on the scheduling thread.
class ApiClaimStatusWriter : public framework::ClaimStatusWriter {
 public:
  explicit ApiClaimStatusWriter(HttpTransport* transport) : transport_(transport) {}

  absl::StatusOr<std::shared_ptr<const api::ResourceClaim>> WriteReservation(
      const api::ResourceClaim& claim, const api::AllocationResult* allocation,
      const api::ResourceClaimConsumer& consumer) override;
  absl::StatusOr<std::shared_ptr<const api::ResourceClaim>> RemoveReservation(
      const api::ResourceClaim& claim, std::string_view consumer_uid) override;
  absl::StatusOr<std::shared_ptr<const api::ResourceClaim>> Deallocate(
      const api::ResourceClaim& claim) override;

  // The patch bodies (exposed for tests).
  static std::string FinalizerPatch(const api::ResourceClaim& claim);
  static std::string ReservationPatch(const api::ResourceClaim& claim,
                                      const api::AllocationResult* allocation,
                                      const api::ResourceClaimConsumer& consumer);
  static std::string RemoveReservationPatch(const api::ResourceClaim& claim,
                                            std::string_view consumer_uid);
  static std::string DeallocationPatch(const api::ResourceClaim& claim);

 private:
  HttpTransport* transport_;
};

}  // namespace kubesched::client
