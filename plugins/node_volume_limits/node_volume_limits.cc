#include "plugins/node_volume_limits/node_volume_limits.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "plugins/helper/args.h"
#include "plugins/names.h"
#include "plugins/node_volume_limits/csi_volume.h"
#include "scheduler/api/symbol.h"

namespace kubesched::plugins {
namespace {

using framework::PodVolumeRef;
using framework::Status;
using volume_limits::CsiVolume;
using volume_limits::Handle;
using volume_limits::InTreePlugin;
using volume_limits::Migration;

// A volume of the pod being scheduled, resolved once per cycle.
struct PodVolume {
  std::string driver;
  std::string handle;
  InTreePlugin plugin = InTreePlugin::kNone;
};

struct LimitsState final : framework::StateData {
  // The snapshot's storage objects; the state is read within the cycle only, while the snapshot
  // that PreFilter saw is still the cycle's.
  const framework::StorageState* storage = nullptr;
  Status error;  // a claim of the pod that cannot be followed: every node gives this verdict
  std::vector<PodVolume> volumes;  // distinct by (driver, handle)
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<LimitsState>(*this);
  }
};

framework::CycleState::Key StateKey() {
  static const framework::CycleState::Key key =
      framework::CycleState::AllocateKey(names::kNodeVolumeLimits);
  return key;
}

// A driver of the pod's volumes on one node: its limit there and the counts that meet it.
struct DriverCount {
  std::string_view driver;
  std::optional<int32_t> limit;
  int32_t attached = 0;  // distinct volumes of the node's pods, then attachments besides them
  int32_t fresh = 0;     // the pod's volumes the node does not have yet
};
using DriverCounts = absl::InlinedVector<DriverCount, 4>;

// A volume counted on a node, by the index of its driver in DriverCounts.
struct VolumeKey {
  uint32_t driver = 0;
  Handle handle;
  bool operator<(const VolumeKey& other) const {
    return driver != other.driver ? driver < other.driver : handle.Compare(other.handle) < 0;
  }
  bool operator==(const VolumeKey& other) const {
    return driver == other.driver && handle.Compare(other.handle) == 0;
  }
};

// Filter's scratch, one per worker thread: its capacity outlives the call, so counting on a node
// allocates nothing once a thread has seen a node as full as this one.
std::vector<VolumeKey>& Scratch() {
  thread_local std::vector<VolumeKey> scratch;
  scratch.clear();
  return scratch;
}

std::optional<uint32_t> LimitedDriver(const DriverCounts& drivers, std::string_view driver) {
  for (size_t i = 0; i < drivers.size(); ++i) {
    if (drivers[i].driver == driver && drivers[i].limit.has_value()) return i;
  }
  return std::nullopt;
}

// The drivers of the pod's volumes that count on this node, with their limits there.
DriverCounts PodDrivers(const LimitsState& data, const api::CsiNode& csi_node,
                        Migration migration) {
  DriverCounts drivers;
  for (const PodVolume& volume : data.volumes) {
    if (!migration.Allows(volume.plugin)) continue;
    const std::string_view driver = volume.driver;
    if (std::any_of(drivers.begin(), drivers.end(),
                    [&](const auto& d) { return d.driver == driver; })) {
      continue;
    }
    DriverCount count;
    count.driver = driver;
    for (const api::CsiNodeDriver& node_driver : csi_node.drivers) {
      if (node_driver.name == driver) count.limit = node_driver.allocatable_count;
    }
    drivers.push_back(count);
  }
  return drivers;
}

// The volume an existing pod's ref occupies on a node with `migration`; nullopt when it does not
// count. An ephemeral claim its pod does not own sets `error`, as upstream's Filter errs then.
std::optional<CsiVolume> ExistingVolume(const PodVolumeRef& ref,
                                        const framework::StorageState& storage, Migration migration,
                                        Status* error) {
  std::optional<CsiVolume> volume;
  if (ref.kind == PodVolumeRef::Kind::kClaim) {
    const api::PersistentVolumeClaim* claim = storage.claims.Find(ref.key);
    if (claim == nullptr) return std::nullopt;  // not counted: it may not be this pod's to count
    if (ref.ephemeral && !volume_limits::ClaimIsForPod(*claim, *ref.pod)) {
      *error = Status::Error(absl::StrCat("PVC ", ref.key, " was not created for pod ",
                                          ref.pod->Key(), " (pod is not owner)"));
      return std::nullopt;
    }
    volume = volume_limits::ClaimVolume(storage, *claim);
  } else {
    volume = volume_limits::InlineVolume(*ref.volume);
  }
  if (!volume.has_value() || !migration.Allows(volume->plugin)) return std::nullopt;
  return volume;
}

// Sorts and dedups `keys` from `from` on and adds each to its driver's attached count.
void CountDistinct(std::vector<VolumeKey>& keys, size_t from, DriverCounts& drivers) {
  std::sort(keys.begin() + from, keys.end());
  keys.erase(std::unique(keys.begin() + from, keys.end()), keys.end());
  for (size_t i = from; i < keys.size(); ++i) ++drivers[keys[i].driver].attached;
}

// Counts what is on the node for the limited drivers: the distinct volumes of its pods (left
// sorted at the front of `keys`, where the pod's volumes are looked up), then the attachments
// that none of them explains (upstream counts those apart, without deduplicating the pod's own).
Status CountNodeVolumes(const framework::NodeInfo& node, const framework::StorageState& storage,
                        Migration migration, DriverCounts& drivers, std::vector<VolumeKey>& keys) {
  Status error;
  for (const framework::VolumeRefCount& entry : node.volume_refs()) {
    const std::optional<CsiVolume> volume = ExistingVolume(*entry.ref, storage, migration, &error);
    if (!error.IsSuccess()) return error;
    if (!volume.has_value()) continue;
    const std::optional<uint32_t> driver = LimitedDriver(drivers, volume->driver);
    if (driver.has_value()) keys.push_back({*driver, volume->handle});
  }
  CountDistinct(keys, 0, drivers);
  const size_t on_pods = keys.size();
  const framework::AttachmentList* attachments = storage.attachments_by_node.Find(node.name());
  if (attachments == nullptr) return Status::Success();
  for (const auto& attachment : *attachments) {
    const api::PersistentVolume* pv = storage.volumes.Find(attachment->persistent_volume_name);
    if (attachment->attacher.empty() || pv == nullptr || !pv->csi.has_value()) continue;
    const std::optional<uint32_t> driver = LimitedDriver(drivers, attachment->attacher);
    if (!driver.has_value()) continue;
    VolumeKey key{*driver, Handle(pv->csi->volume_handle)};
    if (!std::binary_search(keys.begin(), keys.begin() + on_pods, key)) keys.push_back(key);
  }
  CountDistinct(keys, on_pods, drivers);
  keys.resize(on_pods);
  return Status::Success();
}

// The pod's claim behind `volume` resolved into `out` (nullopt when it does not count), or the
// status every node gives when the claim cannot be followed.
Status ResolveClaim(const framework::StorageState& storage, const api::Pod& pod,
                    const api::Volume& volume, std::optional<CsiVolume>* out) {
  const std::string name = volume.ClaimName(pod.meta.name);
  const api::PersistentVolumeClaim* claim = storage.Claim(pod.meta.namespace_name, name);
  if (claim == nullptr) {
    return Status::Unresolvable(
        api::StableText(absl::StrCat("looking up PVC ", pod.meta.namespace_name, "/", name,
                                     ": persistentvolumeclaims \"", name, "\" not found")));
  }
  if (volume.ephemeral && !volume_limits::ClaimIsForPod(*claim, pod)) {
    return Status::Error(absl::StrCat("PVC ", pod.meta.namespace_name, "/", name,
                                      " was not created for pod ", pod.Key(),
                                      " (pod is not owner)"));
  }
  *out = volume_limits::ClaimVolume(storage, *claim);
  return Status::Success();
}

// Adds `volume` unless the pod already has it; a copy that needs no migration wins, since it
// counts on more nodes.
void AddPodVolume(const CsiVolume& volume, std::vector<PodVolume>* volumes) {
  const Handle handle = volume.handle;
  for (PodVolume& known : *volumes) {
    if (known.driver != volume.driver || Handle(known.handle).Compare(handle) != 0) continue;
    if (volume.plugin == InTreePlugin::kNone) known.plugin = InTreePlugin::kNone;
    return;
  }
  volumes->push_back({std::string(volume.driver), handle.ToString(), volume.plugin});
}

bool HasCountableVolume(const api::Pod& pod) {
  return std::any_of(pod.spec.volumes.begin(), pod.spec.volumes.end(), [](const auto& volume) {
    return !volume.claim_name.empty() || volume.ephemeral || volume.IsAwsEbs() || volume.IsGcePd();
  });
}

}  // namespace

