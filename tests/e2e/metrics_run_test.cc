// /metrics of `kubesched run` end to end: the real binary against kubesched-testapi, scraped over
// HTTP after a small run, checked against what happened in the cluster.

#include <catch2/catch.hpp>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "rapidjson/document.h"
#include "scheduler/metrics/process_collector.h"
#include "scheduler/metrics/scheduler_metrics.h"
#include "tests/testapi/testapi_process.h"
#include "tests/testing/child_process.h"
#include "tests/testing/kubesched_process.h"
#include "tests/testing/scrape.h"
#include "tests/testing/temp_file.h"
#include "tests/testing/test_api_client.h"

namespace kubesched::metrics {
namespace {

using testapi::TestApiProcess;
using testing::ChildProcess;
using testing::Scrape;
using LabelNames = std::set<std::set<std::string>>;

std::string NodeJson(const std::string& name) {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")", name,
                      R"("},"status":{"capacity":{"cpu":"4","memory":"16Gi","pods":"110"},)",
                      R"("allocatable":{"cpu":"4","memory":"16Gi","pods":"110"}}})");
}

std::string PodJson(const std::string& name, const std::string& cpu) {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
                      R"(","namespace":"default"},"spec":{"schedulerName":"kubesched",)",
                      R"("containers":[{"name":"c","image":"busybox","resources":)",
                      R"({"requests":{"cpu":")", cpu, R"("}}}]}})");
}

int CountBound(testing::TestApiClient& api) {
  rapidjson::Document pods = api.GetOk("/api/v1/pods");
  int bound = 0;
  for (const rapidjson::Value& pod : pods["items"].GetArray()) {
    const rapidjson::Value& spec = pod["spec"];
    bound += spec.HasMember("nodeName") && spec["nodeName"].GetStringLength() > 0 ? 1 : 0;
  }
  return bound;
}

// client-go's and the process' families: six bindings were created (201) and the informers
// listed and watched, all at the test API server's host:port; the process has run, holds memory
// and sockets, and started within the last hour. Without leader election there is no lease, so
// no leader status (as upstream).
void CheckClientAndProcess(const Scrape& scrape, const TestApiProcess& server) {
  CHECK(scrape.LabelSets(kRestClientRequestsTotal) == LabelNames{{"code", "host", "method"}});
  CHECK(scrape.LabelSets(std::string(kRestClientRequestDuration) + "_count") ==
        LabelNames{{"host", "verb"}});
  const std::string host = server.url().substr(server.url().find("://") + 3);
  CHECK(scrape.Value(kRestClientRequestsTotal,
                     {{"method", "POST"}, {"code", "201"}, {"host", host}}) >= 6);
  CHECK(scrape.Value(kRestClientRequestsTotal, {{"method", "GET"}, {"code", "200"}}) >= 5);
  CHECK(scrape.Value(std::string(kRestClientRequestDuration) + "_count",
                     {{"verb", "POST"}, {"host", host}}) >= 6);
  for (const char* family :
       {kProcessCpuSecondsTotal, kProcessResidentMemoryBytes, kProcessVirtualMemoryBytes,
        kProcessOpenFds, kProcessMaxFds, kProcessStartTimeSeconds}) {
    INFO(family);
    CHECK(scrape.LabelSets(family) == LabelNames{{}});
  }
  CHECK(scrape.Value(kProcessCpuSecondsTotal) > 0);
  CHECK(scrape.Value(kProcessResidentMemoryBytes) > 1e6);
  CHECK(scrape.Value(kProcessVirtualMemoryBytes) >= scrape.Value(kProcessResidentMemoryBytes));
  CHECK(scrape.Value(kProcessOpenFds) >= 3);
  CHECK(scrape.Value(kProcessMaxFds) >= scrape.Value(kProcessOpenFds));
  const double now = absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());
  CHECK(scrape.Value(kProcessStartTimeSeconds) <= now + 1);
  CHECK(scrape.Value(kProcessStartTimeSeconds) > now - 3600);
  CHECK_FALSE(scrape.Has(kLeaderElectionMasterStatus));
}

