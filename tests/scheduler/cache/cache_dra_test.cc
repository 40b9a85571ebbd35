// The cache's Dynamic Resource Allocation objects: what snapshots see, and that a snapshot
// refresh shares the published DraState until a DRA object changes.

#include <catch2/catch.hpp>
#include <memory>
#include <string>

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

}  // namespace
}  // namespace kubesched::cache
