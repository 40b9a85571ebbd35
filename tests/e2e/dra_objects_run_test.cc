// The Dynamic Resource Allocation objects in `kubesched run`, end to end: the real binary against
// kubesched-testapi serving resource.k8s.io/v1. The informers list and watch the four kinds; a
// claim or a slice that appears while running reaches the scheduler (the pod waiting on its
// claims is retried on that event); a pod with claims keeps its reason, since no plugin
// allocates claims yet, while its neighbours bind. Against a server without resource.k8s.io/v1
// (a cluster before Kubernetes 1.34) kubesched says so once per kind and schedules as before.
// Outcomes are polled for with deadlines, never slept for.

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
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
constexpr char kDra[] = "/apis/resource.k8s.io/v1";

std::string PodJson(const std::string& name, const std::string& claims_json = "") {
  return absl::StrCat(
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
      R"(","namespace":"default"},"spec":{"schedulerName":"kubesched",)",
      claims_json.empty() ? "" : absl::StrCat(R"("resourceClaims":)", claims_json, ","),
      R"("containers":[{"name":"c","image":"busybox","resources":{"requests":{"cpu":"1"}}}]}})");
}

std::string SliceJson(const std::string& name, const std::string& node) {
  return absl::StrCat(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",)",
                      R"("metadata":{"name":")", name, R"("},"spec":{"driver":"gpu.example.com",)",
                      R"("nodeName":")", node, R"(","pool":{"name":")", node,
                      R"(","generation":1,"resourceSliceCount":1},"devices":[{"name":"gpu-0",)",
                      R"("attributes":{"model":{"string":"A100"}}}]}})");
}

std::string ClaimJson(const std::string& name) {
  return absl::StrCat(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",)",
                      R"("metadata":{"name":")", name, R"("},"spec":{"devices":{"requests":)",
                      R"([{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com"}}]}}})");
}

void CreateNode(Api& api) {
  api.Create("/api/v1/nodes",
             R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-0"},)"
             R"("status":{"allocatable":{"cpu":"8","memory":"64Gi","pods":"110"}}})");
}

std::string NodeName(Api& api, const std::string& pod) {
  const rapidjson::Document json = api.GetOk("/api/v1/namespaces/default/pods/" + pod);
  const auto spec = json.FindMember("spec");
  if (spec == json.MemberEnd() || !spec->value.HasMember("nodeName")) return "";
  return Str(spec->value["nodeName"]);
}

// The message of the pod's PodScheduled condition ("" without one).
std::string PodScheduledMessage(Api& api, const std::string& pod) {
  const rapidjson::Document json = api.GetOk("/api/v1/namespaces/default/pods/" + pod);
  if (!json.HasMember("status") || !json["status"].HasMember("conditions")) return "";
  for (const rapidjson::Value& condition : json["status"]["conditions"].GetArray()) {
    if (Str(condition["type"]) == "PodScheduled" && condition.HasMember("message")) {
      return Str(condition["message"]);
    }
  }
  return "";
}

// Waits until the claim pod is parked in the unschedulable set, where a cluster event moves it.
void AwaitParked(ChildProcess& scheduler) {
  testing::RequireEventually("the claim pod waits in the unschedulable set", scheduler, [&] {
    return testing::ScrapeMetrics(scheduler).Value(metrics::kPendingPods,
                                                   {{"queue", "unschedulable"}}) == 1;
  });
}

// How many pods entered a sub-queue on the incoming-pods `event` ("ResourceClaimChange").
double IncomingOn(ChildProcess& scheduler, const std::string& event) {
  return testing::ScrapeMetrics(scheduler).Value(metrics::kQueueIncomingPodsTotal,
                                                 {{"event", event}});
}

