#include "plugins/dynamic_resources/dynamic_resources.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "plugins/dynamic_resources/allocator.h"
#include "plugins/dynamic_resources/count_fit.h"
#include "plugins/dynamic_resources/node_devices.h"
#include "plugins/dynamic_resources/pod_claims.h"
#include "plugins/helper/args.h"
#include "plugins/names.h"
#include "scheduler/framework/picked_devices.h"
#include "scheduler/util/log.h"
#include "scheduler/util/strings.h"

namespace kubesched::plugins {
namespace {

using dynamic_resources::Allocator;
using dynamic_resources::ClaimAllocation;
using dynamic_resources::CountFit;
using dynamic_resources::DeviceId;
using dynamic_resources::NodeDevices;
using dynamic_resources::PreparedClaims;
using framework::Status;

constexpr std::string_view kNotAvailable = "resourceclaim not available on the node";
constexpr std::string_view kTimedOut = "timed out trying to allocate devices";
constexpr std::string_view kInUse = "resourceclaim in use";
// PostFilter's answers (upstream's).
constexpr std::string_view kNoClaimsToDeallocate = "no new claims to deallocate";
constexpr std::string_view kDeallocated = "deallocation of ResourceClaim completed";
constexpr std::string_view kStillNotSchedulable = "still not schedulable";
// What explain says instead of kDeallocated: it writes nothing.
constexpr std::string_view kWouldDeallocate = "a ResourceClaim would be deallocated";

// What PreFilter worked out for the pod, read by every Filter and by Reserve. Immutable once
// built, so preemption's copies of the cycle state share it. The prepared claims and `dra` point
// into the cycle's snapshot: valid until the scheduling cycle ends (Reserve is the last to read
// them); the claims themselves are held, for PreBind.
struct PodClaims {
  std::vector<std::shared_ptr<const api::ResourceClaim>> claims;
  // Per claim: the node selector of its allocation, when it has one (null otherwise).
  std::vector<const api::NodeSelector*> available_on;
  // The claims without an allocation, prepared for the search; empty when every claim is
  // allocated already.
  std::vector<const api::ResourceClaim*> to_allocate;
  std::optional<PreparedClaims> prepared;
  // The prepared claims as one request for any N matching devices, when they are: most nodes are
  // then answered by counting (count_fit.h) instead of searching.
  std::optional<dynamic_resources::CountRequest> count_request;
  const framework::DraState* dra = nullptr;
  const framework::Snapshot* snapshot = nullptr;
};

// What Reserve decided: per claim (as in PodClaims::claims), its new allocation, if any.
struct Decision {
  std::vector<std::optional<api::AllocationResult>> allocations;
};

// A device preemption's what-if has freed, and the victim whose claim held it.
struct FreedDevice {
  std::string pod_key;
  DeviceId device;
};

struct CycleData final : framework::StateData {
  std::shared_ptr<const PodClaims> pod_claims;
  std::shared_ptr<const Decision> decision;  // from Reserve
  // The claims PreBind reserved for the pod, as the server stored them: a binding cycle that
  // fails after PreBind takes the pod out of their reservedFor again (Unreserve).
  std::vector<std::shared_ptr<const api::ResourceClaim>> reserved;
  // Preemption's what-if copies only (RemovePod): the devices of claims only victims held, free
  // to the search on that copy's node. Empty in the cycle's own state.
  std::vector<FreedDevice> freed;

  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<CycleData>(*this);
  }
};

framework::CycleState::Key Key() {
  static const framework::CycleState::Key key =
      framework::CycleState::AllocateKey(names::kDynamicResources);
  return key;
}

// The search's working memory, one per thread that filters: it grows to the largest node and
// pod seen and is reused from then on.
struct Scratch {
  NodeDevices devices;
  Allocator allocator;
};

Scratch& ThisThreadScratch() {
  thread_local Scratch scratch;
  return scratch;
}

// Upstream's choice of a claim PostFilter deallocates: an allocated claim whose node selector
// rejected a node the Filter phase tried (`resourceclaim not available on the node`), reserved
// for no pod or for this pod alone. The first in the pod's order (upstream picks at random).
std::optional<size_t> DeallocatableClaim(const PodClaims& claims, const api::Pod& pod,
                                         absl::Span<const framework::NodeStatus> filtered) {
  std::vector<bool> unavailable(claims.claims.size(), false);
  for (const framework::NodeStatus& rejected : filtered) {
    const framework::Status& status = rejected.status;
    if (status.plugin() != names::kDynamicResources || status.reasons().empty() ||
        status.reasons().front() != kNotAvailable || rejected.node->node() == nullptr) {
      continue;
    }
    const api::Node& node = *rejected.node->node();
    for (size_t i = 0; i < claims.claims.size(); ++i) {
      const api::NodeSelector* selector = claims.available_on[i];
      if (selector != nullptr && !selector->Matches(node.meta.labels, node.meta.name)) {
        unavailable[i] = true;
      }
    }
  }
  for (size_t i = 0; i < claims.claims.size(); ++i) {
    const std::vector<api::ResourceClaimConsumer>& consumers = claims.claims[i]->reserved_for;
    const bool only_this_pod =
        consumers.size() == 1 && dynamic_resources::ReservedForPod(*claims.claims[i], pod);
    if (unavailable[i] && (consumers.empty() || only_this_pod)) return i;
  }
  return std::nullopt;
}

// Gathers `node`'s devices into the thread's scratch and searches them for the pod's claims.
// `freed`: devices preemption's what-if counts as free although a claim holds them.
absl::StatusOr<bool> SearchNode(const PodClaims& claims, const api::Node& node,
                                absl::Duration timeout, Scratch& scratch,
                                const std::vector<FreedDevice>& freed = {}) {
  const framework::DraState& dra = *claims.dra;
  const std::string& name = node.meta.name;
  scratch.devices.Gather(dra.NodeSlices(name), *dra.shared_slices, name, node.meta.labels, dra);
  const absl::Time deadline =
      timeout > absl::ZeroDuration() ? absl::Now() + timeout : absl::InfiniteFuture();
  // Devices come pool by pool: one look-up per pool, then its few held devices are searched.
  framework::PoolId pool;
  bool pool_known = false;
  const framework::PoolAllocations* held = nullptr;  // null: none in `pool`
  const auto held_by_claim = [&](const DeviceId& id) {
    if (!pool_known || id.driver != pool.driver || id.pool != pool.pool) {
      pool = {id.driver, id.pool};
      pool_known = true;
      held = dra.allocated_by_pool.Find(pool);
    }
    if (held == nullptr) return false;
    const auto it = std::lower_bound(held->begin(), held->end(), id.device,
                                     [](const std::pair<api::Symbol, int32_t>& entry,
                                        api::Symbol device) { return entry.first < device; });
    return it != held->end() && it->first == id.device;
  };
  const auto allocated = [&](const DeviceId& id) {
    return held_by_claim(id) &&
           std::none_of(freed.begin(), freed.end(),
                        [&id](const FreedDevice& device) { return device.device == id; });
  };
  return scratch.allocator.Search(*claims.prepared, scratch.devices, allocated, deadline);
}

// The verdict on a node whose devices cannot serve the claims: Unschedulable, which preemption
// may lift, when they would with no device taken (other pods' claims hold what is missing, and
// preempting them may free it); UnschedulableAndUnresolvable, as upstream, when even that would
// not do. The second search runs only on nodes the first one failed, on the devices that one
// gathered into `scratch`.
Status CannotAllocate(const PodClaims& claims, Scratch& scratch, absl::Duration timeout) {
  const absl::Time deadline =
      timeout > absl::ZeroDuration() ? absl::Now() + timeout : absl::InfiniteFuture();
  const absl::StatusOr<bool> untaken = scratch.allocator.Search(
      *claims.prepared, scratch.devices, [](const DeviceId&) { return false; }, deadline);
  if (untaken.ok() && *untaken) {
    return Status::Unschedulable(dynamic_resources::kCannotAllocateAllClaims);
  }
  return Status::Unresolvable(dynamic_resources::kCannotAllocateAllClaims);
}

// What other plugins read of the pod's devices (framework::PickedDevices): the search of Filter,
// repeated on the caller's thread.
class Picks final : public framework::PickedDevices {
 public:
  Picks(std::shared_ptr<const PodClaims> claims, absl::Duration timeout)
      : claims_(std::move(claims)), timeout_(timeout) {}
  void ForEachDevice(
      const framework::NodeInfo& node,
      absl::FunctionRef<void(const api::ResourceSlice&, const api::Device&)> fn) const override {
    if (node.node() == nullptr || !claims_->prepared.has_value()) return;
    Scratch& scratch = ThisThreadScratch();
    const absl::StatusOr<bool> found = SearchNode(*claims_, *node.node(), timeout_, scratch);
    if (!found.ok() || !*found) return;
    scratch.allocator.ForEachPicked(
        [&fn](const NodeDevices::DeviceRef& ref) { fn(*ref.slice, *ref.device); });
  }
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<Picks>(claims_, timeout_);
  }

