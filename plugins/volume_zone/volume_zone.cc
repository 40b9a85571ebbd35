#include "plugins/volume_zone/volume_zone.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "plugins/helper/args.h"
#include "plugins/helper/volumes.h"
#include "plugins/names.h"
#include "scheduler/api/symbol.h"
#include "scheduler/util/strings.h"

namespace kubesched::plugins {
namespace {

using framework::Status;

// Upstream's topologyLabels, in its order, each with the GA key a node may carry instead.
struct TopologyKey {
  std::string_view key;
  std::string_view ga;
};
constexpr std::array<TopologyKey, 4> kTopologyKeys = {{
    {"failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone"},
    {"failure-domain.beta.kubernetes.io/region", "topology.kubernetes.io/region"},
    {"topology.kubernetes.io/zone", "topology.kubernetes.io/zone"},
    {"topology.kubernetes.io/region", "topology.kubernetes.io/region"},
}};

struct KeySymbols {
  api::Symbol key;
  api::Symbol ga;
};
const std::array<KeySymbols, 4>& TopologySymbols() {
  static const std::array<KeySymbols, 4> symbols = [] {
    std::array<KeySymbols, 4> out{};
    for (size_t i = 0; i < kTopologyKeys.size(); ++i) {
      out[i] = {api::Intern(kTopologyKeys[i].key), api::Intern(kTopologyKeys[i].ga)};
    }
    return out;
  }();
  return symbols;
}

// One topology label of one PV: the node's label `key` (or `ga`) must be one of `values`.
struct PvTopology {
  api::Symbol key = api::kEmptySymbol;
  api::Symbol ga = api::kEmptySymbol;
  // Symbols of the allowed values; a value no object ever carried is kNoSuchSymbol, which no
  // node label equals.
  std::vector<api::Symbol> values;
};

struct ZoneState final : framework::StateData {
  std::vector<PvTopology> topologies;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<ZoneState>(*this);
  }
};

framework::CycleState::Key StateKey() {
  static const framework::CycleState::Key key =
      framework::CycleState::AllocateKey(names::kVolumeZone);
  return key;
}

Status Unresolvable(std::string_view message) {
  return Status::Unresolvable(api::StableText(message));
}

// Upstream's LabelZonesToSet: "a__b" is {a, b}, each trimmed; an empty member makes the whole
// label unusable (nullopt), and upstream then ignores that label.
std::optional<std::vector<api::Symbol>> ZoneValues(std::string_view text) {
  std::vector<api::Symbol> values;
  bool usable = true;
  helper::ForEachPart(text, "__", [&](std::string_view zone) {
    constexpr std::string_view kSpace = " \t\n\v\f\r";
    const size_t first = zone.find_first_not_of(kSpace);
    zone = first == std::string_view::npos
               ? std::string_view()
               : zone.substr(first, zone.find_last_not_of(kSpace) - first + 1);
    if (zone.empty()) usable = false;
    values.push_back(api::FindSymbol(zone));
  });
  if (!usable) return std::nullopt;
  return values;
}

void AddTopologies(const api::PersistentVolume& pv, std::vector<PvTopology>* out) {
  for (const KeySymbols& symbols : TopologySymbols()) {
    const std::optional<api::Symbol> value = pv.meta.labels.Get(symbols.key);
    if (!value.has_value()) continue;
    auto values = ZoneValues(api::SymbolText(*value));
    if (!values.has_value()) continue;
    out->push_back({symbols.key, symbols.ga, std::move(*values)});
  }
}

// The topologies of one claim of the pod, or the status that stops the pod.
Status ClaimTopologies(const framework::StorageState& storage, const api::Pod& pod,
                       const std::string& claim_name, std::vector<PvTopology>* out) {
  const api::PersistentVolumeClaim* claim = storage.Claim(pod.meta.namespace_name, claim_name);
  if (claim == nullptr) {
    return Unresolvable(absl::StrCat("persistentvolumeclaims \"", claim_name, "\" not found"));
  }
  if (claim->volume_name.empty()) {
    const std::string_view class_name = helper::ClaimClassName(*claim);
    if (class_name.empty()) {
      return Status::Unresolvable("PersistentVolumeClaim had no pv name and storageClass name");
    }
    const api::StorageClass* storage_class = storage.classes.Find(class_name);
    if (storage_class == nullptr) {
      return Unresolvable(
          absl::StrCat("storageclasses.storage.k8s.io \"", util::Absl(class_name), "\" not found"));
    }
    if (!storage_class->volume_binding_mode.has_value()) {
      return Unresolvable(absl::StrCat("VolumeBindingMode not set for StorageClass \"",
                                       util::Absl(class_name), "\""));
    }
    // Volume binding picks the PV, and its zone, with the node.
    if (*storage_class->volume_binding_mode == api::VolumeBindingMode::kWaitForFirstConsumer) {
      return Status::Success();
    }
    return Status::Unresolvable("PersistentVolume had no name");
  }
  const api::PersistentVolume* pv = storage.volumes.Find(claim->volume_name);
  if (pv == nullptr) {
    return Unresolvable(absl::StrCat("persistentvolumes \"", claim->volume_name, "\" not found"));
  }
  AddTopologies(*pv, out);
  return Status::Success();
}

bool HasTopologyLabel(const api::LabelSet& labels) {
  return std::any_of(TopologySymbols().begin(), TopologySymbols().end(),
                     [&labels](const KeySymbols& s) { return labels.Has(s.key); });
}

}  // namespace

