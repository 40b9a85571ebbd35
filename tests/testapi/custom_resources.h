#pragma once

// The custom resources kubesched-testapi serves as the API server serves a
// CustomResourceDefinition: every write (create, update, patch, on the object or its status) is
// checked against the CRD's structural schema, and a mismatch is the real API's 422 Invalid.
// Today that is scheduler-plugins' PodGroup (scheduling.x-k8s.io/v1alpha1).

#include "absl/status/status.h"
#include "rapidjson/document.h"
#include "tests/testapi/resources.h"

namespace kubesched::testapi {

// OK for types without a schema here; else Invalid (MarkInvalid) naming the first bad field as
// the API server words it: `PodGroup.scheduling.x-k8s.io "train" is invalid: spec.minMember:
// Invalid value: "string": spec.minMember in body must be of type integer: "string"`.
absl::Status CheckCustomResourceSchema(const ResourceType& type, const rapidjson::Value& object);

}  // namespace kubesched::testapi
