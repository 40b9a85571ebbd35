#include "tests/testapi/field_validation.h"

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/match.h"
#include "tests/testapi/api_fixture.h"

namespace kubesched::testapi {
namespace {

constexpr char kPodWithTypos[] =
    R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"web","labelz":{}},)"
    R"("spec":{"containers":[{"name":"c","image":"i","imagePullPolicyy":"Always",)"
    R"("resources":{"requests":{"cpu":"1"},"limitz":{}}}],"nodeSelector":{"any":"key"}}})";

TEST_CASE("unknown fields are named by their path, known maps are not searched", "[testapi]") {
  const ResourceType& pods = *FindResourceType("", "v1", "pods");
  CHECK(UnknownFields(pods, Json(kPodWithTypos)) ==
        std::vector<std::string>{"metadata.labelz", "spec.containers[0].imagePullPolicyy",
                                 "spec.containers[0].resources.limitz"});
  // Types without a field list here: only their metadata is checked.
  const ResourceType& leases = *FindResourceType("coordination.k8s.io", "v1", "leases");
  CHECK(UnknownFields(leases, Json(R"({"metadata":{"nme":"x"},"spec":{"anything":1}})")) ==
        std::vector<std::string>{"metadata.nme"});
}

TEST_CASE("fieldValidation=Strict refuses unknown fields as the real API does", "[testapi]") {
  ApiFixture f;
  HttpResponse strict =
      f.Call("POST", "/api/v1/namespaces/default/pods?fieldValidation=Strict", kPodWithTypos);
  CHECK(strict.status == 400);
  CHECK(StringAt(Json(strict.body), "reason") == "BadRequest");
  CHECK(StringAt(Json(strict.body), "message") ==
        "Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: unknown field "
        "\"metadata.labelz\", unknown field \"spec.containers[0].imagePullPolicyy\", unknown "
        "field \"spec.containers[0].resources.limitz\"");
  CHECK(f.Get("/api/v1/namespaces/default/pods/web").status == 404);

  SECTION("Warn (the default) creates and warns") {
    HttpResponse warned = f.Call("POST", "/api/v1/namespaces/default/pods", kPodWithTypos);
    CHECK(warned.status == 201);
    int warnings = 0;
    for (const auto& [name, value] : warned.headers) {
      if (name != "Warning") continue;
      ++warnings;
      CHECK(value.starts_with("299 - \"unknown field \\\""));
    }
    CHECK(warnings == 3);
  }
  SECTION("a strict patch is refused too, and bad modes are BadRequest") {
    REQUIRE(f.Call("POST", "/api/v1/namespaces/default/pods",
                   R"({"metadata":{"name":"ok"},"spec":{"containers":[{"name":"c","image":"i"}]}})")
                .status == 201);
    HttpResponse patched =
        f.Call("PATCH", "/api/v1/namespaces/default/pods/ok?fieldValidation=Strict",
               R"({"spec":{"nodeSelectr":{"a":"b"}}})", "application/merge-patch+json");
    CHECK(patched.status == 400);
    CHECK(absl::StrContains(StringAt(Json(patched.body), "message"),
                            "unknown field \"spec.nodeSelectr\""));
    CHECK(f.Call("POST", "/api/v1/namespaces/default/pods?fieldValidation=Loose", kPodWithTypos)
              .status == 400);
  }
}

TEST_CASE("OpenAPI v3 tells kubectl every type takes fieldValidation on PATCH", "[testapi]") {
  ApiFixture f;
  rapidjson::Document root = Json(f.Get("/openapi/v3").body);
  REQUIRE(root["paths"].HasMember("api/v1"));
  REQUIRE(root["paths"].HasMember("apis/events.k8s.io/v1"));
  const std::string url = StringAt(root["paths"]["api/v1"], "serverRelativeURL");
  HttpResponse core = f.Get(url);
  REQUIRE(core.status == 200);
  rapidjson::Document document = Json(core.body);
  const rapidjson::Value& pod = document["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"];
  CHECK(StringAt(pod["patch"], "x-kubernetes-group-version-kind.kind") == "Pod");
  CHECK(StringAt(pod["patch"]["parameters"][0], "name") == "fieldValidation");
  CHECK(StringAt(pod["patch"]["parameters"][0], "in") == "query");
  CHECK(document["paths"].HasMember("/api/v1/nodes/{name}"));
  CHECK(f.Get("/openapi/v3/apis/nothing/v1").status == 404);

  // The v2 document kubectl falls back to for a List: protobuf, swagger "2.0", no definitions.
  HttpResponse v2 = f.Get("/openapi/v2");
  CHECK(v2.status == 200);
  CHECK(v2.content_type == kOpenApiV2MediaType);
  CHECK(v2.body == std::string("\x0a\x03"
                               "2.0"
                               "\x12\x15\x0a\x0a"
                               "Kubernetes"
                               "\x12\x07"
                               "v1.32.0"));
}

}  // namespace
}  // namespace kubesched::testapi
