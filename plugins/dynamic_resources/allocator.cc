#include "plugins/dynamic_resources/allocator.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "scheduler/util/strings.h"

namespace kubesched::plugins::dynamic_resources {
namespace {

std::string ClaimName(const api::ResourceClaim& claim) {
  return claim.meta.namespace_name.empty()
             ? claim.meta.name
             : absl::StrCat(claim.meta.namespace_name, "/", claim.meta.name);
}

// matchAttribute compares values of the same kind only: a string never equals an int.
bool SameValue(const api::DeviceAttribute& a, const api::DeviceAttribute& b) {
  if (a.type != b.type) return false;
  switch (a.type) {
    case api::DeviceAttributeType::kInt:
      return a.int_value == b.int_value;
    case api::DeviceAttributeType::kBool:
      return a.bool_value == b.bool_value;
    case api::DeviceAttributeType::kString:
    case api::DeviceAttributeType::kVersion:
      // semver 2.0.0 versions are in minimal form, so equal versions are equal text.
      return a.string_value == b.string_value;
  }
  return false;
}

cel::AttributeValue ViewOf(const api::DeviceAttribute& attribute) {
  switch (attribute.type) {
    case api::DeviceAttributeType::kInt:
      return cel::AttributeValue::Int(attribute.int_value);
    case api::DeviceAttributeType::kBool:
      return cel::AttributeValue::Bool(attribute.bool_value);
    case api::DeviceAttributeType::kVersion:
      return cel::AttributeValue::Version(attribute.string_value);
    case api::DeviceAttributeType::kString:
      break;
  }
  return cel::AttributeValue::String(attribute.string_value);
}

// "gpu.nvidia.com/memory" -> {"gpu.nvidia.com", "memory"}; a bare name is the driver's.
std::pair<std::string_view, std::string_view> SplitQualified(api::Symbol name,
                                                             std::string_view driver) {
  const std::string_view text = api::SymbolText(name);
  const size_t slash = text.find('/');
  if (slash == std::string_view::npos) return {driver, text};
  return {text.substr(0, slash), text.substr(slash + 1)};
}

bool SameRequirement(const api::Requirement& a, const api::Requirement& b) {
  return a.key == b.key && a.op == b.op && a.values == b.values && a.number == b.number &&
         a.valid == b.valid;
}

bool SameFieldRequirement(const api::FieldRequirement& a, const api::FieldRequirement& b) {
  return a.field == b.field && a.op == b.op && a.values == b.values && a.valid == b.valid;
}

// Whether a constraint's request name means this spec: the request, or "request/sub-request".
// Compared in pieces, so that no name is built per node.
bool NamesSpecText(std::string_view name, std::string_view request, const std::string* sub) {
  if (name == request) return true;
  if (sub == nullptr || name.size() != request.size() + 1 + sub->size()) return false;
  return name.substr(0, request.size()) == request && name[request.size()] == '/' &&
         name.substr(request.size() + 1) == *sub;
}

template <typename T, typename Same>
void AddMissing(const std::vector<T>& from, std::vector<T>& to, Same same) {
  for (const T& item : from) {
    const bool present =
        std::any_of(to.begin(), to.end(), [&](const T& have) { return same(have, item); });
    if (!present) to.push_back(item);
  }
}

// Where the devices of one claim can be used, as upstream writes it into the allocation: a
// node-local device pins the node by name; node-selected slices add their requirements; devices
// for all nodes add nothing, and an allocation of only those has no selector.
std::optional<api::NodeSelector> AllocationNodeSelector(
    absl::Span<const api::ResourceSlice* const> slices) {
  api::NodeSelectorTerm term;
  for (const api::ResourceSlice* slice : slices) {
    if (!slice->node_name.empty()) {
      api::FieldRequirement by_name{
          "metadata.name", api::SelectorOperator::kIn, {slice->node_name}, true};
      api::NodeSelector pinned;
      pinned.terms.push_back({{}, {std::move(by_name)}});
      return pinned;
    }
    if (slice->node_selector.has_value() && !slice->node_selector->terms.empty()) {
      const api::NodeSelectorTerm& from = slice->node_selector->terms.front();
      AddMissing(from.match_fields, term.match_fields, SameFieldRequirement);
      AddMissing(from.match_expressions, term.match_expressions, SameRequirement);
    }
  }
  if (term.match_fields.empty() && term.match_expressions.empty()) return std::nullopt;
  api::NodeSelector selector;
  selector.terms.push_back(std::move(term));
  return selector;
}

}  // namespace

// --- Preparation, once per pod --------------------------------------------------------------

absl::StatusOr<PreparedClaims> PreparedClaims::Prepare(const AllocationInput& input,
                                                       SelectorCache& selectors) {
  PreparedClaims prepared;
  for (size_t i = 0; i < input.claims.size(); ++i) {
    const api::ResourceClaim& claim = *input.claims[i];
    if (claim.allocation.has_value()) continue;
    if (absl::Status status = prepared.PrepareClaim(claim, i, input, selectors); !status.ok()) {
      return status;
    }
  }
  for (Spec& spec : prepared.specs_) {
    spec.constraint_mask = prepared.ConstraintMask(prepared.claims_[spec.claim], spec);
  }
  return prepared;
}

absl::Status PreparedClaims::PrepareClaim(const api::ResourceClaim& claim, size_t input_index,
                                          const AllocationInput& input, SelectorCache& selectors) {
  const std::vector<api::DeviceConstraint>& constraints = claim.spec.constraints;
  if (constraints.size() > kMaxConstraintsPerClaim) {
    return absl::InvalidArgumentError(
        absl::StrCat("claim ", ClaimName(claim), ": ", constraints.size(),
                     " constraints exceed the limit of ", kMaxConstraintsPerClaim));
  }
  const auto claim_index = static_cast<uint32_t>(claims_.size());
  claims_.push_back({&claim, input_index, static_cast<uint32_t>(constraint_attributes_.size()),
                     static_cast<uint32_t>(constraints.size())});
  for (size_t c = 0; c < constraints.size(); ++c) {
    if (constraints[c].match_attribute == api::kEmptySymbol) {
      return absl::InvalidArgumentError(
          absl::StrCat("claim ", ClaimName(claim), ", constraint #", c,
                       ": empty constraint (unsupported constraint type?)"));
    }
    constraint_attributes_.push_back(constraints[c].match_attribute);
  }
  int64_t min_devices = 0;
  for (const api::DeviceRequest& request : claim.spec.requests) {
    const auto slot_index = static_cast<uint32_t>(slots_.size());
    Slot slot{static_cast<uint32_t>(specs_.size()), 0};
    if (request.exactly.has_value()) {
      absl::Status status = PrepareSpec(
          {claim_index, slot_index, &request, nullptr, &*request.exactly}, input, selectors);
      if (!status.ok()) return status;
    } else {
      for (const api::DeviceSubRequest& sub : request.first_available) {
        absl::Status status =
            PrepareSpec({claim_index, slot_index, &request, &sub, &sub.spec}, input, selectors);
        if (!status.ok()) return status;
      }
    }
    slot.spec_count = static_cast<uint32_t>(specs_.size()) - slot.first_spec;
    if (slot.spec_count == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("claim ", ClaimName(claim), ", request ", request.name,
                       ": neither exactly nor firstAvailable (unsupported request type?)"));
    }
    int64_t fewest = INT64_MAX;
    for (uint32_t s = slot.first_spec; s < slot.first_spec + slot.spec_count; ++s) {
      fewest = std::min(fewest, specs_[s].count);
    }
    min_devices += fewest;
    slots_.push_back(slot);
  }
  if (min_devices > kMaxDevicesPerClaim) {
    return absl::InvalidArgumentError(
        absl::StrCat("claim ", ClaimName(claim), ": number of requested devices ", min_devices,
                     " exceeds the claim limit of ", kMaxDevicesPerClaim));
  }
  return absl::OkStatus();
}