 private:
  std::shared_ptr<const PodClaims> claims_;
  absl::Duration timeout_;
};

// Upstream's validateDeviceClass for every request and sub-request of a claim to allocate.
Status CheckClasses(const api::ResourceClaim& claim, const framework::DraState& dra) {
  const auto check = [&dra](const std::string& class_name, std::string_view request) {
    if (class_name.empty()) {
      return Status::Error(
          absl::StrCat("request ", util::Absl(request), ": unsupported request type"));
    }
    if (dra.Class(class_name) == nullptr) {
      return Status::Unresolvable(api::StableText(absl::StrCat(
          "request ", util::Absl(request), ": device class ", class_name, " does not exist")));
    }
    return Status::Success();
  };
  for (const api::DeviceRequest& request : claim.spec.requests) {
    if (request.exactly.has_value()) {
      Status status = check(request.exactly->device_class_name, request.name);
      if (!status.IsSuccess()) return status;
      continue;
    }
    for (const api::DeviceSubRequest& sub : request.first_available) {
      Status status = check(sub.spec.device_class_name, absl::StrCat(request.name, "/", sub.name));
      if (!status.IsSuccess()) return status;
    }
  }
  return Status::Success();
}

// Whether the pod may use each claim, and which it must allocate (upstream's PreFilter checks).
Status SortClaims(const framework::PodInfo& pod, const framework::DraState& dra,
                  PodClaims& claims) {
  const api::Pod& spec = pod.get();
  for (const auto& claim : claims.claims) {
    // The allocation another pod's Reserve made shows in the snapshot already, but until its
    // write ends no other pod may count on it (upstream's in-flight allocations).
    const std::string key = claim->Key();
    if (const std::string* other = dra.PendingAllocation(key);
        other != nullptr && *other != pod.key) {
      return Status::Unresolvable(api::StableText(
          absl::StrCat("resource claim ", key, " is in the process of being allocated")));
    }
    const api::NodeSelector* available_on = nullptr;
    if (claim->allocation.has_value()) {
      if (claim->reserved_for.size() >= api::kResourceClaimReservedForMaxSize &&
          !dynamic_resources::ReservedForPod(*claim, spec)) {
        return Status::Unresolvable(kInUse);
      }
      if (claim->allocation->node_selector.has_value()) {
        available_on = &*claim->allocation->node_selector;
      }
    } else {
      if (Status status = CheckClasses(*claim, dra); !status.IsSuccess()) return status;
      claims.to_allocate.push_back(claim.get());
    }
    claims.available_on.push_back(available_on);
  }
  return Status::Success();
}

}  // namespace

