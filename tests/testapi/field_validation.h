#pragma once

// Field validation as the real API does it (the fieldValidation query parameter: Strict, Warn,
// the default, or Ignore) and the small OpenAPI v3 documents that tell kubectl the server does it:
// kubectl's default `--validate=strict` looks for the fieldValidation parameter on each type's
// PATCH operation in /openapi/v3/<group-version>; found, it sends fieldValidation=Strict and
// leaves validation to the server. The documents carry only those operations, no schemas.
//
// Unknown fields are found with a field list per type for the objects a newcomer writes by hand
// (pods and their containers, nodes, namespaces, config maps, secrets) and ObjectMeta for every
// type; what lies below the listed levels is not checked.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "rapidjson/document.h"
#include "tests/testapi/resources.h"

namespace kubesched::testapi {

// GET /openapi/v3: every served group version and the URL of its document.
std::string OpenApiV3Root();
// GET /openapi/v3/<path> ("api/v1", "apis/apps/v1"); nullopt for a group version not served.
std::optional<std::string> OpenApiV3GroupVersion(std::string_view path);

enum class FieldValidation { kIgnore, kWarn, kStrict };

// The fieldValidation query parameter: "" is Warn, the real API's default. Anything else than
// Ignore, Warn or Strict is BadRequest.
absl::StatusOr<FieldValidation> ParseFieldValidation(std::string_view param);

// Checks `object` (as written to `type`) under `mode`: Strict refuses unknown fields with
// BadRequest ("Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: unknown
// field \"spec.foo\""); Warn appends one warning per unknown field to `warnings` (sent as
// "Warning: 299 - ..." headers); Ignore checks nothing.
absl::Status ValidateFields(FieldValidation mode, const ResourceType& type,
                            const rapidjson::Value& object, std::vector<std::string>* warnings);

// GET /openapi/v2, which kubectl reads only in protobuf (gnostic's openapi_v2.Document) to
// validate on the client what the server cannot (a kind: List document): a document with no
// definitions, so that kubectl checks nothing there and each item it then sends carries
// fieldValidation=Strict to the server.
// The type kubectl asks for, "application/com.github.proto-openapi.spec.v2@v1.0+protobuf", is not
// a media type Go's mime package parses back from a response; the bytes are what it reads.
inline constexpr std::string_view kOpenApiV2MediaType = "application/octet-stream";
std::string OpenApiV2Protobuf();

// The unknown fields of `object` (as written to `type`), as the real API names them:
// "spec.containers[0].imagePullPolicyy", in document order.
std::vector<std::string> UnknownFields(const ResourceType& type, const rapidjson::Value& object);

}  // namespace kubesched::testapi
