// DraState's indexes follow every write: slices by the node they publish for (others in one
// shared list), the slices of each pool generation, and the devices allocated claims hold (by
// device and by pool); copies share what neither changed.

#include "scheduler/framework/dra_state.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

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

std::shared_ptr<const api::ResourceSlice> PoolSlice(const std::string& name, int64_t generation,
                                                    const std::string& node = "node-a") {
  auto slice = std::make_shared<api::ResourceSlice>(*Slice(name, node));
  slice->pool = {api::Intern("pool"), generation, 2};
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

TEST_CASE("the devices allocated in a pool are kept by name with their claims", "[dra]") {
  const PoolId pool{api::Intern("gpu.example.com"), api::Intern("pool")};
  const auto held = [](const DraState& state, const PoolId& id) {
    const PoolAllocations* devices = state.allocated_by_pool.Find(id);
    std::map<std::string, int32_t> out;
    if (devices == nullptr) return out;
    CHECK(std::is_sorted(devices->begin(), devices->end()));  // searched by name
    for (const auto& [name, claims] : *devices) out.emplace(api::SymbolText(name), claims);
    return out;
  };
  DraState state;
  state.SetClaim("ml/b", Claim("b", {"gpu-1", "gpu-0"}));
  state.SetClaim("ml/c", Claim("c", {"gpu-1"}));
  state.SetClaim("ml/admin", Claim("admin", {"gpu-2"}, /*admin=*/true));
  using Held = std::map<std::string, int32_t>;
  CHECK(held(state, pool) == Held{{"gpu-0", 1}, {"gpu-1", 2}});
  const DraState before = state;
  state.RemoveClaim("ml/b");
  CHECK(held(state, pool) == Held{{"gpu-1", 1}});
  CHECK(held(before, pool).size() == 2);  // the copy keeps what it had
  state.RemoveClaim("ml/c");
  CHECK(state.allocated_by_pool.Find(pool) == nullptr);
  CHECK(state.allocated_by_pool.Find({pool.driver, api::Intern("other")}) == nullptr);
}

TEST_CASE("the slices of each pool generation are counted over every node", "[dra]") {
  const api::Symbol driver = api::Intern("gpu.example.com");
  const api::Symbol pool = api::Intern("pool");
  DraState state;
  state.SetSlice("g1-a", PoolSlice("g1-a", 1, "node-a"));
  state.SetSlice("g1-b", PoolSlice("g1-b", 1, "node-b"));
  CHECK(state.PoolSlices(driver, pool, 1) == 2);
  CHECK(state.PoolSlices(driver, pool, 2) == 0);
  CHECK_FALSE(state.NewerPoolGeneration(driver, pool, 1));
  state.SetSlice("g2-a", PoolSlice("g2-a", 2, "node-a"));
  CHECK(state.NewerPoolGeneration(driver, pool, 1));
  CHECK_FALSE(state.NewerPoolGeneration(driver, pool, 2));
  // A slice rewritten at the next generation moves from one count to the other.
  state.SetSlice("g1-b", PoolSlice("g1-b", 2, "node-b"));
  CHECK(state.PoolSlices(driver, pool, 1) == 1);
  CHECK(state.PoolSlices(driver, pool, 2) == 2);
  state.RemoveSlice("g1-a");
  state.RemoveSlice("g1-b");
  state.RemoveSlice("g2-a");
  CHECK(state.PoolSlices(driver, pool, 2) == 0);
  CHECK(state.pool_generations.size() == 0);
}

// A slice of pool "pool" (announcing two slices) for node-a, with devices named `devices`.
std::shared_ptr<const api::ResourceSlice> DeviceSlice(const std::string& name, int64_t generation,
                                                      const std::vector<std::string>& devices,
                                                      const std::string& node = "node-a") {
  auto slice = std::make_shared<api::ResourceSlice>(*PoolSlice(name, generation, node));
  for (const std::string& device : devices) {
    api::Device& added = slice->devices.emplace_back();
    added.name = api::Intern(device);
  }
  return slice;
}

std::vector<std::string> SummaryDevices(const NodeDeviceSummary& summary) {
  std::vector<std::string> names;
  for (const NodeDeviceSummary::Device& device : summary.devices) {
    names.emplace_back(api::SymbolText(device.name));
  }
  std::sort(names.begin(), names.end());
  return names;
}

TEST_CASE("each node's summary follows the writes of its own slices", "[dra]") {
  DraState state;
  state.SetSlice("s1", DeviceSlice("s1", 1, {"gpu-1", "gpu-0"}));
  REQUIRE(state.DeviceSummary("node-a") != nullptr);
  // One slice of the two the pool announces: its devices depend on other nodes' slices.
  CHECK_FALSE(state.DeviceSummary("node-a")->self_contained());
  state.SetSlice("s2", DeviceSlice("s2", 1, {"gpu-2"}));
  const NodeDeviceSummary* whole = state.DeviceSummary("node-a");
  REQUIRE(whole != nullptr);
  CHECK(whole->self_contained());
  REQUIRE(whole->pools.size() == 1);
  CHECK(whole->pools[0].end_device - whole->pools[0].first_device == 3);
  CHECK(SummaryDevices(*whole) == std::vector<std::string>{"gpu-0", "gpu-1", "gpu-2"});
  // Names within a pool are in symbol order, as the held devices of a pool are.
  CHECK(std::is_sorted(whole->devices.begin(), whole->devices.end(),
                       [](const auto& a, const auto& b) { return a.name < b.name; }));
  // A copy keeps what it saw; the next generation in part makes the node's pool incomplete.
  const DraState copy = state;
  state.SetSlice("s3", DeviceSlice("s3", 2, {"gpu-9"}));
  CHECK_FALSE(state.DeviceSummary("node-a")->self_contained());
  CHECK(copy.DeviceSummary("node-a")->self_contained());
  // A device named in both slices of the pool: the pool is invalid, which the search reports.
  state.RemoveSlice("s3");
  state.SetSlice("s2", DeviceSlice("s2", 1, {"gpu-1"}));
  CHECK_FALSE(state.DeviceSummary("node-a")->self_contained());
  // A slice moved to another node leaves the first: each node has one slice of the two.
  state.SetSlice("s2", DeviceSlice("s2", 1, {"gpu-2"}, "node-b"));
  REQUIRE(state.DeviceSummary("node-b") != nullptr);
  CHECK_FALSE(state.DeviceSummary("node-b")->self_contained());
  state.SetSlice("s1", DeviceSlice("s1", 1, {"gpu-0"}, "node-b"));
  CHECK(state.DeviceSummary("node-a") == nullptr);
  REQUIRE(state.DeviceSummary("node-b") != nullptr);
  CHECK(SummaryDevices(*state.DeviceSummary("node-b")) ==
        std::vector<std::string>{"gpu-0", "gpu-2"});
  state.RemoveSlice("s1");
  state.RemoveSlice("s2");
  CHECK(state.DeviceSummary("node-b") == nullptr);
  CHECK(state.device_summaries.size() == 0);
}

TEST_CASE("nodes that offer alike devices share one device profile", "[dra]") {
  // Shapes as the decoder interns them; 7 and 8 stand for two kinds of device.
  const auto slice = [](const std::string& name, const std::string& node,
                        const std::map<std::string, api::DeviceShape>& devices) {
    auto made = std::make_shared<api::ResourceSlice>(*Slice(name, node));
    made->pool = {api::Intern("pool-" + node), 1, 1};
    for (const auto& [device, shape] : devices) {
      api::Device& added = made->devices.emplace_back();
      added.name = api::Intern(device);
      added.shape = shape;
    }
    return made;
  };
  const std::map<std::string, api::DeviceShape> mixed = {{"gpu-0", 7}, {"gpu-1", 8}};
  DraState state;
  state.SetSlice("a", slice("a", "node-a", mixed));
  state.SetSlice("b", slice("b", "node-b", mixed));
  state.SetSlice("c", slice("c", "node-c", {{"gpu-0", 8}, {"gpu-1", 8}}));
  const NodeDeviceSummary* summary = state.DeviceSummary("node-a");
  REQUIRE(summary != nullptr);
  const DeviceProfile* profile = summary->profile;
  REQUIRE(profile != nullptr);
  CHECK(profile->countable);
  // The shapes are in the order of the summary's devices, whose bits the held devices are.
  REQUIRE(profile->shapes.size() == summary->devices.size());
  for (size_t i = 0; i < summary->devices.size(); ++i) {
    CHECK(profile->shapes[i] == mixed.at(std::string(api::SymbolText(summary->devices[i].name))));
  }
  CHECK(state.DeviceSummary("node-b")->profile == profile);
  CHECK(state.DeviceSummary("node-c")->profile != profile);
  // One slice of the two its pool announces: counted by no profile, searched.
  state.SetSlice("d", DeviceSlice("d", 1, {"gpu-5"}, "node-d"));
  CHECK(state.DeviceSummary("node-d")->profile == DeviceProfiles::Uncountable());
  CHECK_FALSE(DeviceProfiles::Uncountable()->countable);
}

}  // namespace
}  // namespace kubesched::framework
