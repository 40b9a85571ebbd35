// Preemption in `kubesched run`, end to end: the real binary against kubesched-testapi. A node
// full of low-priority pods that kubesched bound; a high-priority pod arrives. The victims get a
// DisruptionTarget condition before they are deleted, a Preempted event names the preemptor, the
// preemptor's status.nominatedNodeName is set, and it binds to that node once the victims are gone.
//
// The test API server deletes a pod at once unless it has finalizers, so the order of writes is
// read from its journal (--state-file: one line per write, flushed as written); a second test
// holds the victims with a finalizer to watch them terminate while the preemptor waits.

#include <catch2/catch.hpp>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "rapidjson/document.h"
#include "scheduler/client/kubeconfig.h"
#include "scheduler/client/rest_client.h"
#include "scheduler/metrics/scheduler_metrics.h"
#include "tests/testapi/testapi_process.h"
#include "tests/testing/child_process.h"
#include "tests/testing/kubesched_process.h"
#include "tests/testing/test_api_client.h"

namespace kubesched {
namespace {

using testapi::TestApiProcess;
using testing::ChildProcess;
using testing::RequireEventually;

constexpr char kNode[] = "node-0";
constexpr char kPods[] = "/api/v1/namespaces/default/pods";
constexpr char kDisruptionMessage[] = "kubesched: preempting to accommodate a higher priority pod";

using Api = testing::TestApiClient;

std::string Str(const rapidjson::Value& value, const char* member) {
  if (!value.IsObject()) return "";
  const auto it = value.FindMember(member);
  return it != value.MemberEnd() && it->value.IsString()
             ? std::string(it->value.GetString(), it->value.GetStringLength())
             : "";
}

const rapidjson::Value& Member(const rapidjson::Value& value, const char* member) {
  static const rapidjson::Value kNull;
  if (!value.IsObject()) return kNull;
  const auto it = value.FindMember(member);
  return it == value.MemberEnd() ? kNull : it->value;
}

// What the test needs of a pod's JSON.
struct PodView {
  std::string name, uid, node, nominated;
  bool terminating = false;
  bool disruption_target = false;  // DisruptionTarget=True, reason PreemptionByScheduler
  std::string disruption_message;

  explicit PodView(const rapidjson::Value& pod) {
    const rapidjson::Value& metadata = Member(pod, "metadata");
    name = Str(metadata, "name");
    uid = Str(metadata, "uid");
    terminating = metadata.IsObject() && metadata.HasMember("deletionTimestamp");
    node = Str(Member(pod, "spec"), "nodeName");
    const rapidjson::Value& status = Member(pod, "status");
    nominated = Str(status, "nominatedNodeName");
    const rapidjson::Value& conditions = Member(status, "conditions");
    if (!conditions.IsArray()) return;
    for (const rapidjson::Value& condition : conditions.GetArray()) {
      if (Str(condition, "type") == "DisruptionTarget" && Str(condition, "status") == "True" &&
          Str(condition, "reason") == "PreemptionByScheduler") {
        disruption_target = true;
        disruption_message = Str(condition, "message");
      }
    }
  }
};

std::map<std::string, PodView> Pods(Api& api) {
  rapidjson::Document list = api.GetOk(kPods);
  std::map<std::string, PodView> pods;
  for (const rapidjson::Value& item : list["items"].GetArray()) {
    PodView pod(item);
    pods.emplace(pod.name, pod);
  }
  return pods;
}

void CreatePriorityClass(Api& api, const std::string& name, int value) {
  api.Create("/apis/scheduling.k8s.io/v1/priorityclasses",
             absl::StrCat(R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass",)",
                          R"("metadata":{"name":")", name, R"("},"value":)", value, "}"));
}

void CreateNode(Api& api, const std::string& name, const std::string& cpu) {
  api.Create("/api/v1/nodes",
             absl::StrCat(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")", name,
                          R"(","labels":{"kubernetes.io/hostname":")", name,
                          R"("}},"status":{"capacity":{"cpu":")", cpu,
                          R"(","memory":"16Gi","pods":"110"},"allocatable":{"cpu":")", cpu,
                          R"(","memory":"16Gi","pods":"110"}}})"));
}

void CreatePod(Api& api, const std::string& name, const std::string& priority_class,
               const std::string& cpu, bool finalizer = false) {
  api.Create(kPods, absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
                                 R"(","namespace":"default")",
                                 finalizer ? R"(,"finalizers":["kubesched.test/hold"])" : "",
                                 R"(},"spec":{"schedulerName":"kubesched","priorityClassName":")",
                                 priority_class, R"(","containers":[{"name":"c",)",
                                 R"("image":"busybox","resources":{"requests":{"cpu":")", cpu,
                                 R"("}}}]}})"));
}

// With -v 2: a log line per scheduling outcome, "pod default/high unschedulable (attempt N)".
std::unique_ptr<ChildProcess> StartScheduler(const TestApiProcess& server) {
  return testing::StartKubeschedRun({.kubeconfig = server.kubeconfig(), .verbosity = 2});
}

