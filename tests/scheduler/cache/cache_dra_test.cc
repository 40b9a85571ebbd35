// The cache's Dynamic Resource Allocation objects: what snapshots see, that a snapshot refresh
// shares the published DraState until a DRA object changes, and the claim allocations
// DynamicResources assumes (framework::ClaimAssumeCache).

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/cache/cache.h"
#include "scheduler/util/clock.h"

namespace kubesched::cache {
namespace {

std::shared_ptr<api::ResourceClaim> Claim(const std::string& name, const std::string& version) {
  auto claim = std::make_shared<api::ResourceClaim>();
  claim->meta.name = name;
  claim->meta.namespace_name = "ml";
  claim->meta.resource_version = version;
  return claim;
}

std::shared_ptr<api::ResourceSlice> Slice(const std::string& name, const std::string& node) {
  auto slice = std::make_shared<api::ResourceSlice>();
  slice->meta.name = name;
  slice->driver = api::Intern("gpu.example.com");
  slice->node_name = node;
  return slice;
}

TEST_CASE("the DRA objects reach the snapshot, by namespace/name or by name", "[cache]") {
  util::FakeClock clock;
  Cache cache{&clock};
  auto device_class = std::make_shared<api::DeviceClass>();
  device_class->meta.name = "gpu.example.com";
  auto claim_template = std::make_shared<api::ResourceClaimTemplate>();
  claim_template->meta.name = "one-gpu";
  claim_template->meta.namespace_name = "ml";
  cache.SetDraObject<api::DeviceClass>(device_class);
  cache.SetDraObject<api::ResourceSlice>(Slice("node-a-gpu", "node-a"));
  cache.SetDraObject<api::ResourceClaim>(Claim("train", "1"));
  cache.SetDraObject<api::ResourceClaimTemplate>(claim_template);

  framework::Snapshot snapshot;
  cache.UpdateSnapshot(&snapshot);
  const framework::DraState& dra = snapshot.dra();
  CHECK(dra.Class("gpu.example.com") != nullptr);
  REQUIRE(dra.slices.Find("node-a-gpu") != nullptr);
  CHECK(dra.slices.Find("node-a-gpu")->node_name == "node-a");
  REQUIRE(dra.Claim("ml", "train") != nullptr);
  CHECK(dra.Claim("default", "train") == nullptr);
  CHECK(dra.Template("ml", "one-gpu") != nullptr);

  cache.SetDraObject<api::ResourceClaim>(Claim("train", "2"));
  cache.RemoveDraObject<api::ResourceSlice>(*Slice("node-a-gpu", "node-a"));
  cache.UpdateSnapshot(&snapshot);
  REQUIRE(snapshot.dra().Claim("ml", "train") != nullptr);
  CHECK(snapshot.dra().Claim("ml", "train")->meta.resource_version == "2");
  CHECK(snapshot.dra().slices.size() == 0);
  CHECK(snapshot.dra().classes.size() == 1);
}

TEST_CASE("a snapshot refresh keeps the DraState until a DRA object changes", "[cache]") {
  util::FakeClock clock;
  Cache cache{&clock};
  framework::Snapshot snapshot;
  cache.UpdateSnapshot(&snapshot);
  CHECK(snapshot.dra().empty());
  cache.SetDraObject<api::ResourceClaim>(Claim("train", "1"));
  cache.UpdateSnapshot(&snapshot);
  const framework::DraState* published = &snapshot.dra();
  cache.SetNamespace(api::Intern("ml"), {});
  cache.UpdateSnapshot(&snapshot);
  CHECK(&snapshot.dra() == published);
  // Removing what is not there is no change either.
  cache.RemoveDraObject<api::ResourceClaim>(*Claim("other", "1"));
  cache.UpdateSnapshot(&snapshot);
  CHECK(&snapshot.dra() == published);
  cache.RemoveDraObject<api::ResourceClaim>(*Claim("train", "1"));
  cache.UpdateSnapshot(&snapshot);
  CHECK(&snapshot.dra() != published);
  CHECK(snapshot.dra().empty());
}

api::DeviceId Gpu(const std::string& device) {
  return {api::Intern("gpu.example.com"), api::Intern("node-a"), api::Intern(device)};
}

// `claim` as Reserve decides it: the same version, allocated `device`.
std::shared_ptr<const api::ResourceClaim> Allocated(const api::ResourceClaim& claim,
                                                    const std::string& device) {
  auto allocated = std::make_shared<api::ResourceClaim>(claim);
  allocated->allocation.emplace();
  const api::DeviceId id = Gpu(device);
  allocated->allocation->devices.push_back({"gpu", id.driver, id.pool, id.device, false});
  return allocated;
}

struct ClaimWorld {
  util::FakeClock clock;
  Cache cache{&clock};
  framework::Snapshot snapshot;
  const framework::DraState& Dra() {
    cache.UpdateSnapshot(&snapshot);
    return snapshot.dra();
  }
};

TEST_CASE("an assumed allocation takes its devices and puts its claim in flight until forgotten",
          "[cache]") {
  ClaimWorld world;
  world.cache.SetDraObject<api::ResourceClaim>(Claim("train", "1"));
  REQUIRE(world.cache.AssumeClaims("ml/pod", {Allocated(*Claim("train", "1"), "gpu-0")}).ok());
  CHECK(world.cache.AssumedClaimCount() == 1);
  {
    const framework::DraState& dra = world.Dra();
    CHECK(dra.allocated_devices.Contains(Gpu("gpu-0")));
    REQUIRE(dra.PendingAllocation("ml/train") != nullptr);
    CHECK(*dra.PendingAllocation("ml/train") == "ml/pod");
  }
  world.cache.ForgetClaims("ml/pod");
  world.cache.ForgetClaims("ml/pod");
  world.cache.ForgetClaims("ml/never-assumed");
  const framework::DraState& dra = world.Dra();
  CHECK(world.cache.AssumedClaimCount() == 0);
  CHECK_FALSE(dra.allocated_devices.Contains(Gpu("gpu-0")));
  CHECK(dra.PendingAllocation("ml/train") == nullptr);
  CHECK_FALSE(dra.Claim("ml", "train")->allocation.has_value());
}

TEST_CASE("assuming is all or none, and refuses a claim that moved on or is another pod's",
          "[cache]") {
  ClaimWorld world;
  world.cache.SetDraObject<api::ResourceClaim>(Claim("train", "2"));
  world.cache.SetDraObject<api::ResourceClaim>(Claim("eval", "1"));
  // Decided on version 1 of train: it changed since.
  const absl::Status stale = world.cache.AssumeClaims(
      "ml/pod",
      {Allocated(*Claim("eval", "1"), "gpu-0"), Allocated(*Claim("train", "1"), "gpu-1")});
  CHECK(stale.code() == absl::StatusCode::kAborted);
  CHECK(world.cache.AssumedClaimCount() == 0);
  CHECK_FALSE(world.Dra().allocated_devices.Contains(Gpu("gpu-0")));
  CHECK(world.cache.AssumeClaims("ml/pod", {Allocated(*Claim("gone", "1"), "gpu-0")}).code() ==
        absl::StatusCode::kNotFound);

  REQUIRE(world.cache.AssumeClaims("ml/pod", {Allocated(*Claim("eval", "1"), "gpu-0")}).ok());
  const absl::Status taken =
      world.cache.AssumeClaims("ml/other", {Allocated(*Claim("eval", "1"), "gpu-1")});
  CHECK(taken.code() == absl::StatusCode::kAborted);
  CHECK_THAT(std::string(taken.message()), Catch::Contains("assumed for pod ml/pod"));
}

TEST_CASE("the informers' newer version of a claim wins over its assumption", "[cache]") {
  ClaimWorld world;
  world.cache.SetDraObject<api::ResourceClaim>(Claim("train", "1"));
  REQUIRE(world.cache.AssumeClaims("ml/pod", {Allocated(*Claim("train", "1"), "gpu-0")}).ok());
  // A relist delivers the version the allocation was decided on: the assumption stays.
  world.cache.SetDraObject<api::ResourceClaim>(Claim("train", "1"));
  CHECK(world.cache.AssumedClaimCount() == 1);
  CHECK(world.Dra().allocated_devices.Contains(Gpu("gpu-0")));
  // Someone changed the claim: the API server's version wins, and the write will conflict.
  world.cache.SetDraObject<api::ResourceClaim>(Claim("train", "2"));
  CHECK(world.cache.AssumedClaimCount() == 0);
  const framework::DraState& dra = world.Dra();
  CHECK_FALSE(dra.allocated_devices.Contains(Gpu("gpu-0")));
  CHECK(dra.PendingAllocation("ml/train") == nullptr);
  CHECK(dra.Claim("ml", "train")->meta.resource_version == "2");
  // Forgetting the pod afterwards restores nothing.
  world.cache.ForgetClaims("ml/pod");
  CHECK(world.Dra().Claim("ml", "train")->meta.resource_version == "2");
}

TEST_CASE("a written claim is kept past Unreserve until the informers deliver its version",
          "[cache]") {
  ClaimWorld world;
  world.cache.SetDraObject<api::ResourceClaim>(Claim("train", "4"));
  std::shared_ptr<const api::ResourceClaim> decided = Allocated(*Claim("train", "4"), "gpu-0");
  REQUIRE(world.cache.AssumeClaims("ml/pod", {decided}).ok());
  auto stored = std::make_shared<api::ResourceClaim>(*decided);
  stored->meta.resource_version = "5";
  world.cache.ClaimWritten("ml/pod", stored);
  CHECK(world.Dra().PendingAllocation("ml/train") == nullptr);
  world.cache.ForgetClaims("ml/pod");
  CHECK(world.cache.AssumedClaimCount() == 1);
  CHECK(world.Dra().allocated_devices.Contains(Gpu("gpu-0")));
  // An older event changes nothing; the written version itself ends the assumption.
  world.cache.SetDraObject<api::ResourceClaim>(Claim("train", "4"));
  CHECK(world.cache.AssumedClaimCount() == 1);
  world.cache.SetDraObject<api::ResourceClaim>(stored);
  CHECK(world.cache.AssumedClaimCount() == 0);
  CHECK(world.Dra().allocated_devices.Contains(Gpu("gpu-0")));
  // A write the informers have shown already is not assumed again.
  world.cache.ClaimWritten("ml/pod", stored);
  CHECK(world.cache.AssumedClaimCount() == 0);
}

TEST_CASE("a deleted claim ends its assumption", "[cache]") {
  ClaimWorld world;
  world.cache.SetDraObject<api::ResourceClaim>(Claim("train", "1"));
  REQUIRE(world.cache.AssumeClaims("ml/pod", {Allocated(*Claim("train", "1"), "gpu-0")}).ok());
  world.cache.RemoveDraObject<api::ResourceClaim>(*Claim("train", "1"));
  CHECK(world.cache.AssumedClaimCount() == 0);
  const framework::DraState& dra = world.Dra();
  CHECK(dra.Claim("ml", "train") == nullptr);
  CHECK_FALSE(dra.allocated_devices.Contains(Gpu("gpu-0")));
  world.cache.ForgetClaims("ml/pod");
  CHECK(world.Dra().Claim("ml", "train") == nullptr);
}

}  // namespace
}  // namespace kubesched::cache
