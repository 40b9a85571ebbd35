// DraState's indexes follow every write: slices by the node they publish for (others in one
// shared list), and the devices allocated claims hold; copies share what neither changed.

#include "scheduler/framework/dra_state.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>

namespace kubesched::framework {
namespace {

std::shared_ptr<const api::ResourceSlice> Slice(const std::string& name, const std::string& node) {
  auto slice = std::make_shared<api::ResourceSlice>();
  slice->meta.name = name;
  slice->driver = api::Intern("gpu.example.com");
  slice->node_name = node;
  slice->all_nodes = node.empty();
  return slice;
}

api::DeviceId Device(const std::string& name) {
  return {api::Intern("gpu.example.com"), api::Intern("pool"), api::Intern(name)};
}

std::shared_ptr<const api::ResourceClaim> Claim(const std::string& name,
                                                const std::vector<std::string>& devices,
                                                bool admin = false) {
  auto claim = std::make_shared<api::ResourceClaim>();
  claim->meta.name = name;
  claim->meta.namespace_name = "ml";
  if (!devices.empty()) {
    claim->allocation.emplace();
    for (const std::string& device : devices) {
      const api::DeviceId id = Device(device);
      claim->allocation->devices.push_back({"gpu", id.driver, id.pool, id.device, admin});
    }
  }
  return claim;
}

TEST_CASE("slices are indexed by the node they publish devices for", "[dra]") {
  DraState state;
  state.SetSlice("a-1", Slice("a-1", "node-a"));
  state.SetSlice("a-2", Slice("a-2", "node-a"));
  state.SetSlice("all", Slice("all", ""));
  REQUIRE(state.NodeSlices("node-a") != nullptr);
  CHECK(state.NodeSlices("node-a")->size() == 2);
  CHECK(state.NodeSlices("node-b") == nullptr);
  REQUIRE(state.shared_slices->size() == 1);
  CHECK(state.shared_slices->front()->meta.name == "all");

  // A slice that moves to another node leaves its old node's list.
  const DraState before = state;
  state.SetSlice("a-2", Slice("a-2", "node-b"));
  CHECK(state.NodeSlices("node-a")->size() == 1);
  CHECK(state.NodeSlices("node-b")->size() == 1);
  CHECK(before.NodeSlices("node-a")->size() == 2);  // the copy keeps what it had
  state.RemoveSlice("a-1");
  state.RemoveSlice("all");
  state.RemoveSlice("never-there");
  CHECK(state.NodeSlices("node-a") == nullptr);
  CHECK(state.shared_slices->empty());
  CHECK(state.slices.size() == 1);
}

TEST_CASE("the devices of allocated claims are counted, admin access aside", "[dra]") {
  DraState state;
  state.SetClaim("ml/a", Claim("a", {"gpu-0", "gpu-1"}));
  state.SetClaim("ml/pending", Claim("pending", {}));
  state.SetClaim("ml/admin", Claim("admin", {"gpu-2"}, /*admin=*/true));
  CHECK(state.allocated_devices.Contains(Device("gpu-0")));
  CHECK(state.allocated_devices.Contains(Device("gpu-1")));
  CHECK_FALSE(state.allocated_devices.Contains(Device("gpu-2")));
  CHECK(state.allocated_devices.size() == 2);

  const DraState before = state;
  state.SetClaim("ml/a", Claim("a", {"gpu-1"}));  // a new version of the claim replaces the old
  CHECK_FALSE(state.allocated_devices.Contains(Device("gpu-0")));
  CHECK(before.allocated_devices.Contains(Device("gpu-0")));
  state.RemoveClaim("ml/a");
  state.RemoveClaim("ml/a");
  CHECK(state.allocated_devices.size() == 0);
  CHECK(state.claims.size() == 2);
}

}  // namespace
}  // namespace kubesched::framework
