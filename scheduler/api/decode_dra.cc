// Decoding of the resource.k8s.io/v1 kinds (see decode_internal.h and dra.h).
//
// Shapes the API server would refuse and an allocator could not read (an attribute with no value
// or two, a request with neither `exactly` nor `firstAvailable`, an unknown allocation mode, a
// count below one) are errors naming the field, so that the object is skipped with a clear
// message instead of being half-understood.

#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "scheduler/api/decode_internal.h"
#include "scheduler/util/strings.h"

namespace kubesched::api::internal {
namespace {

// The top-level object member `name` ("spec", "status"), or nullptr when absent or null.
absl::StatusOr<const Json*> Section(const Json& object, std::string_view name) {
  const Json* section = Find(object, name);
  if (section != nullptr) KUBESCHED_RETURN_IF_ERROR(ExpectObject(*section, Path(name)));
  return section;
}

std::string JsonText(const Json& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

// "domain/id" as given, or "<driver>/id" for a name without a domain (upstream's qualification).
Symbol QualifiedName(std::string_view name, Symbol driver) {
  if (name.find('/') != std::string_view::npos || driver == kEmptySymbol) return Intern(name);
  return Intern(absl::StrCat(util::Absl(SymbolText(driver)), "/", util::Absl(name)));
}

absl::StatusOr<DeviceAttribute> DecodeAttribute(const Json& value, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(value, path));
  DeviceAttribute attribute;
  int kinds = 0;
  if (const Json* v = Find(value, "int")) {
    absl::StatusOr<int64_t> number = AsInt64(*v, path.Field("int"));
    if (!number.ok()) return number.status();
    attribute.type = DeviceAttributeType::kInt;
    attribute.int_value = *number;
    ++kinds;
  }
  if (Find(value, "bool") != nullptr) {
    KUBESCHED_RETURN_IF_ERROR(ReadBool(value, "bool", path, &attribute.bool_value));
    attribute.type = DeviceAttributeType::kBool;
    ++kinds;
  }
  if (Find(value, "string") != nullptr) {
    KUBESCHED_RETURN_IF_ERROR(ReadString(value, "string", path, &attribute.string_value));
    attribute.type = DeviceAttributeType::kString;
    ++kinds;
  }
  if (Find(value, "version") != nullptr) {
    KUBESCHED_RETURN_IF_ERROR(ReadString(value, "version", path, &attribute.string_value));
    attribute.type = DeviceAttributeType::kVersion;
    ++kinds;
  }
  if (kinds != 1) {
    return path.Error(
        absl::StrCat("exactly one of int, bool, string, version must be set, got ", kinds));
  }
  return attribute;
}

absl::Status DecodeAttributes(const Json& device, const Path& path, Symbol driver, Device* out) {
  absl::StatusOr<const Json*> map = FindMember(device, "attributes", path);
  if (!map.ok() || *map == nullptr) return map.status();
  const Path at = path.Field("attributes");
  for (auto it = (*map)->MemberBegin(); it != (*map)->MemberEnd(); ++it) {
    const std::string_view name = View(it->name);
    absl::StatusOr<DeviceAttribute> attribute = DecodeAttribute(it->value, at.Field(name));
    if (!attribute.ok()) return attribute.status();
    attribute->name = QualifiedName(name, driver);
    out->attributes.push_back(*std::move(attribute));
  }
  std::sort(out->attributes.begin(), out->attributes.end(),
            [](const DeviceAttribute& a, const DeviceAttribute& b) { return a.name < b.name; });
  return absl::OkStatus();
}

absl::Status DecodeCapacity(const Json& device, const Path& path, Symbol driver, Device* out) {
  absl::StatusOr<const Json*> map = FindMember(device, "capacity", path);
  if (!map.ok() || *map == nullptr) return map.status();
  const Path at = path.Field("capacity");
  for (auto it = (*map)->MemberBegin(); it != (*map)->MemberEnd(); ++it) {
    const std::string_view name = View(it->name);
    const Path entry = at.Field(name);
    KUBESCHED_RETURN_IF_ERROR(ExpectObject(it->value, entry));
    const Json* value = Find(it->value, "value");
    if (value == nullptr) return entry.Field("value").Error("missing");
    absl::StatusOr<Quantity> quantity = DecodeQuantityValue(*value, entry.Field("value"));
    if (!quantity.ok()) return quantity.status();
    out->capacity.push_back({QualifiedName(name, driver), *quantity});
  }
  std::sort(out->capacity.begin(), out->capacity.end(),
            [](const DeviceCapacity& a, const DeviceCapacity& b) { return a.name < b.name; });
  return absl::OkStatus();
}

// Device names are unique within a slice, as the API server validates them: an allocation names
// a device by driver, pool and name.
absl::Status DecodeDevices(const Json& spec, const Path& path, ResourceSlice* out) {
  absl::flat_hash_set<Symbol> names;
  return ForEachElement(spec, "devices", path, [&](const Json& element, const Path& at) {
    KUBESCHED_RETURN_IF_ERROR(ExpectObject(element, at));
    Device device;
    std::string name;
    KUBESCHED_RETURN_IF_ERROR(ReadRequiredString(element, "name", at, &name));
    device.name = Intern(name);
    if (!names.insert(device.name).second) {
      return at.Field("name").Error(absl::StrCat("duplicate device name \"", name, "\""));
    }
    KUBESCHED_RETURN_IF_ERROR(DecodeAttributes(element, at, out->driver, &device));
    KUBESCHED_RETURN_IF_ERROR(DecodeCapacity(element, at, out->driver, &device));
    device.shape = InternDeviceShape(out->driver, device);
    out->devices.push_back(std::move(device));
    return absl::OkStatus();
  });
}

absl::Status DecodePool(const Json& spec, const Path& path, ResourcePool* out) {
  absl::StatusOr<const Json*> pool = FindMember(spec, "pool", path);
  if (!pool.ok()) return pool.status();
  const Path at = path.Field("pool");
  if (*pool == nullptr) return at.Error("missing");
  std::string name;
  KUBESCHED_RETURN_IF_ERROR(ReadRequiredString(**pool, "name", at, &name));
  out->name = Intern(name);
  std::optional<int64_t> generation;
  std::optional<int64_t> count;
  KUBESCHED_RETURN_IF_ERROR(ReadInt64(**pool, "generation", at, &generation));
  KUBESCHED_RETURN_IF_ERROR(ReadInt64(**pool, "resourceSliceCount", at, &count));
  out->generation = generation.value_or(0);
  out->resource_slice_count = count.value_or(0);
  if (out->generation < 0) return at.Field("generation").Error("must not be negative");
  if (out->resource_slice_count < 1) return at.Field("resourceSliceCount").Error("must be >= 1");
  return absl::OkStatus();
}

absl::Status DecodeSliceSpec(const Json& spec, const Path& path, ResourceSlice* out) {
  std::string driver;
  KUBESCHED_RETURN_IF_ERROR(ReadRequiredString(spec, "driver", path, &driver));
  out->driver = Intern(driver);
  KUBESCHED_RETURN_IF_ERROR(DecodePool(spec, path, &out->pool));
  KUBESCHED_RETURN_IF_ERROR(ReadString(spec, "nodeName", path, &out->node_name));
  if (const Json* selector = Find(spec, "nodeSelector")) {
    absl::StatusOr<NodeSelector> decoded =
        DecodeNodeSelector(*selector, path.Field("nodeSelector"));
    if (!decoded.ok()) return decoded.status();
    out->node_selector = *std::move(decoded);
  }
  KUBESCHED_RETURN_IF_ERROR(ReadBool(spec, "allNodes", path, &out->all_nodes));
  KUBESCHED_RETURN_IF_ERROR(
      ReadBool(spec, "perDeviceNodeSelection", path, &out->per_device_node_selection));
  const int places =
      static_cast<int>(!out->node_name.empty()) + static_cast<int>(out->node_selector.has_value()) +
      static_cast<int>(out->all_nodes) + static_cast<int>(out->per_device_node_selection);
  if (places != 1) {
    return path.Error(
        absl::StrCat("exactly one of nodeName, nodeSelector, allNodes, perDeviceNodeSelection "
                     "must be set, got ",
                     places));
  }
  return DecodeDevices(spec, path, out);
}

}  // namespace

// A nested object member, or nullptr when absent or null; an error when not an object.
absl::StatusOr<const Json*> FindMember(const Json& object, std::string_view name,
                                       const Path& path) {
  const Json* member = Find(object, name);
  if (member != nullptr) KUBESCHED_RETURN_IF_ERROR(ExpectObject(*member, path.Field(name)));
  return member;
}

absl::Status ReadRequiredString(const Json& object, std::string_view name, const Path& path,
                                std::string* out) {
  KUBESCHED_RETURN_IF_ERROR(ReadString(object, name, path, out));
  if (out->empty()) return path.Field(name).Error("missing or empty");
  return absl::OkStatus();
}

absl::Status ReadStringList(const Json& object, std::string_view name, const Path& path,
                            std::vector<std::string>* out) {
  return ForEachElement(object, name, path, [&](const Json& element, const Path& at) {
    absl::StatusOr<std::string_view> text = AsString(element, at);
    if (!text.ok()) return text.status();
    out->emplace_back(*text);
    return absl::OkStatus();
  });
}

absl::Status DecodeDeviceSelectors(const Json& object, const Path& path,
                                   std::vector<DeviceSelector>* out) {
  return ForEachElement(object, "selectors", path, [&](const Json& element, const Path& at) {
    KUBESCHED_RETURN_IF_ERROR(ExpectObject(element, at));
    absl::StatusOr<const Json*> cel = FindMember(element, "cel", at);
    if (!cel.ok()) return cel.status();
    if (*cel == nullptr) return at.Field("cel").Error("missing");
    DeviceSelector selector;
    KUBESCHED_RETURN_IF_ERROR(
        ReadRequiredString(**cel, "expression", at.Field("cel"), &selector.cel_expression));
    out->push_back(std::move(selector));
    return absl::OkStatus();
  });
}

absl::StatusOr<OpaqueDeviceConfiguration> DecodeOpaqueConfig(const Json& config, const Path& path) {
  KUBESCHED_RETURN_IF_ERROR(ExpectObject(config, path));
  absl::StatusOr<const Json*> opaque = FindMember(config, "opaque", path);
  if (!opaque.ok()) return opaque.status();
  OpaqueDeviceConfiguration out;
  if (*opaque == nullptr) return out;  // a kind of configuration this version does not know
  const Path at = path.Field("opaque");
  KUBESCHED_RETURN_IF_ERROR(ReadRequiredString(**opaque, "driver", at, &out.driver));
  if (const Json* parameters = Find(**opaque, "parameters"))
    out.parameters_json = JsonText(*parameters);
  return out;
}

absl::StatusOr<DeviceClass> DecodeDeviceClass(const Json& object) {
  DeviceClass device_class;
  KUBESCHED_RETURN_IF_ERROR(DecodeMeta(object, /*namespaced=*/false, &device_class.meta));
  absl::StatusOr<const Json*> spec = Section(object, "spec");
  if (!spec.ok() || *spec == nullptr) {
    return spec.ok() ? absl::StatusOr<DeviceClass>(std::move(device_class)) : spec.status();
  }
  const Path path("spec");
  KUBESCHED_RETURN_IF_ERROR(DecodeDeviceSelectors(**spec, path, &device_class.selectors));
  KUBESCHED_RETURN_IF_ERROR(
      ForEachElement(**spec, "config", path, [&](const Json& element, const Path& at) {
        absl::StatusOr<OpaqueDeviceConfiguration> config = DecodeOpaqueConfig(element, at);
        if (!config.ok()) return config.status();
        device_class.config.push_back(*std::move(config));
        return absl::OkStatus();
      }));
  KUBESCHED_RETURN_IF_ERROR(
      ReadString(**spec, "extendedResourceName", path, &device_class.extended_resource_name));
  return device_class;
}

absl::StatusOr<ResourceSlice> DecodeResourceSlice(const Json& object) {
  ResourceSlice slice;
  KUBESCHED_RETURN_IF_ERROR(DecodeMeta(object, /*namespaced=*/false, &slice.meta));
  absl::StatusOr<const Json*> spec = Section(object, "spec");
  if (!spec.ok()) return spec.status();
  if (*spec == nullptr) return Path("spec").Error("missing");
  KUBESCHED_RETURN_IF_ERROR(DecodeSliceSpec(**spec, Path("spec"), &slice));
  return slice;
}

}  // namespace kubesched::api::internal