DynamicResources::DynamicResources(absl::Duration filter_timeout,
                                   framework::ClaimAssumeCache* cache,
                                   framework::ClaimStatusWriter* writer)
    : filter_timeout_(filter_timeout), cache_(cache), writer_(writer) {}

std::string_view DynamicResources::Name() const { return names::kDynamicResources; }

framework::ClusterEventSet DynamicResources::EventsToRegister() const {
  return framework::kDefaultEvents |
         framework::EventBit(framework::ClusterEvent::kResourceClaimChanged) |
         framework::EventBit(framework::ClusterEvent::kDeviceInventoryChanged);
}

Status DynamicResources::PreEnqueue(const framework::PodInfo& pod) const {
  if (pod.get().spec.resource_claims.empty()) return Status::Success();
  return dynamic_resources::CheckClaimNames(pod.get());
}

framework::PreFilterOutcome DynamicResources::PreFilter(framework::CycleState& state,
                                                        const framework::PodInfo& pod,
                                                        const framework::Snapshot& snapshot) {
  // Most pods have no claims: answer them before anything else is looked at.
  if (pod.get().spec.resource_claims.empty()) return {Status::Skip(), {}};
  const framework::DraState& dra = snapshot.dra();
  dynamic_resources::ResolvedClaims resolved = dynamic_resources::ResolveClaims(pod.get(), dra);
  if (!resolved.status.IsSuccess()) return {std::move(resolved.status), {}};
  if (resolved.claims.empty()) return {Status::Skip(), {}};
  auto claims = std::make_shared<PodClaims>();
  claims->claims = std::move(resolved.claims);
  claims->dra = &dra;
  claims->snapshot = &snapshot;
  if (Status status = SortClaims(pod, dra, *claims); !status.IsSuccess()) {
    return {std::move(status), {}};
  }
  if (!claims->to_allocate.empty()) {
    // A named lambda: the FunctionRef in the input must not outlive what it refers to.
    const auto find_class = [&dra](std::string_view name) { return dra.Class(name); };
    const dynamic_resources::AllocationInput input{claims->to_allocate, find_class, nullptr};
    absl::StatusOr<PreparedClaims> prepared = PreparedClaims::Prepare(input, selectors_);
    if (!prepared.ok()) return {Status::Error(util::Std(prepared.status().message())), {}};
    claims->prepared = *std::move(prepared);
    claims->count_request = claims->prepared->AsCountRequest();
  }
  std::shared_ptr<const PodClaims> shared = std::move(claims);
  if (shared->prepared.has_value()) {
    state.Write(framework::PickedDevicesKey(), std::make_unique<Picks>(shared, filter_timeout_));
  }
  framework::PreFilterResult result;
  if (shared->count_request.has_value()) {
    result.sure_rejections = too_few_devices_.Find(*shared->count_request, snapshot);
  }
  auto data = std::make_unique<CycleData>();
  data->pod_claims = std::move(shared);
  state.Write(Key(), std::move(data));
  return {Status::Success(), std::move(result)};
}

