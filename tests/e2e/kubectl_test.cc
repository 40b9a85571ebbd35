// kubectl against kubesched-testapi (TLS + bearer token): the real client is the judge of
// fidelity for discovery, create (protobuf bodies included), apply with kubectl's default
// validation (the server validates fields, fieldValidation=Strict), get with server-side tables,
// get -w, describe (with events), delete, and a restart that keeps state.

#include <catch2/catch.hpp>
#include <fstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "rapidjson/document.h"
#include "tests/testapi/testapi_process.h"
#include "tests/testing/child_process.h"

namespace kubesched::testapi {
namespace {

using testing::ChildProcessOptions;
using testing::CommandResult;

constexpr char kManifest[] = R"(apiVersion: v1
kind: Node
metadata:
  name: node-a
  labels: {kubernetes.io/hostname: node-a}
status:
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
---
apiVersion: v1
kind: Pod
metadata:
  name: web
  labels: {app: web}
spec:
  schedulerName: kubesched
  containers:
  - name: c
    image: nginx
    resources: {requests: {cpu: 100m}}
)";

class Kubectl {
 public:
  explicit Kubectl(const TestApiProcess& server) : server_(server) {}

  CommandResult Run(std::vector<std::string> args) const {
    auto result = testing::RunCommand(Options(std::move(args)), absl::Seconds(30));
    REQUIRE(result.ok());
    return *result;
  }
  // Runs and requires exit code 0; returns stdout.
  std::string Ok(std::vector<std::string> args) const {
    CommandResult result = Run(args);
    INFO("kubectl " << absl::StrJoin(args, " ") << "\nstdout: " << result.stdout_text
                    << "\nstderr: " << result.stderr_text);
    REQUIRE(result.exit_code == 0);
    return result.stdout_text;
  }
  ChildProcessOptions Options(std::vector<std::string> args) const {
    args.insert(args.begin(), "kubectl");
    // A private HOME, so kubectl's discovery cache starts empty for every server.
    return {.argv = std::move(args),
            .env = {{"KUBECONFIG", server_.kubeconfig()}, {"HOME", server_.dir()}}};
  }

