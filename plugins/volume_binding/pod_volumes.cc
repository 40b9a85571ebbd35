#include "plugins/volume_binding/pod_volumes.h"

#include <algorithm>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "scheduler/api/resource.h"
#include "scheduler/api/symbol.h"
#include "scheduler/util/strings.h"

namespace kubesched::plugins::volume_binding {
namespace {

using framework::Status;
using util::Absl;

// Read before spec.storageClassName, as upstream still does.
constexpr std::string_view kBetaStorageClassAnnotation = "volume.beta.kubernetes.io/storage-class";
// A class with this provisioner cannot provision (local volumes are created by hand).
constexpr std::string_view kNoProvisioner = "kubernetes.io/no-provisioner";

api::Symbol HostnameKey() {
  static const api::Symbol key = api::Intern("kubernetes.io/hostname");
  return key;
}

api::ResourceId StorageResource() {
  static const api::ResourceId id = api::InternResource("storage");
  return id;
}

std::string_view VolumeClass(const api::PersistentVolume& volume) {
  const auto it = volume.meta.annotations.find(std::string(kBetaStorageClassAnnotation));
  return it != volume.meta.annotations.end() ? std::string_view(it->second)
                                             : std::string_view(volume.storage_class_name);
}

int64_t Capacity(const api::PersistentVolume& volume) {
  return volume.capacity.Get(StorageResource());
}

// Smallest first, then by name so that equal sizes are taken in a stable order.
bool SmallerVolume(const api::PersistentVolume* a, const api::PersistentVolume* b) {
  const int64_t ca = Capacity(*a);
  const int64_t cb = Capacity(*b);
  return ca != cb ? ca < cb : a->meta.name < b->meta.name;
}

// Every access mode the claim asks for is one the PV offers.
bool AccessModesFit(const api::PersistentVolumeClaim& claim, const api::PersistentVolume& volume) {
  return std::all_of(claim.access_modes.begin(), claim.access_modes.end(), [&](api::AccessMode m) {
    return std::find(volume.access_modes.begin(), volume.access_modes.end(), m) !=
           volume.access_modes.end();
  });
}

std::optional<std::string_view> Annotation(const api::ObjectMeta& meta, std::string_view key) {
  const auto it = meta.annotations.find(std::string(key));
  if (it == meta.annotations.end()) return std::nullopt;
  return std::string_view(it->second);
}

// metav1.IsControlledBy: a controller owner reference with the pod's UID.
bool ControlledBy(const api::PersistentVolumeClaim& claim, const api::Pod& pod) {
  return std::any_of(claim.meta.owner_references.begin(), claim.meta.owner_references.end(),
                     [&](const api::OwnerReference& ref) {
                       return ref.controller && !ref.uid.empty() && ref.uid == pod.meta.uid;
                     });
}

Status Unresolvable(const std::string& reason) {
  return Status::Unresolvable(api::StableText(reason));
}

// Upstream's podHasPVCs for one claim volume: the claim must exist, not be lost or being deleted,
// and (generic ephemeral volume) belong to the pod.
Status CheckClaim(const api::Pod& pod, const api::Volume& volume, const std::string& name,
                  const api::PersistentVolumeClaim* claim) {
  if (claim == nullptr) {
    return Unresolvable(volume.ephemeral
                            ? absl::StrCat("waiting for ephemeral volume controller to create the "
                                           "persistentvolumeclaim \"",
                                           name, "\"")
                            : absl::StrCat("persistentvolumeclaim \"", name, "\" not found"));
  }
  if (claim->phase == api::ClaimPhase::kLost) {
    return Unresolvable(absl::StrCat("persistentvolumeclaim \"", name,
                                     "\" bound to non-existent persistentvolume \"",
                                     claim->volume_name, "\""));
  }
  if (claim->meta.deletion_timestamp.has_value()) {
    return Unresolvable(absl::StrCat("persistentvolumeclaim \"", name, "\" is being deleted"));
  }
  if (volume.ephemeral && !ControlledBy(*claim, pod)) {
    return Unresolvable(absl::StrCat("PVC ", claim->meta.namespace_name, "/", name,
                                     " was not created for pod ", pod.meta.namespace_name, "/",
                                     pod.meta.name, " (pod is not owner)"));
  }
  return Status::Success();
}

// Upstream's IsDelayBindingMode: a claim without a class, or whose class does not exist, is bound
// by the PV controller (Immediate); a class that leaves the mode out is an error.
Status DelayBinding(const api::PersistentVolumeClaim& claim, const framework::StorageState& storage,
                    const api::StorageClass** found) {
  *found = nullptr;
  const std::string_view class_name = ClaimClass(claim);
  if (class_name.empty()) return Status::Success();
  const api::StorageClass* storage_class = storage.classes.Find(class_name);
  if (storage_class == nullptr) return Status::Success();
  if (!storage_class->volume_binding_mode.has_value()) {
    return Status::Error(
        absl::StrCat("VolumeBindingMode not set for StorageClass \"", Absl(class_name), "\""));
  }
  if (*storage_class->volume_binding_mode == api::VolumeBindingMode::kWaitForFirstConsumer) {
    *found = storage_class;
  }
  return Status::Success();
}

// The hostnames a PV's node affinity can match, when every term requires the hostname label
// to be one of a list; nullopt when some term does not (the PV may fit any node).
std::optional<std::vector<api::Symbol>> LocalHostnames(const api::PersistentVolume& volume) {
  if (!volume.node_affinity.has_value() || volume.node_affinity->terms.empty()) return std::nullopt;
  std::vector<api::Symbol> hosts;
  for (const api::NodeSelectorTerm& term : volume.node_affinity->terms) {
    const auto pin = std::find_if(
        term.match_expressions.begin(), term.match_expressions.end(),
        [](const auto& r) { return r.key == HostnameKey() && r.op == api::SelectorOperator::kIn; });
    if (pin == term.match_expressions.end()) return std::nullopt;
    hosts.insert(hosts.end(), pin->values.begin(), pin->values.end());
  }
  return hosts;
}

// Whether `volume` passes every check of upstream's FindMatchingVolume for `claim` that does not
// depend on the node. Sets `prebound` when its claimRef names the claim.
bool Admissible(const ClaimToBind& c, std::string_view class_name,
                const api::PersistentVolume& volume, bool* prebound) {
  const api::PersistentVolumeClaim& claim = *c.claim;
  *prebound = false;
  if (VolumeClass(volume) != class_name) return false;
  if (volume.meta.deletion_timestamp.has_value()) return false;
  if (volume.claim_ref.has_value() && !VolumeBoundToClaim(volume, claim)) return false;
  if (Capacity(volume) < c.requested) return false;
  if (VolumeBoundToClaim(volume, claim)) {
    *prebound = true;
    return true;
  }
  if (volume.phase != api::VolumePhase::kAvailable) return false;
  if (claim.selector.has_value() && !claim.selector->Matches(volume.meta.labels)) return false;
  return AccessModesFit(claim, volume);
}

// Fills each claim's candidates in one pass over the PVs.
void FindCandidates(const framework::StorageState& storage, std::vector<ClaimToBind>& to_bind) {
  storage.volumes.ForEach([&](const std::string&, const api::PersistentVolume& volume) {
    for (ClaimToBind& c : to_bind) {
      if (c.selected_node.has_value()) continue;  // provisioning was asked for: no static PV
      bool prebound = false;
      if (!Admissible(c, ClaimClass(*c.claim), volume, &prebound)) continue;
      if (prebound) {
        // Upstream takes the first pre-bound PV it meets; the smallest name, here.
        if (!c.prebound || volume.meta.name < c.candidates.front()->meta.name) {
          c.candidates = {&volume};
        }
        c.prebound = true;
        continue;
      }
      if (c.prebound) continue;
      if (auto hosts = LocalHostnames(volume); hosts.has_value()) {
        for (api::Symbol host : *hosts) c.local_candidates[host].push_back(&volume);
      } else {
        c.candidates.push_back(&volume);
      }
    }
  });
  for (ClaimToBind& c : to_bind) {
    if (c.prebound) {
      c.local_candidates.clear();
      continue;
    }
    std::sort(c.candidates.begin(), c.candidates.end(), SmallerVolume);
    for (auto& [host, list] : c.local_candidates) {
      std::sort(list.begin(), list.end(), SmallerVolume);
      list.erase(std::unique(list.begin(), list.end()), list.end());
    }
  }
}

// Upstream's GetLocalPersistentVolumeNodeNames: per term, the intersection of its hostname In
// lists; the union over the terms that have one.
absl::flat_hash_set<std::string> LocalNodeNames(const api::PersistentVolume& volume) {
  absl::flat_hash_set<std::string> result;
  if (!volume.node_affinity.has_value()) return result;
  for (const api::NodeSelectorTerm& term : volume.node_affinity->terms) {
    std::optional<absl::flat_hash_set<std::string>> nodes;
    for (const api::Requirement& r : term.match_expressions) {
      if (r.key != HostnameKey() || r.op != api::SelectorOperator::kIn) continue;
      absl::flat_hash_set<std::string> values;
      for (api::Symbol value : r.values) values.emplace(api::SymbolText(value));
      if (nodes.has_value()) {
        absl::erase_if(*nodes, [&](const std::string& n) { return !values.contains(n); });
      } else {
        nodes = std::move(values);
      }
    }
    if (nodes.has_value()) result.insert(nodes->begin(), nodes->end());
  }
  return result;
}

std::optional<absl::flat_hash_set<std::string>> EligibleNodes(const PodVolumes& volumes) {
  std::optional<absl::flat_hash_set<std::string>> eligible;
  for (const BoundClaim& b : volumes.bound) {
    if (b.volume == nullptr) continue;
    absl::flat_hash_set<std::string> names = LocalNodeNames(*b.volume);
    if (names.empty()) continue;
    if (!eligible.has_value()) {
      eligible = std::move(names);
    } else {
      absl::erase_if(*eligible, [&](const std::string& n) { return !names.contains(n); });
    }
  }
  return eligible;
}

}  // namespace

std::string_view ClaimClass(const api::PersistentVolumeClaim& claim) {
  if (auto annotated = Annotation(claim.meta, kBetaStorageClassAnnotation)) return *annotated;
  return claim.storage_class_name.has_value() ? std::string_view(*claim.storage_class_name) : "";
}

bool VolumeBoundToClaim(const api::PersistentVolume& volume,
                        const api::PersistentVolumeClaim& claim) {
  const auto& ref = volume.claim_ref;
  return ref.has_value() && ref->name == claim.meta.name &&
         ref->namespace_name == claim.meta.namespace_name &&
         (ref->uid.empty() || ref->uid == claim.meta.uid);
}

bool IsFullyBound(const api::PersistentVolumeClaim& claim) {
  return !claim.volume_name.empty() &&
         claim.meta.annotations.contains(std::string(api::kBindCompletedAnnotation));
}

int64_t StorageRequest(const api::PersistentVolumeClaim& claim) {
  return claim.requests.Get(StorageResource());
}

bool VolumeFitsLabels(const api::PersistentVolume& volume, const api::LabelSet& labels) {
  return !volume.node_affinity.has_value() || volume.node_affinity->Matches(labels, "");
}

namespace {

// The pod's distinct claims in volume order, each checked as podHasPVCs does; the first failure
// is PreFilter's answer.
Status ListClaims(const api::Pod& pod, const framework::StorageState& storage,
                  std::vector<const api::PersistentVolumeClaim*>* claims) {
  absl::flat_hash_set<std::string> seen;
  for (const api::Volume& volume : pod.spec.volumes) {
    std::string name = volume.ClaimName(pod.meta.name);
    if (name.empty()) continue;
    const api::PersistentVolumeClaim* claim = storage.Claim(pod.meta.namespace_name, name);
    if (Status status = CheckClaim(pod, volume, name, claim); !status.IsSuccess()) return status;
    if (seen.insert(std::move(name)).second) claims->push_back(claim);
  }
  return Status::Success();
}

// Splits the claims into bound ones and ones to bind; a claim the PV controller should have
// bound rejects the pod.
Status Classify(const std::vector<const api::PersistentVolumeClaim*>& claims,
                const framework::StorageState& storage, PodVolumes* out) {
  bool unbound_immediate = false;
  for (const api::PersistentVolumeClaim* claim : claims) {
    if (IsFullyBound(*claim)) {
      out->bound.push_back({claim, storage.volumes.Find(claim->volume_name)});
      continue;
    }
    const api::StorageClass* delayed = nullptr;
    if (Status status = DelayBinding(*claim, storage, &delayed); !status.IsSuccess()) {
      return status;
    }
    // A claim pre-bound by the user (volumeName set) is the PV controller's to finish.
    if (delayed == nullptr || !claim->volume_name.empty()) {
      unbound_immediate = true;
      continue;
    }
    ClaimToBind c;
    c.claim = claim;
    c.key = framework::StorageState::ClaimKey(claim->meta.namespace_name, claim->meta.name);
    c.requested = StorageRequest(*claim);
    c.selected_node = Annotation(claim->meta, api::kSelectedNodeAnnotation);
    c.storage_class = delayed;
    out->to_bind.push_back(std::move(c));
  }
  if (unbound_immediate) return Status::Unresolvable(kReasonUnboundImmediate);
  return Status::Success();
}

}  // namespace

Collected CollectPodVolumes(const framework::PodInfo& pod, const framework::StorageState& storage) {
  Collected out;
  std::vector<const api::PersistentVolumeClaim*> claims;
  out.status = ListClaims(pod.get(), storage, &claims);
  if (!out.status.IsSuccess()) return out;
  if (claims.empty()) {
    out.status = Status::Skip();
    return out;
  }
  out.status = Classify(claims, storage, &out.volumes);
  if (!out.status.IsSuccess()) return out;
  FindCandidates(storage, out.volumes.to_bind);
  std::stable_sort(
      out.volumes.to_bind.begin(), out.volumes.to_bind.end(),
      [](const ClaimToBind& a, const ClaimToBind& b) { return a.requested < b.requested; });
  out.eligible_nodes = EligibleNodes(out.volumes);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Per node

namespace {

using Chosen = absl::InlinedVector<const api::PersistentVolume*, 8>;

bool Taken(const Chosen& chosen, const api::PersistentVolume* volume) {
  return std::find(chosen.begin(), chosen.end(), volume) != chosen.end();
}

// The smallest PV of the claim that fits the node and no earlier claim of the pod took: the two
// sorted lists (PVs for any node, the node's local ones) are walked together in size order.
const api::PersistentVolume* FindMatch(const ClaimToBind& c, const api::LabelSet& labels,
                                       const Chosen& chosen) {
  if (c.prebound) {
    const api::PersistentVolume* volume = c.candidates.front();
    return VolumeFitsLabels(*volume, labels) ? volume : nullptr;
  }
  static const std::vector<const api::PersistentVolume*> kNone;
  const std::vector<const api::PersistentVolume*>* local = &kNone;
  if (!c.local_candidates.empty()) {
    if (const std::optional<api::Symbol> host = labels.Get(HostnameKey()); host.has_value()) {
      if (auto it = c.local_candidates.find(*host); it != c.local_candidates.end()) {
        local = &it->second;
      }
    }
  }
  size_t i = 0;
  size_t j = 0;
  while (i < c.candidates.size() || j < local->size()) {
    const bool from_any = j == local->size() ||
                          (i < c.candidates.size() && SmallerVolume(c.candidates[i], (*local)[j]));
    const api::PersistentVolume* volume = from_any ? c.candidates[i++] : (*local)[j++];
    if (!Taken(chosen, volume) && VolumeFitsLabels(*volume, labels)) return volume;
  }
  return nullptr;
}

// Upstream's MatchTopologySelectorTerms: no terms allow every node; otherwise some non-empty term
// must have every key with one of its values.
bool TopologyAllows(const api::StorageClass& storage_class, const api::LabelSet& labels) {
  const auto& terms = storage_class.allowed_topologies;
  if (terms.empty()) return true;
  return std::any_of(terms.begin(), terms.end(), [&](const auto& term) {
    return !term.empty() && std::all_of(term.begin(), term.end(), [&](const auto& r) {
      const std::optional<api::Symbol> value = labels.Get(r.key);
      return value.has_value() &&
             std::find(r.values.begin(), r.values.end(), *value) != r.values.end();
    });
  });
}

// Upstream's checkVolumeProvisions for one claim (there is no storage capacity tracking here).
bool CanProvision(const ClaimToBind& c, const api::LabelSet& labels) {
  const std::string_view provisioner = c.storage_class->provisioner;
  if (provisioner.empty() || provisioner == kNoProvisioner) return false;
  return TopologyAllows(*c.storage_class, labels);
}

// The claims to bind: upstream's FindPodVolumes after the bound claims.
bool UnboundClaimsFit(const PodVolumes& volumes, const api::Node& node, NodeDecision* decision) {
  const api::LabelSet& labels = node.meta.labels;
  for (const ClaimToBind& c : volumes.to_bind) {
    // Provisioning was asked for on another node already.
    if (c.selected_node.has_value() && *c.selected_node != node.meta.name) return false;
  }
  Chosen chosen;
  bool any_to_provision = false;
  bool all_provisionable = true;
  for (const ClaimToBind& c : volumes.to_bind) {
    const api::PersistentVolume* volume =
        c.selected_node.has_value() ? nullptr : FindMatch(c, labels, chosen);
    if (volume != nullptr) {
      chosen.push_back(volume);
      if (decision != nullptr) decision->bindings.emplace_back(&c, volume);
      continue;
    }
    // As upstream, once some claim is left without a PV, provisioning alone decides the node:
    // every such claim must be provisionable there.
    any_to_provision = true;
    if (!CanProvision(c, labels)) all_provisionable = false;
    if (decision != nullptr) decision->provisions.push_back(&c);
  }
  return !any_to_provision || all_provisionable;
}

}  // namespace

NodeVerdict EvaluateNode(const PodVolumes& volumes, const api::Node& node, NodeDecision* decision) {
  NodeVerdict verdict;
  for (const BoundClaim& b : volumes.bound) {
    // Upstream stops at the first bound claim that fails, either way.
    if (b.volume == nullptr) {
      verdict.pv_missing = true;
      break;
    }
    if (!VolumeFitsLabels(*b.volume, node.meta.labels)) {
      verdict.node_conflict = true;
      break;
    }
  }
  if (!volumes.to_bind.empty()) {
    verdict.bind_conflict = !UnboundClaimsFit(volumes, node, decision);
  }
  return verdict;
}

}  // namespace kubesched::plugins::volume_binding
