#include "plugins/volume_restrictions/volume_restrictions.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "plugins/helper/args.h"
#include "plugins/names.h"
#include "scheduler/api/symbol.h"

namespace kubesched::plugins {
namespace {

using framework::PodVolumeRef;
using framework::Status;

// A claim by "namespace/name", as PodVolumeRef keys it.
struct ClaimKey {
  size_t hash = 0;
  std::string key;
  bool Names(const PodVolumeRef& ref) const {
    return ref.kind == PodVolumeRef::Kind::kClaim && ref.key_hash == hash && ref.key == key;
  }
};

struct RestrictionsState final : framework::StateData {
  bool check_disks = false;                   // the pod names an in-tree disk inline
  std::vector<ClaimKey> read_write_once_pod;  // the pod's claims with that access mode, each once
  // References to those claims by pods in the cluster (upstream's conflictingPVCRefCount).
  int conflicts = 0;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<RestrictionsState>(*this);
  }
};

framework::CycleState::Key StateKey() {
  static const framework::CycleState::Key key =
      framework::CycleState::AllocateKey(names::kVolumeRestrictions);
  return key;
}

bool IsPersistentClaim(const PodVolumeRef& ref) {
  return ref.kind == PodVolumeRef::Kind::kClaim && !ref.ephemeral;
}

bool HaveOverlap(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return std::any_of(a.begin(), a.end(), [&b](const std::string& item) {
    return std::find(b.begin(), b.end(), item) != b.end();
  });
}

// Upstream's isVolumeConflict for one volume of each pod.
bool IsVolumeConflict(const api::Volume& volume, const api::Volume& existing) {
  const bool both_read_only = volume.read_only && existing.read_only;
  if (volume.IsGcePd() && existing.IsGcePd()) {
    return volume.gce_pd_name == existing.gce_pd_name && !both_read_only;
  }
  if (volume.IsAwsEbs() && existing.IsAwsEbs()) {
    return volume.aws_ebs_volume_id == existing.aws_ebs_volume_id;
  }
  if (volume.IsIscsi() && existing.IsIscsi()) {
    return volume.iscsi_iqn == existing.iscsi_iqn && !both_read_only;
  }
  if (volume.IsRbd() && existing.IsRbd()) {
    return HaveOverlap(volume.rbd_monitors, existing.rbd_monitors) &&
           volume.rbd_pool == existing.rbd_pool && volume.rbd_image == existing.rbd_image &&
           !both_read_only;
  }
  return false;
}

// How many of `claims` some pod in the snapshot uses. A walk over the nodes' volume refs (not
// their pods), done only for a pod with a ReadWriteOncePod claim: such pods are rare, and the walk
// costs about what one Filter pass does, so no cluster-wide index is kept for them.
int ClaimsInUse(const framework::Snapshot& snapshot, const std::vector<ClaimKey>& claims) {
  std::vector<bool> in_use(claims.size(), false);
  int count = 0;
  for (const framework::NodeInfo* node : snapshot.nodes()) {
    for (const framework::VolumeRefCount& entry : node->volume_refs()) {
      for (size_t i = 0; i < claims.size(); ++i) {
        if (in_use[i] || !claims[i].Names(*entry.ref)) continue;
        in_use[i] = true;
        if (++count == static_cast<int>(claims.size())) return count;
      }
    }
  }
  return count;
}

// The number of `pod`'s claim volumes among `claims` (upstream counts volumes, not claims).
int References(const framework::PodInfo& pod, const std::vector<ClaimKey>& claims) {
  int count = 0;
  for (const PodVolumeRef& ref : pod.volume_refs) {
    count += static_cast<int>(std::count_if(claims.begin(), claims.end(),
                                            [&ref](const ClaimKey& c) { return c.Names(ref); }));
  }
  return count;
}

}  // namespace

std::string_view VolumeRestrictions::Name() const { return names::kVolumeRestrictions; }

