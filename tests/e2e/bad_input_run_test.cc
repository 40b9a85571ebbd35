// `kubesched run` fed bad objects while it runs: a PriorityClass whose value the API server
// would refuse today but still serves (stored before validation caught it, or restored from a
// backup), and a policy ConfigMap whose YAML does not parse. Each bad version is logged once with
// its name and reason and counted, however often a relist delivers it again, and the good pods
// keep being scheduled.

#include <catch2/catch.hpp>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "rapidjson/document.h"
#include "scheduler/metrics/scheduler_metrics.h"
#include "tests/testapi/testapi_process.h"
#include "tests/testing/child_process.h"
#include "tests/testing/kubesched_process.h"
#include "tests/testing/test_api_client.h"

namespace kubesched {
namespace {

using testapi::TestApiProcess;
using testing::ChildProcess;
using testing::CountInLog;
using testing::WaitForLog;

constexpr char kRogueLog[] = "PriorityClass reflector: rejected: PriorityClass rogue: value: ";
constexpr char kPolicyRejected[] = "ConfigMap kube-system/kubesched-policies: policies rejected";

void CreatePod(testing::TestApiClient& api, const std::string& name) {
  api.Create("/api/v1/namespaces/default/pods",
             absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
                          R"(","namespace":"default"},"spec":{"schedulerName":"kubesched",)",
                          R"("containers":[{"name":"c","image":"busybox","resources":)",
                          R"({"requests":{"cpu":"1"}}}]}})"));
}

void WaitForBound(testing::TestApiClient& api, ChildProcess& scheduler, const std::string& pod) {
  testing::RequireEventually(absl::StrCat("pod ", pod, " is bound"), scheduler, [&] {
    rapidjson::Document got = api.GetOk("/api/v1/namespaces/default/pods/" + pod);
    const auto spec = got.FindMember("spec");
    return spec != got.MemberEnd() && spec->value.HasMember("nodeName");
  });
}

// What an older or restored API server left in storage: the class `rogue` with a value above
// every user-definable priority. The server is down while its journal is edited.
void MakeRogueOutOfRange(TestApiProcess& apiserver) {
  apiserver.Kill();
  std::ifstream in(apiserver.state_file());
  std::stringstream journal;
  std::string line;
  int edited = 0;
  while (std::getline(in, line)) {
    if (line.find(R"("name":"rogue")") != std::string::npos) {
      const std::string before = line;
      line = absl::StrReplaceAll(line, {{R"("value":1000,)", R"("value":1500000000,)"}});
      edited += line != before ? 1 : 0;
    }
    journal << line << "\n";
  }
  in.close();
  REQUIRE(edited == 1);
  std::ofstream(apiserver.state_file(), std::ios::trunc) << journal.str();
  REQUIRE(apiserver.Restart().ok());
}

double Metric(ChildProcess& scheduler, const std::string& name,
              const std::map<std::string, std::string>& labels) {
  return testing::ScrapeMetrics(scheduler).Value(name, labels);
}

TEST_CASE("run: bad objects arriving while it runs are logged once and counted, pods still bind",
          "[run][e2e][faults]") {
  // No bookmarks: a reflector's resourceVersion stays at its last event, so that a restart of the
  // server (which keeps no history) makes it list again.
  auto server = TestApiProcess::Start({"--bookmark-interval", "1h"});
  REQUIRE(server.ok());
  TestApiProcess& apiserver = **server;
  auto api = std::make_unique<testing::TestApiClient>(apiserver);
  api->Create("/api/v1/nodes",
              R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-0"},)"
              R"("status":{"allocatable":{"cpu":"8","memory":"64Gi","pods":"110"}}})");
  api->Create("/apis/scheduling.k8s.io/v1/priorityclasses",
              R"({"apiVersion":"scheduling.k8s.io/v1","kind":"PriorityClass",)"
              R"("metadata":{"name":"rogue"},"value":1000,"description":"x"})");
  api.reset();
  MakeRogueOutOfRange(apiserver);
  api = std::make_unique<testing::TestApiClient>(apiserver);

  const std::string config_path = apiserver.dir() + "/config.yaml";
  std::ofstream(config_path) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                "kind: KubeSchedulerConfiguration\n"
                                "policyConfigMap: {namespace: kube-system, name: "
                                "kubesched-policies}\n";
  auto scheduler = testing::StartKubeschedRun(
      {.kubeconfig = apiserver.kubeconfig(), .config_path = config_path});
  WaitForLog(*scheduler, kRogueLog);
  CHECK(CountInLog(*scheduler,
                   "maximum allowed value of a user defined priority is 1000000000, "
                   "got 1500000000") == 1);
  CreatePod(*api, "good-0");
  WaitForBound(*api, *scheduler, "good-0");

  // Through the watch: a new version of the class (its value is immutable, so the API server
  // does not check it again), and a policy ConfigMap whose YAML does not parse.
  client::HttpResponse patched =
      api->Send("PATCH", "/apis/scheduling.k8s.io/v1/priorityclasses/rogue",
                R"({"metadata":{"labels":{"touched":"yes"}}})", "application/merge-patch+json");
  REQUIRE(patched.status == 200);
  api->Create("/api/v1/namespaces/kube-system/configmaps",
              R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kubesched-policies",)"
              R"("namespace":"kube-system"},"data":{"pool.yaml":"nodeAffinity: [unclosed\n"}})");
  WaitForLog(*scheduler, kRogueLog, 2);
  WaitForLog(*scheduler, kPolicyRejected);
  CreatePod(*api, "good-1");
  WaitForBound(*api, *scheduler, "good-1");

  // A restart without history: every reflector behind the server's version lists again and gets
  // the same bad versions, which are counted as seen again but not logged or rejected again.
  api.reset();
  REQUIRE(apiserver.Restart().ok());
  api = std::make_unique<testing::TestApiClient>(apiserver);
  testing::RequireEventually("the PriorityClass relist has delivered rogue again", *scheduler, [&] {
    return Metric(*scheduler, metrics::kInformerDecodeErrorsTotal,
                  {{"resource", "priorityclasses"}}) >= 3;
  });
  CreatePod(*api, "good-2");
  WaitForBound(*api, *scheduler, "good-2");

  CHECK(CountInLog(*scheduler, kRogueLog) == 2);
  CHECK(CountInLog(*scheduler, kPolicyRejected) == 1);
  const testing::Scrape scrape = testing::ScrapeMetrics(*scheduler);
  CHECK(scrape.Value(metrics::kInformerRejectedObjectsTotal, {{"resource", "priorityclasses"}}) ==
        2);
  CHECK(scrape.Value(metrics::kInformerRelistsTotal,
                     {{"resource", "priorityclasses"}, {"reason", "expired"}}) >= 1);
  CHECK(scrape.Value(metrics::kPolicyReloadsTotal, {{"result", "rejected"}}) == 1);
  REQUIRE(scheduler->Stop(SIGTERM, absl::Seconds(15)).value_or(-1) == 0);
}

}  // namespace
}  // namespace kubesched
