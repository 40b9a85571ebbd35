#include "tests/testapi/protobuf.h"

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/match.h"
#include "tests/testapi/api_fixture.h"

namespace kubesched::testapi {
namespace {

// Protobuf wire format, as k8s.io/api's generated marshallers write it.
std::string Varint(uint64_t value) {
  std::string out;
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
  return out;
}
std::string Bytes(int field, const std::string& bytes) {
  return Varint(static_cast<uint64_t>(field) << 3 | 2) + Varint(bytes.size()) + bytes;
}
std::string Bool(int field, bool value) {
  return Varint(static_cast<uint64_t>(field) << 3) + Varint(value ? 1 : 0);
}
std::string Entry(int field, const std::string& key, const std::string& value) {
  return Bytes(field, Bytes(1, key) + Bytes(2, value));
}
std::string Envelope(const std::string& kind, const std::string& raw) {
  return std::string("k8s\0", 4) + Bytes(1, Bytes(1, "v1") + Bytes(2, kind)) + Bytes(2, raw);
}
// ObjectMeta as Go writes it: every string, even empty, and an empty creationTimestamp.
std::string Meta(const std::string& name, const std::string& extra = "") {
  return Bytes(1, Bytes(1, name) + Bytes(2, "") + Bytes(3, "") + Bytes(4, "") + Bytes(5, "") +
                      Bytes(6, "") + Varint(7 << 3) + Varint(0) + Bytes(8, "") + extra);
}

// What kubectl v1.32 sends for `create namespace team-a` and `create configmap settings -n team-a
// --from-literal=mode=fast`.
constexpr char kKubectlNamespace[] =
    "\x6b\x38\x73\x00\x0a\x0f\x0a\x02\x76\x31\x12\x09\x4e\x61\x6d\x65\x73\x70\x61\x63"
    "\x65\x12\x1e\x0a\x16\x0a\x06\x74\x65\x61\x6d\x2d\x61\x12\x00\x1a\x00\x22\x00\x2a"
    "\x00\x32\x00\x38\x00\x42\x00\x12\x00\x1a\x02\x0a\x00\x1a\x00\x22\x00";
constexpr char kKubectlConfigMap[] =
    "\x6b\x38\x73\x00\x0a\x0f\x0a\x02\x76\x31\x12\x09\x43\x6f\x6e\x66\x69\x67\x4d\x61"
    "\x70\x12\x2e\x0a\x1e\x0a\x08\x73\x65\x74\x74\x69\x6e\x67\x73\x12\x00\x1a\x06\x74"
    "\x65\x61\x6d\x2d\x61\x22\x00\x2a\x00\x32\x00\x38\x00\x42\x00\x12\x0c\x0a\x04\x6d"
    "\x6f\x64\x65\x12\x04\x66\x61\x73\x74\x1a\x00\x22\x00";

std::string Captured(const char* bytes, size_t size) { return std::string(bytes, size - 1); }

TEST_CASE("the bodies kubectl sends decode", "[testapi]") {
  auto ns = DecodeProtobufObject(Captured(kKubectlNamespace, sizeof(kKubectlNamespace)));
  REQUIRE(ns.ok());
  CHECK(Serialize(*ns) ==
        R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a"},"spec":{}})");
  auto config_map = DecodeProtobufObject(Captured(kKubectlConfigMap, sizeof(kKubectlConfigMap)));
  REQUIRE(config_map.ok());
  CHECK(Serialize(*config_map) ==
        R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"settings",)"
        R"("namespace":"team-a"},"data":{"mode":"fast"}})");
}

TEST_CASE("a protobuf Namespace decodes to its JSON form", "[testapi]") {
  const std::string body =
      Envelope("Namespace", Meta("team-a", Entry(11, "team", "a")) + Bytes(2, "") + Bytes(3, ""));
  auto decoded = DecodeProtobufObject(body);
  REQUIRE(decoded.ok());
  CHECK(Serialize(*decoded) ==
        R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team-a",)"
        R"("labels":{"team":"a"}},"spec":{}})");
}

TEST_CASE("a protobuf ConfigMap keeps its data", "[testapi]") {
  auto config_map =
      DecodeProtobufObject(Envelope("ConfigMap", Meta("settings") + Entry(2, "k", "v") +
                                                     Entry(3, "raw", "\x01\x02") + Bool(4, true)));
  REQUIRE(config_map.ok());
  CHECK(StringAt(*config_map, "data.k") == "v");
  CHECK(StringAt(*config_map, "binaryData.raw") == "AQI=");
  CHECK((*config_map)["immutable"].GetBool());
}

TEST_CASE("protobuf this server does not decode is refused with a clear error", "[testapi]") {
  auto pod = DecodeProtobufObject(Envelope("Pod", Meta("p")));
  CHECK(pod.status().code() == absl::StatusCode::kUnimplemented);
  CHECK(absl::StrContains(pod.status().message(), "does not decode v1 Pod"));
  auto unknown_field = DecodeProtobufObject(Envelope("ConfigMap", Meta("c") + Bytes(9, "x")));
  CHECK(unknown_field.status().code() == absl::StatusCode::kUnimplemented);
  CHECK(absl::StrContains(unknown_field.status().message(), "ConfigMap field 9"));
  CHECK(DecodeProtobufObject("{}").status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(DecodeProtobufObject(std::string("k8s\0\x0a\x10", 6)).status().code() ==
        absl::StatusCode::kInvalidArgument);  // a length beyond the end
}

TEST_CASE("the server creates from protobuf and answers other media types with 415", "[testapi]") {
  ApiFixture f;
  HttpResponse created =
      f.Call("POST", "/api/v1/namespaces", Envelope("Namespace", Meta("team-a") + Bytes(2, "")),
             "application/vnd.kubernetes.protobuf");
  INFO(created.body);
  REQUIRE(created.status == 201);
  CHECK(created.content_type == "application/json");
  CHECK(StringAt(Json(created.body), "status.phase") == "Active");

  HttpResponse pod = f.Call("POST", "/api/v1/namespaces/default/pods", Envelope("Pod", Meta("p")),
                            "application/vnd.kubernetes.protobuf");
  CHECK(pod.status == 415);
  CHECK(StringAt(Json(pod.body), "reason") == "UnsupportedMediaType");
  HttpResponse cbor =
      f.Call("POST", "/api/v1/namespaces/default/configmaps", "\xa0", "application/cbor");
  CHECK(cbor.status == 415);
  CHECK(absl::StrContains(StringAt(Json(cbor.body), "message"),
                          "the body of the request was in an unknown format - accepted media "
                          "types include: application/json, application/yaml"));
  HttpResponse protobuf_only = f.api.Handle({.method = "GET",
                                             .target = "/api/v1/namespaces",
                                             .accept = "application/vnd.kubernetes.protobuf"});
  CHECK(protobuf_only.status == 406);
  CHECK(StringAt(Json(protobuf_only.body), "reason") == "NotAcceptable");
}

}  // namespace
}  // namespace kubesched::testapi
