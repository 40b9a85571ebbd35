// Random pods on random nodes: several drivers, pools and models. Whatever the allocator answers
// must hold up (no device twice, no taken device, every selector and constraint true, All means
// all), and it may only give up when an exhaustive search finds no allocation either.

#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "plugins/dynamic_resources/allocator.h"
#include "tests/plugins/dynamic_resources/dra_builders.h"

namespace kubesched::plugins::dynamic_resources {
namespace {

using namespace testing;  // NOLINT: the builders are this file's vocabulary

const char* const kModels[] = {"a", "b", "c"};

// What a generated request or sub-request asks for, in a form the test can check directly.
struct SpecModel {
  bool driver_a_only = false;  // class "only-a"
  uint32_t models = 0;         // bit per model; 0: any
  bool all = false;
  int64_t count = 1;
};

struct SlotModel {
  uint32_t claim = 0;
  std::string request;
  std::vector<std::string> subs;  // empty: `exactly`
  std::vector<SpecModel> specs;
};

struct DeviceModel {
  DeviceId id;
  bool driver_a = false;
  int model = 0;
  int numa = -1;  // -1: no numa attribute
  bool taken = false;
};

struct ConstraintModel {
  uint32_t claim = 0;
  std::vector<std::string> requests;
};

struct Case {
  std::vector<DeviceModel> devices;  // the newest generation only
  std::vector<SlotModel> slots;
  std::vector<ConstraintModel> constraints;
};

bool Matches(const SpecModel& spec, const DeviceModel& device) {
  if (spec.driver_a_only && !device.driver_a) return false;
  return spec.models == 0 || (spec.models >> device.model & 1) != 0;
}

bool Applies(const ConstraintModel& constraint, const SlotModel& slot, size_t sub) {
  if (constraint.claim != slot.claim) return false;
  if (constraint.requests.empty()) return true;
  for (const std::string& name : constraint.requests) {
    if (name == slot.request) return true;
    if (!slot.subs.empty() && name == slot.request + "/" + slot.subs[sub]) return true;
  }
  return false;
}

// `slot_of[d]`: the slot device d serves, or -1; `choice[s]`: the alternative of slot s.
bool Valid(const Case& c, const std::vector<int>& slot_of, const std::vector<size_t>& choice) {
  for (size_t s = 0; s < c.slots.size(); ++s) {
    const SpecModel& spec = c.slots[s].specs[choice[s]];
    int64_t assigned = 0;
    for (size_t d = 0; d < c.devices.size(); ++d) {
      const bool mine = slot_of[d] == static_cast<int>(s);
      if (mine && (c.devices[d].taken || !Matches(spec, c.devices[d]))) return false;
      if (spec.all && !mine && Matches(spec, c.devices[d])) return false;
      assigned += mine ? 1 : 0;
    }
    if (spec.all ? assigned == 0 : assigned != spec.count) return false;
  }
  for (const ConstraintModel& constraint : c.constraints) {
    int numa = -2;
    for (size_t d = 0; d < c.devices.size(); ++d) {
      if (slot_of[d] < 0) continue;
      const size_t s = static_cast<size_t>(slot_of[d]);
      if (!Applies(constraint, c.slots[s], choice[s])) continue;
      if (c.devices[d].numa < 0 || (numa != -2 && numa != c.devices[d].numa)) return false;
      numa = c.devices[d].numa;
    }
  }
  return true;
}

bool ExistsAssignment(const Case& c, std::vector<int>& slot_of, size_t d,
                      const std::vector<size_t>& choice) {
  if (d == c.devices.size()) return Valid(c, slot_of, choice);
  for (int s = -1; s < static_cast<int>(c.slots.size()); ++s) {
    slot_of[d] = s;
    if (ExistsAssignment(c, slot_of, d + 1, choice)) return true;
  }
  slot_of[d] = -1;
  return false;
}

bool BruteForceFinds(const Case& c) {
  std::vector<size_t> choice(c.slots.size(), 0);
  std::vector<int> slot_of(c.devices.size(), -1);
  while (true) {
    if (ExistsAssignment(c, slot_of, 0, choice)) return true;
    size_t s = 0;
    while (s < c.slots.size() && ++choice[s] == c.slots[s].specs.size()) choice[s++] = 0;
    if (s == c.slots.size()) return false;
  }
}

api::DeviceRequestSpec ToSpec(const SpecModel& model) {
  std::vector<std::string> selectors;
  if (model.models != 0) {
    std::string list;
    for (int m = 0; m < 3; ++m) {
      if ((model.models >> m & 1) == 0) continue;
      absl::StrAppend(&list, list.empty() ? "" : ", ", "\"", kModels[m], "\"");
    }
    selectors.push_back(absl::StrCat(R"(device.attributes["example.com"].model in [)", list, "]"));
  }
  const std::string device_class = model.driver_a_only ? "only-a" : "any";
  return model.all ? AllSpec(device_class, selectors) : Spec(device_class, model.count, selectors);
}

SpecModel RandomSpec(std::mt19937& random) {
  SpecModel spec;
  spec.driver_a_only = random() % 3 == 0;
  spec.models = random() % 2 == 0 ? 0 : 1 + random() % 7;
  spec.all = random() % 7 == 0;
  spec.count = 1 + random() % 2;
  return spec;
}

void AddDevices(std::mt19937& random, Case& c, World& world) {
  const std::string drivers[] = {"drv-a", "drv-b"};
  const int device_count = 1 + static_cast<int>(random() % 5);
  std::vector<SliceBuilder> slices;
  for (int p = 0; p < 4; ++p) {
    slices.emplace_back(absl::StrCat("slice-", p), drivers[p / 2], absl::StrCat("pool-", p % 2));
    slices.back().Node("node-1").Generation(2);
  }
  for (int i = 0; i < device_count; ++i) {
    const int p = static_cast<int>(random() % 4);
    DeviceModel device;
    device.driver_a = p < 2;
    device.model = static_cast<int>(random() % 3);
    device.numa = random() % 5 == 0 ? -1 : static_cast<int>(random() % 2);
    device.taken = random() % 5 == 0;
    device.id = {api::Intern(drivers[p / 2]), api::Intern(absl::StrCat("pool-", p % 2)),
                 api::Intern(absl::StrCat("dev-", i))};
    std::vector<api::DeviceAttribute> attributes = {
        StringAttribute("example.com/model", kModels[device.model])};
    if (device.numa >= 0) attributes.push_back(IntAttribute("example.com/numa", device.numa));
    slices[p].Add(MakeDevice(absl::StrCat("dev-", i), attributes));
    if (device.taken) world.allocated.insert(device.id);
    c.devices.push_back(device);
  }
  for (const SliceBuilder& slice : slices) world.slices.push_back(slice.Build());
  // An outdated generation whose device must never be picked.
  world.slices.push_back(
      SliceBuilder("stale", "drv-a", "pool-0")
          .Node("node-1")
          .Generation(1)
          .Add(MakeDevice("stale-device", {StringAttribute("example.com/model", "a")}))
          .Build());
}

void AddClaims(std::mt19937& random, Case& c, World& world) {
  const int claim_count = 1 + static_cast<int>(random() % 2);
  for (int k = 0; k < claim_count; ++k) {
    std::vector<api::DeviceRequest> requests;
    const int request_count = 1 + static_cast<int>(random() % 2);
    for (int r = 0; r < request_count; ++r) {
      SlotModel slot{static_cast<uint32_t>(k), absl::StrCat("req-", r), {}, {}};
      if (random() % 4 == 0) {
        std::vector<std::pair<std::string, api::DeviceRequestSpec>> subs;
        for (int s = 0; s < 2; ++s) {
          slot.subs.push_back(absl::StrCat("sub-", s));
          slot.specs.push_back(RandomSpec(random));
          subs.emplace_back(slot.subs.back(), ToSpec(slot.specs.back()));
        }
        requests.push_back(FirstAvailable(slot.request, subs));
      } else {
        slot.specs.push_back(RandomSpec(random));
        requests.push_back(Exactly(slot.request, ToSpec(slot.specs.back())));
      }
      c.slots.push_back(slot);
    }
    std::vector<api::DeviceConstraint> constraints;
    if (random() % 5 < 2) {
      ConstraintModel constraint{static_cast<uint32_t>(k), {}};
      if (random() % 2 == 0) constraint.requests.push_back(absl::StrCat("req-", random() % 2));
      constraints.push_back(MatchAttribute("example.com/numa", constraint.requests));
      c.constraints.push_back(constraint);
    }
    world.claims.push_back(MakeClaim(absl::StrCat("claim-", k), requests, constraints));
  }
}

// Maps the allocator's answer back onto the model: the slot of every device, the alternative of
// every slot. Fails the test on a device used twice or unknown.
void CheckAnswer(const Case& c, const std::vector<ClaimAllocation>& answer) {
  std::vector<int> slot_of(c.devices.size(), -1);
  std::vector<size_t> choice(c.slots.size(), 0);
  for (const ClaimAllocation& claim : answer) {
    for (const api::DeviceRequestAllocationResult& result : claim.allocation.devices) {
      size_t d = 0;
      while (d < c.devices.size() &&
             !(c.devices[d].id == DeviceId{result.driver, result.pool, result.device})) {
        ++d;
      }
      INFO("device " << DeviceIdText({result.driver, result.pool, result.device}));
      REQUIRE(d < c.devices.size());
      REQUIRE(slot_of[d] == -1);
      for (size_t s = 0; s < c.slots.size(); ++s) {
        const SlotModel& slot = c.slots[s];
        if (slot.claim != claim.claim_index) continue;
        for (size_t alt = 0; alt < slot.specs.size(); ++alt) {
          const std::string name =
              slot.subs.empty() ? slot.request : slot.request + "/" + slot.subs[alt];
          if (name != result.request) continue;
          slot_of[d] = static_cast<int>(s);
          choice[s] = alt;
        }
      }
      REQUIRE(slot_of[d] >= 0);
    }
  }
  CHECK(Valid(c, slot_of, choice));
}

TEST_CASE("random allocations hold up and fail only when none exists", "[dra]") {
  std::mt19937 random(20261125);
  int allocated = 0;
  int refused = 0;
  for (int iteration = 0; iteration < 3000; ++iteration) {
    Case c;
    World world;
    world.classes.push_back(MakeClass("any"));
    world.classes.push_back(MakeClass("only-a", {R"(device.driver == "drv-a")"}));
    AddDevices(random, c, world);
    AddClaims(random, c, world);
    INFO("iteration " << iteration);
    auto answer = world.Run();
    const bool exists = BruteForceFinds(c);
    if (answer.ok()) {
      ++allocated;
      REQUIRE(answer->size() == world.claims.size());
      CheckAnswer(c, *answer);
    } else {
      ++refused;
      CHECK(answer.status().message() == "cannot allocate all claims");
      CHECK_FALSE(exists);
    }
  }
  // Both outcomes are exercised.
  CHECK(allocated > 500);
  CHECK(refused > 500);
}

}  // namespace
}  // namespace kubesched::plugins::dynamic_resources
