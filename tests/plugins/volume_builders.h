#pragma once

// Volume objects and pod volumes, built in code, for the volume plugins' tests (VolumeZone,
// VolumeRestrictions, NodeVolumeLimits), published as a StorageState the way the cache publishes
// them.

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/api/storage.h"
#include "scheduler/framework/storage_state.h"
#include "tests/testing/builders.h"

namespace kubesched::plugin_testing {

inline api::Volume ClaimVolume(const std::string& claim) {
  api::Volume volume;
  volume.name = claim;
  volume.claim_name = claim;
  return volume;
}

inline api::Volume EphemeralVolume(const std::string& name) {
  api::Volume volume;
  volume.name = name;
  volume.ephemeral = true;
  return volume;
}

class Claim {
 public:
  explicit Claim(std::string name, std::string ns = "default") {
    claim_.meta.name = std::move(name);
    claim_.meta.namespace_name = std::move(ns);
    claim_.meta.namespace_symbol = api::Intern(claim_.meta.namespace_name);
  }
  Claim& Bound(std::string pv) {
    claim_.volume_name = std::move(pv);
    return *this;
  }
  Claim& Class(std::string name) {
    claim_.storage_class_name = std::move(name);
    return *this;
  }
  Claim& Modes(std::vector<api::AccessMode> modes) {
    claim_.access_modes = std::move(modes);
    return *this;
  }
  // The pod (by uid) that controls the claim, as for a generic ephemeral volume.
  Claim& Owner(std::string uid) {
    claim_.meta.owner_references.push_back({"v1", "Pod", "owner", std::move(uid), true});
    return *this;
  }
  std::shared_ptr<const api::PersistentVolumeClaim> Ptr() const {
    return std::make_shared<const api::PersistentVolumeClaim>(claim_);
  }

 private:
  api::PersistentVolumeClaim claim_;
};

inline api::PersistentVolume Pv(
    const std::string& name, const std::vector<std::pair<std::string, std::string>>& labels = {}) {
  api::PersistentVolume pv;
  pv.meta.name = name;
  pv.meta.labels = testing::Labels(labels);
  return pv;
}

inline std::shared_ptr<const api::PersistentVolume> CsiPv(const std::string& name,
                                                          const std::string& driver,
                                                          const std::string& handle) {
  api::PersistentVolume pv = Pv(name);
  pv.csi = api::CsiSource{driver, handle};
  return std::make_shared<const api::PersistentVolume>(std::move(pv));
}

inline std::shared_ptr<const api::StorageClass> Class(
    const std::string& name, std::string provisioner = "",
    std::optional<api::VolumeBindingMode> mode = api::VolumeBindingMode::kImmediate) {
  auto storage_class = std::make_shared<api::StorageClass>();
  storage_class->meta.name = name;
  storage_class->provisioner = std::move(provisioner);
  storage_class->volume_binding_mode = mode;
  return storage_class;
}

// A CSINode for `node` giving each driver its count (nullopt: no limit reported), migrating the
// in-tree plugins listed in `migrated` (the annotation's value, "" for none).
inline std::shared_ptr<const api::CsiNode> CsiNode(
    const std::string& node,
    const std::vector<std::pair<std::string, std::optional<int32_t>>>& drivers,
    const std::string& migrated = "") {
  auto csi_node = std::make_shared<api::CsiNode>();
  csi_node->meta.name = node;
  if (!migrated.empty()) csi_node->meta.annotations[api::kMigratedPluginsAnnotation] = migrated;
  for (const auto& [driver, count] : drivers) csi_node->drivers.push_back({driver, node, count});
  return csi_node;
}

inline std::shared_ptr<const api::VolumeAttachment> Attachment(const std::string& name,
                                                               const std::string& attacher,
                                                               const std::string& node,
                                                               const std::string& pv) {
  auto attachment = std::make_shared<api::VolumeAttachment>();
  attachment->meta.name = name;
  attachment->attacher = attacher;
  attachment->node_name = node;
  attachment->persistent_volume_name = pv;
  return attachment;
}

// Collects volume objects and publishes them.
class Storage {
 public:
  Storage& Add(const Claim& claim) { return Add(claim.Ptr()); }
  Storage& Add(std::shared_ptr<const api::PersistentVolumeClaim> claim) {
    const std::string key =
        framework::StorageState::ClaimKey(claim->meta.namespace_name, claim->meta.name);
    state_->claims.Set(key, std::move(claim));
    return *this;
  }
  Storage& Add(std::shared_ptr<const api::PersistentVolume> pv) {
    const std::string name = pv->meta.name;
    state_->volumes.Set(name, std::move(pv));
    return *this;
  }
  Storage& Add(api::PersistentVolume pv) {
    return Add(std::make_shared<const api::PersistentVolume>(std::move(pv)));
  }
  Storage& Add(std::shared_ptr<const api::StorageClass> storage_class) {
    const std::string name = storage_class->meta.name;
    state_->classes.Set(name, std::move(storage_class));
    return *this;
  }
  Storage& Add(std::shared_ptr<const api::CsiNode> csi_node) {
    const std::string name = csi_node->meta.name;
    state_->csi_nodes.Set(name, std::move(csi_node));
    return *this;
  }
  Storage& Add(std::shared_ptr<const api::VolumeAttachment> attachment) {
    const std::string name = attachment->meta.name;
    state_->SetAttachment(name, std::move(attachment));
    return *this;
  }
  std::shared_ptr<const framework::StorageState> Build() const { return state_; }

 private:
  std::shared_ptr<framework::StorageState> state_ = std::make_shared<framework::StorageState>();
};

}  // namespace kubesched::plugin_testing
