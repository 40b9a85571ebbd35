#pragma once

// A small cluster for the volume plugins' tests, written as Kubernetes YAML: nodes and volume
// objects go into a real cache::Cache, whose snapshots (with their StorageState) the plugins read,
// and which keeps VolumeBinding's assumed volumes as in the scheduler.

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "scheduler/api/decode.h"
#include "scheduler/cache/cache.h"
#include "scheduler/framework/pod_info.h"
#include "scheduler/framework/snapshot.h"
#include "scheduler/util/clock.h"

namespace kubesched::plugin_testing {

inline api::DecodedObjects DecodeYaml(const std::string& yaml) {
  auto decoded = api::DecodeObjects(yaml, "test");
  INFO((decoded.ok() ? std::string("ok") : std::string(decoded.status().message())));
  REQUIRE(decoded.ok());
  INFO((decoded->problems.empty() ? std::string() : decoded->problems.front().ToString()));
  REQUIRE(decoded->problems.empty());
  return *std::move(decoded);
}

inline framework::PodInfoPtr PodFromYaml(const std::string& yaml) {
  api::DecodedObjects decoded = DecodeYaml(yaml);
  REQUIRE(decoded.objects.size() == 1);
  return framework::MakePodInfo(
      std::make_shared<const api::Pod>(std::get<api::Pod>(decoded.objects.front())), 0);
}

// Objects as YAML documents, for VolumeWorld.
inline std::string Node(const std::string& name, const std::string& zone = "z1") {
  return absl::StrCat("---\napiVersion: v1\nkind: Node\nmetadata: {name: ", name,
                      ", labels: {kubernetes.io/hostname: ", name,
                      ", topology.kubernetes.io/zone: ", zone, "}}\n");
}

// Classes "wait" (WaitForFirstConsumer, no provisioner), "immediate", "dynamic" (provisions in
// zone z2 only) and "nomode" (volumeBindingMode left out).
inline std::string Classes() {
  return "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: wait}\n"
         "provisioner: kubernetes.io/no-provisioner\nvolumeBindingMode: WaitForFirstConsumer\n"
         "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: immediate}\n"
         "provisioner: example.com/disk\nvolumeBindingMode: Immediate\n"
         "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: dynamic}\n"
         "provisioner: example.com/disk\nvolumeBindingMode: WaitForFirstConsumer\n"
         "allowedTopologies:\n- matchLabelExpressions:\n"
         "  - {key: topology.kubernetes.io/zone, values: [z2]}\n"
         "---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata: {name: nomode}\n"
         "provisioner: example.com/disk\n";
}

// A claim; `extra_spec` and `extra_meta` are YAML flow-map entries ("volumeName: pv-1").
inline std::string Claim(const std::string& name, const std::string& storage_class,
                         const std::string& size = "1Gi", const std::string& extra_spec = "",
                         const std::string& extra_meta = "",
                         const std::string& modes = "[ReadWriteOnce]") {
  return absl::StrCat("---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: ", name,
                      ", namespace: default, uid: ", name, "-uid", extra_meta.empty() ? "" : ", ",
                      extra_meta, "}\nspec: {storageClassName: ", storage_class,
                      ", accessModes: ", modes, ", resources: {requests: ", "{storage: ", size,
                      "}}", extra_spec.empty() ? "" : ", ", extra_spec, "}\n");
}

// A PV of class `storage_class`; `host` ("" for none) pins it with hostname node affinity.
inline std::string Volume(const std::string& name, const std::string& storage_class,
                          const std::string& size, const std::string& host = "",
                          const std::string& extra_spec = "",
                          const std::string& phase = "Available",
                          const std::string& labels = "{}") {
  std::string affinity;
  if (!host.empty()) {
    affinity =
        absl::StrCat(", nodeAffinity: {required: {nodeSelectorTerms: [{matchExpressions: ",
                     "[{key: kubernetes.io/hostname, operator: In, values: [", host, "]}]}]}}");
  }
  return absl::StrCat("---\napiVersion: v1\nkind: PersistentVolume\nmetadata: {name: ", name,
                      ", labels: ", labels, "}\nspec: {storageClassName: ", storage_class,
                      ", accessModes: [ReadWriteOnce], capacity: {storage: ", size, "}", affinity,
                      extra_spec.empty() ? "" : ", ", extra_spec, "}\nstatus: {phase: ", phase,
                      "}\n");
}

// A pod using the claims, in this order.
inline framework::PodInfoPtr Pod(const std::string& name, const std::vector<std::string>& claims) {
  std::string yaml = absl::StrCat("apiVersion: v1\nkind: Pod\nmetadata: {name: ", name,
                                  ", namespace: default, uid: ", name,
                                  "-uid}\nspec:\n  containers: [{name: c, image: x}]\n");
  if (!claims.empty()) absl::StrAppend(&yaml, "  volumes:\n");
  for (size_t i = 0; i < claims.size(); ++i) {
    absl::StrAppend(&yaml, "  - {name: v", i, ", persistentVolumeClaim: {claimName: ", claims[i],
                    "}}\n");
  }
  return PodFromYaml(yaml);
}

class VolumeWorld {
 public:
  explicit VolumeWorld(const std::string& yaml = "") {
    if (!yaml.empty()) Add(yaml);
  }

  // Nodes and volume objects, as the informers would deliver them (added or replaced).
  void Add(const std::string& yaml) { Deliver(DecodeYaml(yaml).objects); }

  // Delivers objects decoded before; asserts nothing, so another thread may call it (Catch's
  // assertions are for the test's own thread).
  void Deliver(std::vector<api::Object> objects) {
    for (api::Object& object : objects) {
      std::visit(
          [this](auto& typed) {
            using T = std::decay_t<decltype(typed)>;
            if constexpr (std::is_same_v<T, api::Node>) {
              cache_.AddNode(std::make_shared<const api::Node>(std::move(typed)));
            } else if constexpr (std::is_same_v<T, api::PersistentVolumeClaim> ||
                                 std::is_same_v<T, api::PersistentVolume> ||
                                 std::is_same_v<T, api::StorageClass> ||
                                 std::is_same_v<T, api::CsiNode> ||
                                 std::is_same_v<T, api::VolumeAttachment>) {
              cache_.SetStorageObject(std::make_shared<const T>(std::move(typed)));
            }
          },
          object);
    }
  }

  // The cache's current state; valid until the next call.
  const framework::Snapshot& Snapshot() {
    cache_.UpdateSnapshot(&snapshot_);
    return snapshot_;
  }
  cache::Cache& cache() { return cache_; }

 private:
  util::FakeClock clock_;
  cache::Cache cache_{&clock_};
  framework::Snapshot snapshot_;
};

}  // namespace kubesched::plugin_testing
