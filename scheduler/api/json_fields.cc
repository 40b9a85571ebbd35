// Typed reads of rapidjson values for the decoders (see decode_internal.h).

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "scheduler/api/decode_internal.h"
#include "scheduler/api/quantity.h"
#include "scheduler/api/resource_internal.h"
#include "scheduler/util/strings.h"

namespace kubesched::api::internal {
namespace {

using util::Absl;

absl::Status WrongType(const Json& value, const Path& path, std::string_view expected) {
  return path.Error(absl::StrCat("expected ", Absl(expected), ", got ", Absl(TypeName(value))));
}

// Quantities may be written as JSON numbers (`cpu: 2` in YAML); they are parsed from their
// shortest text so that 0.1 stays 100m.
std::string NumberText(const Json& value) {
  if (value.IsInt64()) return absl::StrCat(value.GetInt64());
  if (value.IsUint64()) return absl::StrCat(value.GetUint64());
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  if (!writer.Double(value.GetDouble())) return "NaN";
  return std::string(buffer.GetString(), buffer.GetSize());
}

absl::StatusOr<Quantity> ReadQuantity(const Json& value, const Path& path) {
  absl::StatusOr<Quantity> quantity;
  if (value.IsNull()) {
    quantity = Quantity();  // the API server reads a null quantity as zero
  } else if (value.IsString()) {
    quantity = Quantity::Parse(View(value));
  } else if (value.IsNumber()) {
    quantity = Quantity::Parse(NumberText(value));
  } else {
    return WrongType(value, path, "quantity");
  }
  if (!quantity.ok()) return path.Error(util::Std(quantity.status().message()));
  return quantity;
}

absl::StatusOr<ResourceId> ReadResourceName(std::string_view name, const Path& path) {
  if (!IsValidLabelKey(name)) {
    return path.Error(absl::StrFormat("invalid resource name \"%s\"", Absl(name)));
  }
  std::optional<ResourceId> id = TryInternResource(name);
  if (!id.has_value()) return path.Error("too many distinct resource names");
  return *id;
}

// A map entry's string value; null reads as "" (as Go's decoder leaves the zero value).
absl::StatusOr<std::string_view> StringOrNull(const Json& value, const Path& path) {
  if (value.IsNull()) return std::string_view();
  return AsString(value, path);
}

// The object member `name`, or nullptr when absent; an error when present but not an object.
absl::StatusOr<const Json*> FindObject(const Json& object, std::string_view name,
                                       const Path& path) {
  const Json* value = Find(object, name);
  if (value != nullptr && !value->IsObject()) return WrongType(*value, path.Field(name), "object");
  return value;
}

}  // namespace

std::string Path::ToString() const {
  std::vector<const Path*> chain;
  for (const Path* p = this; p != nullptr; p = p->parent_) chain.push_back(p);
  std::string out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const Path& p = **it;
    if (p.index_ != kNoIndex) {
      absl::StrAppend(&out, "[", p.index_, "]");
    } else if (!p.name_.empty()) {
      absl::StrAppend(&out, out.empty() ? "" : ".", Absl(p.name_));
    }
  }
  return out;
}

absl::Status Path::Error(std::string_view message) const {
  const std::string path = ToString();
  if (path.empty()) return absl::InvalidArgumentError(Absl(message));
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", Absl(message)));
}

const Json* Find(const Json& object, std::string_view name) {
  if (!object.IsObject()) return nullptr;
  const Json key(rapidjson::StringRef(name.data(), static_cast<rapidjson::SizeType>(name.size())));
  auto it = object.FindMember(key);
  if (it == object.MemberEnd() || it->value.IsNull()) return nullptr;
  return &it->value;
}

std::string_view TypeName(const Json& value) {
  switch (value.GetType()) {
    case rapidjson::kNullType:
      return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      return "boolean";
    case rapidjson::kObjectType:
      return "object";
    case rapidjson::kArrayType:
      return "array";
    case rapidjson::kStringType:
      return "string";
    case rapidjson::kNumberType:
      return "number";
  }
  return "unknown";
}

absl::Status ExpectObject(const Json& value, const Path& path) {
  return value.IsObject() ? absl::OkStatus() : WrongType(value, path, "object");
}

absl::StatusOr<std::string_view> AsString(const Json& value, const Path& path) {
  if (!value.IsString()) return WrongType(value, path, "string");
  return View(value);
}

absl::StatusOr<int32_t> AsInt32(const Json& value, const Path& path) {
  if (value.IsInt()) return value.GetInt();
  if (value.IsInt64() || value.IsUint64()) return path.Error("integer out of 32-bit range");
  return WrongType(value, path, "integer");
}

absl::StatusOr<int64_t> AsInt64(const Json& value, const Path& path) {
  if (value.IsInt64()) return value.GetInt64();
  if (value.IsUint64()) return path.Error("integer out of 64-bit range");
  return WrongType(value, path, "integer");
}

absl::Status UnknownValue(const Path& path, std::string_view text) {
  return path.Error(absl::StrFormat("unsupported value \"%s\"", Absl(text)));
}

