// The manifests in deploy/: the shipped configuration runs, and the RBAC rules grant every
// request kubesched makes while it schedules, reports unschedulable pods and holds the lease.

#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "rapidjson/document.h"
#include "scheduler/client/kubeconfig.h"
#include "scheduler/client/rest_client.h"
#include "tests/testapi/testapi_process.h"
#include "tests/testing/child_process.h"
#include "tests/testing/kubesched_process.h"
#include "tests/testing/temp_file.h"

namespace kubesched {
namespace {

using testapi::TestApiProcess;

std::vector<YAML::Node> LoadAll(const std::string& relative_path) {
  return YAML::LoadAllFromFile(testing::SourcePath(relative_path));
}

bool Contains(const YAML::Node& list, const std::string& value) {
  for (const YAML::Node& item : list) {
    if (item.as<std::string>() == value) return true;
  }
  return false;
}

// A request as the test server counts it: "create pods/binding", "watch
// leases.coordination.k8s.io".
struct Request {
  std::string verb{};
  std::string group{};
  std::string resource{};  // plural[/subresource]
};

Request ParseRequestKey(const std::string& key) {
  const size_t space = key.find(' ');
  Request request{.verb = key.substr(0, space), .group = "", .resource = key.substr(space + 1)};
  const size_t slash = request.resource.find('/');
  std::string plural = request.resource.substr(0, slash);
  const std::string subresource = slash == std::string::npos ? "" : request.resource.substr(slash);
  if (const size_t dot = plural.find('.'); dot != std::string::npos) {
    request.group = plural.substr(dot + 1);
    plural = plural.substr(0, dot);
  }
  request.resource = plural + subresource;
  return request;
}

bool Allowed(const std::vector<YAML::Node>& rbac, const Request& request) {
  for (const YAML::Node& document : rbac) {
    const std::string kind = document["kind"].as<std::string>();
    if (kind != "ClusterRole" && kind != "Role") continue;
    for (const YAML::Node& rule : document["rules"]) {
      if (Contains(rule["apiGroups"], request.group) &&
          Contains(rule["resources"], request.resource) && Contains(rule["verbs"], request.verb)) {
        return true;
      }
    }
  }
  return false;
}

std::string ShippedConfig() {
  for (const YAML::Node& document : LoadAll("deploy/configmap.yaml")) {
    if (document["kind"].as<std::string>() == "ConfigMap") {
      return document["data"]["config.yaml"].as<std::string>();
    }
  }
  FAIL("deploy/configmap.yaml has no ConfigMap");
  return "";
}

TEST_CASE("deploy: the manifests name one namespace and service account", "[deploy]") {
  const auto deployment = LoadAll("deploy/deployment.yaml").at(0);
  CHECK(deployment["spec"]["replicas"].as<int>() == 2);
  const YAML::Node pod = deployment["spec"]["template"]["spec"];
  CHECK(pod["serviceAccountName"].as<std::string>() == "kubesched");
  const YAML::Node container = pod["containers"][0];
  CHECK(container["livenessProbe"]["httpGet"]["path"].as<std::string>() == "/livez");
  CHECK(container["readinessProbe"]["httpGet"]["path"].as<std::string>() == "/readyz");
  CHECK(container["resources"]["requests"]["cpu"]);
  for (const char* file : {"deploy/rbac.yaml", "deploy/configmap.yaml", "deploy/deployment.yaml"}) {
    for (const YAML::Node& document : LoadAll(file)) {
      if (document["metadata"]["namespace"]) {
        CHECK(document["metadata"]["namespace"].as<std::string>() == "kubesched");
      }
    }
  }
}

TEST_CASE("deploy: the shipped config runs, and RBAC grants every request kubesched makes",
          "[deploy][e2e]") {
  constexpr char kObjects[] = R"(
apiVersion: v1
kind: Namespace
metadata: {name: kubesched}
---
apiVersion: v1
kind: Node
metadata: {name: node-a}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: fits, namespace: default}
spec:
  schedulerName: kubesched
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: too-big, namespace: default}
spec:
  schedulerName: kubesched
  containers: [{name: c, image: busybox, resources: {requests: {cpu: "8"}}}]
)";
  testing::TempFile objects(kObjects);
  testing::TempFile config(ShippedConfig());
  auto server = TestApiProcess::Start({"--load", objects.path()});
  REQUIRE(server.ok());
  auto scheduler = testing::ChildProcess::Start(
      {.argv = {KUBESCHED_BINARY, "run", "--config", config.path(), "--kubeconfig",
                (*server)->kubeconfig(), "--health-bind-address", "127.0.0.1:0",
                "--metrics-bind-address", "127.0.0.1:0", "--secure-port", "0"}});
  REQUIRE(scheduler.ok());

  client::ConnectionOptions options;
  options.kubeconfig_path = (*server)->kubeconfig();
  auto connection = client::ResolveConnection(options);
  REQUIRE(connection.ok());
  auto rest = client::RestClient::Create(connection->rest);
  REQUIRE(rest.ok());
  auto stats = [&rest] {
    client::HttpRequest request;
    request.target = "/testapi/stats";
    auto response = (*rest)->Do(request);
    REQUIRE(response.ok());
    rapidjson::Document json;
    json.Parse(response->body.data(), response->body.size());
    REQUIRE(json.IsObject());
    return json;
  };
  testing::RequireEventually("the bind, the status patch and both events", **scheduler, [&stats] {
    rapidjson::Document json = stats();
    const rapidjson::Value& requests = json["requests"];
    return json["podsBound"].GetInt64() == 1 && requests.HasMember("patch pods/status") &&
           requests.HasMember("create events.events.k8s.io") &&
           requests["create events.events.k8s.io"].GetInt64() >= 2;
  });
  REQUIRE((*scheduler)->Stop(SIGTERM, absl::Seconds(15)).value_or(-1) == 0);

  const std::vector<YAML::Node> rbac = LoadAll("deploy/rbac.yaml");
  rapidjson::Document json = stats();
  std::set<std::string> checked;
  for (auto it = json["requests"].MemberBegin(); it != json["requests"].MemberEnd(); ++it) {
    const std::string key = it->name.GetString();
    if (absl::StartsWith(key, "code ")) continue;
    const Request request = ParseRequestKey(key);
    INFO(key << " → verb " << request.verb << ", group \"" << request.group << "\", resource "
             << request.resource);
    CHECK(Allowed(rbac, request));
    checked.insert(key);
  }
  // The requests that matter were all seen (so the check above covered them).
  for (const char* key :
       {"create pods/binding", "patch pods/status", "watch pods", "list nodes",
        "create events.events.k8s.io", "create leases.coordination.k8s.io",
        "update leases.coordination.k8s.io", "watch configmaps", "get configmaps",
        "list podgroups.scheduling.x-k8s.io", "watch podgroups.scheduling.x-k8s.io"}) {
    INFO(key);
    CHECK(checked.count(key) == 1);
  }
  // Not made yet (the gang plugin will): the PodGroup status writer's patch.
  CHECK(Allowed(rbac, ParseRequestKey("patch podgroups.scheduling.x-k8s.io/status")));
}

}  // namespace
}  // namespace kubesched
