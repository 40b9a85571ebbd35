// `kubesched run` end to end: the real binary against kubesched-testapi (TLS + bearer token),
// objects created with kubectl and through the API, faults injected by the server. These tests
// check what a platform team relies on: every pod of ours bound exactly once, none lost, no node
// over-committed, other schedulers' pods left alone, clear errors instead of hangs, and one leader.

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "scheduler/api/decode_value.h"
#include "scheduler/client/kubeconfig.h"
#include "scheduler/client/rest_client.h"
#include "tests/e2e/fault_suite.h"
#include "tests/testapi/testapi_process.h"
#include "tests/testing/child_process.h"
#include "tests/testing/kubesched_process.h"
#include "tests/testing/test_api_client.h"
#include "tests/testing/wait.h"

namespace kubesched {
namespace {

using testapi::TestApiProcess;
using testing::ChildProcess;
using testing::StartKubeschedRun;
using testing::WaitForLog;

constexpr int64_t kNodeMilliCpu = 4000;

// The test's own view of the cluster: a REST client with the same kubeconfig kubesched uses.
class Api : public testing::TestApiClient {
 public:
  using TestApiClient::TestApiClient;

  std::vector<api::Pod> Pods() { return List<api::Pod>("/api/v1/pods", "Pod"); }

  // Items of a list, as kubesched's own decoder reads them.
  template <typename T>
  std::vector<T> List(const std::string& target, std::string_view kind) {
    client::HttpResponse response = Send("GET", target);
    REQUIRE(response.status == 200);
    rapidjson::Document list;
    list.Parse(response.body.data(), response.body.size());
    REQUIRE(list.IsObject());
    std::vector<T> items;
    for (const rapidjson::Value& item : list["items"].GetArray()) {
      auto object = api::DecodeObjectValue(item, kind);
      REQUIRE(object.ok());
      items.push_back(std::get<T>(*std::move(object)));
    }
    return items;
  }

  // The raw JSON items of a list (for events and conditions).
  rapidjson::Document RawList(const std::string& target) {
    client::HttpResponse response = Send("GET", target);
    REQUIRE(response.status == 200);
    rapidjson::Document list;
    list.Parse(response.body.data(), response.body.size());
    REQUIRE(list.IsObject());
    return list;
  }

  void SetFaults(const std::string& json) {
    client::HttpResponse response = Send("POST", "/testapi/faults", json);
    INFO(response.body);
    REQUIRE(response.status == 200);
  }
};

std::string NodeJson(const std::string& name) {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")", name,
                      R"(","labels":{"kubernetes.io/hostname":")", name,
                      R"("}},"status":{"capacity":{"cpu":"4","memory":"16Gi","pods":"110"},)",
                      R"("allocatable":{"cpu":"4","memory":"16Gi","pods":"110"}}})");
}

std::string PodJson(const std::string& name, const std::string& scheduler, const std::string& cpu) {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
                      R"(","namespace":"default"},"spec":{"schedulerName":")", scheduler,
                      R"(","containers":[{"name":"c","image":"busybox","resources":)",
                      R"({"requests":{"cpu":")", cpu, R"(","memory":"100Mi"}}}]}})");
}

void CreatePods(Api& api, const std::string& prefix, int count, const std::string& cpu) {
  for (int i = 0; i < count; ++i) {
    api.Create("/api/v1/namespaces/default/pods",
               PodJson(absl::StrCat(prefix, i), "kubesched", cpu));
  }
}

int64_t MilliCpu(const api::Pod& pod) {
  int64_t total = 0;
  for (const api::Container& container : pod.spec.containers) {
    total += container.requests.Get(api::kCpu);
  }
  return total;
}

