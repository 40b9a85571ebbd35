// VolumeBinding end to end through simulate: WaitForFirstConsumer claims take the static PVs of
// the node their pod lands on (never one PV twice), claims of a provisioning class are
// provisioned where the class's allowedTopologies allow, and a pod whose claim is bound goes to
// its PV's node. The embedded cluster plays the PV controller and the provisioner.

#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "scheduler/simulate/simulation.h"
#include "tests/testing/temp_file.h"

namespace kubesched::scheduler {
namespace {

using testing::TempFile;

std::string Node(const std::string& name, const std::string& zone) {
  return absl::StrCat("- apiVersion: v1\n  kind: Node\n  metadata: {name: ", name,
                      ", labels: {kubernetes.io/hostname: ", name,
                      ", topology.kubernetes.io/zone: ", zone,
                      "}}\n  status: {allocatable: {cpu: '8', memory: 16Gi, pods: '110'}}\n");
}

std::string LocalVolume(const std::string& name, const std::string& node, const std::string& size) {
  return absl::StrCat("- apiVersion: v1\n  kind: PersistentVolume\n  metadata: {name: ", name,
                      "}\n  spec:\n    storageClassName: local\n    accessModes: [ReadWriteOnce]\n",
                      "    capacity: {storage: ", size, "}\n",
                      "    nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: ",
                      "[{key: kubernetes.io/hostname, operator: In, values: [", node, "]}]}]}}\n",
                      "  status: {phase: Available}\n");
}

std::string ClaimAndPod(const std::string& name, const std::string& storage_class) {
  return absl::StrCat("---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: ", name,
                      "-data, namespace: default, uid: ", name,
                      "-data-uid}\nspec: {storageClassName: ", storage_class,
                      ", accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}\n",
                      "---\napiVersion: v1\nkind: Pod\nmetadata: {name: ", name,
                      ", namespace: default}\nspec:\n  schedulerName: kubesched\n",
                      "  containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]\n",
                      "  volumes: [{name: data, persistentVolumeClaim: {claimName: ", name,
                      "-data}}]\n");
}

constexpr char kClasses[] =
    "- {apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: local},\n"
    "   provisioner: kubernetes.io/no-provisioner, volumeBindingMode: WaitForFirstConsumer}\n"
    "- apiVersion: storage.k8s.io/v1\n  kind: StorageClass\n  metadata: {name: zonal}\n"
    "  provisioner: disk.example.com\n  volumeBindingMode: WaitForFirstConsumer\n"
    "  allowedTopologies:\n  - matchLabelExpressions:\n"
    "    - {key: topology.kubernetes.io/zone, values: [z2]}\n";

SimulationReport Simulate(const std::string& cluster_items, const std::string& workload) {
  const TempFile cluster(
      absl::StrCat("apiVersion: v1\nkind: List\nitems:\n"
                   "- {apiVersion: v1, kind: Namespace, metadata: {name: default}}\n",
                   kClasses, cluster_items),
      "cluster.yaml");
  const TempFile pods(workload, "workload.yaml");
  auto report =
      RunSimulation({cluster.path(), pods.path(), /*seed=*/1, 1}, config::DefaultConfiguration());
  INFO((report.ok() ? std::string("ok") : std::string(report.status().message())));
  REQUIRE(report.ok());
  INFO((report->problems.empty() ? std::string() : report->problems.front().ToString()));
  REQUIRE(report->problems.empty());
  return *std::move(report);
}

std::map<std::string, PodResult> ByName(const SimulationReport& report) {
  std::map<std::string, PodResult> pods;
  for (const PodResult& pod : report.pod_results) pods[pod.name] = pod;
  return pods;
}

TEST_CASE("WaitForFirstConsumer claims take the local PVs of their pods' nodes, each PV once",
          "[simulation][volume_binding]") {
  const SimulationReport report = Simulate(
      Node("node-a", "z1") + Node("node-b", "z1") + LocalVolume("pv-a", "node-a", "5Gi") +
          LocalVolume("pv-b", "node-b", "5Gi"),
      ClaimAndPod("p1", "local") + ClaimAndPod("p2", "local") + ClaimAndPod("p3", "local"));
  CHECK(report.scheduled == 2);
  CHECK(report.unschedulable == 1);
  std::set<std::string> nodes;
  for (const PodResult& pod : report.pod_results) {
    if (pod.node.has_value()) {
      nodes.insert(*pod.node);
    } else {
      CHECK(pod.message.value_or("").find(
                "2 node(s) didn't find available persistent volumes to bind") != std::string::npos);
    }
  }
  CHECK(nodes == std::set<std::string>{"node-a", "node-b"});
}

TEST_CASE("claims of a provisioning class are provisioned where its topology allows",
          "[simulation][volume_binding]") {
  const SimulationReport report = Simulate(
      Node("node-a", "z1") + Node("node-b", "z2") + Node("node-c", "z3"),
      ClaimAndPod("p1", "zonal") + ClaimAndPod("p2", "zonal") + ClaimAndPod("p3", "zonal"));
  CHECK(report.scheduled == 3);
  for (const PodResult& pod : report.pod_results) CHECK(pod.node == "node-b");
}

TEST_CASE("a pod whose claim is bound to a local PV goes to that PV's node",
          "[simulation][volume_binding]") {
  const std::string bound_claim =
      "- apiVersion: v1\n  kind: PersistentVolumeClaim\n"
      "  metadata: {name: p1-data, namespace: default,\n"
      "             annotations: {pv.kubernetes.io/bind-completed: 'yes'}}\n"
      "  spec: {storageClassName: local, volumeName: pv-b, resources: {requests: {storage: "
      "1Gi}}}\n  status: {phase: Bound}\n";
  const std::string pod =
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p1, namespace: default}\nspec:\n"
      "  schedulerName: kubesched\n  containers: [{name: c, image: x}]\n"
      "  volumes: [{name: data, persistentVolumeClaim: {claimName: p1-data}}]\n";
  const SimulationReport report = Simulate(Node("node-a", "z1") + Node("node-b", "z1") +
                                               LocalVolume("pv-b", "node-b", "5Gi") + bound_claim,
                                           pod);
  CHECK(ByName(report).at("p1").node == "node-b");
}

}  // namespace
}  // namespace kubesched::scheduler