 private:
  const TestApiProcess& server_;
};

TEST_CASE("kubectl works against kubesched-testapi", "[testapi][e2e]") {
  if (!testing::IsOnPath("kubectl")) {
    FAIL("kubectl is not on PATH (scripts/install-deps.sh --test installs it)");
  }
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  Kubectl kubectl(**server);
  std::string manifest_path = (*server)->dir() + "/manifest.yaml";
  std::ofstream(manifest_path) << kManifest;

  std::string created = kubectl.Ok({"create", "-f", manifest_path});
  CHECK(absl::StrContains(created, "node/node-a created"));
  CHECK(absl::StrContains(created, "pod/web created"));

  rapidjson::Document pods;
  std::string pods_json = kubectl.Ok({"get", "pods", "-o", "json"});
  REQUIRE_FALSE(pods.Parse(pods_json.c_str()).HasParseError());
  REQUIRE(pods["items"].Size() == 1);
  CHECK(std::string(pods["items"][0]["metadata"]["name"].GetString()) == "web");
  CHECK(std::string(pods["items"][0]["spec"]["schedulerName"].GetString()) == "kubesched");
  CHECK(std::string(pods["items"][0]["status"]["phase"].GetString()) == "Pending");
  std::string uid = pods["items"][0]["metadata"]["uid"].GetString();

  CHECK(absl::StrContains(kubectl.Ok({"get", "nodes"}), "node-a"));
  CHECK(absl::StrContains(kubectl.Ok({"get", "no", "-o", "name"}), "node/node-a"));
  CHECK(absl::StrContains(kubectl.Ok({"get", "pods", "-A", "-l", "app=web", "-o", "name"}),
                          "pod/web"));

  SECTION("get -w sees a pod created later") {
    auto watch = testing::ChildProcess::Start(kubectl.Options({"get", "pods", "-w", "-o", "name"}));
    REQUIRE(watch.ok());
    REQUIRE((*watch)->WaitForStdout("pod/web", absl::Seconds(20)).ok());
    kubectl.Ok({"run", "later", "--image=nginx", "--restart=Never"});
    auto seen = (*watch)->WaitForStdout("pod/later", absl::Seconds(20));
    CHECK(seen.ok());
  }

  SECTION("describe shows the pod's events; delete removes it") {
    std::string event_path = (*server)->dir() + "/event.yaml";
    std::ofstream(event_path) << absl::StrCat(
        "apiVersion: v1\nkind: Event\nmetadata: {name: web.scheduled}\n"
        "involvedObject: {apiVersion: v1, kind: Pod, name: web, namespace: default, uid: ",
        uid,
        "}\nreason: Scheduled\nmessage: Successfully assigned default/web to node-a\n"
        "type: Normal\nsource: {component: kubesched}\ncount: 1\n"
        "firstTimestamp: \"2024-01-01T00:00:00Z\"\nlastTimestamp: \"2024-01-01T00:00:00Z\"\n");
    kubectl.Ok({"create", "-f", event_path});
    std::string described = kubectl.Ok({"describe", "pod", "web"});
    CHECK(absl::StrContains(described, "Successfully assigned default/web to node-a"));
    CHECK(absl::StrContains(described, "Scheduled"));

    CHECK(absl::StrContains(kubectl.Ok({"delete", "pod", "web"}), "pod \"web\" deleted"));
    CommandResult missing = kubectl.Run({"get", "pod", "web"});
    CHECK(missing.exit_code != 0);
    CHECK(absl::StrContains(missing.stderr_text, "pods \"web\" not found"));
  }

  SECTION("describe and get events show an event posted through events.k8s.io/v1") {
    // The shape kubesched's event recorder posts; kubectl sends it to the events.k8s.io/v1 URL.
    std::string event_path = (*server)->dir() + "/event-v1.yaml";
    std::ofstream(event_path) << absl::StrCat(
        "apiVersion: events.k8s.io/v1\nkind: Event\nmetadata: {name: web.binding}\n"
        "eventTime: \"2024-01-01T00:00:00.000000Z\"\nreportingController: kubesched\n"
        "reportingInstance: kubesched-0\naction: Binding\nreason: Scheduled\n"
        "regarding: {apiVersion: v1, kind: Pod, name: web, namespace: default, uid: ",
        uid, "}\nnote: Successfully assigned default/web to node-a via events.k8s.io\n",
        "type: Normal\n");
    kubectl.Ok({"create", "-f", event_path});
    rapidjson::Document stats;
    std::string stats_json = kubectl.Ok({"get", "--raw", "/testapi/stats"});
    REQUIRE_FALSE(stats.Parse(stats_json.c_str()).HasParseError());
    CHECK(stats["requests"]["create events.events.k8s.io"].GetInt() == 1);

    std::string described = kubectl.Ok({"describe", "pod", "web"});
    CHECK(absl::StrContains(described,
                            "Successfully assigned default/web to node-a via events.k8s.io"));
    CHECK(absl::StrContains(described, "Scheduled"));
    CHECK(absl::StrContains(described, "kubesched"));
    // Named columns: a core v1 list, as kubectl does.
    std::string listed =
        kubectl.Ok({"get", "events", "--field-selector", "involvedObject.name=web", "-o",
                    "custom-columns=REASON:.reason,FROM:.source.component,MESSAGE:.message"});
    CHECK(absl::StrContains(listed, "Scheduled"));
    CHECK(absl::StrContains(listed, "kubesched"));
    CHECK(absl::StrContains(listed, "via events.k8s.io"));
    CHECK(absl::StrContains(kubectl.Ok({"get", "events.v1.events.k8s.io", "-o", "name"}),
                            "event.events.k8s.io/web.binding"));
  }

  SECTION("a restarted server keeps its objects and resourceVersions keep growing") {
    rapidjson::Document before;
    std::string raw = kubectl.Ok({"get", "--raw", "/api/v1/pods"});
    REQUIRE_FALSE(before.Parse(raw.c_str()).HasParseError());
    uint64_t rv_before = std::stoull(before["metadata"]["resourceVersion"].GetString());
    REQUIRE((*server)->Restart().ok());
    CHECK(absl::StrContains(kubectl.Ok({"get", "pods", "-o", "name"}), "pod/web"));
    kubectl.Ok({"run", "after-restart", "--image=nginx", "--restart=Never"});
    std::string rv_after =
        kubectl.Ok({"get", "pod", "after-restart", "-o", "jsonpath={.metadata.resourceVersion}"});
    CHECK(std::stoull(rv_after) > rv_before);
  }

  SECTION("PodGroups are created, listed by name and short name, and their status patched") {
    std::string group_path = (*server)->dir() + "/podgroup.yaml";
    std::ofstream(group_path) << "apiVersion: scheduling.x-k8s.io/v1alpha1\nkind: PodGroup\n"
                                 "metadata: {name: train}\nspec: {minMember: 3}\n";
    CHECK(absl::StrContains(kubectl.Ok({"create", "-f", group_path}),
                            "podgroup.scheduling.x-k8s.io/train created"));
    CHECK(absl::StrContains(kubectl.Ok({"get", "podgroups", "-o", "name"}),
                            "podgroup.scheduling.x-k8s.io/train"));
    CHECK(absl::StrContains(kubectl.Ok({"get", "pg", "-A", "-o", "name"}),
                            "podgroup.scheduling.x-k8s.io/train"));
    kubectl.Ok({"patch", "podgroup", "train", "--subresource=status", "--type=merge", "-p",
                R"({"status":{"phase":"Scheduled","scheduled":3}})"});
    CHECK(kubectl.Ok({"get", "podgroup", "train", "-o", "jsonpath={.status.phase}"}) ==
          "Scheduled");
  }

  SECTION("requests without the token are refused") {
    auto result = testing::RunCommand(
        {.argv = {"kubectl", "--server", (*server)->url(), "--certificate-authority",
                  (*server)->ca_file(), "--token", "wrong", "get", "pods"},
         .env = {{"HOME", (*server)->dir()}, {"KUBECONFIG", "/dev/null"}}},
        absl::Seconds(30));
    REQUIRE(result.ok());
    CHECK(result->exit_code != 0);
    CHECK(absl::StrContains(absl::AsciiStrToLower(result->stderr_text), "unauthorized"));
  }
}

// The words of a line of `kubectl get` output (kubectl pads its columns with spaces).
std::vector<std::string> Words(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  for (char c : line + " ") {
    if (c == ' ' || c == '\n') {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else {
      word.push_back(c);
    }
  }
  return words;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t end = text.find('\n'); end != std::string::npos; end = text.find('\n', start)) {
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  if (start < text.size()) lines.push_back(text.substr(start));
  return lines;
}

constexpr char kReadyNode[] = R"(apiVersion: v1
kind: Node
metadata:
  name: node-a
  labels: {node-role.kubernetes.io/worker: ""}
status:
  conditions: [{type: Ready, status: "True"}]
  nodeInfo: {kubeletVersion: v1.32.0}
  capacity: {cpu: "4", memory: 8Gi, pods: "110"}
  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}
)";

