#pragma once

// The three PATCH body formats the real API accepts, applied to a parsed object in place.
// Stateless functions; callers own the documents.

#include "absl/status/status.h"
#include "rapidjson/document.h"

namespace kubesched::testapi {

// RFC 7386 JSON merge patch (application/merge-patch+json): objects merge recursively, null
// deletes a key, anything else (arrays included) replaces. A non-object patch replaces the whole
// target.
void ApplyMergePatch(const rapidjson::Value& patch, rapidjson::Document* target);

// Kubernetes strategic merge patch (application/strategic-merge-patch+json). Like a merge patch,
// except that the lists Kubernetes declares with a patch merge key (pod and node
// status.conditions by "type", spec.containers by "name", metadata.ownerReferences by "uid", ...)
// merge element-wise by that key, metadata.finalizers merges as a set, and the directives
// `$patch: replace|delete|merge`, `$retainKeys`, `$deleteFromPrimitiveList/<field>` and
// `$setElementOrder/<field>` are honoured (the last only to be ignored, as order is kept).
absl::Status ApplyStrategicMergePatch(const rapidjson::Value& patch, rapidjson::Document* target);

// RFC 6902 JSON patch (application/json-patch+json): add, remove, replace, move, copy, test.
// On error the target may be partly modified; callers patch a copy.
absl::Status ApplyJsonPatch(const rapidjson::Value& operations, rapidjson::Document* target);

}  // namespace kubesched::testapi