Status DynamicResources::Filter(const framework::CycleState& state,
                                const framework::PodInfo& /*pod*/,
                                const framework::NodeInfo& node) const {
  const auto* data = state.Read<CycleData>(Key());
  if (data == nullptr || data->pod_claims == nullptr) {
    return Status::Error("DynamicResources: no PreFilter state");
  }
  if (node.node() == nullptr) return Status::Error("node not found");
  const PodClaims& claims = *data->pod_claims;
  const api::LabelSet& labels = node.node()->meta.labels;
  for (const api::NodeSelector* selector : claims.available_on) {
    if (selector != nullptr && !selector->Matches(labels, node.name())) {
      return Status::Unresolvable(kNotAvailable);
    }
  }
  if (!claims.prepared.has_value()) return Status::Success();
  // Preemption's what-if frees devices the summary counts as held: those copies search.
  if (claims.count_request.has_value() && data->freed.empty()) {
    switch (dynamic_resources::FitByCount(*claims.count_request, *claims.dra, node)) {
      case CountFit::kFits:
        return Status::Success();
      case CountFit::kTaken:
        return Status::Unschedulable(dynamic_resources::kCannotAllocateAllClaims);
      case CountFit::kTooFew:
        return Status::Unresolvable(dynamic_resources::kCannotAllocateAllClaims);
      case CountFit::kSearch:
        break;
    }
  }
  absl::StatusOr<bool> found =
      SearchNode(claims, *node.node(), filter_timeout_, ThisThreadScratch(), data->freed);
  if (!found.ok()) {
    if (absl::IsDeadlineExceeded(found.status())) return Status::Unresolvable(kTimedOut);
    return Status::Error(util::Std(found.status().message()));
  }
  if (!*found) {
    if (ThisThreadScratch().devices.HasInvalidPool()) {
      return Status::Unresolvable(dynamic_resources::kInvalidPools);
    }
    return CannotAllocate(claims, ThisThreadScratch(), filter_timeout_);
  }
  return Status::Success();
}

Status DynamicResources::RemovePod(framework::CycleState& state, const framework::PodInfo& /*pod*/,
                                   const framework::PodInfo& removed,
                                   const framework::NodeInfo& /*node*/) const {
  if (removed.get().spec.resource_claims.empty()) return Status::Success();
  auto* data = state.ReadMutable<CycleData>(Key());
  // A pod whose claims are all allocated already searches nothing: freed devices cannot help it.
  if (data == nullptr || data->pod_claims == nullptr || !data->pod_claims->prepared.has_value()) {
    return Status::Success();
  }
  const dynamic_resources::ResolvedClaims victim =
      dynamic_resources::ResolveClaims(removed.get(), *data->pod_claims->dra);
  if (!victim.status.IsSuccess()) return Status::Success();
  for (const auto& claim : victim.claims) {
    // A claim other pods use too keeps its devices when the victim goes; so does one the
    // ResourceClaim controller would not release (the victim is not among its consumers).
    if (!claim->allocation.has_value() || claim->reserved_for.size() != 1 ||
        !dynamic_resources::ReservedForPod(*claim, removed.get())) {
      continue;
    }
    for (const api::DeviceRequestAllocationResult& result : claim->allocation->devices) {
      if (result.admin_access) continue;
      data->freed.push_back({removed.key, {result.driver, result.pool, result.device}});
    }
  }
  return Status::Success();
}

