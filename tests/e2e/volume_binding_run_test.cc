// VolumeBinding through `kubesched run` against kubesched-testapi with its volume controller on:
// a WaitForFirstConsumer claim gets its pod's node as selected-node and a PV provisioned there,
// on a node its class allows; two pods never bind the same static PV. Outcomes are waited for on
// the API server's state, never slept for.

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "rapidjson/document.h"
#include "tests/testapi/testapi_process.h"
#include "tests/testing/kubesched_process.h"
#include "tests/testing/test_api_client.h"
#include "tests/testing/wait.h"

namespace kubesched {
namespace {

using testapi::TestApiProcess;
using testing::StringOf;
using testing::TestApiClient;

constexpr char kPods[] = "/api/v1/namespaces/default/pods";
constexpr char kClaims[] = "/api/v1/namespaces/default/persistentvolumeclaims";
constexpr char kVolumes[] = "/api/v1/persistentvolumes";

std::string NodeJson(const std::string& name, const std::string& zone) {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"Node","metadata":{"name":")", name,
                      R"(","labels":{"kubernetes.io/hostname":")", name,
                      R"(","topology.kubernetes.io/zone":")", zone,
                      R"("}},"status":{"allocatable":{"cpu":"4","memory":"16Gi","pods":"110"}}})");
}

std::string ClassJson(const std::string& name, const std::string& provisioner,
                      const std::string& zone = "") {
  std::string topology;
  if (!zone.empty()) {
    topology = absl::StrCat(R"(,"allowedTopologies":[{"matchLabelExpressions":[{"key":)",
                            R"("topology.kubernetes.io/zone","values":[")", zone, R"("]}]}])");
  }
  return absl::StrCat(R"({"apiVersion":"storage.k8s.io/v1","kind":"StorageClass","metadata":)",
                      R"({"name":")", name, R"("},"provisioner":")", provisioner,
                      R"(","volumeBindingMode":"WaitForFirstConsumer")", topology, "}");
}

std::string ClaimJson(const std::string& name, const std::string& storage_class) {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":)",
                      R"({"name":")", name, R"("},"spec":{"storageClassName":")", storage_class,
                      R"(","accessModes":["ReadWriteOnce"],)",
                      R"("resources":{"requests":{"storage":"1Gi"}}}})");
}

// A local PV on `node`; the volume controller makes it Available.
std::string LocalVolumeJson(const std::string& name, const std::string& node) {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":")", name,
                      R"("},"spec":{"storageClassName":"local","accessModes":["ReadWriteOnce"],)",
                      R"("capacity":{"storage":"5Gi"},"local":{"path":"/mnt/disk"},)",
                      R"("nodeAffinity":{"required":{"nodeSelectorTerms":[{"matchExpressions":)",
                      R"([{"key":"kubernetes.io/hostname","operator":"In","values":[")", node,
                      R"("]}]}]}}}})");
}

std::string PodJson(const std::string& name, const std::string& claim) {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
                      R"("},"spec":{"schedulerName":"kubesched","containers":[{"name":"c",)",
                      R"("image":"busybox","resources":{"requests":{"cpu":"100m"}}}],)",
                      R"("volumes":[{"name":"data","persistentVolumeClaim":{"claimName":")", claim,
                      R"("}}]}})");
}

class Api : public TestApiClient {
 public:
  using TestApiClient::TestApiClient;

  // A string field of an object ("" when absent or when the object is missing).
  std::string Field(const std::string& target, std::string_view path) {
    int status = 0;
    rapidjson::Document object = Get(target, &status);
    if (status != 200) return "";
    const rapidjson::Value* value = &object;
    for (std::string_view rest = path; !rest.empty();) {
      const size_t dot = rest.find('.');
      const std::string key(rest.substr(0, dot));
      if (!value->IsObject() || !value->HasMember(key.c_str())) return "";
      value = &(*value)[key.c_str()];
      rest = dot == std::string_view::npos ? "" : rest.substr(dot + 1);
    }
    return StringOf(*value);
  }
  std::string Annotation(const std::string& target, const char* key) {
    int status = 0;
    rapidjson::Document object = Get(target, &status);
    if (status != 200 || !object["metadata"].HasMember("annotations")) return "";
    const auto& annotations = object["metadata"]["annotations"];
    return annotations.HasMember(key) ? StringOf(annotations[key]) : "";
  }
  std::string NodeOf(const std::string& pod) {
    return Field(absl::StrCat(kPods, "/", pod), "spec.nodeName");
  }
  // The message of the pod's PodScheduled=False condition ("" while it has none).
  std::string UnschedulableMessage(const std::string& pod) {
    rapidjson::Document object = GetOk(absl::StrCat(kPods, "/", pod));
    if (!object.HasMember("status") || !object["status"].HasMember("conditions")) return "";
    for (const rapidjson::Value& condition : object["status"]["conditions"].GetArray()) {
      if (StringOf(condition["type"]) == "PodScheduled" &&
          StringOf(condition["status"]) == "False") {
        return StringOf(condition["message"]);
      }
    }
    return "";
  }
};