std::string_view VolumeZone::Name() const { return names::kVolumeZone; }

framework::PreFilterOutcome VolumeZone::PreFilter(framework::CycleState& state,
                                                  const framework::PodInfo& pod,
                                                  const framework::Snapshot& snapshot) {
  if (pod.volume_refs.empty()) return {Status::Skip(), {}};  // most pods: no claim to follow
  auto data = std::make_unique<ZoneState>();
  // Only persistentVolumeClaim volumes, as upstream: an ephemeral volume's claim is new and
  // unbound, and volume binding places it.
  for (const api::Volume& volume : pod.get().spec.volumes) {
    if (volume.claim_name.empty()) continue;
    Status status =
        ClaimTopologies(snapshot.storage(), pod.get(), volume.claim_name, &data->topologies);
    if (!status.IsSuccess()) return {std::move(status), {}};
  }
  if (data->topologies.empty()) return {Status::Skip(), {}};
  state.Write(StateKey(), std::move(data));
  return {};
}

Status VolumeZone::Filter(const framework::CycleState& state, const framework::PodInfo& /*pod*/,
                          const framework::NodeInfo& node) const {
  const auto* data = state.Read<ZoneState>(StateKey());
  if (data == nullptr)
    return Status(framework::Code::kError, "VolumeZone: PreFilter state missing");
  const api::LabelSet& labels = node.node()->meta.labels;
  if (!HasTopologyLabel(labels)) return Status::Success();
  for (const PvTopology& topology : data->topologies) {
    std::optional<api::Symbol> value = labels.Get(topology.key);
    if (!value.has_value()) value = labels.Get(topology.ga);
    if (!value.has_value() || std::find(topology.values.begin(), topology.values.end(), *value) ==
                                  topology.values.end()) {
      return Status::Unresolvable(kReasonConflict);
    }
  }
  return Status::Success();
}

framework::ClusterEventSet VolumeZone::EventsToRegister() const {
  return framework::EventBit(framework::ClusterEvent::kNodeAdded) |
         framework::EventBit(framework::ClusterEvent::kNodeUpdated) |
         framework::EventBit(framework::ClusterEvent::kStorageChanged);
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> NewVolumeZone(const config::PluginArgs& args,
                                                                 const PluginHandle& /*handle*/) {
  if (auto status = helper::ExpectNoArgs(args, names::kVolumeZone); !status.ok()) return status;
  return std::make_unique<VolumeZone>();
}

}  // namespace kubesched::plugins
