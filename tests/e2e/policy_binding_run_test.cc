// Policy bindings in `kubesched run`, end to end: the real binary against kubesched-testapi. A pod
// without a policy annotation that its profile cannot place stays pending; a ConfigMap update that
// binds a policy to its namespace makes it bind where that policy's template says, without a
// restart. A bad binding update is refused and the last good set stays.

#include <catch2/catch.hpp>
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
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
using Api = testing::TestApiClient;

constexpr auto* Str = &testing::StringOf;
constexpr char kPolicyConfigMap[] = "/api/v1/namespaces/kube-system/configmaps/kubesched-policies";

std::string NodeName(Api& api, const std::string& pod_name) {
  const rapidjson::Document pod = api.Get("/api/v1/namespaces/batch/pods/" + pod_name);
  const auto spec = pod.FindMember("spec");
  if (spec == pod.MemberEnd() || !spec->value.HasMember("nodeName")) return "";
  return Str(spec->value["nodeName"]);
}

// Sets data key `key` of the policy ConfigMap, as `kubectl patch --type merge` does.
void SetPolicyData(Api& api, const std::string& key, const std::string& value) {
  api.SetConfigMapData(kPolicyConfigMap, key, value);
}

// Whether a Warning Event with `reason` about the policy ConfigMap has a note containing `text`.
bool PolicyConfigMapWarningNoteContains(Api& api, const std::string& reason,
                                        const std::string& text) {
  const rapidjson::Document events =
      api.Get("/apis/events.k8s.io/v1/namespaces/kube-system/events");
  if (!events.IsObject() || !events.HasMember("items")) return false;
  for (const rapidjson::Value& event : events["items"].GetArray()) {
    if (!event.HasMember("regarding") || !event.HasMember("note")) continue;
    const rapidjson::Value& regarding = event["regarding"];
    if (Str(regarding["kind"]) == "ConfigMap" && Str(regarding["name"]) == "kubesched-policies" &&
        Str(event["reason"]) == reason && Str(event["type"]) == "Warning" &&
        absl::StrContains(Str(event["note"]), text)) {
      return true;
    }
  }
  return false;
}

// The profile adds a required pool B, which no node has: a pod under it never fits. A policy is a
// profile of its own, so the pool policy's template decides instead.
constexpr char kConfig[] = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: kubesched
    pluginConfig:
      - name: NodeAffinity
        args:
          addedAffinity:
            requiredDuringSchedulingIgnoredDuringExecution:
              nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: In, values: [B]}]}]
policyConfigMap: {namespace: kube-system, name: kubesched-policies}
)";

TEST_CASE("run: a binding added to the policy ConfigMap places a pending pod by its policy",
          "[run][e2e][policies][bindings]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  TestApiProcess& apiserver = **server;
  Api api(apiserver);
  for (const auto& [name, pool] : {std::pair{"node-a", "A"}, std::pair{"node-c", "C"}}) {
    api.Create("/api/v1/nodes",
               absl::StrCat(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")", name,
                            R"(","labels":{"pool":")", pool, R"("}},"status":{"allocatable":)",
                            R"({"cpu":"8","memory":"64Gi","pods":"110"}}})"));
  }
  api.Create("/api/v1/namespaces",
             R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"batch",)"
             R"("labels":{"team":"batch"}}})");
  api.Create("/api/v1/namespaces/kube-system/configmaps",
             R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"kubesched-policies",)"
             R"("namespace":"kube-system"},"data":{"pool.yaml":)"
             R"("nodeAffinity:\n  requiredDuringSchedulingIgnoredDuringExecution:\n)"
             R"(    nodeSelectorTerms:\n    - matchExpressions:\n)"
             R"(      - {key: pool, operator: In, values: [\"{{.Pool}}\"]}\n"}})");
  api.Create("/api/v1/namespaces/batch/pods",
             R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"job","namespace":"batch"},)"
             R"("spec":{"schedulerName":"kubesched","containers":)"
             R"([{"name":"c","image":"busybox","resources":{"requests":{"cpu":"1"}}}]}})");
  const std::string config_path = apiserver.dir() + "/bindings.yaml";
  std::ofstream(config_path) << kConfig;
  auto started = testing::StartKubeschedRun(
      {.kubeconfig = apiserver.kubeconfig(), .config_path = config_path, .verbosity = 2});
  ChildProcess& scheduler = *started;
  testing::WaitForLog(scheduler, "pod batch/job unschedulable (attempt 1): ");
  CHECK(NodeName(api, "job").empty());

  // A bad update (args that fill no hole) is refused: the pod keeps waiting under its profile.
  SetPolicyData(
      api, "policyBindings.yaml",
      "- {namespaceSelector: {matchLabels: {team: batch}}, policy: pool, args: {Pol: A}}");
  testing::WaitForLog(scheduler, "policies rejected, the last good set stays in force");
  CHECK(absl::StrContains(scheduler.ReadStderr(),
                          "ConfigMap key \"policyBindings.yaml\": policyBindings[0].args.Pol: "
                          "policy \"pool\" has no hole Pol (holes: Pool)"));
  CHECK(NodeName(api, "job").empty());
  // Users who read the ConfigMap with kubectl see why, as a Warning Event about it.
  testing::RequireEventually("a PolicyConfigRejected Event names the refused binding", scheduler,
                             [&] {
                               return PolicyConfigMapWarningNoteContains(
                                   api, "PolicyConfigRejected",
                                   "policyBindings[0].args.Pol: policy \"pool\" has no hole Pol");
                             });

  SetPolicyData(api, "policyBindings.yaml",
                "- name: batch-namespaces\n"
                "  namespaceSelector: {matchLabels: {team: batch}}\n"
                "  policy: pool\n"
                "  args: {Pool: A}\n");
  std::string node;
  testing::RequireEventually("the pod is bound", scheduler,
                             [&] { return !(node = NodeName(api, "job")).empty(); });
  CHECK(node == "node-a");
  const std::string log = scheduler.ReadStderr();
  INFO(log);
  CHECK(absl::StrContains(log, "): pool; 1 binding in force"));
  CHECK(absl::StrContains(log, "pod batch/job bound to node node-a"));
  CHECK(scheduler.Running());
  REQUIRE(scheduler.Stop(SIGTERM, absl::Seconds(10)).value_or(-1) == 0);
}

}  // namespace
}  // namespace kubesched
