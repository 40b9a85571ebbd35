// Scheduling gates in `kubesched run`, end to end: the real binary against kubesched-testapi. A
// pod created with scheduling gates is held (never tried, counted as gated) while the pods
// around it bind, and binds as soon as an update removes its gates.

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "rapidjson/document.h"
#include "scheduler/metrics/scheduler_metrics.h"
#include "tests/testapi/testapi_process.h"
#include "tests/testing/child_process.h"
#include "tests/testing/kubesched_process.h"
#include "tests/testing/scrape.h"
#include "tests/testing/test_api_client.h"

namespace kubesched {
namespace {

using testapi::TestApiProcess;
using testing::ChildProcess;
using Api = testing::TestApiClient;

constexpr auto* Str = &testing::StringOf;

std::string PodJson(const std::string& name, const std::string& gates_json = "") {
  return absl::StrCat(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
      R"(","namespace":"default"},"spec":{"schedulerName":"kubesched",)",
      gates_json.empty() ? "" : absl::StrCat(R"("schedulingGates":)", gates_json, ","),
      R"("containers":[{"name":"c","image":"busybox","resources":{"requests":{"cpu":"1"}}}]}})");
}

std::string NodeName(Api& api, const std::string& pod) {
  const rapidjson::Document json = api.GetOk("/api/v1/namespaces/default/pods/" + pod);
  const auto spec = json.FindMember("spec");
  if (spec == json.MemberEnd() || !spec->value.HasMember("nodeName")) return "";
  return Str(spec->value["nodeName"]);
}

// The reason of the pod's PodScheduled condition ("" without one).
std::string PodScheduledReason(Api& api, const std::string& pod) {
  const rapidjson::Document json = api.GetOk("/api/v1/namespaces/default/pods/" + pod);
  if (!json.HasMember("status") || !json["status"].HasMember("conditions")) return "";
  for (const rapidjson::Value& condition : json["status"]["conditions"].GetArray()) {
    if (Str(condition["type"]) == "PodScheduled") return Str(condition["reason"]);
  }
  return "";
}

TEST_CASE("run: a gated pod stays unbound and binds within a second of its gates' removal",
          "[run][e2e][gates]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  Api api(**server);
  api.Create("/api/v1/nodes",
             R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-0"},)"
             R"("status":{"allocatable":{"cpu":"8","memory":"64Gi","pods":"110"}}})");
  api.Create("/api/v1/namespaces/default/pods",
             PodJson("gated", R"([{"name":"example.com/foo"},{"name":"example.com/bar"}])"));
  api.Create("/api/v1/namespaces/default/pods", PodJson("free"));
  auto started = testing::StartKubeschedRun({.kubeconfig = (*server)->kubeconfig()});
  ChildProcess& scheduler = *started;

  // Both pods came in the initial list, so once the free one is bound the gated one was seen.
  testing::RequireEventually("the pod without gates is bound", scheduler,
                             [&] { return !NodeName(api, "free").empty(); });
  testing::Scrape scrape;
  testing::RequireEventually("the gated pod is counted as gated", scheduler, [&] {
    scrape = testing::ScrapeMetrics(scheduler);
    return scrape.Value(metrics::kPendingPods, {{"queue", "gated"}}) == 1;
  });
  CHECK(NodeName(api, "gated").empty());
  CHECK(scrape.Value(metrics::kScheduleAttemptsTotal) == 1);  // the free pod's only
  CHECK(scrape.Value(metrics::kUnschedulablePods, {{"plugin", "SchedulingGates"}}) == 1);
  // The API server marked it at creation; kubesched, which never tried it, wrote nothing over it.
  CHECK(PodScheduledReason(api, "gated") == "SchedulingGated");

  // Its gates removed: bound at once, with no backoff to wait out.
  const absl::Time ungated = absl::Now();
  const client::HttpResponse patched =
      api.Send("PATCH", "/api/v1/namespaces/default/pods/gated",
               R"({"spec":{"schedulingGates":null}})", "application/merge-patch+json");
  REQUIRE(patched.status == 200);
  testing::RequireEventually("the ungated pod is bound", scheduler,
                             [&] { return !NodeName(api, "gated").empty(); });
  const absl::Duration took = absl::Now() - ungated;
  INFO("bound " << absl::FormatDuration(took) << " after its last gate was removed");
  CHECK(took < absl::Seconds(1));
  CHECK(NodeName(api, "gated") == "node-0");
  scrape = testing::ScrapeMetrics(scheduler);
  CHECK(scrape.Value(metrics::kPendingPods, {{"queue", "gated"}}) == 0);
  CHECK(scrape.Value(metrics::kScheduleAttemptsTotal, {{"result", "scheduled"}}) == 2);
  REQUIRE(scheduler.Stop(SIGTERM, absl::Seconds(10)).value_or(-1) == 0);
}

}  // namespace
}  // namespace kubesched
