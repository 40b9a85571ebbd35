#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "scheduler/api/objects.h"
#include "scheduler/client/http_transport.h"

namespace kubesched::client {

// Writes the parts of a pod's status the scheduler owns, with PATCH on the status subresource.
// Conditions go in strategic merge patches, which the API server merges by condition `type`, so
// the kubelet's and other controllers' conditions are kept.
//
// Each method returns OK when the write succeeded or was unnecessary, else the transport's error
// or StatusFromResponse (NotFound when the pod is gone, Aborted (409) when it was re-created under
// its name: callers usually ignore both).
//
// Thread-safe: stateless apart from the transport. Synchronous: run it on a bind worker or an
// AsyncWriter, never on the scheduling thread.
class PodStatusWriter {
 public:
  explicit PodStatusWriter(HttpTransport* transport) : transport_(transport) {}

  // Sets PodScheduled=False, reason Unschedulable, with the full (untruncated) `message`. Sends
  // nothing when the pod already carries that exact condition, as upstream does, since failed pods
  // are retried often. When the pod is already PodScheduled=False the patch leaves
  // lastTransitionTime out, so the server keeps the time of the real transition; otherwise it is
  // `now`.
  absl::Status SetUnschedulable(const api::Pod& pod, std::string_view message, absl::Time now);

  // Sets status.nominatedNodeName (merge patch); an empty `node_name` clears it. Sends nothing
  // when the pod already has that value.
  absl::Status SetNominatedNodeName(const api::Pod& pod, std::string_view node_name);

  // Marks a preemption victim: DisruptionTarget=True, reason PreemptionByScheduler, `message`
  // (upstream: "<schedulerName>: preempting to accommodate a higher priority pod"). Sends
  // nothing when the pod already carries that exact condition.
  absl::Status AddDisruptionTarget(const api::Pod& pod, std::string_view message, absl::Time now);

  // The patch bodies (exposed for tests). `transition_time` null leaves lastTransitionTime out.
  // A non-empty `uid` goes into metadata.uid, which the API server takes as a precondition (409
  // when the pod of that name is now another one), as upstream's PatchPodStatus does: a status
  // meant for a deleted pod never lands on its successor of the same name.
  static std::string ConditionPatch(std::string_view uid, std::string_view type,
                                    std::string_view status, std::string_view reason,
                                    std::string_view message, const absl::Time* transition_time);
  static std::string NominatedNodeNamePatch(std::string_view uid, std::string_view node_name);

 private:
  absl::Status Patch(const api::Pod& pod, std::string_view content_type, std::string body,
                     std::string_view what);

  HttpTransport* transport_;
};

}  // namespace kubesched::client
