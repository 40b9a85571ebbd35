// GET /testapi/requests: every request the test API server was sent, by token, method, path and
// watch, counted; its own control paths left out; emptied with the statistics.

#include "tests/testapi/request_log.h"

#include <catch2/catch.hpp>
#include <string>

#include "rapidjson/document.h"
#include "tests/testapi/api_fixture.h"

namespace kubesched::testapi {
namespace {

TEST_CASE("the request log counts each request by token, method, path and watch", "[testapi]") {
  ApiFixture f;
  f.api.Handle({.method = "GET",
                .target = "/api/v1/pods?watch=true&resourceVersion=1",
                .authorization = "Bearer sched-token"});
  f.api.Handle(
      {.method = "GET", .target = "/api/v1/pods?watch=1", .authorization = "Bearer sched-token"});
  f.Get("/api/v1/pods?limit=500");
  f.Call("POST", "/api/v1/namespaces/default/pods/missing/binding", "{}");
  f.Get("/testapi/stats");

  rapidjson::Document log = Json(f.Get("/testapi/requests").body);
  const rapidjson::Value& requests = log["requests"];
  REQUIRE(requests.Size() == 3);
  // Sorted by token, method, path, watch; a request that failed (404) is recorded too.
  CHECK(std::string(requests[0]["by"].GetString()).empty());
  CHECK(std::string(requests[0]["method"].GetString()) == "GET");
  CHECK(std::string(requests[0]["path"].GetString()) == "/api/v1/pods");
  CHECK_FALSE(requests[0]["watch"].GetBool());
  CHECK(std::string(requests[1]["method"].GetString()) == "POST");
  CHECK(std::string(requests[1]["path"].GetString()) ==
        "/api/v1/namespaces/default/pods/missing/binding");
  CHECK(std::string(requests[2]["by"].GetString()) == "sched-token");
  CHECK(requests[2]["watch"].GetBool());
  CHECK(requests[2]["count"].GetInt64() == 2);

  REQUIRE(f.Call("POST", "/testapi/stats/reset").status == 200);
  CHECK(Json(f.Get("/testapi/requests").body)["requests"].Size() == 0);
}

}  // namespace
}  // namespace kubesched::testapi