framework::PreFilterOutcome VolumeRestrictions::PreFilter(framework::CycleState& state,
                                                          const framework::PodInfo& pod,
                                                          const framework::Snapshot& snapshot) {
  if (pod.volume_refs.empty()) return {Status::Skip(), {}};  // most pods: no claim, no disk
  auto data = std::make_unique<RestrictionsState>();
  for (const PodVolumeRef& ref : pod.volume_refs) {
    if (ref.kind == PodVolumeRef::Kind::kInlineDisk) data->check_disks = true;
    if (!IsPersistentClaim(ref)) continue;
    const api::PersistentVolumeClaim* claim = snapshot.storage().claims.Find(ref.key);
    if (claim == nullptr) {
      return {Status::Unresolvable(api::StableText(absl::StrCat(
                  "persistentvolumeclaim \"", ref.volume->claim_name, "\" not found"))),
              {}};
    }
    const auto& modes = claim->access_modes;
    if (std::find(modes.begin(), modes.end(), api::AccessMode::kReadWriteOncePod) == modes.end()) {
      continue;
    }
    auto& rwop = data->read_write_once_pod;
    if (std::none_of(rwop.begin(), rwop.end(),
                     [&ref](const ClaimKey& c) { return c.Names(ref); })) {
      rwop.push_back({ref.key_hash, ref.key});
    }
  }
  if (!data->read_write_once_pod.empty()) {
    data->conflicts = ClaimsInUse(snapshot, data->read_write_once_pod);
  }
  if (!data->check_disks && data->conflicts == 0) return {Status::Skip(), {}};
  state.Write(StateKey(), std::move(data));
  return {};
}

Status VolumeRestrictions::Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                                  const framework::NodeInfo& node) const {
  const auto* data = state.Read<RestrictionsState>(StateKey());
  if (data == nullptr) {
    return Status(framework::Code::kError, "VolumeRestrictions: PreFilter state missing");
  }
  if (data->check_disks) {
    for (const PodVolumeRef& ref : pod.volume_refs) {
      if (ref.kind != PodVolumeRef::Kind::kInlineDisk) continue;
      for (const framework::VolumeRefCount& entry : node.volume_refs()) {
        if (entry.ref->kind == PodVolumeRef::Kind::kInlineDisk &&
            IsVolumeConflict(*ref.volume, *entry.ref->volume)) {
          return Status::Unschedulable(kReasonDiskConflict);
        }
      }
    }
  }
  if (data->conflicts > 0) return Status::Unschedulable(kReasonReadWriteOncePodConflict);
  return Status::Success();
}

Status VolumeRestrictions::AddPod(framework::CycleState& state, const framework::PodInfo& /*pod*/,
                                  const framework::PodInfo& added,
                                  const framework::NodeInfo& /*node*/) const {
  auto* data = state.ReadMutable<RestrictionsState>(StateKey());
  if (data == nullptr) return Status::Error("VolumeRestrictions: PreFilter state missing");
  data->conflicts += References(added, data->read_write_once_pod);
  return Status::Success();
}

Status VolumeRestrictions::RemovePod(framework::CycleState& state,
                                     const framework::PodInfo& /*pod*/,
                                     const framework::PodInfo& removed,
                                     const framework::NodeInfo& /*node*/) const {
  auto* data = state.ReadMutable<RestrictionsState>(StateKey());
  if (data == nullptr) return Status::Error("VolumeRestrictions: PreFilter state missing");
  data->conflicts -= References(removed, data->read_write_once_pod);
  return Status::Success();
}

framework::ClusterEventSet VolumeRestrictions::EventsToRegister() const {
  return framework::EventBit(framework::ClusterEvent::kPodDeleted) |
         framework::EventBit(framework::ClusterEvent::kNodeAdded) |
         framework::EventBit(framework::ClusterEvent::kNodeUpdated) |
         framework::EventBit(framework::ClusterEvent::kStorageChanged);
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> NewVolumeRestrictions(
    const config::PluginArgs& args, const PluginHandle& /*handle*/) {
  if (auto status = helper::ExpectNoArgs(args, names::kVolumeRestrictions); !status.ok()) {
    return status;
  }
  return std::make_unique<VolumeRestrictions>();
}

}  // namespace kubesched::plugins
