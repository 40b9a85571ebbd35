// Decoding of pod volumes, scheduling gates, resource claims, node images and the volume kinds.

#include <catch2/catch.hpp>
#include <string>
#include <variant>

#include "scheduler/api/decode.h"
#include "scheduler/api/storage.h"
#include "tests/testing/decode_one.h"

namespace kubesched::api {
namespace {

using testing::DecodeOne;

std::string ProblemOf(const std::string& json) {
  auto decoded = DecodeObjects(json, "test");
  REQUIRE(decoded.ok());
  REQUIRE(decoded->problems.size() == 1);
  return decoded->problems.front().message;
}

TEST_CASE("a pod's volumes, gates, claims and images are read", "[api]") {
  const Pod pod = DecodeOne<Pod>(R"({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "p", "namespace": "ns"},
    "spec": {"containers": [{"name": "c", "image": "nginx:1.25"}],
      "schedulingGates": [{"name": "kueue.x-k8s.io/admission"}, {"name": "b"}],
      "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
      "volumes": [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-0", "readOnly": true}},
        {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
        {"name": "disk", "gcePersistentDisk": {"pdName": "pd-1"}},
        {"name": "ebs", "awsElasticBlockStore": {"volumeID": "vol-1"}},
        {"name": "blk", "rbd": {"monitors": ["m1", "m2"], "image": "img"}},
        {"name": "cfg", "configMap": {"name": "x"}}]}})");
  CHECK(pod.spec.containers[0].image == "nginx:1.25");
  CHECK(pod.spec.scheduling_gates == std::vector<std::string>{"kueue.x-k8s.io/admission", "b"});
  REQUIRE(pod.spec.resource_claims.size() == 1);
  CHECK(pod.spec.resource_claims[0].resource_claim_template_name == "one-gpu");
  REQUIRE(pod.spec.volumes.size() == 6);
  CHECK(pod.spec.volumes[0].ClaimName("p") == "data-0");
  CHECK(pod.spec.volumes[0].read_only);
  CHECK(pod.spec.volumes[1].ClaimName("p") == "p-scratch");
  CHECK(pod.spec.volumes[2].gce_pd_name == "pd-1");
  CHECK(pod.spec.volumes[3].aws_ebs_volume_id == "vol-1");
  CHECK(pod.spec.volumes[4].rbd_monitors == std::vector<std::string>{"m1", "m2"});
  CHECK(pod.spec.volumes[4].rbd_pool == "rbd");
  CHECK(pod.spec.volumes[5].ClaimName("p").empty());
}

TEST_CASE("a claim volume without a claim name is a problem naming the field", "[api]") {
  CHECK(ProblemOf(R"({"kind": "Pod", "metadata": {"name": "p"},
    "spec": {"volumes": [{"name": "v", "persistentVolumeClaim": {}}]}})") ==
        "spec.volumes[0].persistentVolumeClaim.claimName: missing or empty");
}

TEST_CASE("a node's images are read with their sizes", "[api]") {
  const Node node = DecodeOne<Node>(R"({"kind": "Node", "metadata": {"name": "n"},
    "status": {"images": [{"names": ["nginx:1.25", "docker.io/library/nginx:1.25"],
                           "sizeBytes": 1048576}]}})");
  REQUIRE(node.status.images.size() == 1);
  CHECK(node.status.images[0].names.size() == 2);
  CHECK(node.status.images[0].size_bytes == 1048576);
  CHECK(ProblemOf(R"({"kind": "Node", "metadata": {"name": "n"},
    "status": {"images": [{"names": ["x"], "sizeBytes": -1}]}})") ==
        "status.images[0].sizeBytes: must not be negative");
}

