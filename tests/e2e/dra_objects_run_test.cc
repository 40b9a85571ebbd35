// Dynamic Resource Allocation in `kubesched run`, end to end: the real binary against
// kubesched-testapi serving resource.k8s.io/v1. The informers list and watch the four kinds;
// DynamicResources allocates claims to devices of the nodes their pods go to and writes each
// claim's allocation and reservedFor; a pod whose template claim is not made yet waits until its
// status names the claim (the test plays the ResourceClaim controller); a claim or a slice that
// appears while running moves the pod that waits for it. Against a server without
// resource.k8s.io/v1 (a cluster before Kubernetes 1.34) kubesched says so once per kind and
// schedules as before. A claim allocated on a node where its pod cannot go is deallocated
// (PostFilter) and allocated again where the pod can; a binding refused after PreBind takes the
// pod out of the claim's reservedFor before the pod is tried again. Outcomes are polled for with
// deadlines, never slept for.

#include <catch2/catch.hpp>
#include <fstream>
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

// A slice of `node` with gpus gpu-0 .. gpu-<count-1>.
std::string SliceJson(const std::string& name, const std::string& node, int count = 1) {
  std::string devices;
  for (int i = 0; i < count; ++i) {
    absl::StrAppend(&devices, i == 0 ? "" : ",", R"({"name":"gpu-)", i,
                    R"(","attributes":{"model":{"string":"A100"}}})");
  }
  return absl::StrCat(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceSlice",)",
                      R"("metadata":{"name":")", name, R"("},"spec":{"driver":"gpu.example.com",)",
                      R"("nodeName":")", node, R"(","pool":{"name":")", node,
                      R"(","generation":1,"resourceSliceCount":1},"devices":[)", devices, "]}}");
}

// A claim for one gpu; `owner` (JSON) makes it a pod's generated claim.
std::string ClaimJson(const std::string& name, const std::string& owner = "") {
  return absl::StrCat(R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim",)",
                      R"("metadata":{"name":")", name, R"(")",
                      owner.empty() ? "" : absl::StrCat(R"(,"ownerReferences":[)", owner, "]"),
                      R"(},"spec":{"devices":{"requests":)",
                      R"([{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com"}}]}}})");
}

void CreateNode(Api& api, const std::string& name = "node-0") {
  api.Create(
      "/api/v1/nodes",
      absl::StrCat(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")", name,
                   R"("},"status":{"allocatable":{"cpu":"8","memory":"64Gi","pods":"110"}}})"));
}

void CreateGpuClass(Api& api) {
  api.Create(absl::StrCat(kDra, "/deviceclasses"),
             R"({"apiVersion":"resource.k8s.io/v1","kind":"DeviceClass",)"
             R"("metadata":{"name":"gpu.example.com"},"spec":{"selectors":[{"cel":)"
             R"({"expression":"device.driver == \"gpu.example.com\""}}]}})");
}

// node-0 and node-1, and the class of gpu.example.com's devices.
void CreateNodesAndGpuClass(Api& api) {
  CreateNode(api, "node-0");
  CreateNode(api, "node-1");
  CreateGpuClass(api);
}

// "pool/device reserved for pod" for the claim's allocation and reservation, "" without one.
std::string Allocation(Api& api, const std::string& claim) {
  const rapidjson::Document json =
      api.GetOk(absl::StrCat(kDra, "/namespaces/default/resourceclaims/", claim));
  if (!json.HasMember("status") || !json["status"].HasMember("allocation") ||
      !json["status"].HasMember("reservedFor")) {
    return "";
  }
  const rapidjson::Value& results = json["status"]["allocation"]["devices"]["results"];
  const rapidjson::Value& reserved = json["status"]["reservedFor"];
  if (results.Size() != 1 || reserved.Size() != 1) return "more than one";
  return absl::StrCat(Str(results[0]["pool"]), "/", Str(results[0]["device"]), " reserved for ",
                      Str(reserved[0]["name"]), " ", Str(reserved[0]["uid"]));
}