// No node holds more CPU than it has.
void RequireNoOverCommit(const std::vector<api::Pod>& pods) {
  std::map<std::string, int64_t> used;
  for (const api::Pod& pod : pods) {
    if (!pod.spec.node_name.empty()) used[pod.spec.node_name] += MilliCpu(pod);
  }
  for (const auto& [node, milli_cpu] : used) {
    INFO("node " << node << " holds " << milli_cpu << "m CPU of " << kNodeMilliCpu << "m");
    CHECK(milli_cpu <= kNodeMilliCpu);
  }
}

int CountBound(const std::vector<api::Pod>& pods, std::string_view scheduler) {
  int bound = 0;
  for (const api::Pod& pod : pods) {
    bound += pod.spec.scheduler_name == scheduler && !pod.spec.node_name.empty() ? 1 : 0;
  }
  return bound;
}

// Waits until at least `count` pods of kubesched are bound; the pods at the end.
std::vector<api::Pod> WaitForBound(Api& api, int count, ChildProcess& scheduler,
                                   absl::Duration timeout = absl::Seconds(60)) {
  std::vector<api::Pod> pods;
  testing::RequireEventually(
      absl::StrCat(count, " pods of kubesched are bound"), scheduler,
      [&] { return CountBound(pods = api.Pods(), "kubesched") >= count; }, timeout);
  return pods;
}

// GET on kubesched's health server, on the port it logs.
client::HttpResponse Probe(ChildProcess& scheduler, const std::string& path) {
  return testing::LocalGet(testing::LoggedPort(scheduler, "health probes on port "), path);
}

const rapidjson::Value* FindItem(const rapidjson::Document& list, std::string_view name) {
  for (const rapidjson::Value& item : list["items"].GetArray()) {
    if (std::string_view(item["metadata"]["name"].GetString()) == name) return &item;
  }
  return nullptr;
}

// Events regarding `pod` with `reason`; their notes.
std::vector<std::string> EventNotes(Api& api, std::string_view pod, std::string_view reason) {
  rapidjson::Document events = api.RawList("/apis/events.k8s.io/v1/namespaces/default/events");
  std::vector<std::string> notes;
  for (const rapidjson::Value& event : events["items"].GetArray()) {
    if (std::string_view(event["regarding"]["name"].GetString()) == pod &&
        std::string_view(event["reason"].GetString()) == reason) {
      notes.emplace_back(event["note"].GetString());
    }
  }
  return notes;
}

// Events are written asynchronously: waits up to 30 s for at least one.
std::vector<std::string> WaitForEventNotes(Api& api, std::string_view pod,
                                           std::string_view reason) {
  std::vector<std::string> notes;
  testing::WaitUntil([&] { return !(notes = EventNotes(api, pod, reason)).empty(); },
                     absl::Seconds(30));
  return notes;
}

