// The embedded cluster as VolumeBinding's API side: it refuses a stale PV, binds a claim to the
// PV that names it at once, and provisions a PV on a claim's selected node.

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/api/decode.h"
#include "scheduler/cluster/embedded_cluster.h"

namespace kubesched::cluster {
namespace {

// Keeps the latest version of each volume object it is told about.
class VolumeWatcher : public client::ClusterEventHandler {
 public:
  void OnPod(const client::Event<api::Pod>&) override {}
  void OnNode(const client::Event<api::Node>&) override {}
  void OnNamespace(const client::Event<api::Namespace>&) override {}
  void OnPriorityClass(const client::Event<api::PriorityClass>&) override {}
  void OnPersistentVolume(const client::Event<api::PersistentVolume>& e) override {
    volumes[e.object->meta.name] = e.object;
  }
  void OnPersistentVolumeClaim(const client::Event<api::PersistentVolumeClaim>& e) override {
    claims[e.object->meta.name] = e.object;
  }
  std::map<std::string, std::shared_ptr<const api::PersistentVolume>> volumes;
  std::map<std::string, std::shared_ptr<const api::PersistentVolumeClaim>> claims;
};

void Load(EmbeddedCluster& cluster, const std::string& yaml) {
  auto decoded = api::DecodeObjects(yaml, "test");
  REQUIRE(decoded.ok());
  REQUIRE(decoded->problems.empty());
  for (const auto& object : decoded->objects) REQUIRE(cluster.Create(object).ok());
}

constexpr char kCluster[] = R"(
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: node-b, labels: {kubernetes.io/hostname: host-b, topology.kubernetes.io/zone: z2}}}
- {apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: fast}, provisioner: example.com/disk, volumeBindingMode: WaitForFirstConsumer}
- {apiVersion: v1, kind: PersistentVolume, metadata: {name: pv-1}, spec: {storageClassName: local, capacity: {storage: 5Gi}}, status: {phase: Available}}
- {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data, namespace: default, uid: data-uid}, spec: {storageClassName: local, resources: {requests: {storage: 1Gi}}}}
- {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: dyn, namespace: default, uid: dyn-uid}, spec: {storageClassName: fast, accessModes: [ReadWriteOnce], resources: {requests: {storage: 3Gi}}}}
)";

struct Fixture {
  Fixture() {
    Load(cluster, kCluster);
    cluster.Watch(&watcher);
    cluster.DeliverEvents();
  }
  EmbeddedCluster cluster;
  VolumeWatcher watcher;
};

TEST_CASE("the embedded cluster binds a claim to the PV that names it at once",
          "[cluster][volumes]") {
  Fixture f;
  api::PersistentVolume claimed = *f.watcher.volumes.at("pv-1");
  claimed.claim_ref = api::ObjectReference{"PersistentVolumeClaim", "default", "data", "data-uid"};
  auto result = f.cluster.BindVolume(claimed);
  REQUIRE(result.ok());
  REQUIRE(result->claim != nullptr);
  CHECK(result->claim->volume_name == "pv-1");
  CHECK(result->claim->phase == api::ClaimPhase::kBound);
  CHECK(result->claim->meta.annotations.contains(api::kBindCompletedAnnotation));
  CHECK(result->volume->phase == api::VolumePhase::kBound);
  f.cluster.DeliverEvents();
  CHECK(f.watcher.claims.at("data")->volume_name == "pv-1");
}

TEST_CASE("the embedded cluster refuses a PV written from a stale version", "[cluster][volumes]") {
  Fixture f;
  api::PersistentVolume claimed = *f.watcher.volumes.at("pv-1");
  claimed.claim_ref = api::ObjectReference{"PersistentVolumeClaim", "default", "data", ""};
  REQUIRE(f.cluster.BindVolume(claimed).ok());
  claimed.claim_ref->name = "other";
  CHECK(absl::IsAborted(f.cluster.BindVolume(claimed).status()));
}

TEST_CASE("the embedded cluster provisions a PV on a claim's selected node", "[cluster][volumes]") {
  Fixture f;
  api::PersistentVolumeClaim claim = *f.watcher.claims.at("dyn");
  claim.meta.annotations[api::kSelectedNodeAnnotation] = "node-b";
  auto result = f.cluster.SelectNode(claim);
  REQUIRE(result.ok());
  REQUIRE(result->volume != nullptr);
  const api::PersistentVolume& volume = *result->volume;
  CHECK(volume.meta.name == "pvc-dyn-uid");
  CHECK(volume.storage_class_name == "fast");
  CHECK(volume.capacity.Get(api::InternResource("storage")) == 3LL * 1024 * 1024 * 1024);
  REQUIRE(volume.node_affinity.has_value());
  api::LabelSet host_b;
  host_b.Set(api::Intern("kubernetes.io/hostname"), api::Intern("host-b"));
  host_b.Set(api::Intern("topology.kubernetes.io/zone"), api::Intern("z2"));
  CHECK(volume.node_affinity->Matches(host_b, ""));
  api::LabelSet elsewhere;
  elsewhere.Set(api::Intern("kubernetes.io/hostname"), api::Intern("host-c"));
  CHECK_FALSE(volume.node_affinity->Matches(elsewhere, ""));
  CHECK(result->claim->volume_name == "pvc-dyn-uid");
  CHECK(result->claim->meta.annotations.at(api::kSelectedNodeAnnotation) == "node-b");
}

}  // namespace
}  // namespace kubesched::cluster