std::string Uid(Api& api, const std::string& pod) {
  return Str(api.GetOk("/api/v1/namespaces/default/pods/" + pod)["metadata"]["uid"]);
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

TEST_CASE(
    "run: claims get devices on their pods' nodes, and waiting pods move on claim and slice "
    "events",
    "[run][e2e][dra]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  Api api(**server);
  CreateNodesAndGpuClass(api);
  api.Create(absl::StrCat(kDra, "/resourceslices"), SliceJson("node-1-gpus", "node-1", 2));
  api.Create(absl::StrCat(kDra, "/namespaces/default/resourceclaimtemplates"),
             R"({"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaimTemplate",)"
             R"("metadata":{"name":"one-gpu"},"spec":{"spec":{"devices":{"requests":)"
             R"([{"name":"gpu","exactly":{"deviceClassName":"gpu.example.com"}}]}}}})");
  api.Create(absl::StrCat(kDra, "/namespaces/default/resourceclaims"), ClaimJson("train"));
  const std::string pods = "/api/v1/namespaces/default/pods";
  api.Create(pods, PodJson("trainer", R"([{"name":"gpu","resourceClaimName":"train"}])"));
  api.Create(pods,
             PodJson("templated", R"([{"name":"gpu","resourceClaimTemplateName":"one-gpu"}])"));
  api.Create(pods, PodJson("waiting", R"([{"name":"gpu","resourceClaimName":"later"}])"));
  api.Create(pods, PodJson("plain"));
  // The waiting pod is retried twice; a backoff of at most a second keeps the test short.
  const std::string config_path = (*server)->dir() + "/fast-backoff.yaml";
  std::ofstream(config_path) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                "kind: KubeSchedulerConfiguration\n"
                                "podInitialBackoffSeconds: 1\npodMaxBackoffSeconds: 1\n";
  auto started = testing::StartKubeschedRun(
      {.kubeconfig = (*server)->kubeconfig(), .config_path = config_path});
  ChildProcess& scheduler = *started;

  testing::RequireEventually("the pod without claims is bound", scheduler,
                             [&] { return !NodeName(api, "plain").empty(); });
  testing::RequireEventually("the claim pod is bound to its device's node", scheduler,
                             [&] { return NodeName(api, "trainer") == "node-1"; });
  CHECK(Allocation(api, "train") == "node-1/gpu-0 reserved for trainer " + Uid(api, "trainer"));
  // The four kinds were listed and are watched.
  const std::string requests = api.Send("GET", "/testapi/requests").body;
  for (const char* plural :
       {"deviceclasses", "resourceslices", "resourceclaims", "resourceclaimtemplates"}) {
    INFO(plural);
    CHECK(absl::StrContains(requests, absl::StrCat(kDra, "/", plural)));
  }
  CHECK_FALSE(absl::StrContains(scheduler.ReadStderr(), "resource.k8s.io/v1 is not served"));

  // The ResourceClaim controller's part: the template's claim, then its name in the pod's status.
  CHECK(NodeName(api, "templated").empty());
  const std::string owner =
      absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","name":"templated",)", R"("uid":")",
                   Uid(api, "templated"), R"(","controller":true})");
  api.Create(absl::StrCat(kDra, "/namespaces/default/resourceclaims"),
             ClaimJson("templated-gpu-x7k2q", owner));
  REQUIRE(api.Send("PATCH", pods + "/templated/status",
                   R"({"status":{"resourceClaimStatuses":[{"name":"gpu",)"
                   R"("resourceClaimName":"templated-gpu-x7k2q"}]}})",
                   "application/merge-patch+json")
              .status == 200);
  testing::RequireEventually("the template claim's pod is bound", scheduler,
                             [&] { return NodeName(api, "templated") == "node-1"; });
  CHECK(Allocation(api, "templated-gpu-x7k2q") ==
        "node-1/gpu-1 reserved for templated " + Uid(api, "templated"));

  // The pod whose claim does not exist waits, and is moved when it appears...
  testing::RequireEventually("the pod without its claim has upstream's reason", scheduler, [&] {
    return absl::StrContains(PodScheduledMessage(api, "waiting"),
                             R"(could not find ResourceClaim "default/later")");
  });
  AwaitParked(scheduler);
  const double claim_moves = IncomingOn(scheduler, "ResourceClaimChange");
  api.Create(absl::StrCat(kDra, "/namespaces/default/resourceclaims"), ClaimJson("later"));
  testing::RequireEventually("a new claim reaches the scheduler", scheduler, [&] {
    return IncomingOn(scheduler, "ResourceClaimChange") > claim_moves;
  });
  // ...but node-1's gpus are taken, until node-0 publishes one.
  testing::RequireEventually("the waiting pod finds no device", scheduler, [&] {
    return absl::StrContains(PodScheduledMessage(api, "waiting"), "cannot allocate all claims");
  });
  AwaitParked(scheduler);
  const double device_moves = IncomingOn(scheduler, "DeviceChange");
  api.Create(absl::StrCat(kDra, "/resourceslices"), SliceJson("node-0-gpu", "node-0"));
  testing::RequireEventually("a new slice reaches the scheduler", scheduler,
                             [&] { return IncomingOn(scheduler, "DeviceChange") > device_moves; });
  testing::RequireEventually("the waiting pod is bound to the new device's node", scheduler,
                             [&] { return NodeName(api, "waiting") == "node-0"; });
  CHECK(Allocation(api, "later") == "node-0/gpu-0 reserved for waiting " + Uid(api, "waiting"));
  REQUIRE(scheduler.Stop(SIGTERM, absl::Seconds(10)).value_or(-1) == 0);
}