TEST_CASE("run: binds its pods from kubectl over TLS, leaves others alone, reports the rest",
          "[run][e2e]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  TestApiProcess& apiserver = **server;
  std::string manifest;
  for (int i = 0; i < 3; ++i) absl::StrAppend(&manifest, NodeJson(absl::StrCat("node-", i)), "\n");
  for (int i = 0; i < 12; ++i) {
    absl::StrAppend(&manifest, PodJson(absl::StrCat("web-", i), "kubesched", "900m"), "\n");
  }
  absl::StrAppend(&manifest, PodJson("theirs", "default-scheduler", "100m"), "\n",
                  PodJson("huge", "kubesched", "64"), "\n");
  const std::string manifest_path = apiserver.dir() + "/objects.json";
  std::ofstream(manifest_path) << manifest;
  auto created = testing::RunCommand({.argv = {"kubectl", "--kubeconfig", apiserver.kubeconfig(),
                                               "create", "--validate=false", "-f", manifest_path}},
                                     absl::Seconds(60));
  REQUIRE(created.ok());
  INFO(created->stdout_text << created->stderr_text);
  REQUIRE(created->exit_code == 0);

  auto scheduler = StartKubeschedRun({.kubeconfig = apiserver.kubeconfig()});
  Api api(apiserver);
  std::vector<api::Pod> pods = WaitForBound(api, 12, *scheduler);
  RequireNoOverCommit(pods);
  for (const char* path : {"/readyz", "/livez", "/healthz"}) {
    client::HttpResponse probe = Probe(*scheduler, path);
    CHECK(probe.status == 200);
    CHECK(probe.body == "ok");
  }

  // Four 900m pods per 4-CPU node: the 12 fill the 3 nodes exactly.
  std::map<std::string, int> per_node;
  for (const api::Pod& pod : pods) ++per_node[pod.spec.node_name];
  CHECK(per_node["node-0"] == 4);
  CHECK(per_node["node-1"] == 4);
  CHECK(per_node["node-2"] == 4);

  // The unschedulable pod gets its condition and a FailedScheduling event.
  std::vector<std::string> failed = WaitForEventNotes(api, "huge", "FailedScheduling");
  REQUIRE(failed.size() == 1);
  CHECK(absl::StrContains(failed[0], "0/3 nodes are available: 3 Insufficient cpu."));
  rapidjson::Document raw_pods = api.RawList("/api/v1/namespaces/default/pods");
  const rapidjson::Value* huge = FindItem(raw_pods, "huge");
  REQUIRE(huge != nullptr);
  bool has_condition = false;
  for (const rapidjson::Value& condition : (*huge)["status"]["conditions"].GetArray()) {
    if (std::string_view(condition["type"].GetString()) != "PodScheduled") continue;
    has_condition = true;
    CHECK(std::string_view(condition["status"].GetString()) == "False");
    CHECK(std::string_view(condition["reason"].GetString()) == "Unschedulable");
    CHECK(absl::StrContains(condition["message"].GetString(), "Insufficient cpu"));
  }
  CHECK(has_condition);

  // Each bound pod has its Scheduled event; the other scheduler's pod is untouched.
  std::vector<std::string> scheduled = WaitForEventNotes(api, "web-3", "Scheduled");
  REQUIRE(scheduled.size() == 1);
  CHECK(absl::StartsWith(scheduled[0], "Successfully assigned default/web-3 to node-"));
  const rapidjson::Value* theirs = FindItem(raw_pods, "theirs");
  REQUIRE(theirs != nullptr);
  CHECK(!(*theirs)["spec"].HasMember("nodeName"));
  CHECK(EventNotes(api, "theirs", "FailedScheduling").empty());

  // A pod created after start-up arrives through the watch.
  api.Create("/api/v1/nodes", NodeJson("node-3"));
  api.Create("/api/v1/namespaces/default/pods", PodJson("late", "kubesched", "1"));
  pods = WaitForBound(api, 13, *scheduler);
  RequireNoOverCommit(pods);
  CHECK(CountBound(pods, "kubesched") == 13);

  auto exit_code = scheduler->Stop(SIGTERM, absl::Seconds(15));
  REQUIRE(exit_code.ok());
  INFO(scheduler->ReadStderr());
  CHECK(*exit_code == 0);
  CHECK(absl::StrContains(scheduler->ReadStderr(), "received SIGTERM"));
}

