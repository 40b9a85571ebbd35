// Queue state where users look, end to end through `kubesched run` against kubesched-testapi:
// Warning Events on the queue ConfigMap (a refused update, a typed limit that matches no node)
// and the per-queue metrics (pending pods, the next budget reset, typed limits matching no node).

#include <catch2/catch.hpp>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
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

constexpr char kQueuesConfigMap[] = "/api/v1/namespaces/queue-config/configmaps/kubesched-queues";

std::string GpuNodeJson(const std::string& name, const std::string& product) {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")", name,
                      R"(","labels":{"nvidia.com/gpu.product":")", product,
                      R"("}},"status":{"allocatable":{"cpu":"8","memory":"64Gi","pods":"110",)",
                      R"("nvidia.com/gpu":"8"}}})");
}

void CreateQueuePod(Api& api, const std::string& name, const std::string& cpu) {
  api.Create(
      "/api/v1/namespaces/default/pods",
      absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
                   R"(","namespace":"default","labels":{"kubesched.io/queue":"root.team"}},)",
                   R"("spec":{"schedulerName":"kubesched","containers":[{"name":"c",)",
                   R"("image":"busybox","resources":{"requests":{"cpu":")", cpu, R"("}}}]}})"));
}

void SetQueuesYaml(Api& api, const std::string& yaml) {
  api.SetConfigMapData(kQueuesConfigMap, "queues.yaml", yaml);
}

// The notes of the Events about the queue ConfigMap with `reason`.
std::vector<std::string> ConfigMapEventNotes(Api& api, const std::string& reason) {
  rapidjson::Document events = api.Get("/apis/events.k8s.io/v1/namespaces/queue-config/events");
  std::vector<std::string> notes;
  for (const rapidjson::Value& event : events["items"].GetArray()) {
    const rapidjson::Value& regarding = event["regarding"];
    if (Str(regarding["kind"]) == "ConfigMap" && Str(regarding["name"]) == "kubesched-queues" &&
        Str(event["reason"]) == reason && Str(event["type"]) == "Warning") {
      notes.push_back(Str(event["note"]));
    }
  }
  return notes;
}

void WaitForConfigMapEvent(Api& api, const std::string& reason, const std::string& text,
                           ChildProcess& scheduler) {
  RequireEventually(absl::StrCat("a ", reason, " Event on the ConfigMap says \"", text, "\""),
                    scheduler, [&] {
                      for (const std::string& note : ConfigMapEventNotes(api, reason)) {
                        if (absl::StrContains(note, text)) return true;
                      }
                      return false;
                    });
}

constexpr char kQueues[] =
    "models: {A100: [NVIDIA-A100-*], H100: [NVIDIA-H100-*]}\n"
    "tree: [{name: team, max: {cpu: \"4\", nvidia.com/gpu.H100: \"2\"},\n"
    "        budget: {cpu: 1000h, alignTo: month}}]\n";

constexpr char kUnmatched[] = "kubesched_queue_typed_limits_matching_no_node";

TEST_CASE("run: queue state shows on the ConfigMap and in the metrics", "[run][e2e][queue_quota]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  TestApiProcess& apiserver = **server;
  Api api(apiserver);
  api.Create("/api/v1/nodes", GpuNodeJson("a100-0", "NVIDIA-A100-SXM4-80GB"));
  api.Create("/api/v1/namespaces",
             R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"queue-config"}})");
  api.Create("/api/v1/namespaces/queue-config/configmaps",
             absl::StrCat(R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":)",
                          R"("kubesched-queues","namespace":"queue-config"},"data":{}})"));
  SetQueuesYaml(api, kQueues);
  const std::string config = apiserver.dir() + "/config.yaml";
  std::ofstream(config) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                           "kind: KubeSchedulerConfiguration\n"
                           "queues:\n"
                           "  configMap: {namespace: queue-config, name: kubesched-queues}\n";
  auto scheduler =
      testing::StartKubeschedRun({.kubeconfig = apiserver.kubeconfig(), .config_path = config});

  // No node is an H100: the max on nvidia.com/gpu.H100 limits nothing, and users are told.
  constexpr char kWarning[] = "queue root.team: the max on nvidia.com/gpu.H100 matches no node";
  WaitForLog(*scheduler, kWarning);
  WaitForConfigMapEvent(api, "TypedLimitMatchesNoNode", kWarning, *scheduler);

  // Two pods of 3 CPUs in a queue of 4: one binds, one waits in the queue.
  CreateQueuePod(api, "team-0", "3");
  CreateQueuePod(api, "team-1", "3");
  const std::map<std::string, std::string> team = {{"queue", "root.team"}};
  testing::Scrape scrape = testing::ScrapeMetrics(*scheduler);
  RequireEventually("one pod of root.team is pending", *scheduler, [&] {
    scrape = testing::ScrapeMetrics(*scheduler);
    return scrape.Value("kubesched_queue_pending_pods", team) == 1 &&
           scrape.Value("kubesched_queue_quota_used",
                        {{"queue", "root.team"}, {"resource", "cpu"}}) == 3;
  });
  CHECK(scrape.Value("kubesched_queue_quota_max", {{"queue", "root.team"}, {"resource", "cpu"}}) ==
        4);
  // The month-aligned budget resets on the first of next month, 00:00 UTC.
  const absl::CivilMonth month = absl::ToCivilMonth(absl::Now(), absl::UTCTimeZone());
  const double next_month =
      static_cast<double>(absl::ToUnixSeconds(absl::FromCivil(month + 1, absl::UTCTimeZone())));
  const double reset = scrape.Value("kubesched_queue_budget_next_reset_timestamp_seconds",
                                    {{"queue", "root.team"}, {"resource", "cpu"}});
  // A scrape across midnight of the month's last day sees the month after.
  CHECK((reset == next_month || reset == static_cast<double>(absl::ToUnixSeconds(
                                             absl::FromCivil(month + 2, absl::UTCTimeZone())))));
  CHECK(scrape.Value(kUnmatched, {{"queue", "root.team"}, {"resource", "nvidia.com/gpu.H100"}}) ==
        1);

  // An H100 node joins: the limit now holds, and the gauge follows.
  api.Create("/api/v1/nodes", GpuNodeJson("h100-0", "NVIDIA-H100-80GB-HBM3"));
  RequireEventually("no typed limit is left matching no node", *scheduler, [&] {
    return !testing::ScrapeMetrics(*scheduler).Has(kUnmatched, {{"queue", "root.team"}});
  });

  // A bad update is refused, the Event on the ConfigMap says why, and the old tree stays.
  SetQueuesYaml(api, "tree: [{name: team, max: {cpu: lots}}]\n");
  WaitForConfigMapEvent(api, "QueueConfigRejected", "max.cpu: \"lots\" is not a quantity",
                        *scheduler);
  CHECK(testing::ScrapeMetrics(*scheduler)
            .Value("kubesched_queue_quota_max", {{"queue", "root.team"}, {"resource", "cpu"}}) ==
        4);

  REQUIRE(scheduler->Stop(SIGTERM, absl::Seconds(10)).value_or(-1) == 0);
}

}  // namespace
}  // namespace kubesched