TEST_CASE("metrics: run serves /metrics whose names, labels and counts match what happened",
          "[metrics][run][e2e]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  testing::TestApiClient api(**server);
  for (int i = 0; i < 2; ++i) api.Create("/api/v1/nodes", NodeJson(absl::StrCat("node-", i)));
  for (int i = 0; i < 6; ++i) {
    api.Create("/api/v1/namespaces/default/pods", PodJson(absl::StrCat("small-", i), "1"));
  }
  api.Create("/api/v1/namespaces/default/pods", PodJson("huge", "64"));

  auto started = testing::StartKubeschedRun({.kubeconfig = (*server)->kubeconfig()});
  ChildProcess& scheduler = *started;

  // Wait until the six small pods are bound and the huge one sits in the unschedulable set.
  Scrape scrape;
  testing::RequireEventually(
      "six pods are bound and one is unschedulable", scheduler,
      [&] {
        scrape = testing::ScrapeMetrics(scheduler);
        return CountBound(api) >= 6 && scrape.Value(kBindsTotal, {{"result", "bound"}}) >= 6 &&
               scrape.Value(kPendingPods, {{"queue", "unschedulable"}}) >= 1;
      },
      absl::Seconds(60));
  INFO(scheduler.ReadStderr());
  REQUIRE(CountBound(api) == 6);

  {  // Upstream names and label sets.
    CHECK(scrape.Type(kScheduleAttemptsTotal) == "counter");
    CHECK(scrape.LabelSets(kScheduleAttemptsTotal) == LabelNames{{"profile", "result"}});
    CHECK(scrape.Type(kSchedulingAttemptDuration) == "histogram");
    CHECK(scrape.LabelSets(std::string(kSchedulingAttemptDuration) + "_count") ==
          LabelNames{{"profile", "result"}});
    CHECK(scrape.LabelSets(std::string(kSchedulingAlgorithmDuration) + "_count") == LabelNames{{}});
    CHECK(scrape.LabelSets(kPendingPods) == LabelNames{{"queue"}});
    CHECK(scrape.LabelSets(std::string(kPodSchedulingSliDuration) + "_count") ==
          LabelNames{{"attempts"}});
    CHECK(scrape.LabelSets(std::string(kPodSchedulingAttempts) + "_count") == LabelNames{{}});
    CHECK(scrape.LabelSets(std::string(kFrameworkExtensionPointDuration) + "_count") ==
          LabelNames{{"extension_point", "profile", "status"}});
    // Plugin timings are sampled (about one cycle in ten): the family shows once one was.
    const std::string plugin_count = std::string(kPluginExecutionDuration) + "_count";
    if (scrape.Has(plugin_count)) {
      CHECK(scrape.Type(kPluginExecutionDuration) == "histogram");
      CHECK(scrape.LabelSets(plugin_count) == LabelNames{{"extension_point", "plugin", "status"}});
    }
    CHECK(scrape.LabelSets(kPreemptionAttemptsTotal) == LabelNames{{}});
    CHECK(scrape.LabelSets(std::string(kPreemptionVictims) + "_count") == LabelNames{{}});
    CHECK(scrape.LabelSets(kQueueIncomingPodsTotal) == LabelNames{{"event", "queue"}});
    CHECK(scrape.LabelSets(kUnschedulablePods) == LabelNames{{"plugin", "profile"}});
    CHECK(scrape.LabelSets(kCacheSize) == LabelNames{{"type"}});
  }

  {  // kubesched's own names and label sets.
    CHECK(scrape.LabelSets(kQueueQuotaUsed) == LabelNames{{"queue", "resource"}});
    CHECK(scrape.LabelSets(kClusterAllocatedRatio) == LabelNames{{"resource"}});
    CHECK(scrape.LabelSets(kQueueConfigReloadsTotal) == LabelNames{{"result"}});
    CHECK(scrape.LabelSets(kPolicyReloadsTotal) == LabelNames{{"result"}});
    CHECK(scrape.LabelSets(kInformerRelistsTotal) == LabelNames{{"reason", "resource"}});
    for (const char* reason : {"expired", "too_large", "bookmark_went_back", "resync"}) {
      CHECK(scrape.Has(kInformerRelistsTotal, {{"resource", "pods"}, {"reason", reason}}));
    }
    for (const char* family : {kInformerWatchRestartsTotal, kInformerWatchErrorsTotal,
                               kInformerDecodeErrorsTotal, kInformerRejectedObjectsTotal}) {
      INFO(family);
      CHECK(scrape.LabelSets(family) == LabelNames{{"resource"}});
      CHECK(scrape.Has(family, {{"resource", "pods"}}));
      CHECK(scrape.Has(family, {{"resource", "nodes"}}));
    }
    CHECK(scrape.LabelSets(kBindsTotal) == LabelNames{{"profile", "result"}});
  }

  {  // Counts match what happened.
    const double scheduled =
        scrape.Value(kScheduleAttemptsTotal, {{"result", "scheduled"}, {"profile", "kubesched"}});
    const double unschedulable = scrape.Value(
        kScheduleAttemptsTotal, {{"result", "unschedulable"}, {"profile", "kubesched"}});
    const double error =
        scrape.Value(kScheduleAttemptsTotal, {{"result", "error"}, {"profile", "kubesched"}});
    CHECK(scheduled == 6);
    CHECK(unschedulable >= 1);
    CHECK(error == 0);
    // Every attempt ran PreFilter once and was timed once: attempts = scheduled + unschedulable
    // + error, seen from two independent records.
    const double attempts = scheduled + unschedulable + error;
    CHECK(scrape.Value(std::string(kSchedulingAttemptDuration) + "_count") == attempts);
    CHECK(scrape.Value(std::string(kFrameworkExtensionPointDuration) + "_count",
                       {{"extension_point", "PreFilter"}, {"profile", "kubesched"}}) == attempts);
    CHECK(scrape.Value(std::string(kSchedulingAlgorithmDuration) + "_count") == 6);
    CHECK(scrape.Value(std::string(kFrameworkExtensionPointDuration) + "_count",
                       {{"extension_point", "Bind"}, {"status", "Success"}}) == 6);
    CHECK(scrape.Value(kBindsTotal, {{"result", "bound"}, {"profile", "kubesched"}}) == 6);
    CHECK(scrape.Value(kBindsTotal, {{"result", "failed"}}) == 0);
    CHECK(scrape.Value(std::string(kPodSchedulingSliDuration) + "_count") == 6);
    CHECK(scrape.Value(std::string(kPodSchedulingAttempts) + "_count") == 6);
    // Same-priority pods: preemption was tried for the huge pod and found no victims.
    CHECK(scrape.Value(kPreemptionAttemptsTotal) == unschedulable);
    CHECK(scrape.Value(std::string(kPreemptionVictims) + "_count") == 0);

    CHECK(scrape.Value(kPendingPods, {{"queue", "unschedulable"}}) == 1);
    CHECK(scrape.Value(kPendingPods, {{"queue", "active"}}) == 0);
    CHECK(scrape.Value(kUnschedulablePods,
                       {{"plugin", "NodeResourcesFit"}, {"profile", "kubesched"}}) == 1);
    CHECK(scrape.Value(kQueueIncomingPodsTotal, {{"queue", "active"}, {"event", "PodAdd"}}) == 7);
    CHECK(scrape.Value(kCacheSize, {{"type", "nodes"}}) == 2);
    CHECK(scrape.Value(kCacheSize, {{"type", "pods"}}) == 6);
    CHECK(scrape.Value(kClusterAllocatedRatio, {{"resource", "cpu"}}) == Approx(6.0 / 8.0));
    CHECK(scrape.Value(kQueueQuotaUsed, {{"queue", "root"}, {"resource", "cpu"}}) == Approx(6));

    CHECK(scrape.Value(kInformerRelistsTotal) == 0);
  }
  CheckClientAndProcess(scrape, **server);

  REQUIRE(scheduler.Stop(SIGTERM, absl::Seconds(15)).value_or(-1) == 0);
}

