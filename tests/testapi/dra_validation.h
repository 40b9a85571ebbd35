#pragma once

// Validation of the resource.k8s.io/v1 kinds kubesched-testapi serves (DeviceClass,
// ResourceSlice, ResourceClaim, ResourceClaimTemplate): every write (create, update, patch, on the
// object or its status) of a shape the real API refuses and an allocator could not read (a
// request with neither `exactly` nor `firstAvailable`, an attribute with two values, a slice in
// no place or in two, a count below one...) is the real API's 422 Invalid.

#include "absl/status/status.h"
#include "rapidjson/document.h"
#include "tests/testapi/resources.h"

namespace kubesched::testapi {

// OK for types of other groups; else Invalid (MarkInvalid) worded as the API server words it:
// `ResourceClaim.resource.k8s.io "gpu" is invalid: spec.devices.requests[0]: ...`.
absl::Status CheckDraObject(const ResourceType& type, const rapidjson::Value& object);

// The rules of a ResourceClaim's status across an update (upstream's
// validateResourceClaimStatusUpdate): an allocation, once written, never changes; reservedFor
// needs an allocation, holds at most 256 consumers, each UID once, and gains none while the claim
// is being deleted. OK for every other kind; else Invalid (MarkInvalid).
absl::Status CheckClaimStatusUpdate(const ResourceType& type, const rapidjson::Value& before,
                                    const rapidjson::Value& after);

}  // namespace kubesched::testapi