std::string_view NodeVolumeLimits::Name() const { return names::kNodeVolumeLimits; }

framework::PreFilterOutcome NodeVolumeLimits::PreFilter(framework::CycleState& state,
                                                        const framework::PodInfo& pod,
                                                        const framework::Snapshot& snapshot) {
  if (pod.volume_refs.empty() || !HasCountableVolume(pod.get())) return {Status::Skip(), {}};
  auto data = std::make_unique<LimitsState>();
  data->storage = &snapshot.storage();
  for (const api::Volume& volume : pod.get().spec.volumes) {
    std::optional<CsiVolume> counted;
    if (!volume.claim_name.empty() || volume.ephemeral) {
      data->error = ResolveClaim(*data->storage, pod.get(), volume, &counted);
      if (!data->error.IsSuccess()) break;
    } else {
      counted = volume_limits::InlineVolume(volume);
    }
    if (counted.has_value()) AddPodVolume(*counted, &data->volumes);
  }
  state.Write(StateKey(), std::move(data));
  return {};
}

Status NodeVolumeLimits::Filter(const framework::CycleState& state,
                                const framework::PodInfo& /*pod*/,
                                const framework::NodeInfo& node) const {
  const auto* data = state.Read<LimitsState>(StateKey());
  if (data == nullptr) return Status::Error("NodeVolumeLimits: PreFilter state missing");
  if (!data->error.IsSuccess()) return data->error;
  // Without a CSINode a node reports no limits (and migrates nothing).
  const api::CsiNode* csi_node = data->storage->csi_nodes.Find(node.name());
  if (csi_node == nullptr) return Status::Success();
  const Migration migration = volume_limits::MigrationOf(csi_node);
  DriverCounts drivers = PodDrivers(*data, *csi_node, migration);
  if (std::none_of(drivers.begin(), drivers.end(),
                   [](const DriverCount& d) { return d.limit.has_value(); })) {
    return Status::Success();
  }
  std::vector<VolumeKey>& on_node = Scratch();
  Status counted = CountNodeVolumes(node, *data->storage, migration, drivers, on_node);
  if (!counted.IsSuccess()) return counted;
  for (const PodVolume& volume : data->volumes) {
    if (!migration.Allows(volume.plugin)) continue;
    const std::optional<uint32_t> driver = LimitedDriver(drivers, volume.driver);
    if (!driver.has_value()) continue;
    const VolumeKey key{*driver, Handle(volume.handle)};
    if (!std::binary_search(on_node.begin(), on_node.end(), key)) ++drivers[*driver].fresh;
  }
  for (const DriverCount& driver : drivers) {
    if (driver.fresh > 0 && driver.attached + driver.fresh > *driver.limit) {
      return Status::Unschedulable(kReasonMaxVolumeCount);
    }
  }
  return Status::Success();
}

framework::ClusterEventSet NodeVolumeLimits::EventsToRegister() const {
  return framework::EventBit(framework::ClusterEvent::kPodDeleted) |
         framework::EventBit(framework::ClusterEvent::kStorageChanged);
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> NewNodeVolumeLimits(
    const config::PluginArgs& args, const PluginHandle& /*handle*/) {
  if (auto status = helper::ExpectNoArgs(args, names::kNodeVolumeLimits); !status.ok()) {
    return status;
  }
  return std::make_unique<NodeVolumeLimits>();
}

}  // namespace kubesched::plugins
