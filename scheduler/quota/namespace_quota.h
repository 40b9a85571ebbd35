#pragma once

// The kubesched.io/namespace-quota annotation: the max of the queue created for a namespace.

#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "scheduler/api/resource.h"

namespace kubesched::quota {

// Parses the annotation's text, a JSON object of resource quantities ({"cpu": "4", "pods": 2}),
// into `max` and adds each named resource to `limited` once. InvalidArgument when the text is not
// such an object or a value is not a non-negative quantity; the message names the resource, and
// what was read before the error stays in `max` and `limited` (the caller discards both).
absl::Status ParseNamespaceQuota(std::string_view text, api::ResourceList* max,
                                 std::vector<api::ResourceId>* limited);

}  // namespace kubesched::quota
