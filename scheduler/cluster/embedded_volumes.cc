// EmbeddedCluster as the volume binding's API side (framework::VolumeBinder), playing the PV
// controller and the provisioners too, so that `simulate` binds claims at once.

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/api/resource.h"
#include "scheduler/api/symbol.h"
#include "scheduler/cluster/embedded_cluster.h"

namespace kubesched::cluster {
namespace {

constexpr char kBetaStorageClassAnnotation[] = "volume.beta.kubernetes.io/storage-class";
constexpr char kProvisionedByAnnotation[] = "pv.kubernetes.io/provisioned-by";
constexpr std::string_view kNoProvisioner = "kubernetes.io/no-provisioner";

// As the store keys namespaced objects (embedded_cluster.cc).
std::string ClaimKey(const std::string& namespace_name, const std::string& name) {
  return namespace_name.empty() ? name : absl::StrCat(namespace_name, "/", name);
}

std::string ClaimClass(const api::PersistentVolumeClaim& claim) {
  const auto annotated = claim.meta.annotations.find(kBetaStorageClassAnnotation);
  if (annotated != claim.meta.annotations.end()) return annotated->second;
  return claim.storage_class_name.value_or("");
}

// `key` In (`value`), as a PV's node affinity names a provisioned volume's node.
api::Requirement LabelIs(std::string_view key, std::string_view value) {
  api::Requirement requirement;
  requirement.key = api::Intern(key);
  requirement.op = api::SelectorOperator::kIn;
  requirement.values = {api::Intern(value)};
  return requirement;
}

// The node's hostname label (else its name) and its zone, when it has one.
api::NodeSelector NodeAffinityFor(const api::Node& node) {
  api::NodeSelectorTerm term;
  const std::optional<api::Symbol> hostname =
      node.meta.labels.Get(api::Intern("kubernetes.io/hostname"));
  term.match_expressions.push_back(
      LabelIs("kubernetes.io/hostname",
              hostname.has_value() ? api::SymbolText(*hostname) : node.meta.name));
  if (const std::optional<api::Symbol> zone =
          node.meta.labels.Get(api::Intern("topology.kubernetes.io/zone"));
      zone.has_value()) {
    term.match_expressions.push_back(
        LabelIs("topology.kubernetes.io/zone", api::SymbolText(*zone)));
  }
  return api::NodeSelector{{std::move(term)}};
}

absl::Status NotFound(const char* resource, const std::string& name) {
  return absl::NotFoundError(absl::StrCat(resource, " \"", name, "\" not found"));
}

}  // namespace

framework::VolumeWriteResult EmbeddedCluster::BindClaimLocked(const std::string& volume_key,
                                                              const std::string& claim_key) {
  api::PersistentVolumeClaim claim = *claims_.at(claim_key);
  api::PersistentVolume volume = *volumes_.at(volume_key);
  claim.volume_name = volume.meta.name;
  claim.meta.annotations[api::kBindCompletedAnnotation] = "yes";
  claim.phase = api::ClaimPhase::kBound;
  if (volume.claim_ref.has_value()) volume.claim_ref->uid = claim.meta.uid;
  volume.phase = api::VolumePhase::kBound;
  framework::VolumeWriteResult result;
  result.volume = Replace(volumes_, volume_key, std::move(volume));
  result.claim = Replace(claims_, claim_key, std::move(claim));
  return result;
}

std::optional<api::PersistentVolume> EmbeddedCluster::ProvisionLocked(
    const api::PersistentVolumeClaim& claim, const std::string& node_name) {
  const auto storage_class = storage_classes_.find(ClaimClass(claim));
  const auto node = nodes_.find(node_name);
  if (storage_class == storage_classes_.end() || node == nodes_.end()) return std::nullopt;
  const std::string& provisioner = storage_class->second->provisioner;
  if (provisioner.empty() || provisioner == kNoProvisioner) return std::nullopt;
  api::PersistentVolume volume;
  volume.meta.name = absl::StrCat(
      "pvc-", claim.meta.uid.empty() ? absl::StrCat(claim.meta.namespace_name, "-", claim.meta.name)
                                     : claim.meta.uid);
  volume.meta.annotations[kProvisionedByAnnotation] = provisioner;
  volume.meta.annotations[api::kBoundByControllerAnnotation] = "yes";
  const api::ResourceId storage = api::InternResource("storage");
  volume.capacity.Set(storage, claim.requests.Get(storage));
  volume.access_modes = claim.access_modes;
  volume.storage_class_name = storage_class->first;
  volume.node_affinity = NodeAffinityFor(*node->second);
  volume.claim_ref = api::ObjectReference{"PersistentVolumeClaim", claim.meta.namespace_name,
                                          claim.meta.name, claim.meta.uid};
  volume.phase = api::VolumePhase::kBound;
  return volume;
}

absl::StatusOr<framework::VolumeWriteResult> EmbeddedCluster::BindVolume(
    const api::PersistentVolume& volume) {
  absl::MutexLock lock(&mu_);
  const std::string& key = volume.meta.name;
  auto it = volumes_.find(key);
  if (it == volumes_.end()) return NotFound("persistentvolumes", key);
  if (it->second->meta.resource_version != volume.meta.resource_version) {
    return absl::AbortedError(absl::StrCat("Operation cannot be fulfilled on persistentvolumes \"",
                                           key, "\": the object has been modified"));
  }
  if (!volume.claim_ref.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat("persistentvolume ", key, ": no claimRef"));
  }
  api::PersistentVolume updated = *it->second;
  updated.claim_ref = volume.claim_ref;
  for (const auto& [name, value] : volume.meta.annotations) updated.meta.annotations[name] = value;
  framework::VolumeWriteResult result;
  result.volume = Replace(volumes_, key, std::move(updated));
  // The PV controller's turn: the claim the PV names takes it, unless it took another PV.
  const std::string claim_key = ClaimKey(volume.claim_ref->namespace_name, volume.claim_ref->name);
  const auto claim = claims_.find(claim_key);
  if (claim == claims_.end()) return result;
  const api::PersistentVolumeClaim& current = *claim->second;
  const std::string& ref_uid = volume.claim_ref->uid;
  if ((!current.volume_name.empty() && current.volume_name != key) ||
      (!ref_uid.empty() && ref_uid != current.meta.uid)) {
    return result;
  }
  return BindClaimLocked(key, claim_key);
}

