// Decoding of pod volumes and of the volume kinds (see decode_internal.h).

#include <string>
#include <utility>

#include "scheduler/api/decode_internal.h"

namespace kubesched::api::internal {
namespace {

// The source member `name` of a volume, or nullptr.
const Json* Source(const Json& volume, std::string_view name) { return Find(volume, name); }

absl::Status DecodeVolumeSources(const Json& value, const Path& path, Volume* out) {
  if (const Json* pvc = Source(value, "persistentVolumeClaim")) {
    const Path at = path.Field("persistentVolumeClaim");
    KUBESCHED_RETURN_IF_ERROR(ExpectObject(*pvc, at));
    KUBESCHED_RETURN_IF_ERROR(ReadString(*pvc, "claimName", at, &out->claim_name));
    if (out->claim_name.empty()) return at.Field("claimName").Error("missing or empty");
    KUBESCHED_RETURN_IF_ERROR(ReadBool(*pvc, "readOnly", at, &out->read_only));
  }
  out->ephemeral = Source(value, "ephemeral") != nullptr;
  if (const Json* gce = Source(value, "gcePersistentDisk")) {
    const Path at = path.Field("gcePersistentDisk");
    KUBESCHED_RETURN_IF_ERROR(ExpectObject(*gce, at));
    KUBESCHED_RETURN_IF_ERROR(ReadString(*gce, "pdName", at, &out->gce_pd_name));
    KUBESCHED_RETURN_IF_ERROR(ReadBool(*gce, "readOnly", at, &out->read_only));
  }
  if (const Json* ebs = Source(value, "awsElasticBlockStore")) {
    const Path at = path.Field("awsElasticBlockStore");
    KUBESCHED_RETURN_IF_ERROR(ExpectObject(*ebs, at));
    KUBESCHED_RETURN_IF_ERROR(ReadString(*ebs, "volumeID", at, &out->aws_ebs_volume_id));
    KUBESCHED_RETURN_IF_ERROR(ReadBool(*ebs, "readOnly", at, &out->read_only));
  }
  if (const Json* iscsi = Source(value, "iscsi")) {
    const Path at = path.Field("iscsi");
    KUBESCHED_RETURN_IF_ERROR(ExpectObject(*iscsi, at));
    KUBESCHED_RETURN_IF_ERROR(ReadString(*iscsi, "iqn", at, &out->iscsi_iqn));
    KUBESCHED_RETURN_IF_ERROR(ReadBool(*iscsi, "readOnly", at, &out->read_only));
  }
  if (const Json* rbd = Source(value, "rbd")) {
    const Path at = path.Field("rbd");
    KUBESCHED_RETURN_IF_ERROR(ExpectObject(*rbd, at));
    KUBESCHED_RETURN_IF_ERROR(
        ForEachElement(*rbd, "monitors", at, [&](const Json& m, const Path& p) {
          absl::StatusOr<std::string_view> text = AsString(m, p);
          if (!text.ok()) return text.status();
          out->rbd_monitors.emplace_back(*text);
          return absl::OkStatus();
        }));
    out->rbd_pool = "rbd";  // the API server's default
    KUBESCHED_RETURN_IF_ERROR(ReadString(*rbd, "pool", at, &out->rbd_pool));
    KUBESCHED_RETURN_IF_ERROR(ReadString(*rbd, "image", at, &out->rbd_image));
    KUBESCHED_RETURN_IF_ERROR(ReadBool(*rbd, "readOnly", at, &out->read_only));
  }
  if (const Json* csi = Source(value, "csi")) {
    const Path at = path.Field("csi");
    KUBESCHED_RETURN_IF_ERROR(ExpectObject(*csi, at));
    KUBESCHED_RETURN_IF_ERROR(ReadString(*csi, "driver", at, &out->csi_driver));
  }
  return absl::OkStatus();
}

absl::StatusOr<Volume> DecodeVolume(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  Volume volume;
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "name", path, &volume.name));
  KUBESCHED_RETURN_IF_ERROR(DecodeVolumeSources(value, path, &volume));
  return volume;
}

