#pragma once

// The allocator of structured parameters: given the claims of one pod, the device classes, the
// devices one node is offered and the devices already taken, it finds devices for every request
// of every claim, as upstream's structured allocator does:
//
// - a request asks for `count` devices (ExactCount) or for every matching device on the node
//   (All: at least one, none of them taken); `firstAvailable` sub-requests are tried in order;
// - a device matches a request when every selector of its class and of the request is true; a
//   selector that fails to compile or to evaluate stops the allocation with the error;
// - matchAttribute constraints make the devices of the named requests (all when none are named)
//   agree on an attribute they all must have;
// - a device serves one request of one claim at most, unless the request asks for admin access,
//   which may use any matching device that no other request of its own claim uses, taken or
//   not (a device it uses is then in use for the requests without admin access that follow);
// - the devices of one claim are 32 at most: an alternative of a firstAvailable request that
//   would go past them is passed over;
// - pools are gathered as NodeDevices describes: incomplete and invalid pools offer no devices,
//   and an All request over one is an error; when no allocation is found and a pool was invalid,
//   the node fails with kInvalidPools instead;
// - the search backtracks over devices in NodeDevices' order, so the answer is deterministic: the
//   first allocation in that order.
//
// Unlike upstream, an All request that cannot get its devices with the choices made so far for
// earlier requests (one is taken, or a constraint disagrees) makes the search try other choices
// instead of giving up with an error; this finds an allocation in a few cases where upstream
// reports none, never the reverse, and otherwise reports kCannotAllocateAllClaims where upstream
// says "cannot add device ... because a claim constraint would not be satisfied". Slices that
// select nodes per device are not offered. The search's cost grows with the combinations of
// matching devices when no allocation exists; a deadline bounds it (upstream's filterTimeout).
//
// The work is split as a scheduler needs it: PreparedClaims holds what depends on the pod alone
// (classes, compiled selectors, constraints), built once per pod; an Allocator searches one node
// at a time with it, reusing its vectors, so that the per-node search allocates nothing and
// builds no strings; only the chosen node's result is built (Results).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "plugins/dynamic_resources/node_devices.h"
#include "plugins/dynamic_resources/selector_cache.h"
#include "scheduler/api/dra.h"
#include "scheduler/cel/device_view.h"

namespace kubesched::plugins::dynamic_resources {

// Upstream's limits per claim (AllocationResultsMaxSize, DeviceConstraintsMaxSize).
inline constexpr int64_t kMaxDevicesPerClaim = 32;
inline constexpr size_t kMaxConstraintsPerClaim = 32;

// The message when the node lacks devices for the claims (upstream's Filter reason).
inline constexpr std::string_view kCannotAllocateAllClaims = "cannot allocate all claims";
// The message when it lacks them and one of its pools names a device twice (upstream's).
inline constexpr std::string_view kInvalidPools = "invalid resource pools were encountered";

using DeviceIdSet = absl::flat_hash_set<DeviceId>;

struct AllocationInput {
  // The pod's claims; those with an allocation already are left alone.
  absl::Span<const api::ResourceClaim* const> claims;
  // Device classes by name; null when there is no such class.
  absl::FunctionRef<const api::DeviceClass*(std::string_view)> find_class;
  // Devices allocated to other claims, written or only assumed by the scheduler (Allocate only;
  // Search takes a function).
  const DeviceIdSet* allocated = nullptr;
};

struct ClaimAllocation {
  size_t claim_index = 0;  // in AllocationInput::claims
  api::AllocationResult allocation;
};

// Whether a device is allocated to another claim.
using IsAllocated = absl::FunctionRef<bool(const DeviceId&)>;

// Claims that come down to one request for `count` devices, without admin access or constraints:
// any `count` free devices that match serve them, so whether a node can is a matter of counting
// (count_fit.h). `selectors` are the class's, then the request's, in the order the search
// evaluates them.
struct CountRequest {
  int64_t count = 0;
  absl::Span<const CompiledSelector* const> selectors;
};

// The claims of one pod as the search reads them on every node: each request with its class and
// its compiled selectors, and the claims' constraints. Built once per pod (Prepare), immutable
// afterwards, and read by any number of threads searching node by node. Points into the claims
// and classes it was prepared from, which must outlive it.
class PreparedClaims {
 public:
  // Prepares the claims of `input` without an allocation. Failures: NotFound when a request
  // names a class that does not exist; InvalidArgument for a selector that does not compile and
  // for claims upstream refuses (too many devices or constraints, a request of neither kind).
  static absl::StatusOr<PreparedClaims> Prepare(const AllocationInput& input,
                                                SelectorCache& selectors);

