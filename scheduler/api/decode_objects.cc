// Decoding of metadata and of every kind but Pod (see decode_internal.h).

#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "scheduler/api/decode_internal.h"
#include "scheduler/api/parse_internal.h"
#include "scheduler/util/strings.h"

namespace kubesched::api::internal {
namespace {

absl::StatusOr<OwnerReference> DecodeOwnerReference(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  OwnerReference ref;
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "apiVersion", path, &ref.api_version));
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "kind", path, &ref.kind));
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "name", path, &ref.name));
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "uid", path, &ref.uid));
  KUBESCHED_RETURN_IF_ERROR(ReadBool(value, "controller", path, &ref.controller));
  return ref;
}

absl::Status DecodeNamespaceName(const Json& metadata, bool namespaced, const Path& path,
                                 ObjectMeta* meta) {
  // Cluster-scoped kinds have no namespace whatever the input says. A namespaced object without
  // one is in "default"; an explicit "" is kept, as some test vectors depend on it.
  if (namespaced) {
    meta->namespace_name = kDefaultNamespace;
    KUBESCHED_RETURN_IF_ERROR(ReadString(metadata, "namespace", path, &meta->namespace_name));
  }
  meta->namespace_symbol = Intern(meta->namespace_name);
  return absl::OkStatus();
}

absl::StatusOr<Taint> DecodeTaint(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  Taint taint;
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "key", path, &taint.key));
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "value", path, &taint.value));
  KUBESCHED_RETURN_IF_ERROR(ReadEnum(value, "effect", path,
                                     {{"", TaintEffect::kNone},
                                      {"NoSchedule", TaintEffect::kNoSchedule},
                                      {"PreferNoSchedule", TaintEffect::kPreferNoSchedule},
                                      {"NoExecute", TaintEffect::kNoExecute}},
                                     &taint.effect));
  return taint;
}

absl::StatusOr<NodeCondition> DecodeNodeCondition(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  NodeCondition condition;
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "type", path, &condition.type));
  KUBESCHED_RETURN_IF_ERROR(ReadString(value, "status", path, &condition.status));
  return condition;
}

// The top-level object member `name` ("spec", "status"), or nullptr when absent or null.
absl::StatusOr<const Json*> Section(const Json& object, std::string_view name) {
  const Json* section = Find(object, name);
  if (section != nullptr) KUBESCHED_RETURN_IF_ERROR(ExpectObject(*section, Path(name)));
  return section;
}

absl::Status DecodeNodeSpec(const Json& object, NodeSpec* out) {
  absl::StatusOr<const Json*> spec = Section(object, "spec");
  if (!spec.ok() || *spec == nullptr) return spec.status();
  const Path path("spec");
  KUBESCHED_RETURN_IF_ERROR(ReadBool(**spec, "unschedulable", path, &out->unschedulable));
  return ForEachElement(**spec, "taints", path, [&](const Json& element, const Path& at) {
    absl::StatusOr<Taint> taint = DecodeTaint(element, at);
    if (!taint.ok()) return taint.status();
    out->taints.push_back(*std::move(taint));
    return absl::OkStatus();
  });
}

absl::StatusOr<ContainerImage> DecodeContainerImage(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  ContainerImage image;
  KUBESCHED_RETURN_IF_ERROR(
      ForEachElement(value, "names", path, [&](const Json& name, const Path& at) {
        absl::StatusOr<std::string_view> text = AsString(name, at);
        if (!text.ok()) return text.status();
        image.names.emplace_back(*text);
        return absl::OkStatus();
      }));
  std::optional<int64_t> size;
  KUBESCHED_RETURN_IF_ERROR(ReadInt64(value, "sizeBytes", path, &size));
  if (size.value_or(0) < 0) return path.Field("sizeBytes").Error("must not be negative");
  image.size_bytes = size.value_or(0);
  return image;
}

absl::Status DecodeNodeStatus(const Json& object, NodeStatus* out) {
  absl::StatusOr<const Json*> status = Section(object, "status");
  if (!status.ok() || *status == nullptr) return status.status();
  const Path path("status");
  KUBESCHED_RETURN_IF_ERROR(ReadResources(**status, "capacity", path, &out->capacity));
  // Nodes from hand-written dumps often list only capacity; the kubelet would report the same.
  if (Find(**status, "allocatable") == nullptr) {
    out->allocatable = out->capacity;
  } else {
    KUBESCHED_RETURN_IF_ERROR(ReadResources(**status, "allocatable", path, &out->allocatable));
  }
  KUBESCHED_RETURN_IF_ERROR(
      ForEachElement(**status, "conditions", path, [&](const Json& element, const Path& at) {
        absl::StatusOr<NodeCondition> condition = DecodeNodeCondition(element, at);
        if (!condition.ok()) return condition.status();
        out->conditions.push_back(*std::move(condition));
        return absl::OkStatus();
      }));
  return ForEachElement(**status, "images", path, [&](const Json& element, const Path& at) {
    absl::StatusOr<ContainerImage> image = DecodeContainerImage(element, at);
    if (!image.ok()) return image.status();
    out->images.push_back(*std::move(image));
    return absl::OkStatus();
  });
}

