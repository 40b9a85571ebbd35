#pragma once

// Decoding of one already-parsed JSON object of a known kind: the API client's list items (which
// carry no `kind`) and watch event objects. Kept apart from decode.h so that only the client
// sees RapidJSON.

#include <string_view>

#include "absl/status/statusor.h"
#include "rapidjson/document.h"
#include "scheduler/api/decode.h"

namespace kubesched::api {

// `kind` is one of "Pod", "Node", "Namespace", "PriorityClass", "ConfigMap",
// "PodDisruptionBudget", "NodeMetrics". A `kind` member in the object, if present, must match.
// Errors name the object ("Pod ns/name: spec.containers[0]...: ...").
absl::StatusOr<Object> DecodeObjectValue(const rapidjson::Value& json, std::string_view kind);

}  // namespace kubesched::api