Status DynamicResources::AddPod(framework::CycleState& state, const framework::PodInfo& /*pod*/,
                                const framework::PodInfo& added,
                                const framework::NodeInfo& /*node*/) const {
  if (added.get().spec.resource_claims.empty()) return Status::Success();
  auto* data = state.ReadMutable<CycleData>(Key());
  if (data == nullptr) return Status::Success();
  std::erase_if(data->freed,
                [&added](const FreedDevice& freed) { return freed.pod_key == added.key; });
  return Status::Success();
}

framework::PostFilterOutcome DynamicResources::PostFilter(
    framework::CycleState& state, const framework::PodInfo& pod,
    const framework::Snapshot& /*snapshot*/, absl::Span<const framework::NodeStatus> filtered,
    const framework::PostFilterHost& /*host*/) {
  framework::PostFilterOutcome outcome;
  // A pod without claims: nothing to say (upstream adds "no new claims to deallocate" to every
  // pending pod's message).
  if (pod.get().spec.resource_claims.empty()) {
    outcome.status = Status::Skip();
    return outcome;
  }
  const auto* data = state.Read<CycleData>(Key());
  if (data == nullptr || data->pod_claims == nullptr) {
    outcome.status = Status::Unschedulable(kNoClaimsToDeallocate);
    return outcome;
  }
  const PodClaims& claims = *data->pod_claims;
  const std::optional<size_t> index = DeallocatableClaim(claims, pod.get(), filtered);
  if (!index.has_value()) {
    outcome.status = Status::Unschedulable(kStillNotSchedulable);
    return outcome;
  }
  outcome.status = Status::Unschedulable(state.dry_run() ? kWouldDeallocate : kDeallocated);
  if (state.dry_run() || writer_ == nullptr) return outcome;
  outcome.writes.push_back(
      [writer = writer_, cache = cache_, claim = claims.claims[*index], pod_key = pod.key] {
        auto stored = writer->Deallocate(*claim);
        if (!stored.ok()) {
          // Nothing is lost: the claim keeps its allocation, and the pod's next attempt tries
          // again.
          util::LogWarning(absl::StrCat("DynamicResources: deallocating resourceclaim ",
                                        claim->Key(), " for pod ", pod_key, ": ",
                                        util::Absl(util::Std(stored.status().message()))));
          return;
        }
        if (cache != nullptr) cache->ClaimWritten(pod_key, *std::move(stored));
      });
  return outcome;
}

Status DynamicResources::Reserve(framework::CycleState& state, const framework::PodInfo& pod,
                                 std::string_view node_name) {
  auto* data = state.ReadMutable<CycleData>(Key());
  if (data == nullptr || data->pod_claims == nullptr) return Status::Success();
  const PodClaims& claims = *data->pod_claims;
  auto decision = std::make_shared<Decision>();
  decision->allocations.resize(claims.claims.size());
  if (claims.prepared.has_value()) {
    const framework::NodeInfo* node = claims.snapshot->Get(node_name);
    if (node == nullptr || node->node() == nullptr) {
      return Status::Error(absl::StrCat("DynamicResources: node \"", util::Absl(node_name),
                                        "\" is not in the cycle's snapshot"));
    }
    // The chosen node is searched again rather than every node's result being kept: the search
    // is deterministic on one snapshot, and only this node's result is ever built.
    Scratch& scratch = ThisThreadScratch();
    absl::StatusOr<bool> found = SearchNode(claims, *node->node(), absl::ZeroDuration(), scratch);
    if (!found.ok() || !*found) {
      return Status::Error(absl::StrCat("DynamicResources: the pod's claims do not fit node \"",
                                        util::Absl(node_name), "\""));
    }
    std::vector<std::shared_ptr<const api::ResourceClaim>> assumed;
    for (ClaimAllocation& result : scratch.allocator.Results()) {
      const api::ResourceClaim* source = claims.to_allocate[result.claim_index];
      const size_t index = static_cast<size_t>(
          std::find_if(claims.claims.begin(), claims.claims.end(),
                       [source](const auto& claim) { return claim.get() == source; }) -
          claims.claims.begin());
      auto allocated = std::make_shared<api::ResourceClaim>(*source);
      allocated->allocation = result.allocation;
      decision->allocations[index] = std::move(result.allocation);
      assumed.push_back(std::move(allocated));
    }
    if (cache_ != nullptr) {
      if (absl::Status status = cache_->AssumeClaims(pod.key, assumed); !status.ok()) {
        return Status::Error(absl::StrCat("DynamicResources: assuming claim allocations: ",
                                          util::Absl(util::Std(status.message()))));
      }
    }
  }
  data->decision = std::move(decision);
  return Status::Success();
}

