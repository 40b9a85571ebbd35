#include "scheduler/api/decode_collector.h"

#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "scheduler/util/strings.h"

namespace kubesched::api {
namespace internal {
namespace {

using util::Absl;

template <typename T, absl::StatusOr<T> (*Decode)(const Json&)>
absl::StatusOr<Object> DecodeAs(const Json& json) {
  absl::StatusOr<T> decoded = Decode(json);
  if (!decoded.ok()) return decoded.status();
  return Object(*std::move(decoded));
}

// In the variant's order (DescribeObject indexes it by the variant's index).
constexpr KindDecoder kDecoders[] = {
    {"Pod", true, &DecodeAs<Pod, DecodePod>},
    {"Node", false, &DecodeAs<Node, DecodeNode>},
    {"Namespace", false, &DecodeAs<Namespace, DecodeNamespace>},
    {"PriorityClass", false, &DecodeAs<PriorityClass, DecodePriorityClass>},
    {"ConfigMap", true, &DecodeAs<ConfigMap, DecodeConfigMap>},
    {"PodDisruptionBudget", true, &DecodeAs<PodDisruptionBudget, DecodePodDisruptionBudget>},
    {"NodeMetrics", false, &DecodeAs<NodeMetrics, DecodeNodeMetrics>},
    {"PersistentVolumeClaim", true, &DecodeAs<PersistentVolumeClaim, DecodePersistentVolumeClaim>},
    {"PersistentVolume", false, &DecodeAs<PersistentVolume, DecodePersistentVolume>},
    {"StorageClass", false, &DecodeAs<StorageClass, DecodeStorageClass>},
    {"CSINode", false, &DecodeAs<CsiNode, DecodeCsiNode>},
    {"VolumeAttachment", false, &DecodeAs<VolumeAttachment, DecodeVolumeAttachment>},
    {"PodGroup", true, &DecodeAs<PodGroup, DecodePodGroup>},
    {"DeviceClass", false, &DecodeAs<DeviceClass, DecodeDeviceClass>},
    {"ResourceSlice", false, &DecodeAs<ResourceSlice, DecodeResourceSlice>},
    {"ResourceClaim", true, &DecodeAs<ResourceClaim, DecodeResourceClaim>},
    {"ResourceClaimTemplate", true, &DecodeAs<ResourceClaimTemplate, DecodeResourceClaimTemplate>},
};
static_assert(std::size(kDecoders) == std::variant_size_v<Object>);

}  // namespace

const KindDecoder* FindDecoder(std::string_view kind) {
  for (const KindDecoder& decoder : kDecoders) {
    if (decoder.kind == kind) return &decoder;
  }
  return nullptr;
}

std::string Describe(std::string_view kind, bool namespaced, std::string_view ns,
                     std::string_view name) {
  if (name.empty()) return absl::StrCat(Absl(kind), " (no name)");
  if (!namespaced) return absl::StrCat(Absl(kind), " ", Absl(name));
  return absl::StrCat(Absl(kind), " ", Absl(ns), "/", Absl(name));
}

std::string_view StringMember(const Json& object, std::string_view name) {
  const Json* value = Find(object, name);
  return value != nullptr && value->IsString() ? View(*value) : std::string_view();
}

void Collector::AddDocument(const Json& root) {
  if (root.IsNull()) return;  // an empty YAML document
  if (root.IsArray()) {
    for (const Json& element : root.GetArray()) AddItemOrList(element, 1);
    return;
  }
  AddItemOrList(root, 0);
}

bool Collector::IsList(const Json& value) {
  if (!value.IsObject() || Find(value, "items") == nullptr) return false;
  const Json* kind = Find(value, "kind");
  return kind == nullptr || (kind->IsString() && View(*kind).ends_with("List"));
}

void Collector::AddItemOrList(const Json& value, int depth) {
  if (!IsList(value)) return AddItem(value);
  const Json& items = *Find(value, "items");
  if (!items.IsArray()) return AddProblem(value, nullptr, "items: expected array");
  if (depth >= kMaxListDepth) return AddProblem(value, nullptr, "lists nested too deeply");
  for (const Json& item : items.GetArray()) AddItemOrList(item, depth + 1);
}

void Collector::AddItem(const Json& item) {
  ++items_seen_;
  if (!item.IsObject()) {
    return AddProblem(item, nullptr,
                      absl::StrCat("expected an object, got ", Absl(TypeName(item))));
  }
  const Json* kind = Find(item, "kind");
  if (kind == nullptr) return AddProblem(item, nullptr, "missing kind");
  if (!kind->IsString()) return AddProblem(item, nullptr, "kind: expected string");
  const KindDecoder* decoder = FindDecoder(View(*kind));
  if (decoder == nullptr) {
    return AddProblem(item, nullptr, absl::StrFormat("unknown kind \"%s\"", Absl(View(*kind))));
  }
  absl::StatusOr<Object> object = decoder->decode(item);
  if (!object.ok()) return AddProblem(item, decoder, util::Std(object.status().message()));
  sink_(*std::move(object));
}

void Collector::AddProblem(const Json& item, const KindDecoder* decoder, std::string_view message) {
  problems_->push_back({std::string(source_), DescribeItem(item, decoder), std::string(message)});
}

std::string Collector::DescribeItem(const Json& item, const KindDecoder* decoder) const {
  const std::string_view kind = StringMember(item, "kind");
  const Json* metadata = Find(item, "metadata");
  const std::string_view name = metadata ? StringMember(*metadata, "name") : std::string_view();
  if (!kind.empty() && !name.empty()) {
    const Json* ns = Find(*metadata, "namespace");
    // Unknown kinds are shown with a namespace only when they carry one.
    const bool namespaced = decoder != nullptr ? decoder->namespaced : ns != nullptr;
    const std::string_view ns_name =
        ns == nullptr ? kDefaultNamespace : StringMember(*metadata, "namespace");
    return Describe(kind, namespaced, ns_name, name);
  }
  if (kind.empty()) return absl::StrCat("item ", items_seen_);
  return absl::StrCat("item ", items_seen_, " (kind ", Absl(kind), ")");
}

}  // namespace internal

std::string DescribeObject(const Object& object) {
  const internal::KindDecoder& decoder = internal::kDecoders[object.index()];
  return std::visit(
      [&](const auto& o) {
        return internal::Describe(decoder.kind, decoder.namespaced, o.meta.namespace_name,
                                  o.meta.name);
      },
      object);
}

}  // namespace kubesched::api
