// Gangs through `kubesched run` against kubesched-testapi: a PodGroup's pods, created with
// kubectl, bind as a whole; an implicit group that cannot fit whole binds none of its pods and
// gives its room back; a group short of members waits, saying so, until its last member comes.
// Outcomes are waited for on the API server's state (pods, their conditions, the server's bind
// count), never slept for.

#include <catch2/catch.hpp>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "rapidjson/document.h"
#include "tests/testapi/testapi_process.h"
#include "tests/testing/child_process.h"
#include "tests/testing/kubesched_process.h"
#include "tests/testing/test_api_client.h"

namespace kubesched {
namespace {

using testapi::TestApiProcess;
using testing::StringOf;
using testing::TestApiClient;

constexpr char kPods[] = "/api/v1/namespaces/default/pods";
constexpr char kPodGroups[] = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups";

std::string NodeJson(const std::string& name, const std::string& cpu) {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")", name,
                      R"(","labels":{"kubernetes.io/hostname":")", name,
                      R"("}},"status":{"allocatable":{"cpu":")", cpu,
                      R"(","memory":"16Gi","pods":"110"}}})");
}

// A pod asking for `cpu`; `metadata` is added to its metadata as written (labels, annotations).
std::string PodJson(const std::string& name, const std::string& cpu,
                    const std::string& metadata = "") {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name, R"(")",
                      metadata.empty() ? "" : absl::StrCat(",", metadata),
                      R"(},"spec":{"schedulerName":"kubesched","containers":[{"name":"c",)",
                      R"("image":"busybox","resources":{"requests":{"cpu":")", cpu, R"("}}}]}})");
}

// A member of the implicit group `group` of `min_member` pods.
std::string ImplicitMemberJson(const std::string& name, const std::string& cpu,
                               const std::string& group, int min_member) {
  return PodJson(name, cpu,
                 absl::StrCat(R"("annotations":{"kubesched.io/pod-group":")", group,
                              R"(","kubesched.io/pod-group-min-member":")", min_member, R"("})"));
}

// A member of the PodGroup `group`.
std::string LabelledMemberJson(const std::string& name, const std::string& cpu,
                               const std::string& group) {
  return PodJson(name, cpu,
                 absl::StrCat(R"("labels":{"scheduling.x-k8s.io/pod-group":")", group, R"("})"));
}

std::string PodGroupJson(const std::string& name, int min_member) {
  return absl::StrCat(R"({"apiVersion":"scheduling.x-k8s.io/v1alpha1","kind":"PodGroup",)",
                      R"("metadata":{"name":")", name, R"("},"spec":{"minMember":)", min_member,
                      "}}");
}

class Api : public TestApiClient {
 public:
  using TestApiClient::TestApiClient;

  // The pod's spec.nodeName ("" while it is unbound).
  std::string NodeOf(const std::string& pod) {
    rapidjson::Document object = GetOk(absl::StrCat(kPods, "/", pod));
    const auto spec = object.FindMember("spec");
    if (spec == object.MemberEnd() || !spec->value.HasMember("nodeName")) return "";
    return StringOf(spec->value["nodeName"]);
  }
  bool AllBound(const std::vector<std::string>& pods) {
    for (const std::string& pod : pods) {
      if (NodeOf(pod).empty()) return false;
    }
    return true;
  }
  // Whether every pod's PodScheduled=False message contains `text`.
  bool AllUnschedulableWith(const std::vector<std::string>& pods, const std::string& text) {
    for (const std::string& pod : pods) {
      if (!absl::StrContains(UnschedulableMessage(pod), text)) return false;
    }
    return true;
  }
  // The message of the pod's PodScheduled=False condition ("" while it has none).
  std::string UnschedulableMessage(const std::string& pod) {
    rapidjson::Document object = GetOk(absl::StrCat(kPods, "/", pod));
    if (!object.HasMember("status") || !object["status"].HasMember("conditions")) return "";
    for (const rapidjson::Value& condition : object["status"]["conditions"].GetArray()) {
      if (StringOf(condition["type"]) == "PodScheduled" &&
          StringOf(condition["status"]) == "False") {
        return StringOf(condition["message"]);
      }
    }
    return "";
  }
  // A count of the server's: "podsBound" (the pods it ever accepted a bind for, whatever
  // happened after), "podsBoundMoreThanOnce".
  int64_t Stat(const char* name) { return GetOk("/testapi/stats")[name].GetInt64(); }
};

// What the test saw of the pods, for failure messages.
std::string Describe(Api& api, const std::vector<std::string>& pods) {
  std::vector<std::string> lines;
  for (const std::string& pod : pods) {
    lines.push_back(absl::StrCat(pod, ": nodeName \"", api.NodeOf(pod), "\", unschedulable \"",
                                 api.UnschedulableMessage(pod), "\""));
  }
  return absl::StrJoin(lines, "\n");
}

// kubectl with the server's kubeconfig and a private HOME (an empty discovery cache).
std::string KubectlOk(const TestApiProcess& server, std::vector<std::string> args) {
  args.insert(args.begin(), "kubectl");
  const std::string command = absl::StrJoin(args, " ");
  auto result =
      testing::RunCommand({.argv = std::move(args),
                           .env = {{"KUBECONFIG", server.kubeconfig()}, {"HOME", server.dir()}}},
                          absl::Seconds(30));
  REQUIRE(result.ok());
  INFO(command << "\nstdout: " << result->stdout_text << "\nstderr: " << result->stderr_text);
  REQUIRE(result->exit_code == 0);
  return result->stdout_text;
}

