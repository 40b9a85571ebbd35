#pragma once

#include <string>

#include "absl/status/status.h"
#include "scheduler/client/http_transport.h"
#include "scheduler/client/pod_deleter.h"

namespace kubesched::client {

// Deletes pods through the API server: DELETE /api/v1/namespaces/{ns}/pods/{name} with a UID
// precondition, so that a pod recreated under the same name survives.
//
// Results: OK on 200/202; NotFound on 404 (already gone: the caller's goal is met);
// FailedPrecondition on 409 (the name now belongs to another UID); otherwise the transport's
// error or StatusFromResponse. No retries beyond the transport's own: preemption decides.
//
// Thread-safe: stateless apart from the transport.
class ApiPodDeleter : public PodDeleter {
 public:
  explicit ApiPodDeleter(HttpTransport* transport) : transport_(transport) {}

  absl::Status DeletePod(const std::string& namespace_name, const std::string& name,
                         const std::string& uid) override;

 private:
  HttpTransport* transport_;
};

}  // namespace kubesched::client
