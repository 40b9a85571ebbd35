#pragma once

#include <string>

#include "absl/status/status.h"
#include "scheduler/api/pod_group.h"
#include "scheduler/client/async_writer.h"
#include "scheduler/client/http_transport.h"
#include "scheduler/client/pod_group_status_writer.h"

namespace kubesched::client {

// Writes PodGroup status with a JSON merge patch on the status subresource
// (PATCH /apis/scheduling.x-k8s.io/v1alpha1/namespaces/{ns}/podgroups/{name}/status), which a
// custom resource accepts (it refuses strategic merge patches). The patch runs on `writer`, off
// the caller's thread; a failure, a 404 for a group deleted meanwhile included, is logged as a
// warning and otherwise ignored.
//
// Thread-safe: WriteStatus from any thread; `transport` and `writer` must outlive this object,
// and `writer` must be stopped before they are destroyed.
class ApiPodGroupStatusWriter : public PodGroupStatusWriter {
 public:
  ApiPodGroupStatusWriter(HttpTransport* transport, AsyncWriter* writer)
      : transport_(transport), writer_(writer) {}

  void WriteStatus(const std::string& namespace_name, const std::string& name,
                   const api::PodGroupStatus& status) override;

  // The synchronous PATCH WriteStatus queues: OK, the transport's error, or StatusFromResponse
  // (NotFound when the group or the CRD is gone).
  absl::Status Patch(const std::string& namespace_name, const std::string& name,
                     const api::PodGroupStatus& status);

  // {"status":{...}} under scheduler-plugins' names; empty strings and an unset
  // scheduleStartTime are null, which a merge patch removes. Exposed for tests.
  static std::string StatusPatch(const api::PodGroupStatus& status);

 private:
  HttpTransport* const transport_;
  AsyncWriter* const writer_;
};

}  // namespace kubesched::client
