// The cache's assumed volumes (framework::VolumeAssumeCache): what snapshots see while a pod's
// volumes are assumed, what ends an assumption, the conflicts, and PreBind's wait.

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <thread>

#include "scheduler/cache/cache.h"
#include "scheduler/util/clock.h"

namespace kubesched::cache {
namespace {

std::shared_ptr<api::PersistentVolume> Pv(const std::string& name, const std::string& version,
                                          const std::string& claim = "") {
  auto volume = std::make_shared<api::PersistentVolume>();
  volume->meta.name = name;
  volume->meta.resource_version = version;
  if (!claim.empty()) volume->claim_ref = api::ObjectReference{"", "default", claim, ""};
  return volume;
}

std::shared_ptr<api::PersistentVolumeClaim> Pvc(const std::string& name, const std::string& version,
                                                const std::string& node = "") {
  auto claim = std::make_shared<api::PersistentVolumeClaim>();
  claim->meta.name = name;
  claim->meta.namespace_name = "default";
  claim->meta.resource_version = version;
  if (!node.empty()) claim->meta.annotations[api::kSelectedNodeAnnotation] = node;
  return claim;
}

// The claim the snapshot's copy of a PV names ("" for none).
std::string ClaimOf(Cache& cache, const std::string& volume) {
  framework::Snapshot snapshot;
  cache.UpdateSnapshot(&snapshot);
  const api::PersistentVolume* pv = snapshot.storage().volumes.Find(volume);
  REQUIRE(pv != nullptr);
  return pv->claim_ref.has_value() ? pv->claim_ref->name : "";
}

framework::VolumeAssumption Taking(std::shared_ptr<const api::PersistentVolume> volume) {
  framework::VolumeAssumption assumption;
  assumption.volumes.push_back(std::move(volume));
  return assumption;
}

struct Fixture {
  util::FakeClock clock;
  Cache cache{&clock};
  Fixture() { cache.SetStorageObject<api::PersistentVolume>(Pv("pv-1", "5")); }
};

TEST_CASE("an assumed PV replaces the informers' version in the next snapshot", "[cache]") {
  Fixture f;
  REQUIRE(f.cache.AssumeVolumes("default/p1", Taking(Pv("pv-1", "5", "c1"))).ok());
  CHECK(ClaimOf(f.cache, "pv-1") == "c1");
  CHECK(f.cache.ObservedVolume("pv-1")->claim_ref.has_value() == false);
  CHECK(f.cache.AssumedVolumeCount() == 1);
}

TEST_CASE("forgetting a pod's volumes brings the informers' version back", "[cache]") {
  Fixture f;
  REQUIRE(f.cache.AssumeVolumes("default/p1", Taking(Pv("pv-1", "5", "c1"))).ok());
  f.cache.ForgetVolumes("default/p1");
  f.cache.ForgetVolumes("default/p1");
  CHECK(ClaimOf(f.cache, "pv-1").empty());
  CHECK(f.cache.AssumedVolumeCount() == 0);
}

TEST_CASE("the informers' next version of an assumed PV ends the assumption", "[cache]") {
  Fixture f;
  REQUIRE(f.cache.AssumeVolumes("default/p1", Taking(Pv("pv-1", "5", "c1"))).ok());
  f.cache.SetStorageObject<api::PersistentVolume>(Pv("pv-1", "6", "c1"));
  CHECK(f.cache.AssumedVolumeCount() == 0);
  f.cache.ForgetVolumes("default/p1");  // nothing left to restore: the API's version stays
  CHECK(ClaimOf(f.cache, "pv-1") == "c1");
}

TEST_CASE("a PV assumed for one pod cannot be assumed for another", "[cache]") {
  Fixture f;
  REQUIRE(f.cache.AssumeVolumes("default/p1", Taking(Pv("pv-1", "5", "c1"))).ok());
  const absl::Status second = f.cache.AssumeVolumes("default/p2", Taking(Pv("pv-1", "5", "c2")));
  CHECK(absl::IsAborted(second));
  CHECK(ClaimOf(f.cache, "pv-1") == "c1");
}

TEST_CASE("a PV that changed since the decision cannot be assumed", "[cache]") {
  Fixture f;
  f.cache.SetStorageObject<api::PersistentVolume>(Pv("pv-1", "7"));
  CHECK(absl::IsAborted(f.cache.AssumeVolumes("default/p1", Taking(Pv("pv-1", "5", "c1")))));
  CHECK(ClaimOf(f.cache, "pv-1").empty());
}

TEST_CASE("an assumption is all or nothing", "[cache]") {
  Fixture f;
  framework::VolumeAssumption assumption = Taking(Pv("pv-1", "5", "c1"));
  assumption.claims.push_back(Pvc("missing", "1", "node-a"));
  CHECK(absl::IsNotFound(f.cache.AssumeVolumes("default/p1", assumption)));
  CHECK(ClaimOf(f.cache, "pv-1").empty());
}

TEST_CASE("a claim's selected node cannot be assumed over another node's", "[cache]") {
  Fixture f;
  f.cache.SetStorageObject<api::PersistentVolumeClaim>(Pvc("c", "3", "node-a"));
  framework::VolumeAssumption assumption;
  assumption.claims.push_back(Pvc("c", "3", "node-b"));
  CHECK(absl::IsAborted(f.cache.AssumeVolumes("default/p1", assumption)));
}

TEST_CASE("a storage change wakes PreBind's wait", "[cache]") {
  Fixture f;
  const int64_t seen = f.cache.StorageVersion();
  std::thread informer([&] { f.cache.SetStorageObject<api::PersistentVolume>(Pv("pv-2", "9")); });
  CHECK(f.cache.AwaitStorageChange(seen, absl::Now() + absl::Seconds(30)));
  informer.join();
  CHECK(f.cache.StorageVersion() != seen);
}

TEST_CASE("PreBind's wait ends at its deadline or at shutdown", "[cache]") {
  Fixture f;
  const int64_t seen = f.cache.StorageVersion();
  CHECK_FALSE(f.cache.AwaitStorageChange(seen, absl::Now() + absl::Milliseconds(10)));
  f.cache.StopStorageWaits();
  CHECK_FALSE(f.cache.AwaitStorageChange(seen, absl::InfiniteFuture()));
}

}  // namespace
}  // namespace kubesched::cache
