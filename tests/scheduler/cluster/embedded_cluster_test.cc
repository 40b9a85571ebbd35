#include "scheduler/cluster/embedded_cluster.h"

#include <catch2/catch.hpp>

#include "scheduler/api/decode.h"
#include "tests/testing/builders.h"

namespace kubesched::cluster {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;

// Records events in arrival order.
class Recorder : public client::ClusterEventHandler {
 public:
  void OnPod(const client::Event<api::Pod>& e) override {
    log.push_back(Describe("Pod", e.type, e.object->Key()));
    last_pod = e.object;
  }
  void OnNode(const client::Event<api::Node>& e) override {
    log.push_back(Describe("Node", e.type, e.object->meta.name));
  }
  void OnNamespace(const client::Event<api::Namespace>& e) override {
    log.push_back(Describe("Namespace", e.type, e.object->meta.name));
  }
  void OnPriorityClass(const client::Event<api::PriorityClass>& e) override {
    log.push_back(Describe("PriorityClass", e.type, e.object->meta.name));
  }
  void OnDeviceClass(const client::Event<api::DeviceClass>& e) override {
    log.push_back(Describe("DeviceClass", e.type, e.object->meta.name));
  }
  void OnResourceSlice(const client::Event<api::ResourceSlice>& e) override {
    log.push_back(Describe("ResourceSlice", e.type, e.object->meta.name));
  }
  void OnResourceClaim(const client::Event<api::ResourceClaim>& e) override {
    log.push_back(Describe("ResourceClaim", e.type, e.object->Key()));
  }
  void OnResourceClaimTemplate(const client::Event<api::ResourceClaimTemplate>& e) override {
    log.push_back(Describe("ResourceClaimTemplate", e.type, e.object->Key()));
  }
  std::vector<std::string> log;
  std::shared_ptr<const api::Pod> last_pod;