int CountOnNode(const std::map<std::string, PodView>& pods, const std::string& prefix,
                const std::string& node) {
  int count = 0;
  for (const auto& [name, pod] : pods) {
    count += absl::StartsWith(name, prefix) && pod.node == node ? 1 : 0;
  }
  return count;
}

struct PreemptedEvent {
  std::string related;  // the preemptor's name
  std::string note;
  std::string type;
};

// Preempted events by the name of the pod they regard (the victim).
std::map<std::string, std::vector<PreemptedEvent>> PreemptedEvents(Api& api) {
  rapidjson::Document events = api.GetOk("/apis/events.k8s.io/v1/namespaces/default/events");
  std::map<std::string, std::vector<PreemptedEvent>> by_victim;
  for (const rapidjson::Value& event : events["items"].GetArray()) {
    if (Str(event, "reason") != "Preempted") continue;
    by_victim[Str(Member(event, "regarding"), "name")].push_back(
        {Str(Member(event, "related"), "name"), Str(event, "note"), Str(event, "type")});
  }
  return by_victim;
}

// Waits for one Preempted event on each victim and checks what it says.
void CheckPreemptedEvents(Api& api, ChildProcess& scheduler, const std::set<std::string>& victims,
                          const std::string& preemptor, const std::string& preemptor_uid,
                          const std::string& node) {
  std::map<std::string, std::vector<PreemptedEvent>> events;
  RequireEventually("each victim has a Preempted event", scheduler, [&] {
    events = PreemptedEvents(api);
    for (const std::string& victim : victims) {
      if (!events.contains(victim)) return false;
    }
    return true;
  });
  CHECK(events.size() == victims.size());
  for (const std::string& victim : victims) {
    INFO("victim " << victim);
    REQUIRE(events[victim].size() == 1);
    const PreemptedEvent& event = events[victim][0];
    CHECK(event.note == absl::StrCat("Preempted by pod ", preemptor_uid, " on node ", node));
    CHECK(event.related == preemptor);
    CHECK(event.type == "Normal");
  }
}

// The server's journal of pod writes, in the order they were made.
struct PodWrite {
  bool deleted = false;  // a delete line; otherwise a put of `pod`
  std::string name;
  std::shared_ptr<PodView> pod;
};

std::vector<PodWrite> PodJournal(const TestApiProcess& server) {
  std::ifstream in(server.dir() + "/state.jsonl");
  REQUIRE(in.good());
  std::vector<PodWrite> writes;
  std::string line;
  while (std::getline(in, line)) {
    rapidjson::Document entry;
    entry.Parse(line.data(), line.size());
    if (entry.HasParseError() || !entry.IsObject() || Str(entry, "type") != "pods") continue;
    if (Str(entry, "op") == "delete") {
      const std::string key = Str(entry, "key");
      writes.push_back({true, key.substr(key.find('/') + 1), nullptr});
    } else if (Str(entry, "op") == "put") {
      auto pod = std::make_shared<PodView>(Member(entry, "object"));
      writes.push_back({false, pod->name, pod});
    }
  }
  return writes;
}

TEST_CASE("run: victims are marked, then deleted, and the preemptor binds to its nominated node",
          "[run][e2e][preemption]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  TestApiProcess& apiserver = **server;
  Api api(apiserver);
  CreatePriorityClass(api, "low", 0);
  CreatePriorityClass(api, "high", 1000);
  CreateNode(api, kNode, "4");
  auto scheduler = StartScheduler(apiserver);

  for (int i = 0; i < 4; ++i) CreatePod(api, absl::StrCat("low-", i), "low", "1");
  RequireEventually("kubesched bound the 4 low pods", *scheduler,
                    [&] { return CountOnNode(Pods(api), "low-", kNode) == 4; });

  // Two low pods must go to make room for 2 CPUs.
  CreatePod(api, "high", "high", "2");
  std::map<std::string, PodView> pods;
  RequireEventually("the preemptor is bound", *scheduler, [&] {
    pods = Pods(api);
    return !pods.at("high").node.empty();
  });
  INFO("kubesched log:\n" << scheduler->ReadStderr());
  CHECK(pods.at("high").node == kNode);
  CHECK(CountOnNode(pods, "low-", kNode) == 2);
  std::set<std::string> victims;
  for (int i = 0; i < 4; ++i) {
    const std::string name = absl::StrCat("low-", i);
    if (!pods.contains(name)) victims.insert(name);
  }
  REQUIRE(victims.size() == 2);

  CheckPreemptedEvents(api, *scheduler, victims, "high", pods.at("high").uid, kNode);

  // The journal: each victim's DisruptionTarget condition was written before its delete, the
  // preemptor's nominatedNodeName was set to the node, and its binding came after the deletes.
  const std::vector<PodWrite> journal = PodJournal(apiserver);
  std::map<std::string, size_t> marked_at, deleted_at;
  std::optional<size_t> nominated_at, bound_at;
  for (size_t i = 0; i < journal.size(); ++i) {
    const PodWrite& write = journal[i];
    if (write.deleted) {
      deleted_at.emplace(write.name, i);
      continue;
    }
    if (write.pod->disruption_target) {
      CHECK(write.pod->disruption_message == kDisruptionMessage);
      CHECK(write.pod->node == kNode);
      marked_at.emplace(write.name, i);
    }
    if (write.name == "high" && write.pod->nominated == kNode && !nominated_at) nominated_at = i;
    if (write.name == "high" && !write.pod->node.empty() && !bound_at) bound_at = i;
  }
  std::set<std::string> marked, deleted;
  for (const auto& [name, at] : marked_at) marked.insert(name);
  for (const auto& [name, at] : deleted_at) deleted.insert(name);
  CHECK(marked == victims);
  CHECK(deleted == victims);
  for (const std::string& victim : victims) {
    INFO("victim " << victim);
    REQUIRE(marked_at.contains(victim));
    REQUIRE(deleted_at.contains(victim));
    CHECK(marked_at[victim] < deleted_at[victim]);
    REQUIRE(bound_at.has_value());
    CHECK(deleted_at[victim] < *bound_at);
  }
  CHECK(nominated_at.has_value());
  CHECK(pods.at("high").node == kNode);

  REQUIRE(scheduler->Stop(SIGTERM, absl::Seconds(10)).value_or(-1) == 0);
}