absl::Status ReadString(const Json& object, std::string_view name, const Path& path,
                        std::string* out) {
  const Json* value = Find(object, name);
  if (value == nullptr) return absl::OkStatus();
  if (!value->IsString()) return WrongType(*value, path.Field(name), "string");
  out->assign(value->GetString(), value->GetStringLength());
  return absl::OkStatus();
}

absl::Status ReadInt32(const Json& object, std::string_view name, const Path& path, int32_t* out) {
  const Json* value = Find(object, name);
  if (value == nullptr) return absl::OkStatus();
  absl::StatusOr<int32_t> v = AsInt32(*value, path.Field(name));
  if (!v.ok()) return v.status();
  *out = *v;
  return absl::OkStatus();
}

absl::Status ReadInt32(const Json& object, std::string_view name, const Path& path,
                       std::optional<int32_t>* out) {
  const Json* value = Find(object, name);
  if (value == nullptr) return absl::OkStatus();
  absl::StatusOr<int32_t> v = AsInt32(*value, path.Field(name));
  if (!v.ok()) return v.status();
  *out = *v;
  return absl::OkStatus();
}

absl::Status ReadInt64(const Json& object, std::string_view name, const Path& path,
                       std::optional<int64_t>* out) {
  const Json* value = Find(object, name);
  if (value == nullptr) return absl::OkStatus();
  absl::StatusOr<int64_t> v = AsInt64(*value, path.Field(name));
  if (!v.ok()) return v.status();
  *out = *v;
  return absl::OkStatus();
}

absl::Status ReadBool(const Json& object, std::string_view name, const Path& path, bool* out) {
  const Json* value = Find(object, name);
  if (value == nullptr) return absl::OkStatus();
  if (!value->IsBool()) return WrongType(*value, path.Field(name), "boolean");
  *out = value->GetBool();
  return absl::OkStatus();
}

absl::Status ReadTime(const Json& object, std::string_view name, const Path& path,
                      std::optional<absl::Time>* out) {
  const Json* value = Find(object, name);
  if (value == nullptr) return absl::OkStatus();
  const Path field = path.Field(name);
  if (!value->IsString()) return WrongType(*value, field, "RFC 3339 timestamp string");
  absl::Time time;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, Absl(View(*value)), &time, &error)) {
    return field.Error(absl::StrFormat("invalid timestamp \"%s\": %s", Absl(View(*value)), error));
  }
  *out = time;
  return absl::OkStatus();
}

absl::Status ReadStringMap(const Json& object, std::string_view name, const Path& path,
                           absl::btree_map<std::string, std::string>* out) {
  absl::StatusOr<const Json*> map = FindObject(object, name, path);
  if (!map.ok() || *map == nullptr) return map.status();
  const Path field = path.Field(name);
  for (const auto& member : (*map)->GetObject()) {
    absl::StatusOr<std::string_view> text =
        StringOrNull(member.value, field.Field(View(member.name)));
    if (!text.ok()) return text.status();
    out->insert_or_assign(std::string(View(member.name)), std::string(*text));
  }
  return absl::OkStatus();
}

absl::Status ReadLabelSet(const Json& object, std::string_view name, const Path& path,
                          LabelSet* out) {
  absl::StatusOr<const Json*> map = FindObject(object, name, path);
  if (!map.ok() || *map == nullptr) return map.status();
  const Path field = path.Field(name);
  std::vector<std::pair<Symbol, Symbol>> pairs;
  pairs.reserve((*map)->MemberCount());
  for (const auto& member : (*map)->GetObject()) {
    absl::StatusOr<std::string_view> text =
        StringOrNull(member.value, field.Field(View(member.name)));
    if (!text.ok()) return text.status();
    pairs.emplace_back(Intern(View(member.name)), Intern(*text));
  }
  *out = LabelSet::FromPairs(std::move(pairs));
  return absl::OkStatus();
}

absl::Status ReadSymbols(const Json& object, std::string_view name, const Path& path,
                         std::vector<Symbol>* out) {
  return ForEachElement(object, name, path, [&](const Json& element, const Path& at) {
    absl::StatusOr<std::string_view> text = AsString(element, at);
    if (!text.ok()) return text.status();
    out->push_back(Intern(*text));
    return absl::OkStatus();
  });
}

absl::StatusOr<Quantity> DecodeQuantityValue(const Json& value, const Path& path) {
  return ReadQuantity(value, path);
}

absl::Status ReadResources(const Json& object, std::string_view name, const Path& path,
                           ResourceList* out) {
  absl::StatusOr<const Json*> map = FindObject(object, name, path);
  if (!map.ok() || *map == nullptr) return map.status();
  const Path field = path.Field(name);
  for (const auto& member : (*map)->GetObject()) {
    const std::string_view resource = View(member.name);
    const Path at = field.Field(resource);
    absl::StatusOr<ResourceId> id = ReadResourceName(resource, at);
    if (!id.ok()) return id.status();
    absl::StatusOr<Quantity> quantity = ReadQuantity(member.value, at);
    if (!quantity.ok()) return quantity.status();
    if (quantity->milli() < 0) {
      return at.Error(absl::StrFormat("must not be negative, got \"%s\"", quantity->ToString()));
    }
    out->Set(*id, CanonicalAmount(*id, *quantity));
  }
  return absl::OkStatus();
}

}  // namespace kubesched::api::internal