// intstr.IntOrString as PDBs use it: a non-negative integer or "N%".
absl::StatusOr<IntOrPercent> DecodeIntOrPercent(const Json& value, const Path& path) {
  IntOrPercent out;
  if (value.IsString()) {
    const std::string_view text = View(value);
    int64_t number = 0;
    if (!text.ends_with('%') || text.starts_with('+') || text.starts_with('-') ||
        !ParseInt64(text.substr(0, text.size() - 1), &number) || number > INT32_MAX) {
      return path.Error(absl::StrFormat(
          "invalid value \"%s\": want an integer or a percentage like \"50%%\"", util::Absl(text)));
    }
    out.value = static_cast<int32_t>(number);
    out.is_percent = true;
    return out;
  }
  absl::StatusOr<int32_t> number = AsInt32(value, path);
  if (!number.ok()) return number.status();
  if (*number < 0) return path.Error("must not be negative");
  out.value = *number;
  return out;
}

absl::Status ReadIntOrPercent(const Json& object, std::string_view name, const Path& path,
                              std::optional<IntOrPercent>* out) {
  const Json* value = Find(object, name);
  if (value == nullptr) return absl::OkStatus();
  absl::StatusOr<IntOrPercent> decoded = DecodeIntOrPercent(*value, path.Field(name));
  if (!decoded.ok()) return decoded.status();
  *out = *decoded;
  return absl::OkStatus();
}

absl::Status DecodePdbSpec(const Json& object, PodDisruptionBudget* out) {
  absl::StatusOr<const Json*> spec = Section(object, "spec");
  if (!spec.ok() || *spec == nullptr) return spec.status();
  const Path path("spec");
  KUBESCHED_RETURN_IF_ERROR(ReadIntOrPercent(**spec, "minAvailable", path, &out->min_available));
  KUBESCHED_RETURN_IF_ERROR(
      ReadIntOrPercent(**spec, "maxUnavailable", path, &out->max_unavailable));
  return ReadOptionalLabelSelector(**spec, "selector", path, &out->selector);
}

absl::Status DecodePdbStatus(const Json& object, PodDisruptionBudget* out) {
  absl::StatusOr<const Json*> status = Section(object, "status");
  if (!status.ok() || *status == nullptr) return status.status();
  const Path path("status");
  KUBESCHED_RETURN_IF_ERROR(
      ReadInt32(**status, "disruptionsAllowed", path, &out->disruptions_allowed));
  KUBESCHED_RETURN_IF_ERROR(ReadInt32(**status, "currentHealthy", path, &out->current_healthy));
  KUBESCHED_RETURN_IF_ERROR(ReadInt32(**status, "desiredHealthy", path, &out->desired_healthy));
  KUBESCHED_RETURN_IF_ERROR(ReadInt32(**status, "expectedPods", path, &out->expected_pods));
  // disruptedPods maps pod name to the time of its eviction; only the names matter here.
  const Json* disrupted = Find(**status, "disruptedPods");
  if (disrupted == nullptr) return absl::OkStatus();
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(*disrupted, path.Field("disruptedPods")));
  for (const auto& member : disrupted->GetObject())
    out->disrupted_pods.emplace_back(View(member.name));
  std::sort(out->disrupted_pods.begin(), out->disrupted_pods.end());
  return absl::OkStatus();
}

// Upstream's limits (pkg/apis/scheduling): user classes up to HighestUserDefinablePriority; the
// two system classes, and only names with the system prefix, above it.
constexpr int32_t kHighestUserDefinablePriority = 1'000'000'000;
constexpr int32_t kHighestSystemPriority = 2 * kHighestUserDefinablePriority + 1000;

// The API server refuses such values on create, but a class stored before (or restored from
// another cluster's backup) can still be served; its pods would outrank system-critical ones.
absl::Status CheckPriorityValue(const PriorityClass& pc) {
  const bool system = pc.meta.name.starts_with("system-");
  const int32_t highest = system ? kHighestSystemPriority : kHighestUserDefinablePriority;
  if (pc.value <= highest) return absl::OkStatus();
  return Path("value").Error(absl::StrCat("maximum allowed value of a ", system ? "system" : "user",
                                          " defined priority is ", highest, ", got ", pc.value));
}

}  // namespace

