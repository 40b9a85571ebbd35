// The test API server's answer to a watch from a resourceVersion it has never reached, as after
// the API server lost its state: the real watch cache's 504 "Too large resource version".

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/str_cat.h"
#include "rapidjson/document.h"
#include "tests/testapi/api_fixture.h"

namespace kubesched::testapi {
namespace {

using Fixture = ApiFixture;

TEST_CASE("a watch from a future resourceVersion is answered 504 Too large resource version",
          "[testapi]") {
  Fixture f;
  const uint64_t current = f.store.current_resource_version();
  const uint64_t future = current + 1000;

  HttpResponse response = f.Get(
      absl::StrCat("/api/v1/pods?watch=true&allowWatchBookmarks=true&resourceVersion=", future));

  CHECK(response.stream == nullptr);
  REQUIRE(response.status == 504);
  rapidjson::Document status = Json(response.body);
  CHECK(std::string(status["kind"].GetString()) == "Status");
  CHECK(std::string(status["status"].GetString()) == "Failure");
  CHECK(std::string(status["reason"].GetString()) == "Timeout");
  CHECK(status["code"].GetInt() == 504);
  CHECK(std::string(status["message"].GetString()) ==
        absl::StrCat("Timeout: Too large resource version: ", future, ", current: ", current));
  const rapidjson::Value& details = status["details"];
  CHECK(details["retryAfterSeconds"].GetInt() == 1);
  REQUIRE(details["causes"].Size() == 1);
  CHECK(std::string(details["causes"][0]["reason"].GetString()) == "ResourceVersionTooLarge");
  CHECK(std::string(details["causes"][0]["message"].GetString()) == "Too large resource version");
}

TEST_CASE("a watch from the current resourceVersion opens", "[testapi]") {
  Fixture f;
  HttpResponse response = f.Get(
      absl::StrCat("/api/v1/pods?watch=true&resourceVersion=", f.store.current_resource_version()));
  CHECK(response.stream != nullptr);
}

}  // namespace
}  // namespace kubesched::testapi
