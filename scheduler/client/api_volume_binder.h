#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "scheduler/api/storage.h"
#include "scheduler/client/http_transport.h"
#include "scheduler/framework/volume_binding.h"

namespace kubesched::client {

// The volume binding writes through the API server, as upstream's scheduler makes them (the PV
// controller and the provisioners do the rest):
//   - BindVolume: PATCH persistentvolumes/{name} with a JSON merge patch of spec.claimRef and the
//     bound-by-controller annotation, carrying the PV's resourceVersion, so that the API server
//     refuses it (409, Aborted) when the PV changed since the scheduler chose it;
//   - SelectNode: PATCH namespaces/{ns}/persistentvolumeclaims/{name} with the selected-node
//     annotation (no precondition: writing the same node twice is harmless).
// Each returns the object as the server stored it. The transport retries 429/5xx and transport
// failures; other answers are errors naming the object and the server's reason (NotFound for
// 404, Aborted for 409). deploy/base/rbac.yaml grants patch on both kinds.
//
// Thread-safe: stateless apart from the transport; bind workers call it concurrently. Waits on
// the network, so never on the scheduling thread.
class ApiVolumeBinder : public framework::VolumeBinder {
 public:
  explicit ApiVolumeBinder(HttpTransport* transport) : transport_(transport) {}

  absl::StatusOr<framework::VolumeWriteResult> BindVolume(
      const api::PersistentVolume& volume) override;
  absl::StatusOr<framework::VolumeWriteResult> SelectNode(
      const api::PersistentVolumeClaim& claim) override;

  // The patch bodies (exposed for tests).
  static std::string ClaimRefPatch(const api::PersistentVolume& volume);
  static std::string SelectedNodePatch(const api::PersistentVolumeClaim& claim);

 private:
  HttpTransport* transport_;
};

}  // namespace kubesched::client