absl::Status ReadAccessModes(const Json& spec, const Path& path, std::vector<AccessMode>* out) {
  return ForEachElement(spec, "accessModes", path, [&](const Json& element, const Path& at) {
    AccessMode mode = AccessMode::kReadWriteOnce;
    absl::StatusOr<std::string_view> text = AsString(element, at);
    if (!text.ok()) return text.status();
    if (*text == "ReadWriteOnce") {
      mode = AccessMode::kReadWriteOnce;
    } else if (*text == "ReadOnlyMany") {
      mode = AccessMode::kReadOnlyMany;
    } else if (*text == "ReadWriteMany") {
      mode = AccessMode::kReadWriteMany;
    } else if (*text == "ReadWriteOncePod") {
      mode = AccessMode::kReadWriteOncePod;
    } else {
      return UnknownValue(at, *text);
    }
    out->push_back(mode);
    return absl::OkStatus();
  });
}

// The top-level object member `name` ("spec", "status"), or nullptr when absent or null.
absl::StatusOr<const Json*> Section(const Json& object, std::string_view name) {
  const Json* section = Find(object, name);
  if (section != nullptr) KUBESCHED_RETURN_IF_ERROR(ExpectObject(*section, Path(name)));
  return section;
}

absl::Status DecodeClaimSpec(const Json& spec, const Path& path, PersistentVolumeClaim* out) {
  KUBESCHED_RETURN_IF_ERROR(ReadAccessModes(spec, path, &out->access_modes));
  KUBESCHED_RETURN_IF_ERROR(ReadOptionalLabelSelector(spec, "selector", path, &out->selector));
  if (const Json* resources = Find(spec, "resources")) {
    const Path at = path.Field("resources");
    KUBESCHED_RETURN_IF_ERROR(ExpectObject(*resources, at));
    KUBESCHED_RETURN_IF_ERROR(ReadResources(*resources, "requests", at, &out->requests));
  }
  if (Find(spec, "storageClassName") != nullptr) {
    std::string name;
    KUBESCHED_RETURN_IF_ERROR(ReadString(spec, "storageClassName", path, &name));
    out->storage_class_name = std::move(name);
  }
  return ReadString(spec, "volumeName", path, &out->volume_name);
}

absl::StatusOr<ObjectReference> DecodeObjectReference(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  ObjectReference ref;
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "kind", path, &ref.kind));
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "namespace", path, &ref.namespace_name));
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "name", path, &ref.name));
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "uid", path, &ref.uid));
  return ref;
}

absl::Status DecodeVolumeSpecSources(const Json& spec, const Path& path, PersistentVolume* out) {
  if (const Json* csi = Find(spec, "csi")) {
    const Path at = path.Field("csi");
    KUBESCHED_RETURN_IF_ERROR(ExpectObject(*csi, at));
    CsiSource source;
    KUBESCHED_RETURN_IF_ERROR(ReadString(*csi, "driver", at, &source.driver));
    KUBESCHED_RETURN_IF_ERROR(ReadString(*csi, "volumeHandle", at, &source.volume_handle));
    out->csi = std::move(source);
  }
  if (const Json* ebs = Find(spec, "awsElasticBlockStore")) {
    const Path at = path.Field("awsElasticBlockStore");
    KUBESCHED_RETURN_IF_ERROR(ExpectObject(*ebs, at));
    KUBESCHED_RETURN_IF_ERROR(ReadString(*ebs, "volumeID", at, &out->aws_ebs_volume_id));
  }
  if (const Json* gce = Find(spec, "gcePersistentDisk")) {
    const Path at = path.Field("gcePersistentDisk");
    KUBESCHED_RETURN_IF_ERROR(ExpectObject(*gce, at));
    KUBESCHED_RETURN_IF_ERROR(ReadString(*gce, "pdName", at, &out->gce_pd_name));
  }
  return absl::OkStatus();
}