  // The claims as one CountRequest, when they are one (one claim with one request, or one
  // sub-request, for 1 to kMaxDevicesPerClaim devices, no admin access, no constraints); valid
  // while these claims are.
  std::optional<CountRequest> AsCountRequest() const;

  // The number of claims to allocate.
  size_t size() const { return claims_.size(); }
  bool empty() const { return claims_.empty(); }

 private:
  friend class Allocator;

  // One request, or one sub-request of a firstAvailable request.
  struct Spec {
    uint32_t claim = 0;  // index in claims_
    uint32_t slot = 0;   // index in slots_
    const api::DeviceRequest* request = nullptr;
    const api::DeviceSubRequest* sub = nullptr;  // null for an `exactly` request
    const api::DeviceRequestSpec* spec = nullptr;
    const api::DeviceClass* device_class = nullptr;
    uint32_t first_program = 0;  // class selectors, then claim selectors, in programs_
    uint32_t class_programs = 0;
    uint32_t claim_programs = 0;
    int64_t count = 0;             // ExactCount: devices to pick
    uint32_t constraint_mask = 0;  // which constraints of the claim apply
  };
  // A request of a claim: its specs, one, or one per sub-request in order of preference.
  struct Slot {
    uint32_t first_spec = 0;
    uint32_t spec_count = 0;
  };
  struct ClaimState {
    const api::ResourceClaim* claim = nullptr;
    size_t input_index = 0;
    uint32_t first_constraint = 0;
    uint32_t constraint_count = 0;
  };

  absl::Status PrepareClaim(const api::ResourceClaim& claim, size_t input_index,
                            const AllocationInput& input, SelectorCache& selectors);
  absl::Status PrepareSpec(Spec spec, const AllocationInput& input, SelectorCache& selectors);
  absl::Status AddPrograms(const Spec& spec, bool of_class, SelectorCache& selectors);
  uint32_t ConstraintMask(const ClaimState& claim, const Spec& spec) const;
  std::string Describe(const Spec& spec) const;
  std::string SelectorOwner(const Spec& spec, bool of_class) const;

  std::vector<ClaimState> claims_;
  std::vector<api::Symbol> constraint_attributes_;  // per constraint of every claim
  std::vector<Spec> specs_;
  std::vector<Slot> slots_;
  std::vector<const CompiledSelector*> programs_;
};

// The search of one node's devices for a pod's prepared claims. Not thread-safe: it keeps its
// working vectors between calls, so that searching node after node reuses them and allocates
// nothing once they are large enough. Use one per thread.
class Allocator {
 public:
  Allocator() = default;
  // For Allocate, which prepares the claims itself.
  explicit Allocator(SelectorCache* selectors) : selectors_(selectors) {}

  // Prepares the claims, searches the node and builds the result: one allocation per claim
  // without one, in the order of input.claims. Failures: ResourceExhausted
  // kCannotAllocateAllClaims (or kInvalidPools) when the node's devices do not suffice, and those
  // of PreparedClaims::Prepare and Search ("claim ns/name, request gpu: class gpu-class: selector
  // #0: CEL runtime error: 1:36: no such key: model; expression: ...").
  absl::StatusOr<std::vector<ClaimAllocation>> Allocate(const AllocationInput& input,
                                                        const NodeDevices& node);