absl::Status PreparedClaims::PrepareSpec(Spec spec, const AllocationInput& input,
                                         SelectorCache& selectors) {
  const std::string& class_name = spec.spec->device_class_name;
  spec.device_class = input.find_class(class_name);
  if (spec.device_class == nullptr) {
    return absl::NotFoundError(absl::StrCat(Describe(spec), ": could not retrieve device class ",
                                            class_name, ": not found"));
  }
  if (spec.spec->allocation_mode == api::DeviceAllocationMode::kExactCount) {
    if (spec.spec->count < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(Describe(spec), ": count ", spec.spec->count, " is not positive"));
    }
    spec.count = spec.spec->count;
  }
  spec.first_program = static_cast<uint32_t>(programs_.size());
  if (absl::Status status = AddPrograms(spec, true, selectors); !status.ok()) return status;
  spec.class_programs = static_cast<uint32_t>(programs_.size()) - spec.first_program;
  if (absl::Status status = AddPrograms(spec, false, selectors); !status.ok()) return status;
  spec.claim_programs =
      static_cast<uint32_t>(programs_.size()) - spec.first_program - spec.class_programs;
  specs_.push_back(spec);
  return absl::OkStatus();
}

absl::Status PreparedClaims::AddPrograms(const Spec& spec, bool of_class,
                                         SelectorCache& selectors) {
  const std::vector<api::DeviceSelector>& list =
      of_class ? spec.device_class->selectors : spec.spec->selectors;
  for (size_t i = 0; i < list.size(); ++i) {
    const CompiledSelector& selector = selectors.Get(list[i].cel_expression);
    if (!selector.program.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(SelectorOwner(spec, of_class), ": selector #", i,
                       ": CEL compile error: ", selector.program.status().message()));
    }
    programs_.push_back(&selector);
  }
  return absl::OkStatus();
}