// A scrape after some pods were bound and one was found unschedulable, so that most families
// have samples, from a leader (so the leader status is there too).
std::string ScrapeBusyLeader(TestApiProcess& server, ChildProcess& scheduler) {
  testing::TestApiClient api(server);
  for (int i = 0; i < 2; ++i) api.Create("/api/v1/nodes", NodeJson(absl::StrCat("node-", i)));
  for (int i = 0; i < 3; ++i) {
    api.Create("/api/v1/namespaces/default/pods", PodJson(absl::StrCat("small-", i), "1"));
  }
  api.Create("/api/v1/namespaces/default/pods", PodJson("huge", "64"));
  testing::RequireEventually("three pods are bound and one is unschedulable", scheduler, [&] {
    const Scrape scrape = testing::ScrapeMetrics(scheduler);
    return CountBound(api) >= 3 && scrape.Value(kPendingPods, {{"queue", "unschedulable"}}) >= 1;
  });
  const client::HttpResponse response =
      testing::LocalGet(testing::LoggedPort(scheduler, "metrics on port "), "/metrics");
  REQUIRE(response.status == 200);
  return response.body;
}

TEST_CASE("metrics: promtool check metrics finds nothing to complain about in a scrape of run",
          "[metrics][run][e2e]") {
  if (!testing::IsOnPath("promtool")) {
    FAIL(
        "promtool is not on PATH: scripts/install-deps.sh --test installs it (Debian's "
        "prometheus package)");
  }
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  // A queue with a max and a GPU-hour budget, so that the quota and budget families have samples.
  const std::string config_path = (*server)->dir() + "/config.yaml";
  std::ofstream(config_path) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                "kind: KubeSchedulerConfiguration\n"
                                "queues:\n  tree:\n  - name: team\n"
                                "    max: {cpu: \"100\", nvidia.com/gpu: \"8\"}\n"
                                "    budget: {nvidia.com/gpu: 1000h, period: 168h}\n";
  auto scheduler = testing::StartKubeschedRun(
      {.kubeconfig = (*server)->kubeconfig(), .config_path = config_path, .leader_elect = true});
  testing::WaitForLog(*scheduler, "became the leader");
  const std::string body = ScrapeBusyLeader(**server, *scheduler);
  const testing::TempFile scrape(body, "metrics.txt");
  auto checked = testing::RunCommand(
      {.argv = {"promtool", "check", "metrics"}, .stdin_path = scrape.path()}, absl::Seconds(60));
  REQUIRE(checked.ok());
  INFO("promtool: " << checked->stdout_text << checked->stderr_text);
  CHECK(checked->exit_code == 0);
  CHECK(checked->stdout_text.empty());
  CHECK(checked->stderr_text.empty());
  // The families promtool checked include the ones kube-scheduler dashboards read.
  auto parsed = Scrape::Parse(body);
  REQUIRE(parsed.ok());
  CHECK(parsed->Value(kLeaderElectionMasterStatus, {{"name", "kubesched"}}) == 1);
  CHECK(parsed->Has(kRestClientRequestsTotal));
  CHECK(parsed->Has(kProcessCpuSecondsTotal));
  CHECK(parsed->Value(kCacheSize, {{"type", "nodes"}}) == 2);
  CHECK(parsed->Value(kQueueBudgetLimit,
                      {{"queue", "root.team"}, {"resource", "nvidia.com/gpu"}}) == 1000 * 3600);
  CHECK(parsed->Has(kQueueQuotaMax, {{"queue", "root.team"}, {"resource", "cpu"}}));
  REQUIRE(scheduler->Stop(SIGTERM, absl::Seconds(15)).value_or(-1) == 0);
}