absl::StatusOr<framework::VolumeWriteResult> EmbeddedCluster::SelectNode(
    const api::PersistentVolumeClaim& claim) {
  absl::MutexLock lock(&mu_);
  const std::string key = ClaimKey(claim.meta.namespace_name, claim.meta.name);
  const auto it = claims_.find(key);
  if (it == claims_.end()) return NotFound("persistentvolumeclaims", claim.meta.name);
  const auto selected = claim.meta.annotations.find(api::kSelectedNodeAnnotation);
  if (selected == claim.meta.annotations.end()) {
    return absl::InvalidArgumentError(absl::StrCat("persistentvolumeclaim ", key, ": no node"));
  }
  api::PersistentVolumeClaim updated = *it->second;
  updated.meta.annotations[api::kSelectedNodeAnnotation] = selected->second;
  framework::VolumeWriteResult result;
  result.claim = Replace(claims_, key, std::move(updated));
  if (!result.claim->volume_name.empty()) return result;
  // A provisioner's turn: a new PV on the node, bound to the claim.
  std::optional<api::PersistentVolume> provisioned =
      ProvisionLocked(*result.claim, selected->second);
  if (!provisioned.has_value()) return result;
  const std::string volume_key = provisioned->meta.name;
  if (volumes_.contains(volume_key)) {
    return absl::AlreadyExistsError(
        absl::StrCat("PersistentVolume ", volume_key, " already exists"));
  }
  provisioned->meta.resource_version = NextResourceVersion();
  auto stored = std::make_shared<const api::PersistentVolume>(*std::move(provisioned));
  volumes_.emplace(volume_key, stored);
  Enqueue(nullptr, client::Event<api::PersistentVolume>{client::EventType::kAdded, nullptr,
                                                        std::move(stored)});
  return BindClaimLocked(volume_key, key);
}

}  // namespace kubesched::cluster