uint32_t PreparedClaims::ConstraintMask(const ClaimState& claim, const Spec& spec) const {
  uint32_t mask = 0;
  for (uint32_t c = 0; c < claim.constraint_count; ++c) {
    const std::vector<std::string>& names = claim.claim->spec.constraints[c].requests;
    const bool applies =
        names.empty() || std::any_of(names.begin(), names.end(), [&](const std::string& name) {
          return NamesSpecText(name, spec.request->name,
                               spec.sub == nullptr ? nullptr : &spec.sub->name);
        });
    if (applies) mask |= uint32_t{1} << c;
  }
  return mask;
}

std::string PreparedClaims::Describe(const Spec& spec) const {
  const std::string claim = ClaimName(*claims_[spec.claim].claim);
  if (spec.sub == nullptr) return absl::StrCat("claim ", claim, ", request ", spec.request->name);
  return absl::StrCat("claim ", claim, ", request ", spec.request->name, "/", spec.sub->name);
}

std::string PreparedClaims::SelectorOwner(const Spec& spec, bool of_class) const {
  if (!of_class) return Describe(spec);
  return absl::StrCat(Describe(spec), ": class ", spec.device_class->meta.name);
}

// --- Search, once per node ---------------------------------------------------------------------

absl::StatusOr<std::vector<ClaimAllocation>> Allocator::Allocate(const AllocationInput& input,
                                                                 const NodeDevices& node) {
  if (selectors_ == nullptr) return absl::InternalError("allocator without a selector cache");
  absl::StatusOr<PreparedClaims> claims = PreparedClaims::Prepare(input, *selectors_);
  if (!claims.ok()) return claims.status();
  const auto allocated = [&input](const DeviceId& id) {
    return input.allocated != nullptr && input.allocated->contains(id);
  };
  absl::StatusOr<bool> found = Search(*claims, node, allocated);
  if (!found.ok()) return found.status();
  if (!*found) {
    return absl::ResourceExhaustedError(
        util::Absl(node.HasInvalidPool() ? kInvalidPools : kCannotAllocateAllClaims));
  }
  return Results();
}