void DynamicResources::Unreserve(framework::CycleState& state, const framework::PodInfo& pod,
                                 std::string_view /*node_name*/) {
  auto* data = state.ReadMutable<CycleData>(Key());
  if (data == nullptr || data->decision == nullptr) return;
  if (cache_ != nullptr) cache_->ForgetClaims(pod.key);
  // Only PreBind, on a bind worker, reserves: this runs on that worker too, after it.
  for (const auto& claim : data->reserved) {
    auto stored = writer_->RemoveReservation(*claim, pod.get().meta.uid);
    if (!stored.ok()) {
      // The claim stays reserved for a pod that is not bound; the pod's next attempt uses the
      // reservation, or PostFilter deallocates the claim if its node does not suit the pod.
      util::LogWarning(absl::StrCat("DynamicResources: unreserving pod ", pod.key, ": ",
                                    util::Absl(util::Std(stored.status().message()))));
      continue;
    }
    if (cache_ != nullptr) cache_->ClaimWritten(pod.key, *std::move(stored));
  }
  data->reserved.clear();
}

Status DynamicResources::PreBind(framework::CycleState& state, const framework::PodInfo& pod,
                                 std::string_view /*node_name*/) {
  auto* data = state.ReadMutable<CycleData>(Key());
  if (data == nullptr || data->pod_claims == nullptr || data->decision == nullptr) {
    return Status::Success();
  }
  const api::Pod& spec = pod.get();
  const api::ResourceClaimConsumer consumer{"", "pods", spec.meta.name, spec.meta.uid};
  const std::vector<std::shared_ptr<const api::ResourceClaim>>& claims = data->pod_claims->claims;
  for (size_t i = 0; i < claims.size(); ++i) {
    const api::ResourceClaim& claim = *claims[i];
    const std::optional<api::AllocationResult>& allocation = data->decision->allocations[i];
    if (!allocation.has_value() && dynamic_resources::ReservedForPod(claim, spec)) continue;
    const char* what = allocation.has_value() ? "add allocation and reservation to claim "
                                              : "add reservation to claim ";
    if (writer_ == nullptr) {
      return Status::Error(absl::StrCat(what, claim.Key(), ": no claim writer"));
    }
    auto stored =
        writer_->WriteReservation(claim, allocation.has_value() ? &*allocation : nullptr, consumer);
    if (!stored.ok()) {
      return Status::Error(
          absl::StrCat(what, claim.Key(), ": ", util::Absl(util::Std(stored.status().message()))));
    }
    // The API takes a consumer out of reservedFor by its uid; simulate's workload pods may have
    // none (and their binding does not fail after PreBind).
    if (!spec.meta.uid.empty()) data->reserved.push_back(*stored);
    if (cache_ != nullptr) cache_->ClaimWritten(pod.key, *std::move(stored));
  }
  return Status::Success();
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> NewDynamicResources(
    const config::PluginArgs& args, const PluginHandle& handle) {
  auto typed = helper::ArgsAs<config::DynamicResourcesArgs>(args, names::kDynamicResources);
  if (!typed.ok()) return typed.status();
  if (typed->filter_timeout < absl::ZeroDuration()) {
    return helper::ArgsError(names::kDynamicResources, "filterTimeout", "must not be negative");
  }
  return std::make_unique<DynamicResources>(typed->filter_timeout, handle.claim_cache,
                                            handle.claim_writer);
}

}  // namespace kubesched::plugins
