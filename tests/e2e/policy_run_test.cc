// Per-pod policies in `kubesched run`, end to end: the real binary against kubesched-testapi. A
// pod naming a policy that does not exist stays pending with the reason, and binds once the
// policy ConfigMap brings the policy, without a restart.

#include <catch2/catch.hpp>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/match.h"
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
using Api = testing::TestApiClient;

constexpr auto* Str = &testing::StringOf;

rapidjson::Document GetPod(Api& api, const std::string& name) {
  return api.Get(absl::StrCat("/api/v1/namespaces/default/pods/", name));
}

std::string PodScheduledMessage(const rapidjson::Document& pod) {
  const auto status = pod.FindMember("status");
  if (status == pod.MemberEnd() || !status->value.HasMember("conditions")) return "";
  for (const rapidjson::Value& condition : status->value["conditions"].GetArray()) {
    if (Str(condition["type"]) == "PodScheduled") return Str(condition["message"]);
  }
  return "";
}

std::string NodeName(const rapidjson::Document& pod) {
  const auto spec = pod.FindMember("spec");
  if (spec == pod.MemberEnd() || !spec->value.HasMember("nodeName")) return "";
  return Str(spec->value["nodeName"]);
}

TEST_CASE("run: a pod waits for its policy and binds once the policy ConfigMap brings it",
          "[run][e2e][policies]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  TestApiProcess& apiserver = **server;
  Api api(apiserver);
  api.Create("/api/v1/nodes",
             R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-0","labels":)"
             R"({"pool":"A"}},"status":{"allocatable":{"cpu":"8","memory":"64Gi","pods":"110"}}})");
  api.Create(
      "/api/v1/namespaces/default/pods",
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"gpu-job","namespace":"default",)"
      R"("annotations":{"kubesched.io/policy":"pool","kubesched.io/policy-args":)"
      R"("{\"Pool\":\"A\"}"}},"spec":{"schedulerName":"kubesched","containers":)"
      R"([{"name":"c","image":"busybox","resources":{"requests":{"cpu":"1"}}}]}})");
  const std::string config_path = apiserver.dir() + "/policies.yaml";
  std::ofstream(config_path)
      << "apiVersion: kubescheduler.config.k8s.io/v1\n"
         "kind: KubeSchedulerConfiguration\n"
         "policyConfigMap: {namespace: kube-system, name: kubesched-policies}\n";
  auto started = testing::StartKubeschedRun(
      {.kubeconfig = apiserver.kubeconfig(), .config_path = config_path, .verbosity = 2});
  ChildProcess& scheduler = *started;

  const std::string missing = "policy \"pool\" (annotation kubesched.io/policy) does not exist";
  testing::RequireEventually(
      "the pod's PodScheduled condition says its policy is missing", scheduler,
      [&] { return absl::StrContains(PodScheduledMessage(GetPod(api, "gpu-job")), missing); });

  api.Create("/api/v1/namespaces/kube-system/configmaps",
             R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kubesched-policies",)"
             R"("namespace":"kube-system"},"data":{"pool.yaml":)"
             R"("nodeAffinity:\n  requiredDuringSchedulingIgnoredDuringExecution:\n)"
             R"(    nodeSelectorTerms:\n    - matchExpressions:\n)"
             R"(      - {key: pool, operator: In, values: [\"{{.Pool}}\"]}\n"}})");
  std::string node;
  testing::RequireEventually("the pod is bound", scheduler,
                             [&] { return !(node = NodeName(GetPod(api, "gpu-job"))).empty(); });
  CHECK(node == "node-0");
  CHECK(absl::StrContains(scheduler.ReadStderr(), ": 1 policy (generation 1): pool in force"));
  CHECK(scheduler.Running());
  // -v 2: a line per scheduling outcome of a pod. The bound pod is seen in the API before the
  // line is written: it is waited for.
  testing::RequireEventually("the binding is logged", scheduler, [&] {
    return absl::StrContains(scheduler.ReadStderr(), "pod default/gpu-job bound to node node-0");
  });
  CHECK(
      absl::StrContains(scheduler.ReadStderr(), "pod default/gpu-job unschedulable (attempt 1): "));
  REQUIRE(scheduler.Stop(SIGTERM, absl::Seconds(10)).value_or(-1) == 0);
}

}  // namespace
}  // namespace kubesched