absl::StatusOr<bool> Allocator::Search(const PreparedClaims& claims, const NodeDevices& node,
                                       IsAllocated allocated, absl::Time deadline) {
  deadline_ = deadline;
  tries_ = 0;
  claims_ = &claims;
  node_ = &node;
  picks_.clear();
  if (claims.empty()) return true;
  if (absl::Status status = Begin(claims, node, allocated); !status.ok()) return status;
  switch (Step(0)) {
    case Outcome::kDone:
      return true;
    case Outcome::kError:
      return error_;
    case Outcome::kFail:
      break;
  }
  return false;
}

absl::Status Allocator::Begin(const PreparedClaims& claims, const NodeDevices& node,
                              IsAllocated allocated) {
  all_devices_.clear();
  error_ = absl::OkStatus();
  constraints_.assign(claims.constraint_attributes_.size(), Constraint{});
  const std::vector<NodeDevices::DeviceRef>& devices = node.devices();
  allocated_.resize(devices.size());
  for (size_t d = 0; d < devices.size(); ++d) allocated_[d] = allocated(devices[d].id()) ? 1 : 0;
  picked_.assign(devices.size(), 0);
  claim_picked_.assign(claims.claims_.size(), 0);
  const std::vector<Spec>& specs = claims.specs_;
  matches_.assign(specs.size() * devices.size(), 0);
  spec_count_.resize(specs.size());
  first_all_device_.resize(specs.size());
  for (uint32_t s = 0; s < specs.size(); ++s) {
    spec_count_[s] = specs[s].count;
    if (!IsAll(specs[s])) continue;
    if (absl::Status status = CollectAllDevices(s); !status.ok()) return status;
  }
  CountRestOfClaims();
  return absl::OkStatus();
}

absl::Status Allocator::CollectAllDevices(uint32_t spec_index) {
  first_all_device_[spec_index] = static_cast<uint32_t>(all_devices_.size());
  for (const NodeDevices::Pool& pool : node_->pools()) {
    if (!pool.usable()) {
      return absl::InvalidArgumentError(absl::StrCat(
          claims_->Describe(claims_->specs_[spec_index]),
          ": asks for all devices, but resource pool ", util::Absl(api::SymbolText(pool.driver)),
          "/", util::Absl(api::SymbolText(pool.name)),
          pool.incomplete ? " is currently being updated" : " is currently invalid"));
    }
    for (size_t d = pool.first_device; d < pool.end_device; ++d) {
      const std::optional<bool> matches = Matches(spec_index, static_cast<uint32_t>(d));
      if (!matches.has_value()) return error_;
      if (*matches) all_devices_.push_back(static_cast<uint32_t>(d));
    }
  }
  spec_count_[spec_index] =
      static_cast<int64_t>(all_devices_.size()) - first_all_device_[spec_index];
  return absl::OkStatus();
}

// For each slot, the fewest devices the slots after it of the same claim need (an alternative of
// a firstAvailable request counts with its smallest), so that an alternative that cannot stay
// within the claim's limit is passed over without trying devices.
void Allocator::CountRestOfClaims() {
  const std::vector<PreparedClaims::Slot>& slots = claims_->slots_;
  rest_of_claim_.assign(slots.size(), 0);
  for (size_t slot = slots.size(); slot-- > 1;) {
    const uint32_t claim = claims_->specs_[slots[slot].first_spec].claim;
    if (claims_->specs_[slots[slot - 1].first_spec].claim != claim) continue;
    int64_t fewest = INT64_MAX;
    for (uint32_t s = slots[slot].first_spec; s < slots[slot].first_spec + slots[slot].spec_count;
         ++s) {
      fewest = std::min(fewest, spec_count_[s]);
    }
    rest_of_claim_[slot - 1] = rest_of_claim_[slot] + fewest;
  }
}