absl::Status DecodeVolumeSpec(const Json& spec, const Path& path, PersistentVolume* out) {
  KUBESCHED_RETURN_IF_ERROR(ReadResources(spec, "capacity", path, &out->capacity));
  KUBESCHED_RETURN_IF_ERROR(ReadAccessModes(spec, path, &out->access_modes));
  KUBESCHED_RETURN_IF_ERROR(ReadString(spec, "storageClassName", path, &out->storage_class_name));
  if (const Json* affinity = Find(spec, "nodeAffinity")) {
    const Path at = path.Field("nodeAffinity");
    KUBESCHED_RETURN_IF_ERROR(ExpectObject(*affinity, at));
    if (const Json* required = Find(*affinity, "required")) {
      absl::StatusOr<NodeSelector> selector = DecodeNodeSelector(*required, at.Field("required"));
      if (!selector.ok()) return selector.status();
      out->node_affinity = *std::move(selector);
    }
  }
  if (const Json* claim = Find(spec, "claimRef")) {
    absl::StatusOr<ObjectReference> ref = DecodeObjectReference(*claim, path.Field("claimRef"));
    if (!ref.ok()) return ref.status();
    out->claim_ref = *std::move(ref);
  }
  return DecodeVolumeSpecSources(spec, path, out);
}

absl::StatusOr<std::vector<TopologySelectorRequirement>> DecodeTopologyTerm(const Json& value,
                                                                            const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  std::vector<TopologySelectorRequirement> term;
  KUBESCHED_RETURN_IF_ERROR(ForEachElement(
      value, "matchLabelExpressions", path, [&](const Json& element, const Path& at) {
        KUBESCHED_RETURN_IF_ERROR(ExpectObject(element, at));
        TopologySelectorRequirement requirement;
        std::string key;
        KUBESCHED_RETURN_IF_ERROR(ReadString(element, "key", at, &key));
        requirement.key = Intern(key);
        KUBESCHED_RETURN_IF_ERROR(ReadSymbols(element, "values", at, &requirement.values));
        term.push_back(std::move(requirement));
        return absl::OkStatus();
      }));
  return term;
}

}  // namespace

absl::Status DecodePodVolumes(const Json& spec, const Path& path, std::vector<Volume>* out) {
  return ForEachElement(spec, "volumes", path, [&](const Json& element, const Path& at) {
    absl::StatusOr<Volume> volume = DecodeVolume(element, at);
    if (!volume.ok()) return volume.status();
    out->push_back(*std::move(volume));
    return absl::OkStatus();
  });
}

absl::StatusOr<PersistentVolumeClaim> DecodePersistentVolumeClaim(const Json& object) {
  PersistentVolumeClaim claim;
  KUBESCHED_RETURN_IF_ERROR(DecodeMeta(object, /*namespaced=*/true, &claim.meta));
  absl::StatusOr<const Json*> spec = Section(object, "spec");
  if (!spec.ok()) return spec.status();
  if (*spec != nullptr) KUBESCHED_RETURN_IF_ERROR(DecodeClaimSpec(**spec, Path("spec"), &claim));
  absl::StatusOr<const Json*> status = Section(object, "status");
  if (!status.ok()) return status.status();
  if (*status != nullptr) {
    KUBESCHED_RETURN_IF_ERROR(ReadEnum(**status, "phase", Path("status"),
                                       {{"Pending", ClaimPhase::kPending},
                                        {"Bound", ClaimPhase::kBound},
                                        {"Lost", ClaimPhase::kLost}},
                                       &claim.phase));
  }
  return claim;
}

absl::StatusOr<PersistentVolume> DecodePersistentVolume(const Json& object) {
  PersistentVolume volume;
  KUBESCHED_RETURN_IF_ERROR(DecodeMeta(object, /*namespaced=*/false, &volume.meta));
  absl::StatusOr<const Json*> spec = Section(object, "spec");
  if (!spec.ok()) return spec.status();
  if (*spec != nullptr) KUBESCHED_RETURN_IF_ERROR(DecodeVolumeSpec(**spec, Path("spec"), &volume));
  absl::StatusOr<const Json*> status = Section(object, "status");
  if (!status.ok()) return status.status();
  if (*status != nullptr) {
    KUBESCHED_RETURN_IF_ERROR(ReadEnum(**status, "phase", Path("status"),
                                       {{"Pending", VolumePhase::kPending},
                                        {"Available", VolumePhase::kAvailable},
                                        {"Bound", VolumePhase::kBound},
                                        {"Released", VolumePhase::kReleased},
                                        {"Failed", VolumePhase::kFailed}},
                                       &volume.phase));
  }
  return volume;
}