 private:
  static std::string Describe(const std::string& kind, client::EventType type,
                              const std::string& name) {
    const char* verb = type == client::EventType::kAdded      ? "ADDED"
                       : type == client::EventType::kModified ? "MODIFIED"
                                                              : "DELETED";
    return kind + " " + verb + " " + name;
  }
};

TEST_CASE("a second object with the same kind and name is rejected", "[cluster]") {
  EmbeddedCluster cluster;
  REQUIRE(cluster.Create(PodBuilder("a").Build()).ok());
  auto status = cluster.Create(PodBuilder("a").Build());
  CHECK(absl::IsAlreadyExists(status));
  CHECK(std::string(status.message()).find("default/a") != std::string::npos);
}

TEST_CASE("resource versions increase with every write", "[cluster]") {
  EmbeddedCluster cluster;
  REQUIRE(cluster.Create(NodeBuilder("n1").Build()).ok());
  REQUIRE(cluster.Create(PodBuilder("a").Build()).ok());
  const auto before = std::stoll(cluster.GetPod("default/a")->meta.resource_version);
  REQUIRE(cluster.Bind("default", "a", "", "n1").ok());
  CHECK(std::stoll(cluster.GetPod("default/a")->meta.resource_version) > before);
  CHECK(cluster.resource_version() == 3);
}

TEST_CASE("binding a bound pod is a conflict and changes nothing", "[cluster]") {
  EmbeddedCluster cluster;
  REQUIRE(cluster.Create(PodBuilder("a").Build()).ok());
  REQUIRE(cluster.Bind("default", "a", "", "n1").ok());
  auto status = cluster.Bind("default", "a", "", "n2");
  CHECK(absl::IsAborted(status));
  CHECK(cluster.GetPod("default/a")->spec.node_name == "n1");
}

TEST_CASE("binding a missing pod or a pod with another UID fails", "[cluster]") {
  EmbeddedCluster cluster;
  CHECK(absl::IsNotFound(cluster.Bind("default", "ghost", "", "n1")));
  REQUIRE(cluster.Create(PodBuilder("a").Build()).ok());
  CHECK(absl::IsFailedPrecondition(cluster.Bind("default", "a", "other-uid", "n1")));
  CHECK(cluster.GetPod("default/a")->spec.node_name.empty());
}

TEST_CASE("binding a pod with scheduling gates is a conflict, as the real API's", "[cluster]") {
  EmbeddedCluster cluster;
  REQUIRE(cluster.Create(PodBuilder("a").SchedulingGates({"g"}).Build()).ok());
  const absl::Status status = cluster.Bind("default", "a", "", "n1");
  CHECK(absl::IsAborted(status));
  CHECK(status.message() ==
        "Operation cannot be fulfilled on pods/binding \"a\": pod a has non-empty "
        ".spec.schedulingGates");
  CHECK(cluster.GetPod("default/a")->spec.node_name.empty());
}

TEST_CASE("a pod in the empty namespace is found, updated and bound by its key", "[cluster]") {
  EmbeddedCluster cluster;
  REQUIRE(cluster.Create(PodBuilder("p", "").Build()).ok());
  REQUIRE(cluster.GetPod("/p") != nullptr);
  REQUIRE(cluster.UpdatePod(PodBuilder("p", "").Label("a", "b").Build()).ok());
  REQUIRE(cluster.Bind("", "p", "", "n1").ok());
  CHECK(cluster.GetPod("/p")->spec.node_name == "n1");
}

TEST_CASE("a new watcher gets the current objects first, then changes, each once", "[cluster]") {
  EmbeddedCluster cluster;
  REQUIRE(cluster.Create(PodBuilder("p1").Build()).ok());
  REQUIRE(cluster.Create(NodeBuilder("n1").Build()).ok());
  Recorder recorder;
  cluster.Watch(&recorder);
  REQUIRE(cluster.Bind("default", "p1", "", "n1").ok());
  cluster.DeliverEvents();
  CHECK(recorder.log == std::vector<std::string>{"Node ADDED n1", "Pod ADDED default/p1",
                                                 "Pod MODIFIED default/p1"});
  CHECK(recorder.last_pod->spec.node_name == "n1");
  CHECK(cluster.DeliverEvents() == 0);
}

TEST_CASE("deleting a pod emits DELETED with its last state", "[cluster]") {
  EmbeddedCluster cluster;
  Recorder recorder;
  cluster.Watch(&recorder);
  REQUIRE(cluster.Create(PodBuilder("p1").Build()).ok());
  REQUIRE(cluster.DeletePod("default", "p1").ok());
  cluster.DeliverEvents();
  CHECK(recorder.log == std::vector<std::string>{"Pod ADDED default/p1", "Pod DELETED default/p1"});
  CHECK(absl::IsNotFound(cluster.DeletePod("default", "p1")));
}

TEST_CASE("the DRA kinds are stored and replayed before the pods that use them", "[cluster]") {
  auto decoded = api::DecodeObjects(R"(
kind: ResourceClaim
metadata: {name: train, namespace: ml}
---
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: ml}
spec: {spec: {}}
---
kind: ResourceSlice
metadata: {name: node-a-gpu}
spec: {driver: gpu.example.com, nodeName: node-a, pool: {name: node-a, resourceSliceCount: 1}}
---
kind: DeviceClass
metadata: {name: gpu.example.com}
)",
                                    "cluster.yaml");
  REQUIRE(decoded.ok());
  REQUIRE(decoded->problems.empty());
  EmbeddedCluster cluster;
  REQUIRE(cluster.Create(PodBuilder("p", "ml").Build()).ok());
  for (const api::Object& object : decoded->objects) REQUIRE(cluster.Create(object).ok());
  const absl::Status again = cluster.Create(decoded->objects[0]);
  CHECK(absl::IsAlreadyExists(again));
  CHECK(again.message() == "ResourceClaim ml/train already exists");
  Recorder recorder;
  cluster.Watch(&recorder);
  cluster.DeliverEvents();
  CHECK(recorder.log == std::vector<std::string>{"DeviceClass ADDED gpu.example.com",
                                                 "ResourceSlice ADDED node-a-gpu",
                                                 "ResourceClaimTemplate ADDED ml/one-gpu",
                                                 "ResourceClaim ADDED ml/train", "Pod ADDED ml/p"});
}

}  // namespace
}  // namespace kubesched::cluster