TEST_CASE("run: while its victims terminate the preemptor waits, nominated, and preempts no more",
          "[run][e2e][preemption]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  TestApiProcess& apiserver = **server;
  Api api(apiserver);
  CreatePriorityClass(api, "low", 0);
  CreatePriorityClass(api, "high", 1000);
  CreateNode(api, kNode, "4");
  auto scheduler = StartScheduler(apiserver);

  // The finalizer keeps a deleted pod, terminating, until it is removed.
  for (int i = 0; i < 4; ++i) CreatePod(api, absl::StrCat("low-", i), "low", "1", true);
  RequireEventually("kubesched bound the 4 low pods", *scheduler,
                    [&] { return CountOnNode(Pods(api), "low-", kNode) == 4; });

  CreatePod(api, "high", "high", "2");
  std::map<std::string, PodView> pods;
  auto terminating = [&pods] {
    std::set<std::string> names;
    for (const auto& [name, pod] : pods) {
      if (pod.terminating) names.insert(name);
    }
    return names;
  };
  RequireEventually("two victims are terminating and the preemptor is nominated", *scheduler, [&] {
    pods = Pods(api);
    return terminating().size() == 2 && pods.at("high").nominated == kNode;
  });
  const std::set<std::string> victims = terminating();
  for (const std::string& victim : victims) {
    INFO("victim " << victim);
    CHECK(pods.at(victim).disruption_target);
    CHECK(pods.at(victim).disruption_message == kDisruptionMessage);
  }
  CheckPreemptedEvents(api, *scheduler, victims, "high", pods.at("high").uid, kNode);

  // The victims still hold their CPUs: the preemptor waits for them and takes nobody else. A node
  // too small for it (1 CPU of the 2 it asks) sends it back to the active queue; once kubesched
  // has tried it again, it must still be waiting, and nobody else preempted.
  CreateNode(api, "small", "1");
  RequireEventually("kubesched tried the preemptor again", *scheduler, [&] {
    return testing::CountInLog(*scheduler, "pod default/high unschedulable (attempt ") >= 2;
  });
  pods = Pods(api);
  INFO("kubesched log:\n" << scheduler->ReadStderr());
  CHECK(pods.at("high").node.empty());
  CHECK(pods.at("high").nominated == kNode);
  CHECK(terminating() == victims);
  CHECK(PreemptedEvents(api).size() == 2);
  // The retry's PostFilter came before its log line: still the one preemption, of two victims.
  const testing::Scrape scrape = testing::ScrapeMetrics(*scheduler);
  CHECK(scrape.Value(std::string(metrics::kPreemptionVictims) + "_count") == 1);
  CHECK(scrape.Value(std::string(metrics::kPreemptionVictims) + "_sum") == 2);

  // The victims go; the preemptor binds to the node it was nominated to.
  for (const std::string& victim : victims) {
    client::HttpResponse response =
        api.Send("PATCH", absl::StrCat(kPods, "/", victim), R"({"metadata":{"finalizers":null}})",
                 "application/merge-patch+json");
    INFO(response.body);
    REQUIRE(response.status == 200);
  }
  RequireEventually("the preemptor is bound", *scheduler, [&] {
    pods = Pods(api);
    return !pods.at("high").node.empty();
  });
  CHECK(pods.at("high").node == kNode);
  for (const std::string& victim : victims) CHECK_FALSE(pods.contains(victim));
  CHECK(CountOnNode(pods, "low-", kNode) == 2);
  CHECK(terminating().empty());

  REQUIRE(scheduler->Stop(SIGTERM, absl::Seconds(10)).value_or(-1) == 0);
}

}  // namespace
}  // namespace kubesched