absl::Status DecodeMeta(const Json& object, bool namespaced, ObjectMeta* meta) {
  const Path path("metadata");
  const Json* metadata = Find(object, "metadata");
  if (metadata == nullptr) return path.Error("missing");
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(*metadata, path));
  KUBESCHED_RETURN_IF_ERROR(ReadString(*metadata, "name", path, &meta->name));
  if (meta->name.empty()) return path.Field("name").Error("missing or empty");
  KUBESCHED_RETURN_IF_ERROR(DecodeNamespaceName(*metadata, namespaced, path, meta));
  KUBESCHED_RETURN_IF_ERROR(ReadString(*metadata, "uid", path, &meta->uid));
  KUBESCHED_RETURN_IF_ERROR(
      ReadString(*metadata, "resourceVersion", path, &meta->resource_version));
  KUBESCHED_RETURN_IF_ERROR(ReadLabelSet(*metadata, "labels", path, &meta->labels));
  KUBESCHED_RETURN_IF_ERROR(ReadStringMap(*metadata, "annotations", path, &meta->annotations));
  KUBESCHED_RETURN_IF_ERROR(
      ForEachElement(*metadata, "ownerReferences", path, [&](const Json& element, const Path& at) {
        absl::StatusOr<OwnerReference> ref = DecodeOwnerReference(element, at);
        if (!ref.ok()) return ref.status();
        meta->owner_references.push_back(*std::move(ref));
        return absl::OkStatus();
      }));
  KUBESCHED_RETURN_IF_ERROR(
      ReadTime(*metadata, "creationTimestamp", path, &meta->creation_timestamp));
  return ReadTime(*metadata, "deletionTimestamp", path, &meta->deletion_timestamp);
}

absl::StatusOr<Node> DecodeNode(const Json& object) {
  Node node;
  KUBESCHED_RETURN_IF_ERROR(DecodeMeta(object, /*namespaced=*/false, &node.meta));
  KUBESCHED_RETURN_IF_ERROR(DecodeNodeSpec(object, &node.spec));
  KUBESCHED_RETURN_IF_ERROR(DecodeNodeStatus(object, &node.status));
  return node;
}

absl::StatusOr<Namespace> DecodeNamespace(const Json& object) {
  Namespace ns;
  KUBESCHED_RETURN_IF_ERROR(DecodeMeta(object, /*namespaced=*/false, &ns.meta));
  return ns;
}

absl::StatusOr<PriorityClass> DecodePriorityClass(const Json& object) {
  PriorityClass pc;
  const Path root;
  KUBESCHED_RETURN_IF_ERROR(DecodeMeta(object, /*namespaced=*/false, &pc.meta));
  KUBESCHED_RETURN_IF_ERROR(ReadInt32(object, "value", root, &pc.value));
  KUBESCHED_RETURN_IF_ERROR(CheckPriorityValue(pc));
  KUBESCHED_RETURN_IF_ERROR(ReadBool(object, "globalDefault", root, &pc.global_default));
  KUBESCHED_RETURN_IF_ERROR(
      ReadOptionalEnum(object, "preemptionPolicy", root,
                       {{"PreemptLowerPriority", PreemptionPolicy::kPreemptLowerPriority},
                        {"Never", PreemptionPolicy::kNever}},
                       &pc.preemption_policy));
  KUBESCHED_RETURN_IF_ERROR(ReadString(object, "description", root, &pc.description));
  return pc;
}

absl::StatusOr<ConfigMap> DecodeConfigMap(const Json& object) {
  ConfigMap cm;
  KUBESCHED_RETURN_IF_ERROR(DecodeMeta(object, /*namespaced=*/true, &cm.meta));
  KUBESCHED_RETURN_IF_ERROR(ReadStringMap(object, "data", Path(), &cm.data));
  return cm;
}

absl::StatusOr<PodDisruptionBudget> DecodePodDisruptionBudget(const Json& object) {
  PodDisruptionBudget pdb;
  KUBESCHED_RETURN_IF_ERROR(DecodeMeta(object, /*namespaced=*/true, &pdb.meta));
  KUBESCHED_RETURN_IF_ERROR(DecodePdbSpec(object, &pdb));
  KUBESCHED_RETURN_IF_ERROR(DecodePdbStatus(object, &pdb));
  return pdb;
}

absl::StatusOr<NodeMetrics> DecodeNodeMetrics(const Json& object) {
  NodeMetrics metrics;
  const Path root;
  KUBESCHED_RETURN_IF_ERROR(DecodeMeta(object, /*namespaced=*/false, &metrics.meta));
  KUBESCHED_RETURN_IF_ERROR(ReadTime(object, "timestamp", root, &metrics.timestamp));
  KUBESCHED_RETURN_IF_ERROR(ReadResources(object, "usage", root, &metrics.usage));
  return metrics;
}

}  // namespace kubesched::api::internal