// Allocates the request at `slot` and everything after it: each alternative of a firstAvailable
// request in order, the first that leads to a complete allocation wins.
Allocator::Outcome Allocator::Step(size_t slot) {
  if (slot == claims_->slots_.size()) return Outcome::kDone;
  const PreparedClaims::Slot& current = claims_->slots_[slot];
  for (uint32_t s = current.first_spec; s < current.first_spec + current.spec_count; ++s) {
    const Outcome outcome = Fill(slot, s, 0, 0);
    if (outcome != Outcome::kFail) return outcome;
  }
  return Outcome::kFail;
}

// Picks the devices of one spec, in increasing device order (a set of devices is tried once,
// not once per permutation), backtracking when what follows cannot be allocated.
Allocator::Outcome Allocator::Fill(size_t slot, uint32_t spec_index, int64_t picked,
                                   uint32_t next_device) {
  const Spec& spec = claims_->specs_[spec_index];
  const int64_t count = spec_count_[spec_index];
  if (picked == count) {
    return count == 0 ? Outcome::kFail : Step(slot + 1);  // All needs a device at least
  }
  if (picked == 0 && OverClaimLimit(slot, spec_index)) return Outcome::kFail;
  if (IsAll(spec)) {
    const uint32_t device = all_devices_[first_all_device_[spec_index] + picked];
    if (!Available(spec, device) || !Take(spec_index, device)) return Outcome::kFail;
    const Outcome outcome = Fill(slot, spec_index, picked + 1, 0);
    if (outcome != Outcome::kDone) Release(spec_index, device);
    return outcome;
  }
  const auto device_count = static_cast<uint32_t>(node_->devices().size());
  for (uint32_t d = next_device; d < device_count; ++d) {
    if (device_count - d < count - picked) break;  // too few devices left
    if (!Available(spec, d)) continue;
    if (OutOfTime()) return Outcome::kError;
    const std::optional<bool> matches = Matches(spec_index, d);
    if (!matches.has_value()) return Outcome::kError;
    if (!*matches || !Take(spec_index, d)) continue;
    const Outcome outcome = Fill(slot, spec_index, picked + 1, d + 1);
    if (outcome == Outcome::kDone) return outcome;
    Release(spec_index, d);
    if (outcome == Outcome::kError) return outcome;
  }
  return Outcome::kFail;
}

// A request with admin access may use a device that is allocated or used by another claim, but
// not one its own claim uses; any other request only a device nothing uses.
bool Allocator::Available(const Spec& spec, uint32_t device) const {
  if (spec.request->admin_access) return !PickedForClaim(spec.claim, device);
  return allocated_[device] == 0 && picked_[device] == 0;
}

bool Allocator::PickedForClaim(uint32_t claim, uint32_t device) const {
  if (picked_[device] == 0) return false;
  return std::any_of(picks_.begin(), picks_.end(), [&](const Pick& pick) {
    return pick.device == device && claims_->specs_[pick.spec].claim == claim;
  });
}

bool Allocator::OverClaimLimit(size_t slot, uint32_t spec) const {
  const int64_t least =
      claim_picked_[claims_->specs_[spec].claim] + spec_count_[spec] + rest_of_claim_[slot];
  return least > kMaxDevicesPerClaim;
}

// Reads the clock once per kTriesPerClockRead devices tried, so that a quick search never does.
bool Allocator::OutOfTime() {
  constexpr uint32_t kTriesPerClockRead = 4096;
  if (deadline_ == absl::InfiniteFuture() || ++tries_ % kTriesPerClockRead != 0) return false;
  if (absl::Now() < deadline_) return false;
  error_ = absl::DeadlineExceededError("timed out trying to allocate devices");
  return true;
}

std::optional<bool> Allocator::Matches(uint32_t spec_index, uint32_t device) {
  uint8_t& known = matches_[size_t{spec_index} * node_->devices().size() + device];
  if (known != 0) return known == 1;
  bool matches = false;
  if (absl::Status status = Evaluate(claims_->specs_[spec_index], device, matches); !status.ok()) {
    error_ = std::move(status);
    return std::nullopt;
  }
  known = matches ? 1 : 2;
  return matches;
}

