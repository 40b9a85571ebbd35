// `kubesched run` when the API server loses its state (an etcd restore from an old backup): its
// resourceVersions start again below those kubesched has seen. kubesched must list again instead
// of re-watching from a version the server has not reached, forget the objects that no longer
// exist, and schedule the new ones on what really is there.

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "rapidjson/document.h"
#include "scheduler/metrics/scheduler_metrics.h"
#include "tests/e2e/fault_suite.h"
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
                      R"(","labels":{"kubernetes.io/hostname":")", name,
                      R"("}},"status":{"capacity":{"cpu":"4","memory":"16Gi","pods":"110"},)",
                      R"("allocatable":{"cpu":"4","memory":"16Gi","pods":"110"}}})");
}

void CreatePods(testing::TestApiClient& api, const std::string& prefix, int count) {
  for (int i = 0; i < count; ++i) {
    api.Create("/api/v1/namespaces/default/pods",
               absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", prefix, i,
                            R"(","namespace":"default"},"spec":{"schedulerName":"kubesched",)",
                            R"("containers":[{"name":"c","image":"busybox","resources":)",
                            R"({"requests":{"cpu":"1","memory":"100Mi"}}}]}})"));
  }
}

// Pod name -> node name ("" while pending), as the server has them.
std::map<std::string, std::string> Placements(testing::TestApiClient& api) {
  rapidjson::Document list = api.GetOk("/api/v1/namespaces/default/pods");
  std::map<std::string, std::string> placements;
  for (const rapidjson::Value& pod : list["items"].GetArray()) {
    const auto spec = pod.FindMember("spec");
    const auto node = spec->value.FindMember("nodeName");
    placements[pod["metadata"]["name"].GetString()] =
        node == spec->value.MemberEnd() ? "" : testing::StringOf(node->value);
  }
  return placements;
}

int CountBound(const std::map<std::string, std::string>& placements) {
  int bound = 0;
  for (const auto& [pod, node] : placements) bound += node.empty() ? 0 : 1;
  return bound;
}

void WaitForBound(testing::TestApiClient& api, ChildProcess& scheduler, int count) {
  testing::RequireEventually(absl::StrCat(count, " pods are bound"), scheduler,
                             [&] { return CountBound(Placements(api)) >= count; });
}

TEST_CASE("run: an API server that lost its state is listed again, its phantoms dropped",
          "[run][e2e][faults]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  TestApiProcess& apiserver = **server;
  auto api = std::make_unique<testing::TestApiClient>(apiserver);
  api->Create("/api/v1/nodes", NodeJson("node-a"));
  CreatePods(*api, "old-", 4);  // fill node-a
  auto scheduler = testing::StartKubeschedRun({.kubeconfig = apiserver.kubeconfig()});
  WaitForBound(*api, *scheduler, 4);

  // The server comes back empty: every resourceVersion kubesched holds is ahead of it.
  api.reset();
  REQUIRE(apiserver.Restart(TestApiProcess::State::kLost).ok());
  api = std::make_unique<testing::TestApiClient>(apiserver);
  testing::WaitForLog(*scheduler, "Pod reflector: listing /api/v1/pods again (too_large)");
  testing::WaitForLog(*scheduler, "Node reflector: listing /api/v1/nodes again (too_large)");

  // A node of the same name, empty this time: only a scheduler that forgot the old pods on it
  // sees room for the new ones.
  api->Create("/api/v1/nodes", NodeJson("node-a"));
  CreatePods(*api, "new-", 4);
  WaitForBound(*api, *scheduler, 4);

  const std::map<std::string, std::string> placements = Placements(*api);
  CHECK(placements.size() == 4);
  for (const auto& [pod, node] : placements) {
    INFO(pod);
    CHECK(node == "node-a");  // 4 pods of 1 CPU on 4 CPUs: full, not over
  }
  const testing::Scrape scrape = testing::ScrapeMetrics(*scheduler);
  CHECK(scrape.Value(metrics::kInformerRelistsTotal,
                     {{"resource", "pods"}, {"reason", "too_large"}}) >= 1);
  // kubesched's own view: the four new pods and nothing else on node-a's four CPUs.
  CHECK(scrape.Value(metrics::kCacheSize, {{"type", "pods"}}) == 4);
  CHECK(scrape.Value(metrics::kClusterAllocatedRatio, {{"resource", "cpu"}}) == Approx(1.0));
  faults::FaultApi fault_api(apiserver);
  faults::RequirePromisesKept(fault_api, *scheduler);
  REQUIRE(scheduler->Stop(SIGTERM, absl::Seconds(15)).value_or(-1) == 0);
}

}  // namespace
}  // namespace kubesched