TEST_CASE("run: a WaitForFirstConsumer claim is provisioned on its pod's node, in the class's zone",
          "[run][e2e][volume_binding]") {
  auto server = TestApiProcess::Start({"--volume-controller", "true"});
  REQUIRE(server.ok());
  Api api(**server);
  api.Create("/api/v1/nodes", NodeJson("node-1", "z1"));
  api.Create("/api/v1/nodes", NodeJson("node-2", "z2"));
  api.Create("/apis/storage.k8s.io/v1/storageclasses",
             ClassJson("zonal", "disk.example.com", "z2"));
  api.Create(kClaims, ClaimJson("data", "zonal"));
  api.Create(kPods, PodJson("app", "data"));

  auto scheduler = testing::StartKubeschedRun({.kubeconfig = (*server)->kubeconfig()});
  testing::RequireEventually("the pod is bound", *scheduler,
                             [&] { return !api.NodeOf("app").empty(); });
  CHECK(api.NodeOf("app") == "node-2");
  const std::string claim = absl::StrCat(kClaims, "/data");
  CHECK(api.Annotation(claim, "volume.kubernetes.io/selected-node") == "node-2");
  CHECK(api.Field(claim, "status.phase") == "Bound");
  const std::string volume = api.Field(claim, "spec.volumeName");
  REQUIRE_FALSE(volume.empty());
  rapidjson::Document pv = api.GetOk(absl::StrCat(kVolumes, "/", volume));
  const auto& expression =
      pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0];
  CHECK(StringOf(expression["values"][0]) == "node-2");
  CHECK(scheduler->Stop(SIGTERM, absl::Seconds(15)).ok());
}

TEST_CASE("run: two pods never bind the same static PV", "[run][e2e][volume_binding]") {
  auto server = TestApiProcess::Start({"--volume-controller", "true"});
  REQUIRE(server.ok());
  Api api(**server);
  api.Create("/api/v1/nodes", NodeJson("node-1", "z1"));
  api.Create("/api/v1/nodes", NodeJson("node-2", "z1"));
  api.Create("/apis/storage.k8s.io/v1/storageclasses",
             ClassJson("local", "kubernetes.io/no-provisioner"));
  api.Create(kVolumes, LocalVolumeJson("pv-1", "node-1"));
  testing::WaitUntil(
      [&] { return api.Field(absl::StrCat(kVolumes, "/pv-1"), "status.phase") == "Available"; });
  for (const char* name : {"a", "b"}) {
    api.Create(kClaims, ClaimJson(absl::StrCat("data-", name), "local"));
    api.Create(kPods, PodJson(absl::StrCat("app-", name), absl::StrCat("data-", name)));
  }

  auto scheduler = testing::StartKubeschedRun({.kubeconfig = (*server)->kubeconfig()});
  // One pod gets pv-1 and binds; the other is reported unschedulable for want of a PV.
  std::string bound;
  std::string waiting;
  testing::RequireEventually("one pod is bound and the other reported unschedulable", *scheduler,
                             [&] {
                               const bool a = !api.NodeOf("app-a").empty();
                               bound = a ? "a" : "b";
                               waiting = a ? "b" : "a";
                               return (a || !api.NodeOf("app-b").empty()) &&
                                      !api.UnschedulableMessage("app-" + waiting).empty();
                             });
  CHECK(api.NodeOf("app-" + bound) == "node-1");
  CHECK(api.NodeOf("app-" + waiting).empty());
  CHECK(absl::StrContains(api.UnschedulableMessage("app-" + waiting),
                          "didn't find available persistent volumes to bind"));
  CHECK(api.Field(absl::StrCat(kVolumes, "/pv-1"), "spec.claimRef.name") == "data-" + bound);
  CHECK(api.Field(absl::StrCat(kClaims, "/data-", waiting), "spec.volumeName").empty());

  // A second PV, on the other node, lets the waiting pod go there.
  api.Create(kVolumes, LocalVolumeJson("pv-2", "node-2"));
  testing::RequireEventually("the second pod is bound", *scheduler,
                             [&] { return !api.NodeOf("app-" + waiting).empty(); });
  CHECK(api.NodeOf("app-" + waiting) == "node-2");
  testing::RequireEventually("the second claim is bound", *scheduler, [&] {
    return api.Field(absl::StrCat(kClaims, "/data-", waiting), "spec.volumeName") == "pv-2";
  });
  CHECK(api.Field(absl::StrCat(kVolumes, "/pv-1"), "spec.claimRef.name") == "data-" + bound);
  CHECK(scheduler->Stop(SIGTERM, absl::Seconds(15)).ok());
}

}  // namespace
}  // namespace kubesched