TEST_CASE("run: API server restarts, dropped and expired watches, bind errors: none lost",
          "[run][e2e][faults]") {
  auto server = TestApiProcess::Start({"--history", "50"});
  REQUIRE(server.ok());
  TestApiProcess& apiserver = **server;
  constexpr char kFaults[] =
      R"({"watchCloseAfterEvents": 7, "watchGone": {"count": 2},
          "errors": [{"verb": "create", "resource": "pods/binding", "code": 409, "count": 4},
                     {"verb": "create", "resource": "pods/binding", "code": 429,
                      "probability": 0.1},
                     {"verb": "create", "resource": "pods/binding", "code": 500,
                      "probability": 0.1}],
          "drops": [{"verb": "create", "resource": "pods/binding", "count": 3}]})";
  auto api = std::make_unique<Api>(apiserver);
  for (int i = 0; i < 8; ++i) api->Create("/api/v1/nodes", NodeJson(absl::StrCat("node-", i)));
  // 60 pods of 500m on 8 nodes of 4 CPU (room for 64): a scheduler that forgets a bound pod
  // would over-commit.
  CreatePods(*api, "wave1-", 20, "500m");
  api->SetFaults(kFaults);

  auto scheduler = StartKubeschedRun({.kubeconfig = apiserver.kubeconfig()});
  WaitForBound(*api, 10, *scheduler);

  // A crash: the server comes back on the same port with its state and a new history.
  api.reset();
  REQUIRE(apiserver.Restart().ok());
  api = std::make_unique<Api>(apiserver);
  api->SetFaults(kFaults);
  CreatePods(*api, "wave2-", 20, "500m");
  WaitForBound(*api, 30, *scheduler);

  // Watches forced to relist mid-stream, and pods deleted while others arrive.
  api->SetFaults(R"({"watchGone": {"count": 3, "mode": "event"}, "watchCloseAfterEvents": 3})");
  for (int i = 0; i < 4; ++i) {
    client::HttpResponse deleted =
        api->Send("DELETE", absl::StrCat("/api/v1/namespaces/default/pods/wave1-", i));
    REQUIRE(deleted.status == 200);
  }
  CreatePods(*api, "wave3-", 24, "500m");
  std::vector<api::Pod> pods = WaitForBound(*api, 60, *scheduler);
  RequireNoOverCommit(pods);
  CHECK(pods.size() == 60);
  CHECK(CountBound(pods, "kubesched") == 60);

  // The server never saw a pod bound twice (it refuses that with 409 anyway).
  client::HttpResponse stats = api->Send("GET", "/testapi/stats");
  rapidjson::Document stats_json;
  stats_json.Parse(stats.body.data(), stats.body.size());
  CHECK(stats_json["podsBoundMoreThanOnce"].GetInt64() == 0);
  faults::FaultApi fault_api(apiserver);
  faults::RequirePromisesKept(fault_api, *scheduler);

  auto exit_code = scheduler->Stop(SIGTERM, absl::Seconds(15));
  REQUIRE(exit_code.ok());
  CHECK(*exit_code == 0);
}

std::string WriteKubeconfig(const TestApiProcess& server, const std::string& name,
                            const std::string& ca_file, const std::string& token) {
  const std::string path = server.dir() + "/" + name;
  std::ofstream(path) << absl::StrCat(
      "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: ", server.url(),
      "\n    certificate-authority: ", ca_file, "\nusers:\n- name: u\n  user:\n    token: ", token,
      "\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n");
  return path;
}

TEST_CASE("run: a wrong CA or token is a clear error and exit code 1, not a hang", "[run][e2e]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  TestApiProcess& apiserver = **server;
  struct Case {
    std::string kubeconfig{};
    std::string expected{};
  };
  const std::vector<Case> cases = {
      {WriteKubeconfig(apiserver, "wrong-ca", apiserver.dir() + "/other-ca.crt",
                       TestApiProcess::kToken),
       "certificate verify failed"},
      {WriteKubeconfig(apiserver, "wrong-token", apiserver.ca_file(), "not-the-token"), "401"},
  };
  for (const Case& c : cases) {
    auto scheduler = StartKubeschedRun({.kubeconfig = c.kubeconfig});
    auto exit_code = scheduler->Wait(absl::Seconds(20));
    INFO(c.kubeconfig << ":\n" << scheduler->ReadStderr());
    REQUIRE(exit_code.ok());
    CHECK(*exit_code == 1);
    CHECK(absl::StrContains(scheduler->ReadStderr(), c.expected));
  }
  // Nothing was written on the way out.
  Api api(apiserver);
  CHECK(api.Pods().empty());
}

