#pragma once

// The Kubernetes protobuf encoding (application/vnd.kubernetes.protobuf) of the few objects that
// kubectl sends that way: the typed clients of `kubectl create namespace|configmap` encode
// their body in protobuf unconditionally (client-go falls back to JSON after a 415 only for CBOR),
// so a server that wants those commands to work must read it. The envelope is the 4-byte magic
// "k8s\0" and a runtime.Unknown message (typeMeta, raw); raw is the object's own message.
//
// Only what those commands set is decoded; any other field, kind or wire type is an error, which
// the server answers with 415 Unsupported Media Type.

#include <string_view>

#include "absl/status/statusor.h"
#include "rapidjson/document.h"

namespace kubesched::testapi {

inline constexpr std::string_view kProtobufMediaType = "application/vnd.kubernetes.protobuf";

// The object of a protobuf request body as JSON (apiVersion, kind, metadata, ...). Errors are
// InvalidArgument (not protobuf at all) or Unimplemented (a kind or field this server does not
// decode); their message says which.
absl::StatusOr<rapidjson::Document> DecodeProtobufObject(std::string_view body);

}  // namespace kubesched::testapi
