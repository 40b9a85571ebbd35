// deploy/'s RBAC against what kubesched actually calls: `kubesched run` with the shipped
// configuration (plus queue quota from a watched ConfigMap, a budget ledger and node metrics) goes
// through binding, a refused bind, events, status writes, preemption, a gang, volume binding, a
// device claim's allocation and leader election against kubesched-testapi, which records every
// request by bearer token. Each request kubesched sent must be allowed by deploy/base/rbac.yaml for
// the Deployment's ServiceAccount, each rule must be needed by one of them (or be named as granted
// ahead of use), and a copy of the RBAC missing a rule fails naming the request.

#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "rapidjson/document.h"
#include "tests/testapi/testapi_process.h"
#include "tests/testing/child_process.h"
#include "tests/testing/https_get.h"
#include "tests/testing/kubesched_process.h"
#include "tests/testing/rbac_check.h"
#include "tests/testing/temp_file.h"
#include "tests/testing/test_api_client.h"

namespace kubesched {
namespace {

using testapi::TestApiProcess;
using testing::ApiRequest;
using testing::Rbac;
using testing::RequestAttributes;

constexpr char kServiceAccountToken[] = "kubesched-serviceaccount-token";

// What the scenario holds: a node whose low-priority pod must be preempted (tainted, so only the
// preemptor comes), a node for the rest, their metrics, a PodGroup, a WaitForFirstConsumer class
// and claim, a gpu of the second node with its class and a claim for it, the watched queue
// ConfigMap, and pods that bind, one that cannot fit anywhere.
constexpr char kObjects[] = R"(
apiVersion: v1
kind: Namespace
metadata: {name: kubesched}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: kubesched-queues, namespace: kubesched}
data:
  queues.yaml: "tree: [{name: team, budget: {cpu: 1000h}}]\n"
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: low}
value: 100
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: v1
kind: Node
metadata:
  name: node-a
  labels: {kubernetes.io/hostname: node-a, topology.kubernetes.io/zone: z1}
spec:
  taints: [{key: dedicated, value: preemption, effect: NoSchedule}]
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata:
  name: node-b
  labels: {kubernetes.io/hostname: node-b, topology.kubernetes.io/zone: z1}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: victim, namespace: default}
spec:
  nodeName: node-a
  priorityClassName: low
  priority: 100
  tolerations: [{key: dedicated, operator: Exists}]
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "3"}}}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: preemptor, namespace: default}
spec:
  schedulerName: kubesched
  priorityClassName: high
  nodeSelector: {kubernetes.io/hostname: node-a}
  tolerations: [{key: dedicated, operator: Exists}]
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "3"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: too-big, namespace: default}
spec:
  schedulerName: kubesched
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "64"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: queued, namespace: default, labels: {kubesched.io/queue: root.team}}
spec:
  schedulerName: kubesched
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
---
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: gang, namespace: default}
spec: {minMember: 2}
---
apiVersion: v1
kind: Pod
metadata: {name: gang-0, namespace: default, labels: {scheduling.x-k8s.io/pod-group: gang}}
spec:
  schedulerName: kubesched
  containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: gang-1, namespace: default, labels: {scheduling.x-k8s.io/pod-group: gang}}
spec:
  schedulerName: kubesched
  containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}}}]
---
apiVersion: storage.k8s.io/v1
kind: StorageClass
metadata: {name: fast}
provisioner: csi.example.com
volumeBindingMode: WaitForFirstConsumer
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: default}
spec:
  storageClassName: fast
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: v1
kind: Pod
metadata: {name: with-claim, namespace: default}
spec:
  schedulerName: kubesched
  containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}}}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-b-gpu}
spec:
  driver: gpu.example.com
  nodeName: node-b
  pool: {name: node-b, generation: 1, resourceSliceCount: 1}
  devices: [{name: gpu-0}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: gpu, namespace: default}
spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}
---
apiVersion: v1
kind: Pod
metadata: {name: with-gpu, namespace: default}
spec:
  schedulerName: kubesched
  containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}}}]
  resourceClaims: [{name: gpu, resourceClaimName: gpu}]
)";

