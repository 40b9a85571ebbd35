#pragma once

// VirtualRequest (DESIGN.md "Scorers", MostAvailable): an estimate of what a pod will really use,
// from the pod annotation `kubesched.io/virtual-request` (a JSON resource list such as
// {"cpu":"2","memory":"4Gi"}), else the pod's requests. Shared by the cache (which sums the
// VirtualRequests of pods placed on a node since its last metrics sample) and the MostAvailable
// plugin (the incoming pod's own VirtualRequest), so that both read the annotation the same way.

#include <string_view>

#include "absl/status/statusor.h"
#include "scheduler/api/resource.h"
#include "scheduler/framework/pod_info.h"

namespace kubesched::framework {

inline constexpr std::string_view kVirtualRequestAnnotation = "kubesched.io/virtual-request";

struct VirtualRequest {
  api::ResourceList amounts;
  // Set when the annotation is present but does not parse; `amounts` are then the requests.
  absl::Status annotation_error;
};

// The annotation when present and valid (api::DecodeResourceListJson), else `requests`; `error` is
// set when the annotation is present but does not parse. MakePodInfo calls it once per pod.
api::ResourceList ComputeVirtualRequest(const api::Pod& pod, const api::ResourceList& requests,
                                        absl::Status* error);

// The pod's VirtualRequest as MakePodInfo computed it.
inline VirtualRequest VirtualRequestOf(const PodInfo& pod) {
  return {pod.VirtualRequestAmounts(), pod.virtual_request_error};
}

}  // namespace kubesched::framework