// Each selector's verdict on the device's shape is looked up first and remembered once
// evaluated; the device's view is only built for a selector that has not seen the shape yet (or
// failed on it, to give the message).
absl::Status Allocator::Evaluate(const Spec& spec, uint32_t device, bool& matches) {
  const NodeDevices::DeviceRef& ref = node_->devices()[device];
  const api::DeviceShape shape = ref.device->shape;
  bool view_filled = false;
  const uint32_t total = spec.class_programs + spec.claim_programs;
  for (uint32_t i = 0; i < total; ++i) {
    const CompiledSelector& selector = *claims_->programs_[spec.first_program + i];
    VerdictMemo::Verdict verdict = selector.verdicts.Get(shape);
    if (verdict == VerdictMemo::kUnknown || verdict == VerdictMemo::kError) {
      if (!view_filled) FillView(device);
      view_filled = true;
      const cel::DeviceView view{api::SymbolText(ref.slice->driver), view_attributes_,
                                 view_capacity_, false};
      const absl::StatusOr<bool> result = selector.program->Evaluate(view);
      if (!result.ok()) {
        selector.verdicts.Set(shape, VerdictMemo::kError);
        const bool of_class = i < spec.class_programs;
        return absl::InvalidArgumentError(
            absl::StrCat(claims_->SelectorOwner(spec, of_class), ": selector #",
                         of_class ? i : i - spec.class_programs,
                         ": CEL runtime error: ", result.status().message()));
      }
      verdict = *result ? VerdictMemo::kTrue : VerdictMemo::kFalse;
      selector.verdicts.Set(shape, verdict);
    }
    if (verdict == VerdictMemo::kFalse) {
      matches = false;
      return absl::OkStatus();
    }
  }
  matches = true;
  return absl::OkStatus();
}

// The view borrows the device's strings; only the two small vectors are reused across devices.
void Allocator::FillView(uint32_t device) {
  const NodeDevices::DeviceRef& ref = node_->devices()[device];
  const std::string_view driver = api::SymbolText(ref.slice->driver);
  view_attributes_.clear();
  for (const api::DeviceAttribute& attribute : ref.device->attributes) {
    const auto [domain, name] = SplitQualified(attribute.name, driver);
    view_attributes_.push_back({domain, name, ViewOf(attribute)});
  }
  view_capacity_.clear();
  for (const api::DeviceCapacity& capacity : ref.device->capacity) {
    const auto [domain, name] = SplitQualified(capacity.name, driver);
    view_capacity_.push_back({domain, name, capacity.value});
  }
}

bool Allocator::Take(uint32_t spec_index, uint32_t device) {
  const Spec& spec = claims_->specs_[spec_index];
  const PreparedClaims::ClaimState& claim = claims_->claims_[spec.claim];
  const api::Device& published = *node_->devices()[device].device;
  for (uint32_t c = 0; c < claim.constraint_count; ++c) {
    if ((spec.constraint_mask >> c & 1) == 0) continue;
    Constraint& constraint = constraints_[claim.first_constraint + c];
    const api::DeviceAttribute* value =
        published.FindAttribute(claims_->constraint_attributes_[claim.first_constraint + c]);
    if (value == nullptr || (constraint.count > 0 && !SameValue(*value, *constraint.value))) {
      for (uint32_t undo = 0; undo < c; ++undo) {
        if ((spec.constraint_mask >> undo & 1) != 0) {
          --constraints_[claim.first_constraint + undo].count;
        }
      }
      return false;
    }
    if (constraint.count++ == 0) constraint.value = value;
  }
  ++picked_[device];
  ++claim_picked_[spec.claim];
  picks_.push_back({spec_index, device});
  return true;
}

