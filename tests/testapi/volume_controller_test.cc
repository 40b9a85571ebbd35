// kubesched-testapi's volume controller: off by default, switched on by POST; binds a claim to the
// PV that names it, provisions a PV on a claim's selected node, makes free PVs Available.

#include "tests/testapi/volume_controller.h"

#include <catch2/catch.hpp>
#include <string>

#include "rapidjson/document.h"
#include "tests/testapi/routes.h"
#include "tests/testapi/server.h"
#include "tests/testapi/store.h"
#include "tests/testing/wait.h"

namespace kubesched::testapi {
namespace {

struct Fixture {
  Fixture() : store(StoreOptions{}), api(&store, &faults, {}), controller(&store) {
    REQUIRE(api.Bootstrap().ok());
    api.set_volume_controller(&controller);
  }
  HttpResponse Call(std::string method, std::string target, std::string body = "",
                    std::string content_type = "application/json") {
    return api.Handle({.method = std::move(method),
                       .target = std::move(target),
                       .content_type = std::move(content_type),
                       .body = std::move(body)});
  }
  void Create(const std::string& collection, const std::string& json) {
    const HttpResponse response = Call("POST", collection, json);
    INFO(response.body);
    REQUIRE(response.status == 201);
  }
  rapidjson::Document Get(const std::string& target) {
    const HttpResponse response = Call("GET", target);
    rapidjson::Document doc;
    doc.Parse(response.body.data(), response.body.size());
    return doc;
  }
  std::string Field(const std::string& target, std::string_view path) {
    const rapidjson::Document doc = Get(target);
    return doc.IsObject() ? StringAt(doc, path) : "";
  }
  // A string under metadata.annotations or metadata.labels, whose keys have dots.
  std::string Annotation(const std::string& target, const char* key) {
    const rapidjson::Document doc = Get(target);
    if (!doc.IsObject() || !HasMember(doc["metadata"], "annotations")) return "";
    const auto& annotations = doc["metadata"]["annotations"];
    return HasMember(annotations, key) ? annotations[key].GetString() : "";
  }
  void Enable() {
    const HttpResponse response = Call("POST", "/testapi/volume-controller", R"({"enabled":true})");
    REQUIRE(response.status == 200);
    REQUIRE(response.body == R"({"enabled":true})");
  }