// How many times kubesched sent `method` for `path` (the test server's request log).
int64_t Requests(Api& api, const std::string& method, const std::string& path) {
  const rapidjson::Document log = api.GetOk("/testapi/requests");
  int64_t count = 0;
  for (const rapidjson::Value& entry : log["requests"].GetArray()) {
    if (Str(entry["method"]) == method && Str(entry["path"]) == path) {
      count += entry["count"].GetInt64();
    }
  }
  return count;
}

TEST_CASE("run: a claim allocated where its pod cannot go is deallocated and allocated anew",
          "[run][e2e][dra]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  Api api(**server);
  CreateNodesAndGpuClass(api);
  api.Create(absl::StrCat(kDra, "/resourceslices"), SliceJson("node-0-gpu", "node-0"));
  api.Create(absl::StrCat(kDra, "/resourceslices"), SliceJson("node-1-gpu", "node-1"));
  // The claim was allocated on node-0 (by an earlier pod, say) and nothing reserves it; node-0 is
  // cordoned since.
  const std::string claim = absl::StrCat(kDra, "/namespaces/default/resourceclaims/stuck");
  api.Create(absl::StrCat(kDra, "/namespaces/default/resourceclaims"), ClaimJson("stuck"));
  REQUIRE(api.Send("PATCH", claim + "/status",
                   R"({"status":{"allocation":{"devices":{"results":[{"request":"gpu",)"
                   R"("driver":"gpu.example.com","pool":"node-0","device":"gpu-0"}]},)"
                   R"("nodeSelector":{"nodeSelectorTerms":[{"matchFields":[{"key":)"
                   R"("metadata.name","operator":"In","values":["node-0"]}]}]}}}})",
                   "application/merge-patch+json")
              .status == 200);
  REQUIRE(api.Send("PATCH", "/api/v1/nodes/node-0", R"({"spec":{"unschedulable":true}})",
                   "application/merge-patch+json")
              .status == 200);
  api.Create("/api/v1/namespaces/default/pods",
             PodJson("mover", R"([{"name":"gpu","resourceClaimName":"stuck"}])"));
  auto started = testing::StartKubeschedRun({.kubeconfig = (*server)->kubeconfig()});
  ChildProcess& scheduler = *started;

  testing::RequireEventually("the pod is bound to the node where its claim was allocated anew",
                             scheduler, [&] { return NodeName(api, "mover") == "node-1"; });
  CHECK(Allocation(api, "stuck") == "node-1/gpu-0 reserved for mover " + Uid(api, "mover"));
  CHECK(Requests(api, "PATCH", claim + "/status") >= 2);  // the deallocation, the reservation
  // Upstream's word for it, in the attempt's FailedScheduling Event.
  testing::RequireEventually("the failed attempt says the claim was deallocated", scheduler, [&] {
    return absl::StrContains(
        api.Send("GET", "/apis/events.k8s.io/v1/namespaces/default/events").body,
        "deallocation of ResourceClaim completed");
  });
  REQUIRE(scheduler.Stop(SIGTERM, absl::Seconds(10)).value_or(-1) == 0);
}

TEST_CASE("run: a binding refused after PreBind takes the pod out of its claim's reservedFor",
          "[run][e2e][dra]") {
  // The first Binding is refused (409) after PreBind allocated and reserved the claim.
  auto server = TestApiProcess::Start(
      {"--faults",
       R"({"errors":[{"verb":"create","resource":"pods/binding","code":409,"count":1}]})"});
  REQUIRE(server.ok());
  Api api(**server);
  CreateNode(api, "node-0");
  CreateGpuClass(api);
  api.Create(absl::StrCat(kDra, "/resourceslices"), SliceJson("node-0-gpu", "node-0"));
  api.Create(absl::StrCat(kDra, "/namespaces/default/resourceclaims"), ClaimJson("train"));
  api.Create("/api/v1/namespaces/default/pods",
             PodJson("trainer", R"([{"name":"gpu","resourceClaimName":"train"}])"));
  auto started = testing::StartKubeschedRun({.kubeconfig = (*server)->kubeconfig()});
  ChildProcess& scheduler = *started;

  testing::RequireEventually("the pod is bound on its second attempt", scheduler,
                             [&] { return NodeName(api, "trainer") == "node-0"; });
  // Reserved once, for the bound pod: the first attempt's reservation was taken back (a patch of
  // the status), and the second attempt reserved the claim again (another).
  CHECK(Allocation(api, "train") == "node-0/gpu-0 reserved for trainer " + Uid(api, "trainer"));
  const std::string status = absl::StrCat(kDra, "/namespaces/default/resourceclaims/train/status");
  CHECK(Requests(api, "PATCH", status) == 3);
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