void Allocator::Release(uint32_t spec_index, uint32_t device) {
  const Spec& spec = claims_->specs_[spec_index];
  const PreparedClaims::ClaimState& claim = claims_->claims_[spec.claim];
  for (uint32_t c = 0; c < claim.constraint_count; ++c) {
    if ((spec.constraint_mask >> c & 1) != 0) --constraints_[claim.first_constraint + c].count;
  }
  --picked_[device];
  --claim_picked_[spec.claim];
  picks_.pop_back();
}

// --- The result of the chosen node ------------------------------------------------------------

std::vector<ClaimAllocation> Allocator::Results() const {
  std::vector<ClaimAllocation> results;
  if (claims_ == nullptr) return results;
  results.reserve(claims_->claims_.size());
  std::vector<const api::ResourceSlice*> slices;
  for (uint32_t c = 0; c < claims_->claims_.size(); ++c) {
    ClaimAllocation& result = results.emplace_back();
    result.claim_index = claims_->claims_[c].input_index;
    slices.clear();
    for (const Pick& pick : picks_) {
      const Spec& spec = claims_->specs_[pick.spec];
      if (spec.claim != c) continue;
      const NodeDevices::DeviceRef& ref = node_->devices()[pick.device];
      std::string request = spec.sub == nullptr
                                ? spec.request->name
                                : absl::StrCat(spec.request->name, "/", spec.sub->name);
      result.allocation.devices.push_back({std::move(request), ref.slice->driver,
                                           ref.slice->pool.name, ref.device->name,
                                           spec.request->admin_access});
      slices.push_back(ref.slice);
    }
    AddConfig(c, result.allocation);
    result.allocation.node_selector = AllocationNodeSelector(slices);
  }
  return results;
}

// The configuration the driver gets with the devices, as upstream copies it: each chosen class's
// config for the request it served, then the claim's own config entries that apply to all
// requests or name a request (or a chosen sub-request) of the claim.
void Allocator::AddConfig(size_t claim, api::AllocationResult& allocation) const {
  // The spec each request of the claim was served by.
  std::vector<const Spec*> chosen;
  for (const Pick& pick : picks_) {
    const Spec& spec = claims_->specs_[pick.spec];
    if (spec.claim != claim) continue;
    if (std::find(chosen.begin(), chosen.end(), &spec) == chosen.end()) chosen.push_back(&spec);
  }
  std::sort(chosen.begin(), chosen.end(),
            [](const Spec* a, const Spec* b) { return a->slot < b->slot; });
  // A class's configuration is written once, naming every request it was chosen for.
  std::vector<std::pair<const api::DeviceClass*, size_t>> written;  // class, first entry
  for (const Spec* spec : chosen) {
    std::string request = spec->sub == nullptr
                              ? spec->request->name
                              : absl::StrCat(spec->request->name, "/", spec->sub->name);
    const auto seen = std::find_if(written.begin(), written.end(), [spec](const auto& entry) {
      return entry.first == spec->device_class;
    });
    const std::vector<api::OpaqueDeviceConfiguration>& configs = spec->device_class->config;
    if (seen != written.end()) {
      for (size_t i = 0; i < configs.size(); ++i) {
        allocation.config[seen->second + i].requests.push_back(request);
      }
      continue;
    }
    written.emplace_back(spec->device_class, allocation.config.size());
    for (const api::OpaqueDeviceConfiguration& config : configs) {
      allocation.config.push_back({true, {request}, config});
    }
  }
  const api::ResourceClaim& source = *claims_->claims_[claim].claim;
  for (const api::DeviceClaimConfiguration& config : source.spec.config) {
    const bool applies =
        config.requests.empty() ||
        std::any_of(chosen.begin(), chosen.end(), [&config](const Spec* spec) {
          return std::any_of(
              config.requests.begin(), config.requests.end(), [spec](const std::string& name) {
                return NamesSpecText(name, spec->request->name,
                                     spec->sub == nullptr ? nullptr : &spec->sub->name);
              });
        });
    if (applies) allocation.config.push_back({false, config.requests, config.opaque});
  }
}

}  // namespace kubesched::plugins::dynamic_resources
