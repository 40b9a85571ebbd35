// `kubesched run` reports like kube-scheduler: a pod that fails to schedule again and again gets
// one events.k8s.io/v1 FailedScheduling Event whose series counts the attempts (`kubectl describe`
// shows "(xN over ...)"), and its messages read exactly as upstream's, without internal prefixes.

#include <catch2/catch.hpp>
#include <csignal>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "rapidjson/document.h"
#include "tests/testapi/testapi_process.h"
#include "tests/testing/child_process.h"
#include "tests/testing/kubesched_process.h"
#include "tests/testing/test_api_client.h"

namespace kubesched {
namespace {

using testapi::TestApiProcess;
using testing::ChildProcess;

std::string NodeJson(const std::string& name) {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")", name,
                      R"("},"status":{"allocatable":{"cpu":"4","memory":"16Gi","pods":"110"},)",
                      R"("capacity":{"cpu":"4","memory":"16Gi","pods":"110"}}})");
}

std::string PodJson(const std::string& name, const std::string& cpu,
                    const std::string& annotations = "{}") {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
                      R"(","namespace":"default","annotations":)", annotations,
                      R"(},"spec":{"schedulerName":"kubesched","containers":[{"name":"c",)",
                      R"("image":"busybox","resources":{"requests":{"cpu":")", cpu, R"("}}}]}})");
}

// The highest "attempt N" kubesched logged (-v 2) for `pod` being unschedulable.
int LastAttempt(const ChildProcess& scheduler, const std::string& pod) {
  const std::string log = scheduler.ReadStderr();
  const std::string marker = absl::StrCat("pod default/", pod, " unschedulable (attempt ");
  int last = 0;
  for (size_t at = log.find(marker); at != std::string::npos; at = log.find(marker, at + 1)) {
    const size_t start = at + marker.size();
    int attempt = 0;
    if (absl::SimpleAtoi(log.substr(start, log.find(')', start) - start), &attempt)) {
      last = std::max(last, attempt);
    }
  }
  return last;
}

// The events.k8s.io/v1 Events about `pod` with `reason`.
std::vector<rapidjson::Document> Events(testing::TestApiClient& api, const std::string& pod,
                                        const std::string& reason) {
  rapidjson::Document list = api.GetOk("/apis/events.k8s.io/v1/namespaces/default/events");
  std::vector<rapidjson::Document> events;
  for (const rapidjson::Value& item : list["items"].GetArray()) {
    if (std::string(item["regarding"]["name"].GetString()) != pod ||
        std::string(item["reason"].GetString()) != reason) {
      continue;
    }
    rapidjson::Document copy;
    copy.CopyFrom(item, copy.GetAllocator());
    events.push_back(std::move(copy));
  }
  return events;
}

std::string PodScheduledMessage(testing::TestApiClient& api, const std::string& pod) {
  rapidjson::Document object = api.GetOk("/api/v1/namespaces/default/pods/" + pod);
  if (!object["status"].HasMember("conditions")) return "";
  for (const rapidjson::Value& condition : object["status"]["conditions"].GetArray()) {
    if (std::string(condition["type"].GetString()) == "PodScheduled") {
      return condition.HasMember("message") ? condition["message"].GetString() : "";
    }
  }
  return "";
}

// kubectl against the test server; its stdout, once it succeeded.
std::string KubectlOk(const TestApiProcess& apiserver, std::vector<std::string> args) {
  args.insert(args.begin(), "kubectl");
  auto result = testing::RunCommand(
      {.argv = std::move(args),
       .env = {{"KUBECONFIG", apiserver.kubeconfig()}, {"HOME", apiserver.dir()}}},
      absl::Seconds(30));
  REQUIRE(result.ok());
  INFO(result->stdout_text << result->stderr_text);
  REQUIRE(result->exit_code == 0);
  return result->stdout_text;
}

size_t Occurrences(const std::string& text, std::string_view what) {
  size_t found = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++found;
  }
  return found;
}

