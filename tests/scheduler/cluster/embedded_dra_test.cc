// The embedded cluster as DynamicResources' API side: it makes the claims pods' templates
// describe and releases the claims of deleted pods (as the ResourceClaim controller does), and
// stores claim status writes as the API server does (a stale resourceVersion, a missing claim and
// a second allocation are refused; a consumer taken out by uid; a deallocation).

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/api/decode.h"
#include "scheduler/cluster/embedded_cluster.h"

namespace kubesched::cluster {
namespace {

// Keeps the latest version of each pod and claim it is told about.
class ClaimWatcher : public client::ClusterEventHandler {
 public:
  void OnPod(const client::Event<api::Pod>& e) override { pods[e.object->meta.name] = e.object; }
  void OnNode(const client::Event<api::Node>&) override {}
  void OnNamespace(const client::Event<api::Namespace>&) override {}
  void OnPriorityClass(const client::Event<api::PriorityClass>&) override {}
  void OnResourceClaim(const client::Event<api::ResourceClaim>& e) override {
    if (e.type == client::EventType::kDeleted) {
      claims.erase(e.object->meta.name);
    } else {
      claims[e.object->meta.name] = e.object;
    }
  }
  std::map<std::string, std::shared_ptr<const api::Pod>> pods;
  std::map<std::string, std::shared_ptr<const api::ResourceClaim>> claims;
};

void Load(EmbeddedCluster& cluster, const std::string& yaml) {
  auto decoded = api::DecodeObjects(yaml, "test");
  REQUIRE(decoded.ok());
  REQUIRE(decoded->problems.empty());
  for (const auto& object : decoded->objects) REQUIRE(cluster.Create(object).ok());
}

constexpr char kTemplate[] = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: default}
spec: {spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}}
)";

constexpr char kPod[] = R"(
apiVersion: v1
kind: Pod
metadata: {name: train, namespace: default, uid: train-uid}
spec:
  containers: [{name: c}]
  resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
)";

// A claim no pod owns.
constexpr char kSharedClaim[] = R"(
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared, namespace: default}
spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu}}]}}
)";

TEST_CASE("a pod's template claim is made once both exist, in either order", "[cluster][dra]") {
  for (const bool template_first : {true, false}) {
    INFO("template first: " << template_first);
    EmbeddedCluster cluster;
    Load(cluster, template_first ? kTemplate : kPod);
    Load(cluster, template_first ? kPod : kTemplate);
    ClaimWatcher watcher;
    cluster.Watch(&watcher);
    cluster.DeliverEvents();
    REQUIRE(watcher.claims.size() == 1);
    const api::ResourceClaim& claim = *watcher.claims.begin()->second;
    CHECK_THAT(claim.meta.name, Catch::StartsWith("train-gpu-"));
    CHECK(claim.meta.name.size() == std::string("train-gpu-").size() + 5);
    CHECK(claim.spec.requests.size() == 1);
    REQUIRE(claim.meta.owner_references.size() == 1);
    CHECK(claim.meta.owner_references[0].uid == "train-uid");
    CHECK(claim.meta.owner_references[0].controller);
    const api::Pod& pod = *watcher.pods.at("train");
    REQUIRE(pod.status.resource_claim_statuses.size() == 1);
    CHECK(pod.status.resource_claim_statuses[0].name == "gpu");
    CHECK(pod.status.resource_claim_statuses[0].resource_claim_name == claim.meta.name);
  }
}

