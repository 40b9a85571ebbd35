// The manifests in deploy/ as a platform team applies them: `kubectl kustomize` renders the base,
// the two-replica overlay and the ServiceMonitor component; the Deployment meets the Pod Security
// "restricted" profile (a copy missing a field is reported), probes the secure port over HTTPS,
// and its PodDisruptionBudget and metrics Service select its pods. What the RBAC grants is checked
// against kubesched's requests in deploy_rbac_run_test.cc.

#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tests/testing/child_process.h"
#include "tests/testing/temp_file.h"

namespace kubesched {
namespace {

constexpr int kSecurePort = 10259;

// The documents `kubectl kustomize DIR` renders, by "Kind/name".
std::map<std::string, YAML::Node> Kustomize(const std::string& directory) {
  if (!testing::IsOnPath("kubectl")) {
    FAIL("kubectl is not on PATH (scripts/install-deps.sh --test installs it)");
  }
  auto result =
      testing::RunCommand({.argv = {"kubectl", "kustomize", directory}}, absl::Seconds(60));
  REQUIRE(result.ok());
  INFO("kubectl kustomize " << directory << "\nstderr: " << result->stderr_text);
  REQUIRE(result->exit_code == 0);
  std::map<std::string, YAML::Node> objects;
  for (const YAML::Node& document : YAML::LoadAll(result->stdout_text)) {
    objects[absl::StrCat(document["kind"].as<std::string>(), "/",
                         document["metadata"]["name"].as<std::string>())] = document;
  }
  return objects;
}

std::map<std::string, YAML::Node> KustomizeSource(const std::string& relative) {
  return Kustomize(testing::SourcePath(relative));
}

const YAML::Node& Find(const std::map<std::string, YAML::Node>& objects, const std::string& key) {
  const auto it = objects.find(key);
  INFO("rendered: " << [&] {
    std::vector<std::string> keys;
    for (const auto& [name, object] : objects) keys.push_back(name);
    return absl::StrJoin(keys, ", ");
  }());
  REQUIRE(it != objects.end());
  return it->second;
}

// The generated ConfigMap (its name carries a hash of the config).
YAML::Node ConfigMap(const std::map<std::string, YAML::Node>& objects) {
  for (const auto& [key, object] : objects) {
    if (absl::StartsWith(key, "ConfigMap/kubesched-config-")) return object;
  }
  FAIL("no ConfigMap kubesched-config-<hash> was rendered");
  return YAML::Node();
}

bool ListHas(const YAML::Node& list, const std::string& value) {
  for (const YAML::Node& item : list) {
    if (item.as<std::string>() == value) return true;
  }
  return false;
}

// The node at `path` under `root`, or an undefined node when any step is missing (yaml-cpp
// throws when indexing a missing node's child).
YAML::Node At(const YAML::Node& root, std::initializer_list<const char*> path) {
  YAML::Node node;
  node.reset(root);
  for (const char* key : path) {
    if (!node.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
    const YAML::Node& map = node;
    const YAML::Node next = map[key];
    if (!next) return YAML::Node(YAML::NodeType::Undefined);
    node.reset(next);
  }
  return node;
}

// A container's security setting, else the pod's (the container's wins, as the kubelet applies
// them).
YAML::Node Effective(const YAML::Node& pod, const YAML::Node& container, const char* field) {
  const YAML::Node own = At(container, {"securityContext", field});
  return own ? own : At(pod, {"securityContext", field});
}

// What in a pod spec breaks the Pod Security "restricted" profile (baseline included), described.
std::vector<std::string> RestrictedViolations(const YAML::Node& pod) {
  std::vector<std::string> violations;
  for (const char* host : {"hostNetwork", "hostPID", "hostIPC"}) {
    if (At(pod, {host}).as<bool>(false)) violations.push_back(absl::StrCat(host, " is set"));
  }
  for (const YAML::Node& volume : At(pod, {"volumes"})) {
    bool allowed = false;
    for (const char* type : {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                             "persistentVolumeClaim", "projected", "secret"}) {
      allowed = allowed || At(volume, {type}).IsDefined();
    }
    if (!allowed)
      violations.push_back(absl::StrCat("volume ", volume["name"].as<std::string>(),
                                        " is of a type restricted does not allow"));
  }
  for (const char* list : {"initContainers", "containers"}) {
    for (const YAML::Node& container : At(pod, {list})) {
      const std::string name = container["name"].as<std::string>();
      auto add = [&](const std::string& what) {
        violations.push_back(absl::StrCat("container ", name, ": ", what));
      };
      const YAML::Node security = At(container, {"securityContext"});
      if (At(security, {"privileged"}).as<bool>(false)) add("privileged");
      if (At(security, {"allowPrivilegeEscalation"}).as<bool>(true)) {
        add("allowPrivilegeEscalation is not false");
      }
      if (!ListHas(At(security, {"capabilities", "drop"}), "ALL")) {
        add("capabilities.drop lacks ALL");
      }
      for (const YAML::Node& added : At(security, {"capabilities", "add"})) {
        if (added.as<std::string>() != "NET_BIND_SERVICE") add("adds a capability");
      }
      if (!Effective(pod, container, "runAsNonRoot").as<bool>(false)) {
        add("runAsNonRoot is not true");
      }
      if (Effective(pod, container, "runAsUser").as<int>(-1) == 0) add("runAsUser is 0");
      const std::string seccomp =
          At(Effective(pod, container, "seccompProfile"), {"type"}).as<std::string>("");
      if (seccomp != "RuntimeDefault" && seccomp != "Localhost") {
        add("seccompProfile is not RuntimeDefault or Localhost");
      }
      // Not in the profile, but promised by deploy/: nothing writes to the image.
      if (!At(security, {"readOnlyRootFilesystem"}).as<bool>(false)) {
        add("readOnlyRootFilesystem is not true");
      }
      for (const YAML::Node& port : container["ports"]) {
        if (At(port, {"hostPort"})) add("uses a hostPort");
      }
    }
  }
  return violations;
}

TEST_CASE("deploy: kubectl kustomize renders the base and the two-replica overlay",
          "[deploy][e2e]") {
  const auto base = KustomizeSource("deploy");
  for (const char* key :
       {"Namespace/kubesched", "ServiceAccount/kubesched", "ClusterRole/kubesched",
        "ClusterRoleBinding/kubesched", "Role/kubesched", "RoleBinding/kubesched",
        "Deployment/kubesched", "Service/kubesched", "PodDisruptionBudget/kubesched"}) {
    INFO(key);
    Find(base, key);
  }
  for (const auto& [key, object] : base) {
    INFO(key);
    const std::string kind = object["kind"].as<std::string>();
    const bool cluster_scoped =
        kind == "Namespace" || kind == "ClusterRole" || kind == "ClusterRoleBinding";
    CHECK(object["metadata"]["namespace"].as<std::string>("") ==
          (cluster_scoped ? "" : "kubesched"));
  }
  // The pods mount the generated ConfigMap, and its config leads through a lease in the
  // namespace kubesched's Role covers.
  const YAML::Node config_map = ConfigMap(base);
  const YAML::Node deployment = Find(base, "Deployment/kubesched");
  const YAML::Node pod = deployment["spec"]["template"]["spec"];
  CHECK(pod["volumes"][0]["configMap"]["name"].as<std::string>() ==
        config_map["metadata"]["name"].as<std::string>());
  const YAML::Node config = YAML::Load(config_map["data"]["config.yaml"].as<std::string>());
  CHECK(config["leaderElection"]["leaderElect"].as<bool>());
  CHECK(config["leaderElection"]["resourceNamespace"].as<std::string>() == "kubesched");
  CHECK(pod["serviceAccountName"].as<std::string>() == "kubesched");
  CHECK(deployment["spec"]["replicas"].as<int>() == 1);

  const auto overlay = KustomizeSource("deploy/overlays/two-replicas");
  CHECK(Find(overlay, "Deployment/kubesched")["spec"]["replicas"].as<int>() == 2);
  CHECK(overlay.size() == base.size());  // the same objects, only the replicas differ
}

TEST_CASE("deploy: the Deployment meets the Pod Security restricted profile", "[deploy][e2e]") {
  const auto base = KustomizeSource("deploy");
  const YAML::Node pod = Find(base, "Deployment/kubesched")["spec"]["template"]["spec"];
  const std::vector<std::string> violations = RestrictedViolations(pod);
  INFO(absl::StrJoin(violations, "\n"));
  CHECK(violations.empty());
  const YAML::Node container = pod["containers"][0];
  CHECK(container["securityContext"]["runAsUser"].as<int>() == 65532);
  CHECK(pod["securityContext"]["runAsUser"].as<int>() == 65532);
  // The namespace enforces what the pods meet.
  const YAML::Node labels = Find(base, "Namespace/kubesched")["metadata"]["labels"];
  CHECK(labels["pod-security.kubernetes.io/enforce"].as<std::string>() == "restricted");
  // The image runs as the same user (deploy/Dockerfile).
  std::ifstream dockerfile(testing::SourcePath("deploy/Dockerfile"));
  const std::string text((std::istreambuf_iterator<char>(dockerfile)), {});
  CHECK(absl::StrContains(text, "\nUSER 65532:65532\n"));
}

TEST_CASE("deploy: a pod missing a restricted field is reported, naming it", "[deploy][e2e]") {
  const auto base = KustomizeSource("deploy");
  YAML::Node pod = YAML::Clone(Find(base, "Deployment/kubesched")["spec"]["template"]["spec"]);
  pod["securityContext"].remove("seccompProfile");
  pod["containers"][0]["securityContext"].remove("seccompProfile");
  pod["containers"][0]["securityContext"]["capabilities"]["drop"] = YAML::Load("[NET_RAW]");
  pod["volumes"].push_back(YAML::Load("{name: host, hostPath: {path: /var}}"));
  const std::vector<std::string> violations = RestrictedViolations(pod);
  CHECK(violations ==
        std::vector<std::string>{
            "volume host is of a type restricted does not allow",
            "container kubesched: capabilities.drop lacks ALL",
            "container kubesched: seccompProfile is not RuntimeDefault or Localhost"});
}

TEST_CASE("deploy: probes use the secure port over HTTPS, and the PDB and Service select the pods",
          "[deploy][e2e]") {
  const auto base = KustomizeSource("deploy");
  const YAML::Node deployment = Find(base, "Deployment/kubesched");
  const YAML::Node pod_labels = deployment["spec"]["template"]["metadata"]["labels"];
  const YAML::Node container = deployment["spec"]["template"]["spec"]["containers"][0];
  for (const auto& [probe, path] :
       std::vector<std::pair<std::string, std::string>>{{"startupProbe", "/healthz"},
                                                        {"livenessProbe", "/livez"},
                                                        {"readinessProbe", "/readyz"}}) {
    INFO(probe);
    const YAML::Node get = container[probe]["httpGet"];
    CHECK(get["path"].as<std::string>("") == path);
    CHECK(get["port"].as<int>(0) == kSecurePort);
    CHECK(get["scheme"].as<std::string>("") == "HTTPS");
  }
  // Only flags kubesched keeps: the config file, on the path the ConfigMap is mounted at.
  CHECK(container["args"].as<std::vector<std::string>>() ==
        std::vector<std::string>{"run", "--config", "/etc/kubesched/config.yaml"});
  CHECK(container["volumeMounts"][0]["mountPath"].as<std::string>() == "/etc/kubesched");
  CHECK(container["resources"]["requests"]["cpu"]);
  CHECK(container["resources"]["requests"]["memory"]);
  CHECK(container["resources"]["limits"]["memory"]);

  auto selects = [&pod_labels](const YAML::Node& selector) {
    for (const auto& entry : selector) {
      const std::string key = entry.first.as<std::string>();
      if (pod_labels[key].as<std::string>("") != entry.second.as<std::string>()) return false;
    }
    return selector.size() > 0;
  };
  const YAML::Node pdb = Find(base, "PodDisruptionBudget/kubesched");
  CHECK(selects(pdb["spec"]["selector"]["matchLabels"]));
  CHECK(pdb["spec"]["maxUnavailable"].as<int>() == 1);
  const YAML::Node service = Find(base, "Service/kubesched");
  CHECK(selects(service["spec"]["selector"]));
  CHECK(service["spec"]["ports"][0]["name"].as<std::string>() == "https-metrics");
  CHECK(service["spec"]["ports"][0]["port"].as<int>() == kSecurePort);
  CHECK(service["spec"]["ports"][0]["targetPort"].as<int>() == kSecurePort);
}

TEST_CASE("deploy: the ServiceMonitor component adds an HTTPS scrape of the metrics Service",
          "[deploy][e2e]") {
  // An overlay as a platform team writes one: the base plus the component (kustomize takes
  // relative paths only).
  testing::TempFile kustomization("", "kustomization.yaml");
  const std::filesystem::path directory = std::filesystem::path(kustomization.path()).parent_path();
  auto relative = [&directory](const char* source) {
    return std::filesystem::relative(testing::SourcePath(source), directory).string();
  };
  std::ofstream(kustomization.path())
      << "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
      << "resources: [" << relative("deploy/base") << "]\n"
      << "components: [" << relative("deploy/components/servicemonitor") << "]\n";
  const auto objects = Kustomize(directory.string());
  const YAML::Node monitor = Find(objects, "ServiceMonitor/kubesched");
  CHECK(monitor["apiVersion"].as<std::string>() == "monitoring.coreos.com/v1");
  CHECK(monitor["metadata"]["namespace"].as<std::string>() == "kubesched");
  const YAML::Node service = Find(objects, "Service/kubesched");
  for (const auto& entry : monitor["spec"]["selector"]["matchLabels"]) {
    CHECK(service["metadata"]["labels"][entry.first.as<std::string>()].as<std::string>("") ==
          entry.second.as<std::string>());
  }
  const YAML::Node endpoint = monitor["spec"]["endpoints"][0];
  CHECK(endpoint["port"].as<std::string>() == "https-metrics");
  CHECK(endpoint["scheme"].as<std::string>() == "https");
  CHECK(endpoint["path"].as<std::string>() == "/metrics");
  CHECK(endpoint["bearerTokenFile"].as<std::string>() ==
        "/var/run/secrets/kubernetes.io/serviceaccount/token");
  CHECK(endpoint["tlsConfig"]["insecureSkipVerify"].as<bool>());
}

}  // namespace
}  // namespace kubesched
