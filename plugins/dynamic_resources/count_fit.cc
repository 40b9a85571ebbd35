#include "plugins/dynamic_resources/count_fit.h"

#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace kubesched::plugins::dynamic_resources {
namespace {

// The selectors' verdict on a shape as the search reaches it: in order, up to the first false
// one; kUnknown when one on the way is not known (or failed), which only the search may decide.
VerdictMemo::Verdict Decide(absl::Span<const CompiledSelector* const> selectors,
                            api::DeviceShape shape) {
  for (const CompiledSelector* selector : selectors) {
    const VerdictMemo::Verdict verdict = selector->verdicts.Get(shape);
    if (verdict == VerdictMemo::kFalse) return VerdictMemo::kFalse;
    if (verdict != VerdictMemo::kTrue) return VerdictMemo::kUnknown;
  }
  return VerdictMemo::kTrue;
}

}  // namespace

// Defined here, with the counting it is for (FitByCount), rather than in allocator.cc.
std::optional<CountRequest> PreparedClaims::AsCountRequest() const {
  if (claims_.size() != 1 || slots_.size() != 1 || specs_.size() != 1) return std::nullopt;
  const Spec& spec = specs_.front();
  if (claims_.front().constraint_count != 0 || spec.request->admin_access ||
      spec.spec->allocation_mode == api::DeviceAllocationMode::kAll || spec.count < 1 ||
      spec.count > kMaxDevicesPerClaim) {
    return std::nullopt;
  }
  return CountRequest{spec.count,
                      absl::MakeConstSpan(programs_).subspan(
                          spec.first_program, spec.class_programs + spec.claim_programs)};
}

namespace {

// A node with more devices than OwnDevices keeps bits for: its pools' held devices are looked up.
int64_t FreeByLookup(const CountRequest& request, const framework::DraState& dra,
                     const framework::NodeDeviceSummary& summary) {
  const auto matches = [&](uint32_t d) {
    return Decide(request.selectors, summary.devices[d].shape) == VerdictMemo::kTrue;
  };
  int64_t free = 0;
  for (const framework::NodeDeviceSummary::Pool& pool : summary.pools) {
    for (uint32_t d = pool.first_device; d < pool.end_device; ++d) free += matches(d) ? 1 : 0;
    if (const framework::PoolAllocations* held = dra.allocated_by_pool.Find(pool.id)) {
      framework::ForEachHeldDevice(summary, pool, *held,
                                   [&](uint32_t d) { free -= matches(d) ? 1 : 0; });
    }
  }
  return free;
}

// The devices of a countable profile that match `request`: how many, and which as bits when the
// profile has no more devices than OwnDevices keeps bits for; nullopt when a verdict on the way is
// not known (or failed), which only the search may decide. Every device is decided, even after
// `count` matching ones are found: the search would stop on a selector error in a device it
// reaches before those, and its order is not this one.
struct ProfileMatches {
  int64_t count = 0;
  uint64_t bits = 0;
};
std::optional<ProfileMatches> MatchProfile(const CountRequest& request,
                                           const framework::DeviceProfile& profile) {
  const std::vector<api::DeviceShape>& shapes = profile.shapes;
  const bool with_bits = shapes.size() <= framework::OwnDevices::kHeldBits;
  ProfileMatches matches;
  for (size_t d = 0; d < shapes.size(); ++d) {
    const VerdictMemo::Verdict verdict = Decide(request.selectors, shapes[d]);
    if (verdict == VerdictMemo::kUnknown) return std::nullopt;
    if (verdict != VerdictMemo::kTrue) continue;
    ++matches.count;
    if (with_bits) matches.bits |= uint64_t{1} << d;
  }
  return matches;
}

}  // namespace

// The node's device shapes (its DeviceProfile, shared with alike nodes) and held devices come with
// its NodeInfo: no look-up by name per node.
CountFit FitByCount(const CountRequest& request, const framework::DraState& dra,
                    const framework::NodeInfo& node) {
  if (!dra.shared_slices->empty()) return CountFit::kSearch;
  const framework::DeviceProfile* profile = node.device_profile();
  if (profile == nullptr) return CountFit::kTooFew;  // no device at all
  if (!profile->countable) return CountFit::kSearch;
  const std::optional<ProfileMatches> matches = MatchProfile(request, *profile);
  if (!matches.has_value()) return CountFit::kSearch;
  if (matches->count < request.count) return CountFit::kTooFew;
  const bool held_known = profile->shapes.size() <= framework::OwnDevices::kHeldBits;
  const int64_t free = held_known ? std::popcount(matches->bits & ~node.held_devices())
                                  : FreeByLookup(request, dra, *node.device_summary());
  return free >= request.count ? CountFit::kFits : CountFit::kTaken;
}

bool TooFewOnProfile(const CountRequest& request, const framework::DeviceProfile* profile) {
  if (profile == nullptr) return true;
  if (!profile->countable) return false;
  const std::optional<ProfileMatches> matches = MatchProfile(request, *profile);
  return matches.has_value() && matches->count < request.count;
}

}  // namespace kubesched::plugins::dynamic_resources