absl::StatusOr<StorageClass> DecodeStorageClass(const Json& object) {
  StorageClass sc;
  const Path root;
  KUBESCHED_RETURN_IF_ERROR(DecodeMeta(object, /*namespaced=*/false, &sc.meta));
  KUBESCHED_RETURN_IF_ERROR(ReadString(object, "provisioner", root, &sc.provisioner));
  KUBESCHED_RETURN_IF_ERROR(
      ReadOptionalEnum(object, "volumeBindingMode", root,
                       {{"Immediate", VolumeBindingMode::kImmediate},
                        {"WaitForFirstConsumer", VolumeBindingMode::kWaitForFirstConsumer}},
                       &sc.volume_binding_mode));
  KUBESCHED_RETURN_IF_ERROR(
      ForEachElement(object, "allowedTopologies", root, [&](const Json& element, const Path& at) {
        auto term = DecodeTopologyTerm(element, at);
        if (!term.ok()) return term.status();
        sc.allowed_topologies.push_back(*std::move(term));
        return absl::OkStatus();
      }));
  const auto is_default = sc.meta.annotations.find("storageclass.kubernetes.io/is-default-class");
  sc.is_default = is_default != sc.meta.annotations.end() && is_default->second == "true";
  return sc;
}

absl::StatusOr<CsiNode> DecodeCsiNode(const Json& object) {
  CsiNode node;
  KUBESCHED_RETURN_IF_ERROR(DecodeMeta(object, /*namespaced=*/false, &node.meta));
  absl::StatusOr<const Json*> spec = Section(object, "spec");
  if (!spec.ok() || *spec == nullptr)
    return spec.ok() ? absl::StatusOr<CsiNode>(node) : spec.status();
  const Path path("spec");
  KUBESCHED_RETURN_IF_ERROR(
      ForEachElement(**spec, "drivers", path, [&](const Json& element, const Path& at) {
        KUBESCHED_RETURN_IF_ERROR(ExpectObject(element, at));
        CsiNodeDriver driver;
        KUBESCHED_RETURN_IF_ERROR(ReadString(element, "name", at, &driver.name));
        KUBESCHED_RETURN_IF_ERROR(ReadString(element, "nodeID", at, &driver.node_id));
        if (const Json* allocatable = Find(element, "allocatable")) {
          const Path where = at.Field("allocatable");
          KUBESCHED_RETURN_IF_ERROR(ExpectObject(*allocatable, where));
          KUBESCHED_RETURN_IF_ERROR(
              ReadInt32(*allocatable, "count", where, &driver.allocatable_count));
        }
        node.drivers.push_back(std::move(driver));
        return absl::OkStatus();
      }));
  return node;
}

absl::StatusOr<VolumeAttachment> DecodeVolumeAttachment(const Json& object) {
  VolumeAttachment attachment;
  KUBESCHED_RETURN_IF_ERROR(DecodeMeta(object, /*namespaced=*/false, &attachment.meta));
  absl::StatusOr<const Json*> spec = Section(object, "spec");
  if (!spec.ok()) return spec.status();
  if (*spec == nullptr) return attachment;
  const Path path("spec");
  KUBESCHED_RETURN_IF_ERROR(ReadString(**spec, "attacher", path, &attachment.attacher));
  KUBESCHED_RETURN_IF_ERROR(ReadString(**spec, "nodeName", path, &attachment.node_name));
  if (const Json* source = Find(**spec, "source")) {
    const Path at = path.Field("source");
    KUBESCHED_RETURN_IF_ERROR(ExpectObject(*source, at));
    KUBESCHED_RETURN_IF_ERROR(
        ReadString(*source, "persistentVolumeName", at, &attachment.persistent_volume_name));
  }
  return attachment;
}

}  // namespace kubesched::api::internal
