// Queue quota in `kubesched run`, end to end: the real binary against kubesched-testapi. The quota
// ConfigMap is watched (an update applies without a restart, a bad one is rejected and the last
// good tree stays), and the budget ledger is written to a ConfigMap and read back after a restart.

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "scheduler/client/kubeconfig.h"
#include "scheduler/client/rest_client.h"
#include "scheduler/quota/ledger_json.h"
#include "tests/testapi/testapi_process.h"
#include "tests/testing/child_process.h"
#include "tests/testing/kubesched_process.h"
#include "tests/testing/test_api_client.h"

namespace kubesched {
namespace {

using testapi::TestApiProcess;
using testing::ChildProcess;
using testing::RequireEventually;
using testing::WaitForLog;

using Api = testing::TestApiClient;

constexpr auto* Str = &testing::StringOf;

std::string NodeJson(const std::string& name, const std::string& cpu) {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")", name,
                      R"("},"status":{"allocatable":{"cpu":")", cpu,
                      R"(","memory":"64Gi","pods":"110"}}})");
}

void CreateQueuePod(Api& api, const std::string& name, const std::string& queue,
                    const std::string& cpu) {
  api.Create(
      "/api/v1/namespaces/default/pods",
      absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
                   R"(","namespace":"default","labels":{"kubesched.io/queue":")", queue,
                   R"("}},"spec":{"schedulerName":"kubesched","containers":[{"name":"c",)",
                   R"("image":"busybox","resources":{"requests":{"cpu":")", cpu, R"("}}}]}})"));
}

// Pod name -> node name ("" while pending).
std::map<std::string, std::string> Placements(Api& api) {
  rapidjson::Document pods = api.Get("/api/v1/namespaces/default/pods");
  std::map<std::string, std::string> placements;
  for (const rapidjson::Value& pod : pods["items"].GetArray()) {
    const auto spec = pod.FindMember("spec");
    std::string node;
    if (spec != pod.MemberEnd() && spec->value.HasMember("nodeName")) {
      node = Str(spec->value["nodeName"]);
    }
    placements[Str(pod["metadata"]["name"])] = node;
  }
  return placements;
}

int CountBound(const std::map<std::string, std::string>& placements) {
  int bound = 0;
  for (const auto& [pod, node] : placements) bound += node.empty() ? 0 : 1;
  return bound;
}

std::map<std::string, std::string> WaitForBound(Api& api, int count, ChildProcess& scheduler) {
  std::map<std::string, std::string> placements;
  RequireEventually(absl::StrCat(count, " pods are bound"), scheduler,
                    [&] { return CountBound(placements = Placements(api)) >= count; });
  return placements;
}

std::string PendingPod(const std::map<std::string, std::string>& placements) {
  for (const auto& [pod, node] : placements) {
    if (node.empty()) return pod;
  }
  return "";
}

// The FailedScheduling events about `pod`: their notes.
std::vector<std::string> FailedSchedulingNotes(Api& api, const std::string& pod) {
  rapidjson::Document events = api.Get("/apis/events.k8s.io/v1/namespaces/default/events");
  std::vector<std::string> notes;
  for (const rapidjson::Value& event : events["items"].GetArray()) {
    if (Str(event["regarding"]["name"]) == pod && Str(event["reason"]) == "FailedScheduling") {
      notes.push_back(Str(event["note"]));
    }
  }
  return notes;
}

// Waits for a FailedScheduling event about `pod` whose note contains `text` (events are written
// asynchronously).
void WaitForFailedScheduling(Api& api, const std::string& pod, const std::string& text,
                             ChildProcess& scheduler) {
  std::vector<std::string> notes;
  RequireEventually(
      absl::StrCat("a FailedScheduling event of ", pod, " says \"", text, "\""), scheduler, [&] {
        notes = FailedSchedulingNotes(api, pod);
        return std::any_of(notes.begin(), notes.end(),
                           [&](const std::string& note) { return absl::StrContains(note, text); });
      });
}

// The PodScheduled condition's message of `pod` ("" without one).
std::string ConditionMessage(Api& api, const std::string& pod) {
  rapidjson::Document object = api.Get(absl::StrCat("/api/v1/namespaces/default/pods/", pod));
  const auto status = object.FindMember("status");
  std::string message;
  if (status != object.MemberEnd() && status->value.HasMember("conditions")) {
    for (const rapidjson::Value& condition : status->value["conditions"].GetArray()) {
      if (Str(condition["type"]) == "PodScheduled") message = Str(condition["message"]);
    }
  }
  return message;
}

