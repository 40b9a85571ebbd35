// The test API server's admission of PriorityClasses, as upstream's ValidatePriorityClass: user
// classes above HighestUserDefinablePriority are refused on create.

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/str_cat.h"
#include "rapidjson/document.h"
#include "tests/testapi/api_fixture.h"

namespace kubesched::testapi {
namespace {

constexpr char kClasses[] = "/apis/scheduling.k8s.io/v1/priorityclasses";

struct Fixture : ApiFixture {
  HttpResponse CreateClass(const std::string& name, int64_t value) {
    return Call("POST", kClasses,
                absl::StrCat(R"({"metadata":{"name":")", name, R"("},"value":)", value, "}"));
  }
};

std::string Message(const HttpResponse& response) {
  rapidjson::Document status;
  status.Parse(response.body.data(), response.body.size());
  REQUIRE(status.IsObject());
  return status["message"].GetString();
}

TEST_CASE("a user PriorityClass above 1000000000 is refused 422 with upstream's message",
          "[testapi]") {
  Fixture f;
  CHECK(f.CreateClass("highest", 1000000000).status == 201);
  const HttpResponse refused = f.CreateClass("rogue", 1000000001);
  CHECK(refused.status == 422);
  CHECK(Message(refused) ==
        "PriorityClass.scheduling.k8s.io \"rogue\" is invalid: value: Forbidden: maximum allowed "
        "value of a user defined priority is 1000000000");
  CHECK(f.Call("GET", absl::StrCat(kClasses, "/rogue")).status == 404);
}

}  // namespace
}  // namespace kubesched::testapi
