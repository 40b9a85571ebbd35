#pragma once

// Building blocks of decode.cc: typed reads of rapidjson values with field paths for errors, and
// the per-kind decoders. Not part of the api contract.
//
// Error convention: every function returns absl::Status / StatusOr whose message starts with the
// field path inside the object ("spec.containers[0].resources.requests.cpu: ..."). Absent fields
// and JSON null leave the output untouched, as the API server treats null as unset.

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rapidjson/document.h"
#include "scheduler/api/dra.h"
#include "scheduler/api/objects.h"
#include "scheduler/api/pod_group.h"
#include "scheduler/api/storage.h"
#include "scheduler/util/status_macros.h"

namespace kubesched::api::internal {

using Json = rapidjson::Value;

// A field path built on the stack while decoding descends. It is rendered to text only when a
// problem is reported, so the success path allocates nothing for it. Views must outlive the
// Path (they point into the JSON DOM or at literals).
class Path {
 public:
  Path() = default;                                        // the object itself
  explicit Path(std::string_view field) : name_(field) {}  // a top-level field

  // Children point at their parent, so a parent must be an lvalue that outlives them.
  Path Field(std::string_view name) const& { return Path(this, name, kNoIndex); }
  Path Index(size_t index) const& { return Path(this, {}, index); }
  Path Field(std::string_view name) && = delete;
  Path Index(size_t index) && = delete;

  std::string ToString() const;
  // InvalidArgument "<path>: <message>".
  absl::Status Error(std::string_view message) const;

 private:
  static constexpr size_t kNoIndex = static_cast<size_t>(-1);
  Path(const Path* parent, std::string_view name, size_t index)
      : parent_(parent), name_(name), index_(index) {}