// Waits for `attempts` scheduling attempts of `pod`, changing node-0's allocatable CPU (still too
// little) between them: the change may help NodeResourcesFit, so the pod is tried again, and
// fails again with the same message.
void FailRepeatedly(testing::TestApiClient& api, ChildProcess& scheduler, const std::string& pod,
                    int attempts) {
  for (int attempt = 1; attempt <= attempts; ++attempt) {
    testing::RequireEventually(absl::StrCat("attempt ", attempt, " of ", pod), scheduler,
                               [&] { return LastAttempt(scheduler, pod) >= attempt; });
    if (attempt == attempts) break;
    const std::string cpu = attempt % 2 == 1 ? "5" : "4";
    client::HttpResponse patched =
        api.Send("PATCH", "/api/v1/nodes/node-0/status",
                 absl::StrCat(R"({"status":{"allocatable":{"cpu":")", cpu, R"("}}})"),
                 "application/merge-patch+json");
    REQUIRE(patched.status == 200);
  }
}

TEST_CASE("run: a pod retried N times has one FailedScheduling Event with series.count N",
          "[run][e2e][events]") {
  if (!testing::IsOnPath("kubectl")) FAIL("kubectl is not on PATH");
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  TestApiProcess& apiserver = **server;
  testing::TestApiClient api(apiserver);
  api.Create("/api/v1/nodes", NodeJson("node-0"));
  api.Create("/api/v1/nodes", NodeJson("node-1"));
  api.Create("/api/v1/namespaces/default/pods", PodJson("huge", "64"));
  api.Create("/api/v1/namespaces/default/pods",
             PodJson("lost", "1", R"({"kubesched.io/policy":"nowhere"})"));
  const std::string config_path = apiserver.dir() + "/fast-backoff.yaml";
  std::ofstream(config_path) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                "kind: KubeSchedulerConfiguration\n"
                                "podInitialBackoffSeconds: 1\npodMaxBackoffSeconds: 1\n";
  auto scheduler = testing::StartKubeschedRun(
      {.kubeconfig = apiserver.kubeconfig(), .config_path = config_path, .verbosity = 2});

  constexpr int kAttempts = 4;
  FailRepeatedly(api, *scheduler, "huge", kAttempts);
  testing::RequireEventually("the PodScheduled condition of lost", *scheduler,
                             [&] { return !PodScheduledMessage(api, "lost").empty(); });
  // Stopping writes what the series held back.
  REQUIRE(scheduler->Stop(SIGTERM, absl::Seconds(15)).value_or(-1) == 0);
  const int attempts = LastAttempt(*scheduler, "huge");
  CHECK(attempts >= kAttempts);

  std::vector<rapidjson::Document> failed = Events(api, "huge", "FailedScheduling");
  REQUIRE(failed.size() == 1);
  const rapidjson::Document& event = failed[0];
  INFO(event["note"].GetString());
  REQUIRE(event.HasMember("series"));
  CHECK(event["series"]["count"].GetInt() == attempts);
  CHECK(std::string(event["series"]["lastObservedTime"].GetString()) >=
        std::string(event["eventTime"].GetString()));
  CHECK(std::string(event["action"].GetString()) == "Scheduling");
  CHECK(std::string(event["type"].GetString()) == "Warning");
  CHECK(std::string(event["reportingController"].GetString()) == "kubesched");
  CHECK(
      absl::StartsWith(event["note"].GetString(), "0/2 nodes are available: 2 Insufficient cpu."));

  // Upstream's PreFilter-like form for a pod whose policy is missing: no internal prefix.
  const std::string lost_message =
      "0/2 nodes are available: policy \"nowhere\" (annotation kubesched.io/policy) does not "
      "exist.";
  CHECK(PodScheduledMessage(api, "lost") == lost_message);
  std::vector<rapidjson::Document> lost = Events(api, "lost", "FailedScheduling");
  REQUIRE_FALSE(lost.empty());
  CHECK(std::string(lost[0]["note"].GetString()) == lost_message);

  const std::string described = KubectlOk(apiserver, {"describe", "pod", "huge"});
  CHECK(absl::StrContains(described, absl::StrCat("(x", attempts, " over ")));
  CHECK(absl::StrContains(described, "FailedScheduling"));
  CHECK_FALSE(absl::StrContains(described, "running \""));

  // `kubectl get events` prints the server's table: one row for the whole series.
  const std::string listed =
      KubectlOk(apiserver, {"get", "events", "--field-selector", "involvedObject.name=huge"});
  CHECK(absl::StrContains(listed, "LAST SEEN"));
  CHECK(absl::StrContains(listed, "pod/huge"));
  CHECK(Occurrences(listed, "FailedScheduling") == 1);
}

}  // namespace
}  // namespace kubesched
