// Each node's DRA devices as the cache keeps them (cache_devices.cc): what the node's own slices
// offer and which of those claims hold (NodeInfo::own_devices), and the count of devices that
// count as a resource (each node's own slices' devices and those allocated, in the node and in
// the cluster's sums), following slices, pool generations and claims; the count is nothing at
// all unless enabled.

#include <catch2/catch.hpp>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <variant>

#include "absl/strings/str_cat.h"
#include "scheduler/api/decode.h"
#include "scheduler/cache/cache.h"
#include "scheduler/framework/device_resources.h"
#include "scheduler/framework/snapshot.h"
#include "scheduler/util/clock.h"

namespace kubesched::cache {
namespace {

const api::ResourceId kGpu = api::InternResource("nvidia.com/gpu");

std::shared_ptr<const framework::DeviceResources> Gpus() {
  framework::DeviceResources::Kind kind;
  kind.driver = api::Intern("gpu.nvidia.com");
  kind.resource = kGpu;
  kind.attributes = {{api::Intern("gpu.nvidia.com/type"), "gpu"}};
  return std::make_shared<const framework::DeviceResources>(
      std::vector<framework::DeviceResources::Kind>{kind});
}

void Add(Cache& cache, const std::string& yaml) {
  auto decoded = api::DecodeObjects(yaml, "test");
  REQUIRE(decoded.ok());
  REQUIRE(decoded->problems.empty());
  for (api::Object& object : decoded->objects) {
    std::visit(
        [&cache](auto& typed) {
          using T = std::decay_t<decltype(typed)>;
          if constexpr (std::is_same_v<T, api::Node>) {
            cache.AddNode(std::make_shared<const api::Node>(std::move(typed)));
          } else if constexpr (std::is_same_v<T, api::ResourceSlice> ||
                               std::is_same_v<T, api::ResourceClaim>) {
            cache.SetDraObject(std::make_shared<const T>(std::move(typed)));
          }
        },
        object);
  }
}

// Slice `name` of node `node`'s pool at `generation`: `gpus` GPUs and one device of another type.
std::string Slice(const std::string& name, const std::string& node, int gpus, int generation = 1) {
  std::string yaml = absl::StrCat(
      "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: ", name,
      "}\nspec:\n  driver: gpu.nvidia.com\n  nodeName: ", node, "\n  pool: {name: ", node,
      ", generation: ", generation, ", resourceSliceCount: 1}\n  devices:\n",
      "  - {name: nic, attributes: {type: {string: nic}}}\n");
  for (int i = 0; i < gpus; ++i) {
    absl::StrAppend(&yaml, "  - {name: gpu-", i, ", attributes: {type: {string: gpu}}}\n");
  }
  return yaml;
}

// Claim `name`, allocated `device` of node `node`'s pool, or unallocated when `device` is "".
std::string Claim(const std::string& name, const std::string& node, const std::string& device) {
  std::string yaml = absl::StrCat(
      "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: ", name,
      ", namespace: default}\nspec: {devices: {requests: [{name: gpu, exactly: "
      "{deviceClassName: gpu}}]}}\n");
  if (!device.empty()) {
    absl::StrAppend(&yaml, "status: {allocation: {devices: {results: [{request: gpu, driver: ",
                    "gpu.nvidia.com, pool: ", node, ", device: ", device, "}]}}}\n");
  }
  return yaml;
}

constexpr char kNodes[] = R"(---
apiVersion: v1
kind: Node
metadata: {name: node-1}
status: {allocatable: {cpu: '8', pods: '110'}}
---
apiVersion: v1
kind: Node
metadata: {name: node-2}
status: {allocatable: {cpu: '8', pods: '110'}}
)";

TEST_CASE("a node counts the devices its slices publish and those claims hold", "[cache][dra]") {
  util::FakeClock clock;
  Cache cache(&clock);
  cache.EnableDeviceResources(Gpus());
  Add(cache, kNodes);
  Add(cache, Slice("node-1-gpus", "node-1", 4) + Claim("a", "node-1", "gpu-0") +
                 Claim("b", "node-1", "nic") + Claim("c", "", ""));
  framework::Snapshot snapshot;
  cache.UpdateSnapshot(&snapshot);
  CHECK(snapshot.Get("node-1")->device_allocatable().Get(kGpu) == 4);
  CHECK(snapshot.Get("node-1")->device_requested().Get(kGpu) == 1);
  CHECK(snapshot.Get("node-1")->allocatable().Get(kGpu) == 0);  // NodeResourcesFit's stays
  CHECK(snapshot.Get("node-2")->device_allocatable().Get(kGpu) == 0);
  CHECK(snapshot.cluster_allocatable().Get(kGpu) == 4);
  CHECK(snapshot.cluster_requested().Get(kGpu) == 1);

  SECTION("a claim released gives its device back") {
    Add(cache, Claim("a", "node-1", ""));
    cache.UpdateSnapshot(&snapshot);
    CHECK(snapshot.Get("node-1")->device_requested().Get(kGpu) == 0);
    CHECK(snapshot.cluster_requested().Get(kGpu) == 0);
  }
  SECTION("a newer generation of the pool replaces the older one") {
    Add(cache, Slice("node-1-gpus-v2", "node-1", 2, 2));
    cache.UpdateSnapshot(&snapshot);
    CHECK(snapshot.Get("node-1")->device_allocatable().Get(kGpu) == 2);
    CHECK(snapshot.cluster_allocatable().Get(kGpu) == 2);
  }
  SECTION("a slice that goes takes its devices with it") {
    auto decoded = api::DecodeObjects(Slice("node-1-gpus", "node-1", 4), "test");
    REQUIRE(decoded.ok());
    cache.RemoveDraObject(std::get<api::ResourceSlice>(decoded->objects.front()));
    cache.UpdateSnapshot(&snapshot);
    CHECK(snapshot.Get("node-1")->device_allocatable().Get(kGpu) == 0);
    CHECK(snapshot.cluster_allocatable().Get(kGpu) == 0);
  }
}

TEST_CASE("without device resources the cache counts no device", "[cache][dra]") {
  util::FakeClock clock;
  Cache cache(&clock);
  Add(cache, kNodes);
  Add(cache, Slice("node-1-gpus", "node-1", 4) + Claim("a", "node-1", "gpu-0"));
  framework::Snapshot snapshot;
  cache.UpdateSnapshot(&snapshot);
  CHECK(snapshot.Get("node-1")->device_allocatable().size() == 0);
  CHECK(snapshot.cluster_allocatable().Get(kGpu) == 0);
  CHECK(snapshot.dra().device_resources == nullptr);
}

// The bits of the named devices in the node's own devices (OwnDevices::held).
uint64_t Bits(const framework::NodeInfo& node, std::initializer_list<std::string_view> names) {
  uint64_t bits = 0;
  const auto& devices = node.device_summary()->devices;
  for (std::string_view name : names) {
    for (size_t i = 0; i < devices.size(); ++i) {
      if (api::SymbolText(devices[i].name) == name) bits |= uint64_t{1} << i;
    }
  }
  return bits;
}

TEST_CASE("a node carries what its own slices offer and which of those claims hold",
          "[cache][dra]") {
  util::FakeClock clock;
  Cache cache(&clock);  // no device resources: DynamicResources reads these all the same
  Add(cache, Slice("node-1-gpus", "node-1", 4) + kNodes + Claim("a", "node-1", "gpu-0") +
                 Claim("c", "", ""));
  framework::Snapshot snapshot;
  cache.UpdateSnapshot(&snapshot);
  const auto own = [&snapshot](const std::string& node) {
    return snapshot.Get(node)->own_devices();
  };
  // The slice came before the Node object: the node has its devices all the same.
  REQUIRE(own("node-1").summary != nullptr);
  CHECK(own("node-1").summary.get() == snapshot.dra().DeviceSummary("node-1"));
  CHECK(own("node-1").summary->devices.size() == 5);
  CHECK(snapshot.Get("node-1")->device_profile() == own("node-1").summary->profile);
  CHECK(own("node-1").held == Bits(*snapshot.Get("node-1"), {"gpu-0"}));
  CHECK(snapshot.Get("node-2")->device_profile() == nullptr);
  CHECK(own("node-2").summary == nullptr);
  CHECK(own("node-2").held == 0);

  SECTION("claims allocated and released move the node's held devices") {
    Add(cache, Claim("b", "node-1", "gpu-3") + Claim("d", "node-1", "nic"));
    cache.UpdateSnapshot(&snapshot);
    CHECK(own("node-1").held == Bits(*snapshot.Get("node-1"), {"gpu-0", "gpu-3", "nic"}));
    Add(cache, Claim("a", "node-1", "") + Claim("d", "node-1", ""));
    cache.UpdateSnapshot(&snapshot);
    CHECK(own("node-1").held == Bits(*snapshot.Get("node-1"), {"gpu-3"}));
  }
  SECTION("a newer generation keeps the holds of the devices it still names") {
    Add(cache, Slice("node-1-gpus-v2", "node-1", 2, 2));
    cache.UpdateSnapshot(&snapshot);
    CHECK(own("node-1").summary->devices.size() == 3);
    CHECK(own("node-1").held == Bits(*snapshot.Get("node-1"), {"gpu-0"}));
  }
  SECTION("a slice that goes takes its devices with it") {
    auto decoded = api::DecodeObjects(Slice("node-1-gpus", "node-1", 4), "test");
    REQUIRE(decoded.ok());
    cache.RemoveDraObject(std::get<api::ResourceSlice>(decoded->objects.front()));
    cache.UpdateSnapshot(&snapshot);
    CHECK(own("node-1").summary == nullptr);
    CHECK(snapshot.Get("node-1")->device_profile() == nullptr);
    CHECK(own("node-1").held == 0);
  }
}

}  // namespace
}  // namespace kubesched::cache