  Store store;
  Faults faults;
  ApiServer api;
  VolumeController controller;
};

constexpr char kClaims[] = "/api/v1/namespaces/default/persistentvolumeclaims";
constexpr char kVolumes[] = "/api/v1/persistentvolumes";

std::string ClaimJson(const std::string& name, const std::string& storage_class,
                      const std::string& annotations = "{}") {
  return R"({"metadata":{"name":")" + name + R"(","annotations":)" + annotations +
         R"(},"spec":{"storageClassName":")" + storage_class +
         R"(","accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"2Gi"}}}})";
}

TEST_CASE("the volume controller is off until switched on", "[testapi][volumes]") {
  Fixture f;
  CHECK(f.Call("GET", "/testapi/volume-controller").body == R"({"enabled":false})");
  f.Create(kVolumes, R"({"metadata":{"name":"pv-1"},"spec":{"capacity":{"storage":"1Gi"}}})");
  CHECK(f.controller.Reconcile() == 1);  // a pass by hand still works
  CHECK(f.Field(std::string(kVolumes) + "/pv-1", "status.phase") == "Available");
  CHECK(f.Call("POST", "/testapi/volume-controller", "{}").status == 400);
}

TEST_CASE("a PV whose claimRef names a claim is bound to it", "[testapi][volumes]") {
  Fixture f;
  f.Enable();
  f.Create(kClaims, ClaimJson("data", "local"));
  f.Create(kVolumes,
           R"({"metadata":{"name":"pv-1"},"spec":{"capacity":{"storage":"5Gi"},)"
           R"("storageClassName":"local","claimRef":{"namespace":"default","name":"data"}}})");
  const std::string claim = std::string(kClaims) + "/data";
  REQUIRE(testing::WaitUntil([&] { return f.Field(claim, "status.phase") == "Bound"; }));
  CHECK(f.Field(claim, "spec.volumeName") == "pv-1");
  CHECK(f.Annotation(claim, "pv.kubernetes.io/bind-completed") == "yes");
  CHECK(f.Field(claim, "status.capacity.storage") == "5Gi");
  const std::string volume = std::string(kVolumes) + "/pv-1";
  CHECK(f.Field(volume, "status.phase") == "Bound");
  CHECK(f.Field(volume, "spec.claimRef.uid") == f.Field(claim, "metadata.uid"));
}

TEST_CASE("a PV naming a claim that took another PV is left alone", "[testapi][volumes]") {
  Fixture f;
  f.Create(kClaims, ClaimJson("data", "local"));
  f.Create(kVolumes, R"({"metadata":{"name":"pv-1"},"spec":{"claimRef":)"
                     R"({"namespace":"default","name":"data"}}})");
  f.Create(kVolumes, R"({"metadata":{"name":"pv-2"},"spec":{"claimRef":)"
                     R"({"namespace":"default","name":"data"}}})");
  f.controller.Reconcile();
  f.controller.Reconcile();
  CHECK(f.Field(std::string(kClaims) + "/data", "spec.volumeName") == "pv-1");
  CHECK(f.Field(std::string(kVolumes) + "/pv-2", "status.phase").empty());
}

TEST_CASE("a claim with a selected node gets a PV provisioned on that node", "[testapi][volumes]") {
  Fixture f;
  f.Enable();
  f.Create("/api/v1/nodes", R"({"metadata":{"name":"node-b","labels":{)"
                            R"("kubernetes.io/hostname":"host-b",)"
                            R"("topology.kubernetes.io/zone":"z2"}}})");
  f.Create("/apis/storage.k8s.io/v1/storageclasses",
           R"({"metadata":{"name":"fast"},"provisioner":"example.com/disk",)"
           R"("volumeBindingMode":"WaitForFirstConsumer"})");
  f.Create(kClaims,
           ClaimJson("data", "fast", R"({"volume.kubernetes.io/selected-node":"node-b"})"));
  const std::string claim = std::string(kClaims) + "/data";
  REQUIRE(testing::WaitUntil([&] { return f.Field(claim, "status.phase") == "Bound"; }));
  const std::string volume = std::string(kVolumes) + "/" + f.Field(claim, "spec.volumeName");
  const rapidjson::Document pv = f.Get(volume);
  REQUIRE(pv.IsObject());
  CHECK(StringAt(pv, "spec.capacity.storage") == "2Gi");
  CHECK(StringAt(pv, "spec.storageClassName") == "fast");
  CHECK(StringAt(pv, "spec.claimRef.name") == "data");
  CHECK(StringAt(pv, "status.phase") == "Bound");
  const auto& expressions =
      pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"];
  REQUIRE(expressions.Size() == 2);
  CHECK(std::string(expressions[0]["key"].GetString()) == "kubernetes.io/hostname");
  CHECK(std::string(expressions[0]["values"][0].GetString()) == "host-b");
  CHECK(std::string(expressions[1]["key"].GetString()) == "topology.kubernetes.io/zone");
  CHECK(std::string(expressions[1]["values"][0].GetString()) == "z2");
}

TEST_CASE("a claim of a class without a provisioner is not provisioned", "[testapi][volumes]") {
  Fixture f;
  f.Create("/api/v1/nodes", R"({"metadata":{"name":"node-a"}})");
  f.Create("/apis/storage.k8s.io/v1/storageclasses",
           R"({"metadata":{"name":"local"},"provisioner":"kubernetes.io/no-provisioner"})");
  f.Create(kClaims,
           ClaimJson("data", "local", R"({"volume.kubernetes.io/selected-node":"node-a"})"));
  CHECK(f.controller.Reconcile() == 0);
  CHECK(f.Field(std::string(kClaims) + "/data", "spec.volumeName").empty());
}

TEST_CASE("the --volume-controller flag takes true or false", "[testapi][volumes]") {
  bool help = false;
  auto on = ParseServerFlags({"--volume-controller", "true"}, &help);
  REQUIRE(on.ok());
  CHECK(on->volume_controller);
  CHECK_FALSE(ParseServerFlags({"--volume-controller", "yes"}, &help).ok());
}

}  // namespace
}  // namespace kubesched::testapi