  const Path* parent_ = nullptr;
  std::string_view name_;
  size_t index_ = kNoIndex;
};

// The member `name` of `object`, or nullptr when absent, JSON null, or `object` is no object.
const Json* Find(const Json& object, std::string_view name);
std::string_view TypeName(const Json& value);
// The text of a JSON string; `value` must be a string.
inline std::string_view View(const Json& value) {
  return std::string_view(value.GetString(), value.GetStringLength());
}

absl::Status ExpectObject(const Json& value, const Path& path);
absl::StatusOr<std::string_view> AsString(const Json& value, const Path& path);
absl::StatusOr<int32_t> AsInt32(const Json& value, const Path& path);
absl::StatusOr<int64_t> AsInt64(const Json& value, const Path& path);

// Optional-member readers: absent or null members leave *out unchanged.
absl::Status ReadString(const Json& object, std::string_view name, const Path& path,
                        std::string* out);
absl::Status ReadInt32(const Json& object, std::string_view name, const Path& path, int32_t* out);
absl::Status ReadInt32(const Json& object, std::string_view name, const Path& path,
                       std::optional<int32_t>* out);
absl::Status ReadInt64(const Json& object, std::string_view name, const Path& path,
                       std::optional<int64_t>* out);
absl::Status ReadBool(const Json& object, std::string_view name, const Path& path, bool* out);
// RFC 3339 timestamps ("2024-05-01T10:00:00Z").
absl::Status ReadTime(const Json& object, std::string_view name, const Path& path,
                      std::optional<absl::Time>* out);
absl::Status ReadStringMap(const Json& object, std::string_view name, const Path& path,
                           absl::btree_map<std::string, std::string>* out);
// A map of strings, interned: labels, nodeSelector.
absl::Status ReadLabelSet(const Json& object, std::string_view name, const Path& path,
                          LabelSet* out);
// An array of strings, interned.
absl::Status ReadSymbols(const Json& object, std::string_view name, const Path& path,
                         std::vector<Symbol>* out);
// A map of resource name to quantity, in canonical units. Negative amounts are errors.
absl::Status ReadResources(const Json& object, std::string_view name, const Path& path,
                           ResourceList* out);

// Reads a string member that must be one of `table`'s names. Absent or null leaves *out as is.
template <typename E>
absl::Status ReadEnum(const Json& object, std::string_view name, const Path& path,
                      std::initializer_list<std::pair<std::string_view, E>> table, E* out);
template <typename E>
absl::Status ReadOptionalEnum(const Json& object, std::string_view name, const Path& path,
                              std::initializer_list<std::pair<std::string_view, E>> table,
                              std::optional<E>* out);
absl::Status UnknownValue(const Path& path, std::string_view text);
// A quantity written as a string or a number (null reads as zero).
absl::StatusOr<Quantity> DecodeQuantityValue(const Json& value, const Path& path);

// Calls fn(element, element_path) -> absl::Status for every element of the array member `name`.
template <typename Fn>
absl::Status ForEachElement(const Json& object, std::string_view name, const Path& path, Fn&& fn) {
  const Json* array = Find(object, name);
  if (array == nullptr) return absl::OkStatus();
  const Path field = path.Field(name);
  if (!array->IsArray()) {
    return field.Error(std::string("expected array, got ") + std::string(TypeName(*array)));
  }
  for (rapidjson::SizeType i = 0; i < array->Size(); ++i) {
    KUBESCHED_RETURN_IF_ERROR(fn((*array)[i], field.Index(i)));
  }
  return absl::OkStatus();
}

// Decodes every element of the array member `name` with `decode`, appending to *out.
template <typename T, typename Decode>
absl::Status ReadArray(const Json& object, std::string_view name, const Path& path, Decode decode,
                       std::vector<T>* out) {
  return ForEachElement(object, name, path, [&](const Json& element, const Path& at) {
    absl::StatusOr<T> decoded = decode(element, at);
    if (!decoded.ok()) return decoded.status();
    out->push_back(*std::move(decoded));
    return absl::OkStatus();
  });
}

template <typename E>
absl::Status ReadEnum(const Json& object, std::string_view name, const Path& path,
                      std::initializer_list<std::pair<std::string_view, E>> table, E* out) {
  const Json* value = Find(object, name);
  if (value == nullptr) return absl::OkStatus();
  const Path field = path.Field(name);
  absl::StatusOr<std::string_view> text = AsString(*value, field);
  if (!text.ok()) return text.status();
  for (const auto& [option, e] : table) {
    if (option == *text) {
      *out = e;
      return absl::OkStatus();
    }
  }
  return UnknownValue(field, *text);
}

template <typename E>
absl::Status ReadOptionalEnum(const Json& object, std::string_view name, const Path& path,
                              std::initializer_list<std::pair<std::string_view, E>> table,
                              std::optional<E>* out) {
  E e{};
  if (Find(object, name) == nullptr) return absl::OkStatus();
  KUBESCHED_RETURN_IF_ERROR(ReadEnum(object, name, path, table, &e));
  *out = e;
  return absl::OkStatus();
}

// --- Selectors and affinity (decode_selectors.cc) -------------------------------------------

// metav1.LabelSelector. Invalid requirements decode with valid=false rather than failing.
absl::StatusOr<LabelSelector> DecodeLabelSelector(const Json& value, const Path& path);
absl::Status ReadOptionalLabelSelector(const Json& object, std::string_view name, const Path& path,
                                       std::optional<LabelSelector>* out);
absl::StatusOr<NodeSelectorTerm> DecodeNodeSelectorTerm(const Json& value, const Path& path);
// v1 NodeSelector ({nodeSelectorTerms: [...]}).
absl::StatusOr<NodeSelector> DecodeNodeSelector(const Json& value, const Path& path);
absl::StatusOr<NodeAffinity> DecodeNodeAffinityValue(const Json& value, const Path& path);
absl::StatusOr<Affinity> DecodeAffinity(const Json& value, const Path& path);

// --- Objects (decode_pod.cc, decode_objects.cc) ---------------------------------------------

inline constexpr std::string_view kDefaultNamespace = "default";
inline constexpr std::string_view kDefaultSchedulerName = "default-scheduler";

// metadata; `namespaced` kinds default a missing namespace to "default".
absl::Status DecodeMeta(const Json& object, bool namespaced, ObjectMeta* meta);
absl::StatusOr<Pod> DecodePod(const Json& object);
absl::StatusOr<Node> DecodeNode(const Json& object);
absl::StatusOr<Namespace> DecodeNamespace(const Json& object);
absl::StatusOr<PriorityClass> DecodePriorityClass(const Json& object);
absl::StatusOr<ConfigMap> DecodeConfigMap(const Json& object);
absl::StatusOr<PodDisruptionBudget> DecodePodDisruptionBudget(const Json& object);
absl::StatusOr<NodeMetrics> DecodeNodeMetrics(const Json& object);

// --- Volumes (decode_storage.cc) ------------------------------------------------------------

// spec.volumes of a pod.
absl::Status DecodePodVolumes(const Json& spec, const Path& path, std::vector<Volume>* out);
absl::StatusOr<PersistentVolumeClaim> DecodePersistentVolumeClaim(const Json& object);
absl::StatusOr<PersistentVolume> DecodePersistentVolume(const Json& object);
absl::StatusOr<StorageClass> DecodeStorageClass(const Json& object);
absl::StatusOr<CsiNode> DecodeCsiNode(const Json& object);
absl::StatusOr<VolumeAttachment> DecodeVolumeAttachment(const Json& object);

// --- PodGroup (decode_pod_group.cc) ---------------------------------------------------------

// A PodGroup whose spec cannot be used (minMember missing or below 1, a bad minResources quantity)
// decodes with PodGroup::error set; only bad metadata or status fail.
absl::StatusOr<PodGroup> DecodePodGroup(const Json& object);

// --- Dynamic Resource Allocation (decode_dra.cc) -------------------------------------------

// Shared by the DRA decoders: a nested object member (nullptr when absent or null), a string that
// must be given, a list of strings, selectors[].cel.expression, and a config entry's `opaque`
// (empty when the entry has none).
absl::StatusOr<const Json*> FindMember(const Json& object, std::string_view name, const Path& path);
absl::Status ReadRequiredString(const Json& object, std::string_view name, const Path& path,
                                std::string* out);
absl::Status ReadStringList(const Json& object, std::string_view name, const Path& path,
                            std::vector<std::string>* out);
absl::Status DecodeDeviceSelectors(const Json& object, const Path& path,
                                   std::vector<DeviceSelector>* out);
absl::StatusOr<OpaqueDeviceConfiguration> DecodeOpaqueConfig(const Json& config, const Path& path);

absl::StatusOr<DeviceClass> DecodeDeviceClass(const Json& object);
absl::StatusOr<ResourceSlice> DecodeResourceSlice(const Json& object);
absl::StatusOr<ResourceClaim> DecodeResourceClaim(const Json& object);
absl::StatusOr<ResourceClaimTemplate> DecodeResourceClaimTemplate(const Json& object);

}  // namespace kubesched::api::internal