TEST_CASE("run: the DRA objects are listed and watched, and a claim pod keeps its reason",
          "[run][e2e][dra]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  Api api(**server);
  CreateNode(api);
  api.Create(absl::StrCat(kDra, "/deviceclasses"),
             R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass",)"
             R"("metadata":{"name":"gpu.example.com"},"spec":{"selectors":[{"cel":)"
             R"({"expression":"device.driver == \"gpu.example.com\""}}]}})");
  api.Create(absl::StrCat(kDra, "/resourceslices"), SliceJson("node-0-gpu", "node-0"));
  api.Create(absl::StrCat(kDra, "/namespaces/default/resourceclaimtemplates"),
             R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate",)"
             R"("metadata":{"name":"one-gpu"},"spec":{"spec":{"devices":{"requests":)"
             R"([{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com"}}]}}}})");
  api.Create(absl::StrCat(kDra, "/namespaces/default/resourceclaims"), ClaimJson("train"));
  api.Create("/api/v1/namespaces/default/pods",
             PodJson("trainer", R"([{"name":"gpu","resourceClaimName":"train"}])"));
  api.Create("/api/v1/namespaces/default/pods", PodJson("plain"));
  auto started = testing::StartKubeschedRun({.kubeconfig = (*server)->kubeconfig()});
  ChildProcess& scheduler = *started;

  testing::RequireEventually("the pod without claims is bound", scheduler,
                             [&] { return NodeName(api, "plain") == "node-0"; });
  testing::RequireEventually("the claim pod has its reason", scheduler, [&] {
    return absl::StrContains(PodScheduledMessage(api, "trainer"),
                             "pod has resource claims (spec.resourceClaims), but no plugin of its "
                             "profile allocates them");
  });
  // The four kinds were listed and are watched.
  const std::string requests = api.Send("GET", "/testapi/requests").body;
  for (const char* plural :
       {"deviceclasses", "resourceslices", "resourceclaims", "resourceclaimtemplates"}) {
    INFO(plural);
    CHECK(absl::StrContains(requests, absl::StrCat(kDra, "/", plural)));
  }
  CHECK_FALSE(absl::StrContains(scheduler.ReadStderr(), "resource.k8s.io/v1 is not served"));

  // Objects written while running arrive: each moves the waiting claim pod on its event.
  AwaitParked(scheduler);
  const double claim_moves = IncomingOn(scheduler, "ResourceClaimChange");
  api.Create(absl::StrCat(kDra, "/namespaces/default/resourceclaims"), ClaimJson("later"));
  testing::RequireEventually("a new claim reaches the scheduler", scheduler, [&] {
    return IncomingOn(scheduler, "ResourceClaimChange") > claim_moves;
  });
  AwaitParked(scheduler);
  const double device_moves = IncomingOn(scheduler, "DeviceChange");
  api.Create(absl::StrCat(kDra, "/resourceslices"), SliceJson("node-0-more", "node-0"));
  testing::RequireEventually("a new slice reaches the scheduler", scheduler,
                             [&] { return IncomingOn(scheduler, "DeviceChange") > device_moves; });
  CHECK(NodeName(api, "trainer").empty());
  REQUIRE(scheduler.Stop(SIGTERM, absl::Seconds(10)).value_or(-1) == 0);
}

TEST_CASE("run: a server without resource.k8s.io/v1 is said once per kind and costs nothing else",
          "[run][e2e][dra]") {
  auto server = TestApiProcess::Start({"--runtime-config", "resource.k8s.io/v1=false"});
  REQUIRE(server.ok());
  Api api(**server);
  CreateNode(api);
  api.Create("/api/v1/namespaces/default/pods", PodJson("plain"));
  auto started = testing::StartKubeschedRun({.kubeconfig = (*server)->kubeconfig()});
  ChildProcess& scheduler = *started;
  testing::RequireEventually("the pod is bound", scheduler,
                             [&] { return NodeName(api, "plain") == "node-0"; });
  testing::RequireEventually("the absence is logged for each kind", scheduler, [&] {
    const std::string log = scheduler.ReadStderr();
    for (const char* kind :
         {"DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate"}) {
      if (!absl::StrContains(log, absl::StrCat(kind, " reflector: the API server does not serve ",
                                               "/apis/resource.k8s.io/v1/"))) {
        return false;
      }
    }
    return true;
  });
  CHECK(testing::CountInLog(scheduler, "resource.k8s.io/v1 is not served") == 4);
  REQUIRE(scheduler.Stop(SIGTERM, absl::Seconds(10)).value_or(-1) == 0);
}

}  // namespace
}  // namespace kubesched
