#include "tests/testapi/custom_resources.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "tests/testapi/store.h"

namespace kubesched::testapi {
namespace {

enum class FieldType { kInt32, kString, kDateTime, kQuantityMap };

struct SchemaField {
  const char* section;  // "spec" or "status"
  const char* name;
  FieldType type;
};

// scheduler-plugins' podgroups.scheduling.x-k8s.io schema (config/crd/bases).
constexpr SchemaField kPodGroupSchema[] = {
    {"spec", "minMember", FieldType::kInt32},
    {"spec", "minResources", FieldType::kQuantityMap},
    {"spec", "scheduleTimeoutSeconds", FieldType::kInt32},
    {"status", "phase", FieldType::kString},
    {"status", "occupiedBy", FieldType::kString},
    {"status", "scheduled", FieldType::kInt32},
    {"status", "running", FieldType::kInt32},
    {"status", "succeeded", FieldType::kInt32},
    {"status", "failed", FieldType::kInt32},
    {"status", "scheduleStartTime", FieldType::kDateTime},
};

std::string JsonTypeName(const rapidjson::Value& value) {
  if (value.IsString()) return "string";
  if (value.IsBool()) return "boolean";
  if (value.IsNumber()) return value.IsInt64() ? "integer" : "number";
  if (value.IsArray()) return "array";
  if (value.IsObject()) return "object";
  return "null";
}

bool IsInt32(const rapidjson::Value& value) {
  return value.IsInt64() && value.GetInt64() >= INT32_MIN && value.GetInt64() <= INT32_MAX;
}

// The problem with `value` as `type`, or "" when it fits.
std::string Mismatch(const rapidjson::Value& value, FieldType type) {
  switch (type) {
    case FieldType::kInt32:
      return IsInt32(value) ? "" : "integer";
    case FieldType::kString:
    case FieldType::kDateTime:
      return value.IsString() ? "" : "string";
    case FieldType::kQuantityMap:
      if (!value.IsObject()) return "object";
      for (const auto& member : value.GetObject()) {
        if (!member.value.IsString() && !member.value.IsNumber()) return "quantity";
      }
      return "";
  }
  return "";
}

absl::Status Invalid(const ResourceType& type, const rapidjson::Value& object,
                     const std::string& field, const std::string& actual,
                     const std::string& wanted) {
  return MarkInvalid(absl::InvalidArgumentError(
      absl::StrCat(type.kind, ".", type.group, " \"", StringAt(object, "metadata.name"),
                   "\" is invalid: ", field, ": Invalid value: \"", actual, "\": ", field,
                   " in body must be of type ", wanted, ": \"", actual, "\"")));
}

}  // namespace

absl::Status CheckCustomResourceSchema(const ResourceType& type, const rapidjson::Value& object) {
  if (type.kind != "PodGroup" || type.group != "scheduling.x-k8s.io") return absl::OkStatus();
  for (const char* section : {"spec", "status"}) {
    if (HasMember(object, section) && !object[section].IsObject() && !object[section].IsNull()) {
      return Invalid(type, object, section, JsonTypeName(object[section]), "object");
    }
  }
  for (const SchemaField& field : kPodGroupSchema) {
    if (!HasMember(object, field.section) || !object[field.section].IsObject()) continue;
    const rapidjson::Value& section = object[field.section];
    if (!HasMember(section, field.name) || section[field.name].IsNull()) continue;
    const std::string wanted = Mismatch(section[field.name], field.type);
    if (wanted.empty()) continue;
    return Invalid(type, object, absl::StrCat(field.section, ".", field.name),
                   JsonTypeName(section[field.name]), wanted);
  }
  return absl::OkStatus();
}

}  // namespace kubesched::testapi