// The pods that end up bound.
const std::vector<std::string> kBound = {"preemptor", "queued",     "gang-0",
                                         "gang-1",    "with-claim", "with-gpu"};

// Requests the scenario must have made ("verb resource[.group][/subresource]"): without them the
// check covered less than it claims.
const std::vector<std::string> kExercised = {
    "create pods/binding", "get pods", "delete pods", "patch pods/status", "watch pods",
    "list nodes", "watch namespaces", "create events.events.k8s.io",
    "get leases.coordination.k8s.io", "create leases.coordination.k8s.io",
    "update leases.coordination.k8s.io", "watch configmaps", "get configmaps", "create configmaps",
    "patch configmaps", "watch podgroups.scheduling.x-k8s.io",
    "patch podgroups.scheduling.x-k8s.io/status", "patch persistentvolumeclaims",
    "watch persistentvolumes", "watch storageclasses.storage.k8s.io",
    "watch csinodes.storage.k8s.io", "watch priorityclasses.scheduling.k8s.io",
    "watch poddisruptionbudgets.policy", "list nodes.metrics.k8s.io",
    "watch resourceclaims.resource.k8s.io", "watch resourceslices.resource.k8s.io",
    "patch resourceclaims.resource.k8s.io", "patch resourceclaims.resource.k8s.io/status",
    // a scrape of the secure port with a token
    "create tokenreviews.authentication.k8s.io",
    "create subjectaccessreviews.authorization.k8s.io"};

// Prometheus' token, which the API server knows and lets read /metrics.
constexpr char kScraperToken[] = "prometheus-token";

std::vector<YAML::Node> ShippedRbac() {
  return YAML::LoadAllFromFile(testing::SourcePath("deploy/base/rbac.yaml"));
}

// The shipped configuration with queue quota (the watched ConfigMap, the ledger written every
// second) and node-metrics scoring added, all in kubesched's namespace.
std::string ScenarioConfig() {
  YAML::Node config = YAML::LoadFile(testing::SourcePath("deploy/base/config.yaml"));
  REQUIRE(config["leaderElection"]["leaderElect"].as<bool>());
  REQUIRE(config["leaderElection"]["resourceNamespace"].as<std::string>() == "kubesched");
  config["queues"] = YAML::Load(
      "configMap: {namespace: kubesched, name: kubesched-queues}\n"
      "ledger: {namespace: kubesched, name: kubesched-queue-ledger}\n"
      "ledgerInterval: 1s\n");
  config["profiles"][0]["plugins"] =
      YAML::Load("multiPoint: {enabled: [{name: MostAvailable, weight: 1}]}");
  config["profiles"][0]["pluginConfig"] =
      YAML::Load("[{name: MostAvailable, args: {metricsPollInterval: 1s}}]");
  YAML::Emitter out;
  out << config;
  return out.c_str();
}

std::string NodeMetricsJson(const std::string& node) {
  return absl::StrCat(R"({"apiVersion":"metrics.k8s.io/v1beta1","kind":"NodeMetrics",)",
                      R"("metadata":{"name":")", node, R"("},"timestamp":")",
                      absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone()),
                      R"(","window":"20s","usage":{"cpu":"100m","memory":"1Gi"}})");
}

// Every request sent with kubesched's token.
std::vector<ApiRequest> KubeschedRequests(testing::TestApiClient& api) {
  rapidjson::Document log = api.GetOk("/testapi/requests");
  std::vector<ApiRequest> requests;
  for (const rapidjson::Value& entry : log["requests"].GetArray()) {
    if (testing::StringOf(entry["by"]) != kServiceAccountToken) continue;
    requests.push_back({.method = testing::StringOf(entry["method"]),
                        .path = testing::StringOf(entry["path"]),
                        .watch = entry["watch"].GetBool()});
  }
  return requests;
}

std::vector<RequestAttributes> AttributesOfAll(const std::vector<ApiRequest>& requests) {
  std::vector<RequestAttributes> all;
  for (const ApiRequest& request : requests) {
    absl::StatusOr<RequestAttributes> attributes = testing::AttributesOf(request);
    INFO(request.method << " " << request.path);
    REQUIRE(attributes.ok());
    all.push_back(*std::move(attributes));
  }
  return all;
}