constexpr char kPod[] = R"(apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: team-a
  labels: {app: web}
spec:
  schedulerName: kubesched
  containers:
  - name: c
    image: nginx
)";

TEST_CASE("a newcomer drives kubesched-testapi with kubectl as is", "[testapi][e2e]") {
  if (!testing::IsOnPath("kubectl")) FAIL("kubectl is not on PATH");
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  Kubectl kubectl(**server);
  const std::string dir = (*server)->dir();

  // Typed clients: protobuf bodies.
  CHECK(
      absl::StrContains(kubectl.Ok({"create", "namespace", "team-a"}), "namespace/team-a created"));
  CHECK(absl::StrContains(
      kubectl.Ok({"create", "configmap", "settings", "-n", "team-a", "--from-literal=mode=fast"}),
      "configmap/settings created"));
  CHECK(kubectl.Ok({"get", "configmap", "settings", "-n", "team-a", "-o",
                    "jsonpath={.data.mode}"}) == "fast");

  // apply with the default validation: kubectl leaves it to the server (fieldValidation=Strict).
  std::ofstream(dir + "/node.yaml") << kReadyNode;
  std::ofstream(dir + "/pod.yaml") << kPod;
  CHECK(absl::StrContains(kubectl.Ok({"apply", "-f", dir + "/node.yaml"}), "node/node-a created"));
  CHECK(absl::StrContains(kubectl.Ok({"apply", "-f", dir + "/pod.yaml"}), "pod/web created"));
  std::ofstream(dir + "/pod.yaml") << absl::StrReplaceAll(kPod, {{"app: web", "app: web2"}});
  CHECK(absl::StrContains(kubectl.Ok({"apply", "-f", dir + "/pod.yaml"}), "pod/web configured"));
  CHECK(kubectl.Ok({"get", "pod", "web", "-n", "team-a", "-o",
                    "jsonpath={.metadata.labels.app}"}) == "web2");

  std::ofstream(dir + "/typo.yaml") << absl::StrReplaceAll(
      kPod, {{"name: web\n", "name: typo\n"},
             {"image: nginx", "image: nginx\n    imagePullPolicyy: Always"}});
  CommandResult typo = kubectl.Run({"apply", "-f", dir + "/typo.yaml"});
  INFO(typo.stderr_text);
  CHECK(typo.exit_code != 0);
  CHECK(absl::StrContains(typo.stderr_text,
                          "strict decoding error: unknown field "
                          "\"spec.containers[0].imagePullPolicyy\""));
  CHECK(kubectl.Run({"get", "pod", "typo", "-n", "team-a"}).exit_code != 0);

  // A List (as the README's demo applies): kubectl validates it with /openapi/v2, then sends
  // each item with fieldValidation=Strict.
  std::ofstream(dir + "/list.yaml")
      << "apiVersion: v1\nkind: List\nitems:\n"
         "- {apiVersion: v1, kind: ConfigMap, metadata: {name: listed, namespace: team-a}}\n"
         "- {apiVersion: v1, kind: ConfigMap, metadata: {name: listed-typo, namespace: team-a},"
         " dataa: {}}\n";
  CommandResult list = kubectl.Run({"apply", "-f", dir + "/list.yaml"});
  INFO(list.stdout_text << list.stderr_text);
  CHECK(absl::StrContains(list.stdout_text, "configmap/listed created"));
  CHECK(absl::StrContains(list.stderr_text, "strict decoding error: unknown field \"dataa\""));

  // Server-side tables.
  std::vector<std::string> pods = Lines(kubectl.Ok({"get", "pods", "-n", "team-a"}));
  REQUIRE(pods.size() == 2);
  CHECK(Words(pods[0]) == std::vector<std::string>{"NAME", "READY", "STATUS", "RESTARTS", "AGE"});
  std::vector<std::string> row = Words(pods[1]);
  REQUIRE(row.size() == 5);
  CHECK(row[0] == "web");
  CHECK(row[1] == "0/1");
  CHECK(row[2] == "Pending");
  std::vector<std::string> wide = Lines(kubectl.Ok({"get", "pods", "-n", "team-a", "-o", "wide"}));
  REQUIRE(wide.size() == 2);
  CHECK(absl::StrContains(wide[0], "NODE"));
  CHECK(absl::StrContains(wide[0], "NOMINATED NODE"));
  CHECK(absl::StrContains(wide[0], "READINESS GATES"));
  CHECK(absl::StrContains(wide[1], "<none>"));
  std::vector<std::string> nodes = Lines(kubectl.Ok({"get", "nodes"}));
  REQUIRE(nodes.size() == 2);
  CHECK(Words(nodes[0]) == std::vector<std::string>{"NAME", "STATUS", "ROLES", "AGE", "VERSION"});
  row = Words(nodes[1]);
  REQUIRE(row.size() == 5);
  CHECK(row[1] == "Ready");
  CHECK(row[2] == "worker");
  CHECK(row[4] == "v1.32.0");
  CHECK(absl::StrContains(kubectl.Ok({"get", "namespaces"}), "team-a"));
}

}  // namespace
}  // namespace kubesched::testapi