TEST_CASE("claims and volumes are read with what binding needs", "[api]") {
  const auto claim = DecodeOne<PersistentVolumeClaim>(R"({"kind": "PersistentVolumeClaim",
    "metadata": {"name": "c", "namespace": "ns",
                 "annotations": {"volume.kubernetes.io/selected-node": "n1"}},
    "spec": {"accessModes": ["ReadWriteOncePod"], "storageClassName": "",
             "resources": {"requests": {"storage": "10Gi"}}, "volumeName": "pv-1"},
    "status": {"phase": "Bound"}})");
  CHECK(claim.meta.namespace_name == "ns");
  CHECK(claim.access_modes == std::vector<AccessMode>{AccessMode::kReadWriteOncePod});
  CHECK(claim.storage_class_name == std::optional<std::string>(""));
  CHECK(claim.requests.Get(InternResource("storage")) == int64_t{10} << 30);
  CHECK(claim.volume_name == "pv-1");
  CHECK(claim.phase == ClaimPhase::kBound);
  CHECK(DecodeOne<PersistentVolumeClaim>(
            R"({"kind": "PersistentVolumeClaim", "metadata": {"name": "c"}})")
            .storage_class_name == std::nullopt);

  const auto volume = DecodeOne<PersistentVolume>(R"({"kind": "PersistentVolume",
    "metadata": {"name": "pv-1"},
    "spec": {"capacity": {"storage": "20Gi"}, "storageClassName": "fast",
      "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-9"},
      "claimRef": {"namespace": "ns", "name": "c"},
      "nodeAffinity": {"required": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}}},
    "status": {"phase": "Available"}})");
  CHECK(volume.storage_class_name == "fast");
  REQUIRE(volume.csi.has_value());
  CHECK(volume.csi->volume_handle == "vol-9");
  REQUIRE(volume.claim_ref.has_value());
  CHECK(volume.claim_ref->name == "c");
  REQUIRE(volume.node_affinity.has_value());
  CHECK(volume.node_affinity->terms.size() == 1);
  CHECK(volume.phase == VolumePhase::kAvailable);
  CHECK(ProblemOf(R"({"kind": "PersistentVolume", "metadata": {"name": "x"},
    "spec": {"accessModes": ["WriteSometimes"]}})")
            .starts_with("spec.accessModes[0]:"));
}

TEST_CASE("storage classes, CSINodes and attachments are read", "[api]") {
  const auto sc = DecodeOne<StorageClass>(R"({"kind": "StorageClass",
    "metadata": {"name": "wait",
                 "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
    "provisioner": "csi.example.com", "volumeBindingMode": "WaitForFirstConsumer",
    "allowedTopologies": [{"matchLabelExpressions": [
      {"key": "topology.kubernetes.io/zone", "values": ["a", "b"]}]}]})");
  CHECK(sc.volume_binding_mode == VolumeBindingMode::kWaitForFirstConsumer);
  CHECK(sc.is_default);
  REQUIRE(sc.allowed_topologies.size() == 1);
  CHECK(sc.allowed_topologies[0][0].values.size() == 2);
  CHECK_FALSE(DecodeOne<StorageClass>(R"({"kind": "StorageClass", "metadata": {"name": "x"}})")
                  .volume_binding_mode.has_value());

  const auto csi = DecodeOne<CsiNode>(R"({"kind": "CSINode", "metadata": {"name": "n1"},
    "spec": {"drivers": [{"name": "d", "nodeID": "n1", "allocatable": {"count": 39}},
                         {"name": "e", "nodeID": "n1"}]}})");
  REQUIRE(csi.drivers.size() == 2);
  CHECK(csi.drivers[0].allocatable_count == std::optional<int32_t>(39));
  CHECK_FALSE(csi.drivers[1].allocatable_count.has_value());

  const auto attachment = DecodeOne<VolumeAttachment>(R"({"kind": "VolumeAttachment",
    "metadata": {"name": "a"},
    "spec": {"attacher": "d", "nodeName": "n1", "source": {"persistentVolumeName": "pv-1"}}})");
  CHECK(attachment.node_name == "n1");
  CHECK(attachment.persistent_volume_name == "pv-1");
  CHECK(DescribeObject(Object(attachment)) == "VolumeAttachment a");
}

}  // namespace
}  // namespace kubesched::api