// The requests `rbac` refuses, described.
std::vector<std::string> Denied(const std::vector<YAML::Node>& manifests,
                                const std::vector<RequestAttributes>& requests) {
  absl::StatusOr<Rbac> rbac = Rbac::ForServiceAccount(manifests, "kubesched", "kubesched");
  INFO(rbac.status());
  REQUIRE(rbac.ok());
  std::vector<std::string> denied;
  for (const RequestAttributes& request : requests) {
    if (!rbac->Allows(request)) denied.push_back(request.Describe());
  }
  return denied;
}

// A deep copy of the manifests without rule `rule` of document `document`.
std::vector<YAML::Node> WithoutRule(const std::vector<YAML::Node>& manifests, size_t document,
                                    size_t rule) {
  std::vector<YAML::Node> copy;
  for (const YAML::Node& node : manifests) copy.push_back(YAML::Clone(node));
  YAML::Node rules(YAML::NodeType::Sequence);
  for (size_t i = 0; i < copy[document]["rules"].size(); ++i) {
    if (i != rule) rules.push_back(copy[document]["rules"][i]);
  }
  copy[document]["rules"] = rules;
  return copy;
}

bool Seen(const std::vector<RequestAttributes>& requests, const std::string& key) {
  for (const RequestAttributes& request : requests) {
    std::string resource = request.resource;
    if (!request.group.empty()) absl::StrAppend(&resource, ".", request.group);
    if (!request.subresource.empty()) absl::StrAppend(&resource, "/", request.subresource);
    if (absl::StrCat(request.verb, " ", resource) == key) return true;
  }
  return false;
}

bool AllBound(testing::TestApiClient& api) {
  rapidjson::Document pods = api.GetOk("/api/v1/namespaces/default/pods");
  std::set<std::string> bound;
  for (const rapidjson::Value& pod : pods["items"].GetArray()) {
    const auto spec = pod.FindMember("spec");
    if (spec != pod.MemberEnd() && spec->value.HasMember("nodeName")) {
      bound.insert(testing::StringOf(pod["metadata"]["name"]));
    }
  }
  for (const std::string& name : kBound) {
    if (!bound.contains(name)) return false;
  }
  return true;
}

// Runs the scenario to its end (kubesched stopped, its lease released) and returns what
// kubesched requested.
std::vector<RequestAttributes> RunScenario() {
  testing::TempFile objects(kObjects);
  auto server = TestApiProcess::Start(
      {"--load", objects.path(), "--token", kServiceAccountToken, "--volume-controller", "true",
       "--token-user", absl::StrCat(kScraperToken, ":prometheus"), "--allow-path",
       "prometheus:/metrics",
       // The first Binding is refused: kubesched then reads the pod to learn what happened.
       "--faults",
       R"({"errors":[{"verb":"create","resource":"pods/binding","code":409,"count":1}]})"});
  REQUIRE(server.ok());
  testing::TestApiClient api(**server);
  for (const char* node : {"node-a", "node-b"}) {
    api.Create("/apis/metrics.k8s.io/v1beta1/nodes", NodeMetricsJson(node));
  }
  // kubesched authenticates as its ServiceAccount would: a token of its own.
  std::string kubeconfig;
  {
    std::ifstream in((*server)->kubeconfig());
    kubeconfig.assign(std::istreambuf_iterator<char>(in), {});
  }
  const std::string kubeconfig_path = (*server)->dir() + "/kubesched.kubeconfig";
  std::ofstream(kubeconfig_path) << absl::StrReplaceAll(
      kubeconfig, {{TestApiProcess::kToken, kServiceAccountToken}});
  const std::string config_path = (*server)->dir() + "/config.yaml";
  std::ofstream(config_path) << ScenarioConfig();

  const int secure_port = testing::FreeLocalPort();
  auto scheduler = testing::StartKubeschedRun({.kubeconfig = kubeconfig_path,
                                               .config_path = config_path,
                                               .leader_elect = true,
                                               .secure_port = secure_port});
  testing::WaitForLog(*scheduler, "became the leader");
  // The secure port checks the scraper's token with the API server (TokenReview) and asks whether
  // it may read /metrics (SubjectAccessReview).
  testing::RequireEventually("the secure port answers a scrape with a token", *scheduler, [&] {
    return testing::HttpsGet(secure_port, "/metrics", kScraperToken).status == 200;
  });
  testing::RequireEventually("the pods that fit are bound, the victim preempted", *scheduler,
                             [&] { return AllBound(api); });
  testing::RequireEventually(
      "the ledger was created and then patched, node metrics and PodGroup status written",
      *scheduler, [&] {
        const std::vector<RequestAttributes> requests = AttributesOfAll(KubeschedRequests(api));
        return Seen(requests, "patch configmaps") && Seen(requests, "list nodes.metrics.k8s.io") &&
               Seen(requests, "patch podgroups.scheduling.x-k8s.io/status") &&
               Seen(requests, "create events.events.k8s.io") && Seen(requests, "patch pods/status");
      });
  REQUIRE(scheduler->Stop(SIGTERM, absl::Seconds(15)).value_or(-1) == 0);
  return AttributesOfAll(KubeschedRequests(api));
}