  // Whether `node`'s devices that `allocated` leaves free suffice for `claims`; Results() then
  // builds what was found. Failures: InvalidArgument for a selector that fails on a device and
  // for an All request over a pool that is being updated or invalid; DeadlineExceeded when the
  // search runs
  // past `deadline` (checked every few thousand devices tried).
  absl::StatusOr<bool> Search(const PreparedClaims& claims, const NodeDevices& node,
                              IsAllocated allocated, absl::Time deadline = absl::InfiniteFuture());
  // The allocation the last Search that returned true found, one per prepared claim, with the
  // classes' and the claims' device configuration. Valid while the claims and the node's devices
  // of that search are.
  std::vector<ClaimAllocation> Results() const;
  // The devices of that allocation, in the order they were picked, without building it.
  void ForEachPicked(absl::FunctionRef<void(const NodeDevices::DeviceRef&)> fn) const {
    for (const Pick& pick : picks_) fn(node_->devices()[pick.device]);
  }

 private:
  using Spec = PreparedClaims::Spec;
  struct Constraint {
    const api::DeviceAttribute* value = nullptr;  // the first device's, while count > 0
    uint32_t count = 0;
  };
  struct Pick {
    uint32_t spec = 0;
    uint32_t device = 0;
  };
  enum class Outcome : uint8_t { kDone, kFail, kError };

  absl::Status Begin(const PreparedClaims& claims, const NodeDevices& node, IsAllocated allocated);
  absl::Status CollectAllDevices(uint32_t spec_index);
  void CountRestOfClaims();
  bool IsAll(const Spec& spec) const {
    return spec.spec->allocation_mode == api::DeviceAllocationMode::kAll;
  }

  Outcome Step(size_t slot);
  Outcome Fill(size_t slot, uint32_t spec, int64_t picked, uint32_t next_device);
  // Whether the device matches the spec's selectors; nullopt after an error (kept in error_).
  std::optional<bool> Matches(uint32_t spec, uint32_t device);
  absl::Status Evaluate(const Spec& spec, uint32_t device, bool& matches);
  bool Take(uint32_t spec, uint32_t device);
  void Release(uint32_t spec, uint32_t device);
  bool Available(const Spec& spec, uint32_t device) const;
  bool PickedForClaim(uint32_t claim, uint32_t device) const;
  bool OverClaimLimit(size_t slot, uint32_t spec) const;
  bool OutOfTime();
  void FillView(uint32_t device);
  void AddConfig(size_t claim, api::AllocationResult& allocation) const;

  SelectorCache* selectors_ = nullptr;
  const PreparedClaims* claims_ = nullptr;
  const NodeDevices* node_ = nullptr;
  std::vector<Constraint> constraints_;
  std::vector<int64_t> spec_count_;         // devices to pick per spec (All: the node's matches)
  std::vector<uint32_t> first_all_device_;  // All: where the spec's devices start in all_devices_
  std::vector<uint32_t> all_devices_;
  std::vector<uint8_t> allocated_;      // per device: allocated to another claim
  std::vector<uint8_t> picked_;         // per device: how many requests of this search use it
  std::vector<int64_t> claim_picked_;   // per claim: devices picked so far
  std::vector<int64_t> rest_of_claim_;  // per slot: the fewest devices the claim's later slots need
  std::vector<uint8_t> matches_;        // per spec and device: 0 unknown, 1 match, 2 no match
  std::vector<Pick> picks_;
  std::vector<cel::DeviceAttribute> view_attributes_;
  std::vector<cel::DeviceCapacity> view_capacity_;
  absl::Time deadline_ = absl::InfiniteFuture();
  uint32_t tries_ = 0;
  absl::Status error_;
};

}  // namespace kubesched::plugins::dynamic_resources