std::unique_ptr<ChildProcess> StartScheduler(const TestApiProcess& server,
                                             const std::string& config_path,
                                             bool leader_elect = false) {
  return testing::StartKubeschedRun({.kubeconfig = server.kubeconfig(),
                                     .config_path = config_path,
                                     .leader_elect = leader_elect});
}

std::string WriteConfig(const TestApiProcess& server, const std::string& name,
                        const std::string& queues_section) {
  const std::string path = server.dir() + "/" + name;
  std::ofstream(path) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                         "kind: KubeSchedulerConfiguration\n"
                      << queues_section;
  return path;
}

constexpr char kQueuesConfigMap[] = "/api/v1/namespaces/queue-config/configmaps/kubesched-queues";

void SetQueuesYaml(Api& api, const std::string& yaml) {
  api.SetConfigMapData(kQueuesConfigMap, "queues.yaml", yaml);
}

TEST_CASE("run: a quota ConfigMap update applies without a restart, a bad one leaves the old",
          "[run][e2e][queue_quota]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  TestApiProcess& apiserver = **server;
  Api api(apiserver);
  for (int i = 0; i < 2; ++i) api.Create("/api/v1/nodes", NodeJson(absl::StrCat("node-", i), "8"));
  // In a namespace of its own (not the lease's kube-system): the informers watch its namespace.
  api.Create("/api/v1/namespaces",
             R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"queue-config"}})");
  api.Create("/api/v1/namespaces/queue-config/configmaps",
             R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kubesched-queues",)"
             R"("namespace":"queue-config"},"data":{"queues.yaml":)"
             R"("tree: [{name: team, max: {cpu: \"2\"}}]\n"}})");
  const std::string config =
      WriteConfig(apiserver, "queues.yaml",
                  "queues:\n  configMap: {namespace: queue-config, name: kubesched-queues}\n");
  auto scheduler = StartScheduler(apiserver, config);
  WaitForLog(*scheduler, "queue configuration applied");

  // 3 pods of 1 CPU in a queue of 2: two bind, the third waits with the queue's numbers.
  for (int i = 0; i < 3; ++i) CreateQueuePod(api, absl::StrCat("team-", i), "root.team", "1");
  WaitForBound(api, 2, *scheduler);
  std::string pending = PendingPod(Placements(api));
  REQUIRE(!pending.empty());
  constexpr char kFull2[] =
      "queue root.team: insufficient quota for cpu (used 2, max 2, requested 1)";
  WaitForFailedScheduling(api, pending, kFull2, *scheduler);
  RequireEventually("the PodScheduled condition gives the quota", *scheduler,
                    [&] { return absl::StrContains(ConditionMessage(api, pending), kFull2); });
  CHECK(CountBound(Placements(api)) == 2);

  // max 3: the waiting pod binds, with kubesched still the same process.
  const pid_t pid = scheduler->pid();
  SetQueuesYaml(api, "tree: [{name: team, max: {cpu: \"3\"}}]\n");
  std::map<std::string, std::string> placements = WaitForBound(api, 3, *scheduler);
  CHECK(!placements[pending].empty());
  CHECK(scheduler->Running());
  CHECK(scheduler->pid() == pid);
  WaitForLog(*scheduler, "queue configuration applied", 2);

  // Bad updates: a quantity that does not parse, a child above its parent. Each is logged with
  // the field, kubesched keeps running, and max 3 stays in force.
  SetQueuesYaml(api, "tree: [{name: team, max: {cpu: lots}}]\n");
  WaitForLog(*scheduler, "queue configuration rejected", 1);
  SetQueuesYaml(api,
                "tree: [{name: team, max: {cpu: \"3\"}, queues: [{name: sub, max: {cpu: \"4\"}}]}]"
                "\n");
  WaitForLog(*scheduler, "queue configuration rejected", 2);
  const std::string log = scheduler->ReadStderr();
  INFO(log);
  CHECK(absl::StrContains(log, "(root.team)"));
  CHECK(absl::StrContains(log, "max.cpu: \"lots\" is not a quantity"));
  CHECK(absl::StrContains(log, "(root.team.sub)"));
  CHECK(absl::StrContains(log, "max.cpu: 4 is above"));
  CHECK(scheduler->Running());

  CreateQueuePod(api, "team-3", "root.team", "1");
  constexpr char kFull3[] =
      "queue root.team: insufficient quota for cpu (used 3, max 3, requested 1)";
  WaitForFailedScheduling(api, "team-3", kFull3, *scheduler);
  placements = Placements(api);
  CHECK(placements["team-3"].empty());
  CHECK(CountBound(placements) == 3);

  REQUIRE(scheduler->Stop(SIGTERM, absl::Seconds(10)).value_or(-1) == 0);
}

