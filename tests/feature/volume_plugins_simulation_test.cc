// The volume plugins end to end through simulate, in the default plugin set: each keeps a pod off
// the node its rule forbids (the pod lands on the other node), and a pod that fits nowhere is
// reported with the plugin's reason in its FailedScheduling message. The volume objects come from
// the cluster dump, as `kubectl get ... -o yaml` prints them.

#include <catch2/catch.hpp>
#include <string>

#include "config/config.h"
#include "scheduler/simulate/simulation.h"
#include "tests/testing/temp_file.h"

namespace kubesched::scheduler {
namespace {

using testing::TempFile;

constexpr char kNodes[] = R"(apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Namespace, metadata: {name: default}}
- apiVersion: v1
  kind: Node
  metadata: {name: node-a, labels: {topology.kubernetes.io/zone: z1}}
  status: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}
- apiVersion: v1
  kind: Node
  metadata: {name: node-b, labels: {topology.kubernetes.io/zone: z2}}
  status: {allocatable: {cpu: '8', memory: 32Gi, pods: '110'}}
)";

// The claim "<name>" and the PV "pv-<name>" it is bound to (as the PV controller leaves them: the
// claim annotated bind-completed), with `pv_labels` (a YAML map) and
// `pv_source` (e.g. "csi: {...}, "; none by default).
std::string BoundClaim(const std::string& name, const std::string& pv_labels = "{}",
                       const std::string& modes = "[ReadWriteOnce]",
                       const std::string& pv_source = "") {
  return "- apiVersion: v1\n  kind: PersistentVolume\n  metadata: {name: pv-" + name +
         ", labels: " + pv_labels + "}\n  spec: {" + pv_source +
         "capacity: {storage: 1Gi}, accessModes: " + modes +
         ", claimRef: {namespace: default, name: " + name +
         "}}\n- apiVersion: v1\n  kind: PersistentVolumeClaim\n  metadata: {name: " + name +
         ", namespace: default, annotations: {pv.kubernetes.io/bind-completed: 'yes'}}\n  spec: "
         "{accessModes: " +
         modes + ", volumeName: pv-" + name + ", resources: {requests: {storage: 1Gi}}}\n";
}

std::string Pod(const std::string& name, const std::string& volumes, const std::string& node = "") {
  return "---\napiVersion: v1\nkind: Pod\nmetadata: {name: " + name +
         ", namespace: default}\nspec:\n  schedulerName: kubesched\n" +
         (node.empty() ? "" : "  nodeName: " + node + "\n") +
         "  containers: [{name: c, image: x}]\n  volumes: " + volumes + "\n";
}

SimulationReport Simulate(const std::string& cluster_items, const std::string& workload) {
  const TempFile cluster(std::string(kNodes) + cluster_items, "cluster.yaml");
  const TempFile pods(workload, "workload.yaml");
  auto report =
      RunSimulation({cluster.path(), pods.path(), /*seed=*/1, 1}, config::DefaultConfiguration());
  REQUIRE(report.ok());
  INFO(report->problems.size() << " bad input objects");
  REQUIRE(report->problems.empty());
  return *report;
}

const PodResult& Result(const SimulationReport& report, const std::string& name) {
  for (const auto& pod : report.pod_results) {
    if (pod.name == name) return pod;
  }
  FAIL("no result for pod " << name);
  return report.pod_results.front();
}

TEST_CASE("VolumeZone keeps a pod in its volume's zone", "[simulation][volumes]") {
  const std::string items = BoundClaim("data-z2", "{topology.kubernetes.io/zone: z2}") +
                            BoundClaim("data-z3", "{topology.kubernetes.io/zone: z3}");
  const auto report =
      Simulate(items, Pod("in-z2", "[{name: d, persistentVolumeClaim: {claimName: data-z2}}]") +
                          Pod("in-z3", "[{name: d, persistentVolumeClaim: {claimName: data-z3}}]"));
  CHECK(Result(report, "in-z2").node == "node-b");
  const PodResult& stuck = Result(report, "in-z3");
  CHECK_FALSE(stuck.node.has_value());
  CHECK(stuck.message.value_or("").rfind(
            "0/2 nodes are available: 2 node(s) had no available volume zone.", 0) == 0);
}

TEST_CASE(
    "VolumeRestrictions keeps a pod off a node holding its disk and off a claimed "
    "ReadWriteOncePod volume",
    "[simulation][volumes]") {
  const std::string items = BoundClaim("solo", "{}", "[ReadWriteOncePod]");
  const std::string holder = Pod("holder",
                                 "[{name: disk, awsElasticBlockStore: {volumeID: vol-1}}, "
                                 "{name: solo, persistentVolumeClaim: {claimName: solo}}]",
                                 "node-a");
  const auto report =
      Simulate(items + holder,
               Pod("disk-user", "[{name: disk, awsElasticBlockStore: {volumeID: vol-1}}]") +
                   Pod("solo-user", "[{name: s, persistentVolumeClaim: {claimName: solo}}]"));
  CHECK(Result(report, "disk-user").node == "node-b");
  const PodResult& stuck = Result(report, "solo-user");
  CHECK_FALSE(stuck.node.has_value());
  CHECK(stuck.message.value_or("").rfind(
            "0/2 nodes are available: 2 node has pod using PersistentVolumeClaim with the same "
            "name and ReadWriteOncePod access mode.",
            0) == 0);
}

TEST_CASE("NodeVolumeLimits keeps a pod off a node whose CSI driver is full",
          "[simulation][volumes]") {
  std::string items;
  for (const std::string node : {"node-a", "node-b"}) {
    items += "- apiVersion: storage.k8s.io/v1\n  kind: CSINode\n  metadata: {name: " + node +
             "}\n  spec: {drivers: [{name: csi.example.com, nodeID: " + node +
             ", allocatable: {count: 1}}]}\n";
  }
  for (const std::string claim : {"c0", "c1", "c2"}) {
    items += BoundClaim(claim, "{}", "[ReadWriteOnce]",
                        "csi: {driver: csi.example.com, volumeHandle: h-" + claim + "}, ");
  }
  const std::string full =
      Pod("e0", "[{name: d, persistentVolumeClaim: {claimName: c0}}]", "node-a");
  const auto report =
      Simulate(items + full, Pod("p1", "[{name: d, persistentVolumeClaim: {claimName: c1}}]") +
                                 Pod("p2", "[{name: d, persistentVolumeClaim: {claimName: c2}}]"));
  CHECK(Result(report, "p1").node == "node-b");
  const PodResult& stuck = Result(report, "p2");
  CHECK_FALSE(stuck.node.has_value());
  CHECK(stuck.message.value_or("").rfind(
            "0/2 nodes are available: 2 node(s) exceed max volume count.", 0) == 0);
}

}  // namespace
}  // namespace kubesched::scheduler