// A configuration with a short lease (3 s) in kube-system, so takeovers fit in a test.
std::string WriteLeaseConfig(const TestApiProcess& server, const std::string& renew_deadline,
                             const std::string& retry_period) {
  const std::string path = server.dir() + "/config.yaml";
  std::ofstream(path) << absl::StrCat(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
      "leaderElection:\n  leaderElect: true\n  leaseDuration: 3s\n  renewDeadline: ",
      renew_deadline, "\n  retryPeriod: ", retry_period,
      "\n  resourceNamespace: kube-system\n  resourceName: kubesched\n");
  return path;
}

constexpr char kLeasePath[] =
    "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kubesched";

std::string LeaseHolder(Api& api) {
  client::HttpResponse lease = api.Send("GET", kLeasePath);
  if (lease.status != 200) return "";
  rapidjson::Document json;
  json.Parse(lease.body.data(), lease.body.size());
  const rapidjson::Value& spec = json["spec"];
  return spec.HasMember("holderIdentity") && spec["holderIdentity"].IsString()
             ? spec["holderIdentity"].GetString()
             : "";
}

// How often the lease changed hands (spec.leaseTransitions).
int64_t LeaseTransitions(Api& api) {
  rapidjson::Document json = api.GetOk(kLeasePath);
  const rapidjson::Value& spec = json["spec"];
  REQUIRE(spec.HasMember("leaseTransitions"));
  return spec["leaseTransitions"].GetInt64();
}

TEST_CASE("run: with leader election only the leader binds, and a killed leader is replaced",
          "[run][e2e][faults]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  TestApiProcess& apiserver = **server;
  const std::string config_path = WriteLeaseConfig(apiserver, "2s", "250ms");
  Api api(apiserver);
  for (int i = 0; i < 4; ++i) api.Create("/api/v1/nodes", NodeJson(absl::StrCat("node-", i)));

  auto first = StartKubeschedRun({.kubeconfig = apiserver.kubeconfig(),
                                  .config_path = config_path,
                                  .leader_elect = true,
                                  .identity = "first"});
  WaitForLog(*first, "became the leader");
  auto second = StartKubeschedRun({.kubeconfig = apiserver.kubeconfig(),
                                   .config_path = config_path,
                                   .leader_elect = true,
                                   .identity = "second"});
  WaitForLog(*second, "the leader is first");
  CreatePods(api, "a-", 8, "500m");
  WaitForBound(api, 8, *first);
  for (int i = 0; i < 8; ++i) {
    std::vector<std::string> scheduled = WaitForEventNotes(api, absl::StrCat("a-", i), "Scheduled");
    REQUIRE(scheduled.size() == 1);
  }
  rapidjson::Document events = api.RawList("/apis/events.k8s.io/v1/namespaces/default/events");
  for (const rapidjson::Value& event : events["items"].GetArray()) {
    CHECK(std::string_view(event["reportingInstance"].GetString()) == "first");
  }
  CHECK(!absl::StrContains(second->ReadStderr(), "became the leader"));

  // A crash does not release the lease: the standby waits it out, then takes it over, one
  // transition later. (How long it waits is the elector's unit tests' business, on a fake clock.)
  REQUIRE(first->Stop(SIGKILL).ok());
  WaitForLog(*second, "became the leader");
  CHECK(LeaseHolder(api) == "second");
  CHECK(LeaseTransitions(api) == 1);
  CreatePods(api, "b-", 8, "500m");
  RequireNoOverCommit(WaitForBound(api, 16, *second));
  faults::FaultApi fault_api(apiserver);
  faults::RequirePromisesKept(fault_api, *second);

  // A clean stop releases the lease at once.
  auto exit_code = second->Stop(SIGTERM, absl::Seconds(15));
  REQUIRE(exit_code.ok());
  CHECK(*exit_code == 0);
  CHECK(LeaseHolder(api).empty());
}