constexpr char kLedgerConfigMap[] =
    "/api/v1/namespaces/kube-system/configmaps/kubesched-queue-ledger";

// The ledger kubesched wrote (in the default place: the lease's namespace); nullopt while the
// ConfigMap does not exist.
std::optional<quota::Ledger> ReadLedger(Api& api) {
  int status = 0;
  rapidjson::Document object = api.Get(kLedgerConfigMap, &status);
  if (status == 404) return std::nullopt;
  REQUIRE(status == 200);
  auto decoded = quota::DecodeLedger(Str(object["data"][quota::kLedgerConfigMapKey]));
  INFO(decoded.status());
  REQUIRE(decoded.ok());
  return *std::move(decoded);
}

double UsedCpu(const quota::Ledger& ledger, const std::string& queue) {
  for (const quota::LedgerEntry& entry : ledger.entries) {
    if (entry.queue == queue && entry.resource == "cpu") return entry.used_unit_seconds;
  }
  return -1;
}

TEST_CASE("run: a spent budget stays spent across a restart (the ledger ConfigMap)",
          "[run][e2e][queue_quota]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  TestApiProcess& apiserver = **server;
  Api api(apiserver);
  api.Create("/api/v1/nodes", NodeJson("node-0", "16"));
  // 1 milli-core-hour: 3.6 core-seconds, i.e. 3600 milli-core-seconds in the ledger.
  constexpr double kBudget = 3600;
  const std::string config = WriteConfig(
      apiserver, "budget.yaml",
      "queues:\n  ledgerInterval: 1s\n  tree:\n  - name: gpu\n    budget: {cpu: 1mh}\n");

  // The first process campaigns for the lease (kube-system/kubesched) and writes as the leader.
  auto scheduler = StartScheduler(apiserver, config, /*leader_elect=*/true);
  WaitForLog(*scheduler, "became the leader");
  CreateQueuePod(api, "a", "root.gpu", "10");
  WaitForBound(api, 1, *scheduler);
  // 10 cores spend the budget in 0.36 s; the ledger is written every second while we lead, so a
  // written ledger comes to show it spent.
  std::optional<quota::Ledger> periodic;
  RequireEventually("the ledger ConfigMap shows the budget spent", *scheduler, [&] {
    periodic = ReadLedger(api);
    return periodic.has_value() && UsedCpu(*periodic, "root.gpu") >= kBudget;
  });

  const absl::Time stopped_at = absl::Now();
  REQUIRE(scheduler->Stop(SIGTERM, absl::Seconds(10)).value_or(-1) == 0);
  // The last write came before the lease was released (one resourceVersion counter orders them).
  rapidjson::Document lease =
      api.Get("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kubesched");
  CHECK(Str(lease["spec"]["holderIdentity"]).empty());
  rapidjson::Document ledger_object = api.Get(kLedgerConfigMap);
  CHECK(std::stoull(Str(ledger_object["metadata"]["resourceVersion"])) <
        std::stoull(Str(lease["metadata"]["resourceVersion"])));
  std::optional<quota::Ledger> final_ledger = ReadLedger(api);
  REQUIRE(final_ledger.has_value());
  CHECK(UsedCpu(*final_ledger, "root.gpu") >= UsedCpu(*periodic, "root.gpu"));
  CHECK(final_ledger->written_at >= stopped_at);  // written on the way out

  // Pod A is gone while kubesched is down; the new process must still know the budget is spent.
  REQUIRE(api.Send("DELETE", "/api/v1/namespaces/default/pods/a").status == 200);
  scheduler = StartScheduler(apiserver, config);
  WaitForLog(*scheduler,
             "queue budget ledger: read ConfigMap kube-system/kubesched-queue-ledger (1 entries");
  CreateQueuePod(api, "b", "root.gpu", "1");
  WaitForFailedScheduling(api, "b", "queue root.gpu: budget for cpu used up", *scheduler);
  CHECK(Placements(api)["b"].empty());
  REQUIRE(scheduler->Stop(SIGTERM, absl::Seconds(10)).value_or(-1) == 0);
}

}  // namespace
}  // namespace kubesched