TEST_CASE("deploy: the RBAC grants every request kubesched makes, and no rule goes unused",
          "[deploy][e2e]") {
  const std::vector<RequestAttributes> requests = RunScenario();
  const std::vector<YAML::Node> rbac = ShippedRbac();

  {
    const std::vector<std::string> denied = Denied(rbac, requests);
    INFO("denied by deploy/base/rbac.yaml:\n" << absl::StrJoin(denied, "\n"));
    CHECK(denied.empty());
  }
  for (const std::string& key : kExercised) {
    INFO("the scenario never made a request \"" << key << "\"");
    CHECK(Seen(requests, key));
  }

  // Each rule is needed: without it some request kubesched made is refused.
  for (size_t document = 0; document < rbac.size(); ++document) {
    const std::string kind = rbac[document]["kind"].as<std::string>();
    if (kind != "ClusterRole" && kind != "Role") continue;
    for (size_t rule = 0; rule < rbac[document]["rules"].size(); ++rule) {
      const YAML::Node& written = rbac[document]["rules"][rule];
      const YAML::Node names =
          written["resources"] ? written["resources"] : written["nonResourceURLs"];
      const std::string first_resource = names[0].as<std::string>();
      INFO(kind << " rule " << rule + 1 << " (" << first_resource
                << "...) is needed by none of kubesched's requests");
      CHECK_FALSE(Denied(WithoutRule(rbac, document, rule), requests).empty());
    }
  }
}

TEST_CASE("deploy: an RBAC without the binding rule is refused, naming the request",
          "[deploy][e2e]") {
  const std::vector<YAML::Node> rbac = ShippedRbac();
  size_t cluster_role = rbac.size();
  size_t binding_rule = 0;
  for (size_t document = 0; document < rbac.size(); ++document) {
    if (rbac[document]["kind"].as<std::string>() != "ClusterRole") continue;
    for (size_t rule = 0; rule < rbac[document]["rules"].size(); ++rule) {
      if (rbac[document]["rules"][rule]["resources"][0].as<std::string>() == "pods/binding") {
        cluster_role = document;
        binding_rule = rule;
      }
    }
  }
  REQUIRE(cluster_role < rbac.size());
  const std::vector<RequestAttributes> requests =
      AttributesOfAll({{.method = "GET", .path = "/api/v1/pods", .watch = true},
                       {.method = "POST", .path = "/api/v1/namespaces/default/pods/web/binding"}});
  CHECK(Denied(rbac, requests).empty());
  const std::vector<std::string> denied =
      Denied(WithoutRule(rbac, cluster_role, binding_rule), requests);
  REQUIRE(denied.size() == 1);
  CHECK(denied[0] ==
        "create pods/binding (group \"\") in namespace default, "
        "/api/v1/namespaces/default/pods/web/binding");
}

}  // namespace
}  // namespace kubesched
