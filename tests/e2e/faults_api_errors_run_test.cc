// The fault suite, errors from the API server: binds answered 409, 429 and 500 (and some answers
// lost) while a queue's max binds half the pods, and status writes refused. Every promise holds,
// the queue's max included, and every pending pod ends up saying why.

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "tests/e2e/fault_suite.h"

namespace kubesched::faults {
namespace {

using testapi::TestApiProcess;

int64_t Counter(FaultApi& api, const std::string& name) {
  rapidjson::Document stats = api.Stats();
  const rapidjson::Value& counters = stats["counters"];
  return counters.HasMember(name.c_str()) ? counters[name.c_str()].GetInt64() : 0;
}

std::string WriteQueueConfig(const TestApiProcess& server) {
  const std::string path = server.dir() + "/queues.yaml";
  std::ofstream(path) << "apiVersion: kubescheduler.config.k8s.io/v1\n"
                         "kind: KubeSchedulerConfiguration\n"
                         "queues:\n  tree:\n  - name: team\n    max: {cpu: \"5\"}\n";
  return path;
}

TEST_CASE("faults: binds answered 409, 429 and 500 break no promise, a queue's max included",
          "[e2e][faults]") {
  const uint64_t seed = SuiteSeed("bind errors");
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  FaultApi api(**server);
  auto scheduler = testing::StartKubeschedRun({.kubeconfig = (*server)->kubeconfig(),
                                               .config_path = WriteQueueConfig(**server),
                                               .verbosity = 1});
  api.SetFaults(absl::StrCat(R"({"seed": )", seed, R"(,
      "errors": [{"verb": "create", "resource": "pods/binding", "code": 409, "probability": 0.15},
                 {"verb": "create", "resource": "pods/binding", "code": 429, "probability": 0.15},
                 {"verb": "create", "resource": "pods/binding", "code": 500, "probability": 0.15}],
      "drops": [{"verb": "create", "resource": "pods/binding", "count": 4, "probability": 0.3}]})"));
  // 12 cpus: the queue's 5 and the 7 pods outside any queue fill them exactly.
  for (int i = 0; i < 3; ++i) api.CreateNode(absl::StrCat("node-", i), 4);
  api.CreatePods("team-", 10, "1", "team");
  api.CreatePods("free-", 7, "1");

  WaitForBound(api, 12, *scheduler, absl::Seconds(120));
  api.SetFaults("{}");
  CHECK(Counter(api, "faults.error.409") + Counter(api, "faults.error.429") +
            Counter(api, "faults.error.500") >=
        1);
  const std::vector<api::Pod> pods = api.Pods();
  CHECK(CountBound(pods) == 12);
  api::ResourceList team_max;
  team_max.Set(api::kCpu, 5000);
  RequireQueuesWithinMax(pods, {{"team", team_max}});
  RequirePromisesKept(api, *scheduler);
}

TEST_CASE("faults: status writes answered 409 and 500 still leave every pending pod saying why",
          "[e2e][faults]") {
  const uint64_t seed = SuiteSeed("status write errors");
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  FaultApi api(**server);
  auto scheduler = testing::StartKubeschedRun({.kubeconfig = (*server)->kubeconfig()});
  // 409 is never retried by the transport: four reasons are surely refused.
  api.SetFaults(absl::StrCat(R"({"seed": )", seed, R"(,
      "errors": [{"verb": "patch", "resource": "pods/status", "code": 409, "count": 4},
                 {"verb": "patch", "resource": "pods/status", "code": 500, "probability": 0.3}]})"));
  api.CreateNode("node-0", 2);
  api.CreatePods("p-", 8, "1");
  WaitForBound(api, 2, *scheduler);
  testing::RequireEventually("four reasons were refused with 409", *scheduler,
                             [&] { return Counter(api, "faults.error.409") == 4; });

  api.SetFaults("{}");
  RequirePromisesKept(api, *scheduler);
  CHECK(CountBound(api.Pods()) == 2);
}

}  // namespace
}  // namespace kubesched::faults