TEST_CASE("a claim status write is stored once, from the version it was decided on",
          "[cluster][dra]") {
  EmbeddedCluster cluster;
  Load(cluster, std::string(kTemplate) + "---\n" + kPod);
  ClaimWatcher watcher;
  cluster.Watch(&watcher);
  cluster.DeliverEvents();
  REQUIRE(watcher.claims.size() == 1);
  const api::ResourceClaim decided = *watcher.claims.begin()->second;
  api::AllocationResult allocation;
  allocation.devices.push_back(
      {"gpu", api::Intern("gpu.example.com"), api::Intern("node-a"), api::Intern("gpu-0"), false});
  const api::ResourceClaimConsumer pod{"", "pods", "train", "train-uid"};

  auto stored = cluster.WriteReservation(decided, &allocation, pod);
  REQUIRE(stored.ok());
  REQUIRE((*stored)->allocation.has_value());
  CHECK((*stored)->reserved_for.size() == 1);
  cluster.DeliverEvents();
  CHECK(watcher.claims.at(decided.meta.name)->meta.resource_version ==
        (*stored)->meta.resource_version);

  CHECK(cluster.WriteReservation(decided, &allocation, pod).status().code() ==
        absl::StatusCode::kAborted);
  CHECK(cluster.WriteReservation(**stored, &allocation, pod).status().code() ==
        absl::StatusCode::kInvalidArgument);
  api::ResourceClaim missing = decided;
  missing.meta.name = "missing";
  CHECK(cluster.WriteReservation(missing, &allocation, pod).status().code() ==
        absl::StatusCode::kNotFound);
}

TEST_CASE("a deleted pod's claims are released: its own deleted, a shared one deallocated last",
          "[cluster][dra]") {
  EmbeddedCluster cluster;
  Load(cluster, std::string(kTemplate) + "---\n" + kPod + "---\n" + kSharedClaim);
  ClaimWatcher watcher;
  cluster.Watch(&watcher);
  cluster.DeliverEvents();
  REQUIRE(watcher.claims.size() == 2);
  api::AllocationResult allocation;
  allocation.devices.push_back(
      {"gpu", api::Intern("gpu.example.com"), api::Intern("node-a"), api::Intern("gpu-0"), false});
  for (const auto& [name, claim] : watcher.claims) {
    REQUIRE(cluster.WriteReservation(*claim, &allocation, {"", "pods", "train", "train-uid"}).ok());
  }
  auto shared = cluster.GetResourceClaim("default/shared");
  REQUIRE(cluster.WriteReservation(*shared, nullptr, {"", "pods", "other", "other-uid"}).ok());

  REQUIRE(cluster.DeletePod("default", "train").ok());
  cluster.DeliverEvents();
  REQUIRE(watcher.claims.size() == 1);  // the pod's own claim went with it
  shared = watcher.claims.at("shared");
  REQUIRE(shared->reserved_for.size() == 1);
  CHECK(shared->reserved_for[0].name == "other");
  CHECK(shared->allocation.has_value());
}

TEST_CASE("a reservation is taken back by uid and a claim deallocated on its version",
          "[cluster][dra]") {
  EmbeddedCluster cluster;
  Load(cluster, kSharedClaim);
  ClaimWatcher watcher;
  cluster.Watch(&watcher);
  api::AllocationResult allocation;
  allocation.devices.push_back(
      {"gpu", api::Intern("gpu.example.com"), api::Intern("node-a"), api::Intern("gpu-0"), false});
  auto claim = cluster.GetResourceClaim("default/shared");
  auto first = cluster.WriteReservation(*claim, &allocation, {"", "pods", "a", "a-uid"});
  REQUIRE(first.ok());
  REQUIRE(cluster.WriteReservation(**first, nullptr, {"", "pods", "b", "b-uid"}).ok());
  // By uid, from any version (the API's strategic merge patch).
  auto removed = cluster.RemoveReservation(**first, "a-uid");
  REQUIRE(removed.ok());
  REQUIRE((*removed)->reserved_for.size() == 1);
  CHECK((*removed)->reserved_for[0].uid == "b-uid");
  CHECK((*removed)->allocation.has_value());

  CHECK(cluster.Deallocate(**first).status().code() == absl::StatusCode::kAborted);
  auto deallocated = cluster.Deallocate(**removed);
  INFO(deallocated.status().message());
  REQUIRE(deallocated.ok());
  cluster.DeliverEvents();
  const auto seen = watcher.claims.at("shared");
  CHECK(seen->meta.resource_version == (*deallocated)->meta.resource_version);
  CHECK_FALSE(seen->allocation.has_value());
  CHECK(seen->reserved_for.empty());
  api::ResourceClaim missing = *seen;
  missing.meta.name = "missing";
  CHECK(cluster.Deallocate(missing).status().code() == absl::StatusCode::kNotFound);
  CHECK(cluster.RemoveReservation(missing, "b-uid").status().code() == absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace kubesched::cluster