constexpr char kTrainManifest[] = R"(apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: train}
spec: {minMember: 3, scheduleTimeoutSeconds: 60}
---
apiVersion: v1
kind: Pod
metadata:
  name: train-0
  labels: {scheduling.x-k8s.io/pod-group: train}
spec:
  schedulerName: kubesched
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: train-1
  labels: {scheduling.x-k8s.io/pod-group: train}
spec:
  schedulerName: kubesched
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata:
  name: train-2
  labels: {scheduling.x-k8s.io/pod-group: train}
spec:
  schedulerName: kubesched
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
)";

TEST_CASE("run: a PodGroup and its three pods created with kubectl bind as a whole",
          "[run][e2e][gang]") {
  if (!testing::IsOnPath("kubectl")) {
    FAIL("kubectl is not on PATH (scripts/install-deps.sh --test installs it)");
  }
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  Api api(**server);
  api.Create("/api/v1/nodes", NodeJson("node-0", "2"));
  api.Create("/api/v1/nodes", NodeJson("node-1", "2"));
  auto scheduler = testing::StartKubeschedRun({.kubeconfig = (*server)->kubeconfig()});

  // The scheduler is running: the group and its members reach it one by one, through its watches.
  const std::string manifest = (*server)->dir() + "/train.yaml";
  std::ofstream(manifest) << kTrainManifest;
  const std::string created = KubectlOk(**server, {"create", "--validate=false", "-f", manifest});
  CHECK(absl::StrContains(created, "podgroup.scheduling.x-k8s.io/train created"));
  CHECK(absl::StrContains(created, "pod/train-2 created"));

  const std::vector<std::string> members = {"train-0", "train-1", "train-2"};
  testing::RequireEventually("the three members are bound", *scheduler,
                             [&] { return api.AllBound(members); });
  INFO(Describe(api, members));
  for (const std::string& member : members) CHECK_FALSE(api.NodeOf(member).empty());
  CHECK(api.Stat("podsBound") == 3);
  CHECK(api.Stat("podsBoundMoreThanOnce") == 0);
  CHECK(scheduler->Stop(SIGTERM, absl::Seconds(15)).ok());
}

// Three nodes of 4 CPUs: each member of `big` asks for 3.5 (more than a quarter of the 12), so
// three fit, one a node, and the fourth fits nowhere.
TEST_CASE("run: a group that cannot fit whole binds none and gives its room back",
          "[run][e2e][gang]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  Api api(**server);
  for (const char* node : {"node-0", "node-1", "node-2"}) {
    api.Create("/api/v1/nodes", NodeJson(node, "4"));
  }
  const std::vector<std::string> members = {"big-0", "big-1", "big-2", "big-3"};
  for (const std::string& member : members) {
    api.Create(kPods, ImplicitMemberJson(member, "3500m", "big", 4));
  }
  auto scheduler = testing::StartKubeschedRun({.kubeconfig = (*server)->kubeconfig()});

  testing::RequireEventually("every member is unschedulable naming its group", *scheduler, [&] {
    return api.AllUnschedulableWith(members, "pod group default/big");
  });
  {
    INFO(Describe(api, members));
    for (const std::string& member : members) CHECK(api.NodeOf(member).empty());
    CHECK(api.Stat("podsBound") == 0);
  }

  // A pod as big as a member fits only on a node the group does not hold.
  api.Create(kPods, PodJson("plain", "3500m"));
  testing::RequireEventually("the plain pod is bound", *scheduler,
                             [&] { return !api.NodeOf("plain").empty(); });
  INFO(Describe(api, members));
  for (const std::string& member : members) CHECK(api.NodeOf(member).empty());
  CHECK(api.Stat("podsBound") == 1);
  CHECK(scheduler->Stop(SIGTERM, absl::Seconds(15)).ok());
}

TEST_CASE("run: a group short of members waits for them, then binds whole", "[run][e2e][gang]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  Api api(**server);
  api.Create("/api/v1/nodes", NodeJson("node-0", "4"));
  api.Create(kPodGroups, PodGroupJson("pair", 2));
  api.Create(kPods, LabelledMemberJson("pair-0", "1", "pair"));
  auto scheduler = testing::StartKubeschedRun({.kubeconfig = (*server)->kubeconfig()});

  testing::RequireEventually("the lone member says its group is short", *scheduler, [&] {
    return absl::StrContains(api.UnschedulableMessage("pair-0"), "fewer than its minMember 2");
  });
  CHECK(absl::StrContains(api.UnschedulableMessage("pair-0"),
                          "pod group default/pair has 1 pod(s), fewer than its minMember 2"));
  CHECK(api.NodeOf("pair-0").empty());
  CHECK(api.Stat("podsBound") == 0);

  api.Create(kPods, LabelledMemberJson("pair-1", "1", "pair"));
  const std::vector<std::string> members = {"pair-0", "pair-1"};
  testing::RequireEventually("both members are bound", *scheduler,
                             [&] { return api.AllBound(members); });
  CHECK(api.NodeOf("pair-0") == "node-0");
  CHECK(api.NodeOf("pair-1") == "node-0");
  CHECK(api.Stat("podsBound") == 2);
  CHECK(scheduler->Stop(SIGTERM, absl::Seconds(15)).ok());
}

}  // namespace
}  // namespace kubesched