TEST_CASE("run: a leader whose lease is taken stops at once with exit code 1", "[run][e2e]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  TestApiProcess& apiserver = **server;
  const std::string config_path = WriteLeaseConfig(apiserver, "1s", "200ms");
  auto scheduler = StartKubeschedRun({.kubeconfig = apiserver.kubeconfig(),
                                      .config_path = config_path,
                                      .leader_elect = true,
                                      .identity = "only"});
  WaitForLog(*scheduler, "became the leader");

  // Another party takes the lease (as a replica would after a long partition).
  Api api(apiserver);
  client::HttpResponse lease = api.Send("GET", kLeasePath);
  REQUIRE(lease.status == 200);
  rapidjson::Document json;
  json.Parse(lease.body.data(), lease.body.size());
  json["spec"]["holderIdentity"].SetString("intruder", json.GetAllocator());
  json["spec"]["leaseDurationSeconds"].SetInt(3600);
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  json.Accept(writer);
  client::HttpResponse taken = api.Send("PUT", kLeasePath, buffer.GetString());
  INFO(taken.body);
  REQUIRE(taken.status == 200);

  auto exit_code = scheduler->Wait(absl::Seconds(10));
  INFO(scheduler->ReadStderr());
  REQUIRE(exit_code.ok());
  CHECK(*exit_code == 1);
  CHECK(absl::StrContains(scheduler->ReadStderr(), "lost the leader lease"));
  CHECK(LeaseHolder(api) == "intruder");
}

// How many LISTs of node metrics the test API server has answered.
int64_t NodeMetricsLists(Api& api) {
  rapidjson::Document stats = api.GetOk("/testapi/stats");
  const rapidjson::Value& requests = stats["requests"];
  const auto it = requests.FindMember("list nodes.metrics.k8s.io");
  return it == requests.MemberEnd() ? 0 : it->value.GetInt64();
}

TEST_CASE("run: MostAvailable scores nodes by the metrics the API server reports",
          "[run][e2e][most_available]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  TestApiProcess& apiserver = **server;
  Api api(apiserver);
  // Equal by requests; node-0 is nearly saturated by load the scheduler did not place.
  const std::string now = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
  for (const auto& [node, usage] : {std::pair{"node-0", "3800m"}, std::pair{"node-1", "100m"}}) {
    api.Create("/api/v1/nodes", NodeJson(node));
    api.Create(
        "/apis/metrics.k8s.io/v1beta1/nodes",
        absl::StrCat(R"({"apiVersion":"metrics.k8s.io/v1beta1","kind":"NodeMetrics",)",
                     R"("metadata":{"name":")", node, R"("},"timestamp":")", now,
                     R"(","window":"20s","usage":{"cpu":")", usage, R"(","memory":"1Gi"}})"));
  }
  const std::string config_path = apiserver.dir() + "/most-available.yaml";
  std::ofstream(config_path)
      << "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
         "profiles:\n- schedulerName: kubesched\n  plugins:\n    multiPoint:\n"
         "      enabled: [{name: MostAvailable, weight: 50}]\n"
         "  pluginConfig:\n  - name: MostAvailable\n    args: {metricsPollInterval: 1s}\n";
  auto scheduler =
      StartKubeschedRun({.kubeconfig = apiserver.kubeconfig(), .config_path = config_path});
  // The poller lists the node metrics, hands them to the cache, then waits out its interval:
  // once a second list has begun, the first one's samples are in the cache.
  testing::RequireEventually("kubesched listed node metrics twice", *scheduler,
                             [&] { return NodeMetricsLists(api) >= 2; });
  CreatePods(api, "load-", 4, "100m");
  std::vector<api::Pod> pods = WaitForBound(api, 4, *scheduler);
  // Without metrics, least-allocated scoring would split them two and two.
  for (const api::Pod& pod : pods) {
    INFO(pod.meta.name << " on " << pod.spec.node_name << "\n" << scheduler->ReadStderr());
    CHECK(pod.spec.node_name == "node-1");
  }
  REQUIRE(scheduler->Stop(SIGTERM, absl::Seconds(15)).value_or(-1) == 0);
}

}  // namespace
}  // namespace kubesched