TEST_CASE("metrics: leader_election_master_status is 1 on the leader and 0 on the standby",
          "[metrics][run][e2e]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  auto leader = testing::StartKubeschedRun(
      {.kubeconfig = (*server)->kubeconfig(), .leader_elect = true, .identity = "first"});
  testing::WaitForLog(*leader, "became the leader");
  auto standby = testing::StartKubeschedRun(
      {.kubeconfig = (*server)->kubeconfig(), .leader_elect = true, .identity = "second"});
  testing::WaitForLog(*standby, "the leader is first");
  CHECK(testing::ScrapeMetrics(*leader).Value(kLeaderElectionMasterStatus,
                                              {{"name", "kubesched"}}) == 1);
  const Scrape standing_by = testing::ScrapeMetrics(*standby);
  CHECK(standing_by.Has(kLeaderElectionMasterStatus, {{"name", "kubesched"}}));
  CHECK(standing_by.Value(kLeaderElectionMasterStatus) == 0);
  CHECK(standing_by.LabelSets(kLeaderElectionMasterStatus) == LabelNames{{"name"}});
}

TEST_CASE("metrics: run exits with code 2 when the metrics port is taken", "[metrics][run][e2e]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  // The test API server's own port is certainly taken.
  const std::string& url = (*server)->url();
  const std::string taken = absl::StrCat("127.0.0.1:", url.substr(url.rfind(':') + 1));
  auto started = ChildProcess::Start(
      {.argv = {KUBESCHED_BINARY, "run", "--kubeconfig", (*server)->kubeconfig(),
                "--health-bind-address", "127.0.0.1:0", "--metrics-bind-address", taken,
                "--leader-elect=false", "--secure-port", "0"}});
  REQUIRE(started.ok());
  auto exit_code = (*started)->Wait(absl::Seconds(30));
  INFO((*started)->ReadStderr());
  REQUIRE(exit_code.ok());
  CHECK(*exit_code == 2);
  CHECK(absl::StrContains((*started)->ReadStderr(), absl::StrCat("cannot listen on ", taken)));
}

}  // namespace
}  // namespace kubesched::metrics
