// Counting (FitByCount) against the full search: on random nodes (pools of one or two slices,
// older generations, incomplete pools, a device named twice, devices the selector fails on,
// slices for all nodes, devices held by claims, a pool of more devices than the node's held bits
// cover), every verdict the counting gives is the one the
// search and its second, nothing-taken search give; what it leaves undecided the search answers.

#include "plugins/dynamic_resources/count_fit.h"

#include <catch2/catch.hpp>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "plugins/dynamic_resources/allocator.h"
#include "plugins/dynamic_resources/node_devices.h"
#include "scheduler/framework/dra_state.h"
#include "scheduler/framework/node_info.h"
#include "tests/plugins/dynamic_resources/dra_builders.h"

namespace kubesched::plugins::dynamic_resources {
namespace {

using namespace testing;  // NOLINT: the builders are this file's vocabulary

constexpr char kDriver[] = "gpu.example.com";
constexpr char kNode[] = "node-1";
const char* const kModels[] = {"a", "b"};

// The search's verdict, in the words of the counting; kSearch when the search itself fails.
CountFit Searched(const PreparedClaims& claims, const framework::DraState& dra) {
  NodeDevices devices;
  devices.Gather(dra.NodeSlices(kNode), *dra.shared_slices, kNode, {}, dra);
  Allocator allocator;
  const auto taken = [&dra](const DeviceId& id) { return dra.allocated_devices.Contains(id); };
  const absl::StatusOr<bool> found = allocator.Search(claims, devices, taken);
  if (!found.ok() || devices.HasInvalidPool()) return CountFit::kSearch;
  if (*found) return CountFit::kFits;
  const absl::StatusOr<bool> untaken =
      allocator.Search(claims, devices, [](const DeviceId&) { return false; });
  return untaken.ok() && *untaken ? CountFit::kTaken : CountFit::kTooFew;
}

api::Device RandomDevice(std::mt19937& random, int index, bool always_model = false) {
  api::Device device = MakeDevice(absl::StrCat("gpu-", index));
  if (always_model || random() % 8 != 0) {  // else no model: the selector fails on it
    device =
        MakeDevice(absl::StrCat("gpu-", index), {StringAttribute("model", kModels[random() % 2])});
  }
  device.shape = api::InternDeviceShape(api::Intern(kDriver), device);
  return device;
}

// The node as a snapshot holds it: with its own devices as the cache sets them.
framework::NodeInfo NodeOf(const framework::DraState& dra) {
  framework::NodeInfo node;
  node.SetOwnDevices(dra.OwnDevicesOf(kNode), 1);
  return node;
}

constexpr int kBigPoolDevices = 70;  // more than OwnDevices::kHeldBits

// A node's slices: pools of one or two slices, now and then an older generation beside the
// newest, an announced count that is not met, or a device name used in two slices; now and then
// a pool of more devices than the node's held bits cover.
void AddRandomSlices(std::mt19937& random, framework::DraState& dra) {
  if (random() % 4 == 0) {
    SliceBuilder big("big", kDriver, absl::StrCat(kNode, "-pool-3"));
    big.Node(kNode).Generation(1, 1);
    // Every device with a model: one the selector fails on would leave the node to the search.
    for (int d = 0; d < kBigPoolDevices; ++d) big.Add(RandomDevice(random, d, true));
    dra.SetSlice("big", std::make_shared<const api::ResourceSlice>(big.Build()));
  }
  const int pools = 1 + static_cast<int>(random() % 3);
  for (int p = 0; p < pools; ++p) {
    const std::string pool = absl::StrCat(kNode, "-pool-", p);
    const int slices = 1 + static_cast<int>(random() % 2);
    const int64_t announced = random() % 6 == 0 ? slices + 1 : slices;
    for (int s = 0; s < slices; ++s) {
      const bool older = s > 0 && random() % 4 == 0;
      SliceBuilder slice(absl::StrCat(pool, "-", s), kDriver, pool);
      slice.Node(kNode).Generation(older ? 1 : 2, announced);
      const int first = random() % 10 == 0 ? 0 : s * 8;  // 0 for s > 0: a name used twice
      for (int d = 0; d < 1 + static_cast<int>(random() % 5); ++d) {
        slice.Add(RandomDevice(random, first + d));
      }
      dra.SetSlice(slice.slice.meta.name,
                   std::make_shared<const api::ResourceSlice>(slice.Build()));
    }
  }
  if (random() % 6 == 0) {
    SliceBuilder shared("everywhere", kDriver, "shared");
    shared.AllNodes().Add(RandomDevice(random, 0));
    dra.SetSlice("everywhere", std::make_shared<const api::ResourceSlice>(shared.Build()));
  }
}

// Claims of other pods holding random devices of the node's pools.
void HoldRandomDevices(std::mt19937& random, framework::DraState& dra) {
  auto claim = std::make_shared<api::ResourceClaim>(MakeClaim("held", {}));
  claim->allocation.emplace();
  for (int held = 0; held < static_cast<int>(random() % 6); ++held) {
    const std::string pool = absl::StrCat(kNode, "-pool-", random() % 4);
    claim->allocation->devices.push_back({"gpu", api::Intern(kDriver), api::Intern(pool),
                                          api::Intern(absl::StrCat("gpu-", random() % 13)),
                                          random() % 5 == 0});
  }
  dra.SetClaim("default/held", std::move(claim));
}

TEST_CASE("counting free matching devices gives the full search's verdict on random nodes",
          "[dra]") {
  std::mt19937 random(20261129);
  SelectorCache selectors;
  const api::DeviceClass gpu =
      MakeClass("gpu", {absl::StrCat("device.driver == \"", kDriver, "\"")});
  const auto find_class = [&gpu](std::string_view name) { return name == "gpu" ? &gpu : nullptr; };
  int decided = 0;
  int searched = 0;
  int decided_beyond_held_bits = 0;
  for (int round = 0; round < 400; ++round) {
    framework::DraState dra;
    AddRandomSlices(random, dra);
    HoldRandomDevices(random, dra);
    const std::string model = kModels[random() % 2];
    const api::ResourceClaim claim = MakeClaim(
        "pod-claim", {Exactly("gpu", Spec("gpu", 1 + static_cast<int64_t>(random() % 6),
                                          {absl::StrCat("device.attributes[\"", kDriver,
                                                        "\"].model == \"", model, "\"")}))});
    const api::ResourceClaim* claims[] = {&claim};
    absl::StatusOr<PreparedClaims> prepared =
        PreparedClaims::Prepare({claims, find_class, nullptr}, selectors);
    REQUIRE(prepared.ok());
    const std::optional<CountRequest> request = prepared->AsCountRequest();
    REQUIRE(request.has_value());
    // Counting before the search may meet verdicts no one decided yet; after it, fewer.
    const CountFit before = FitByCount(*request, dra, NodeOf(dra));
    const CountFit search = Searched(*prepared, dra);
    const framework::NodeInfo node = NodeOf(dra);
    const CountFit after = FitByCount(*request, dra, node);
    INFO("round " << round);
    if (before != CountFit::kSearch) CHECK(before == search);
    if (after != CountFit::kSearch) {
      CHECK(after == search);
      ++decided;
      const framework::NodeDeviceSummary* summary = node.device_summary();
      if (summary != nullptr && summary->devices.size() > framework::OwnDevices::kHeldBits) {
        ++decided_beyond_held_bits;
      }
    } else {
      ++searched;
    }
  }
  // Both ways are taken often: the comparison is not vacuous, and the hard cases are left over.
  CHECK(decided > 50);
  CHECK(searched > 50);
  CHECK(decided_beyond_held_bits > 10);
}

TEST_CASE("counting leaves to the search what it cannot count", "[dra]") {
  SelectorCache selectors;
  const api::DeviceClass gpu = MakeClass("gpu");
  const auto find_class = [&gpu](std::string_view name) { return name == "gpu" ? &gpu : nullptr; };
  const auto as_count = [&](const api::ResourceClaim& claim) {
    const api::ResourceClaim* claims[] = {&claim};
    absl::StatusOr<PreparedClaims> prepared =
        PreparedClaims::Prepare({claims, find_class, nullptr}, selectors);
    REQUIRE(prepared.ok());
    return prepared->AsCountRequest().has_value();
  };
  CHECK(as_count(MakeClaim("one", {Exactly("gpu", Spec("gpu", 2))})));
  CHECK(as_count(MakeClaim("sub", {FirstAvailable("gpu", {{"any", Spec("gpu", 2)}})})));
  CHECK_FALSE(as_count(MakeClaim("all", {Exactly("gpu", AllSpec("gpu"))})));
  CHECK_FALSE(as_count(MakeClaim("admin", {Exactly("gpu", Spec("gpu"), true)})));
  CHECK_FALSE(as_count(MakeClaim("two", {Exactly("a", Spec("gpu")), Exactly("b", Spec("gpu"))})));
  CHECK_FALSE(as_count(MakeClaim(
      "alternatives", {FirstAvailable("gpu", {{"x", Spec("gpu", 2)}, {"y", Spec("gpu")}})})));
  CHECK_FALSE(as_count(
      MakeClaim("constrained", {Exactly("gpu", Spec("gpu", 2))}, {MatchAttribute("model")})));
}

}  // namespace
}  // namespace kubesched::plugins::dynamic_resources
