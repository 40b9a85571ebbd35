#include "tests/testapi/event_views.h"

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/match.h"
#include "tests/testapi/api_fixture.h"

namespace kubesched::testapi {
namespace {

constexpr char kEvents[] = "/apis/events.k8s.io/v1/namespaces/default/events";

std::string Event(const std::string& name, const std::string& extra = "") {
  return R"({"apiVersion":"events.k8s.io/v1","kind":"Event","metadata":{"name":")" + name +
         R"("},"eventTime":"2026-01-02T03:04:05.000000Z","reportingController":"kubesched",)"
         R"("reportingInstance":"kubesched-0","action":"Scheduling","reason":"FailedScheduling",)"
         R"("regarding":{"apiVersion":"v1","kind":"Pod","namespace":"default","name":"web"},)"
         R"("note":"0/1 nodes are available: 1 Insufficient cpu.","type":"Warning")" +
         extra + "}";
}

TEST_CASE("events.k8s.io/v1 creates are validated as the real API does", "[testapi]") {
  ApiFixture f;
  CHECK(f.Call("POST", kEvents, Event("ok")).status == 201);
  HttpResponse missing = f.Call(
      "POST", kEvents,
      R"({"metadata":{"name":"bare"},"regarding":{"kind":"Pod","name":"web"},"type":"Odd"})");
  CHECK(missing.status == 422);
  CHECK(StringAt(Json(missing.body), "reason") == "Invalid");
  CHECK(StringAt(Json(missing.body), "message") ==
        "Event.events.k8s.io \"bare\" is invalid: [eventTime: Required value, type: Invalid "
        "value: \"\": has invalid value: Odd, reportingController: Required value, "
        "reportingInstance: Required value, action: Required value, reason: Required value]");
  HttpResponse series =
      f.Call("POST", kEvents, Event("one", R"(,"series":{"count":1,"lastObservedTime":"x"})"));
  CHECK(series.status == 422);
  CHECK(absl::StrContains(StringAt(Json(series.body), "message"),
                          "series.count: Invalid value: \"\": should be at least 2"));
  const std::string long_note = std::string(R"(,"note":")") + std::string(1025, 'n') + "\"";
  std::string with_long_note = Event("long");
  with_long_note.replace(
      with_long_note.find(R"(,"note":)"),
      std::string(R"(,"note":"0/1 nodes are available: 1 Insufficient cpu.")").size(), long_note);
  CHECK(f.Call("POST", kEvents, with_long_note).status == 422);
  // Core v1 keeps its legacy rules: the same bare event is accepted there.
  CHECK(f.Call("POST", "/api/v1/namespaces/default/events",
               R"({"metadata":{"name":"bare"},"involvedObject":{"kind":"Pod","name":"web"}})")
            .status == 201);
}

TEST_CASE("a series PATCH is checked, and a missing event is 404", "[testapi]") {
  ApiFixture f;
  REQUIRE(f.Call("POST", kEvents, Event("web.1")).status == 201);
  const std::string target = std::string(kEvents) + "/web.1";
  HttpResponse patched = f.Call(
      "PATCH", target, R"({"series":{"count":3,"lastObservedTime":"2026-01-02T03:05:00.000000Z"}})",
      "application/strategic-merge-patch+json");
  CHECK(patched.status == 200);
  CHECK(Json(patched.body)["series"]["count"].GetInt() == 3);
  CHECK(
      f.Call("PATCH", target, R"({"series":{"count":1}})", "application/merge-patch+json").status ==
      422);
  // A patch that leaves the series alone is not checked against it.
  CHECK(f.Call("PATCH", target, R"({"note":"changed"})", "application/merge-patch+json").status ==
        200);
  HttpResponse gone = f.Call("PATCH", std::string(kEvents) + "/web.404",
                             R"({"series":{"count":2,"lastObservedTime":"x"}})",
                             "application/strategic-merge-patch+json");
  CHECK(gone.status == 404);
  CHECK(StringAt(Json(gone.body), "reason") == "NotFound");
}

}  // namespace
}  // namespace kubesched::testapi
