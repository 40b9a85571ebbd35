#include "tests/testapi/protobuf.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "scheduler/util/strings.h"

namespace kubesched::testapi {
namespace {

using Allocator = rapidjson::Document::AllocatorType;

enum class Kind {
  kString,
  kBool,
  kStringList,
  kStringMap,
  kBytesMap,  // map<string, bytes>: base64 strings in JSON
  kMessage,
  kIgnored,  // set by the server on create; what a client sends there does not matter
};

struct Message;
struct Field {
  int number;
  std::string_view json_name;
  Kind kind;
  const Message* message = nullptr;
};
struct Message {
  std::string_view name;
  std::vector<Field> fields;
};

// Field numbers from k8s.io/api's generated.proto.
const Message kObjectMeta{"ObjectMeta",
                          {{1, "name", Kind::kString},
                           {2, "generateName", Kind::kString},
                           {3, "namespace", Kind::kString},
                           {4, "selfLink", Kind::kIgnored},
                           {5, "uid", Kind::kIgnored},
                           {6, "resourceVersion", Kind::kIgnored},
                           {7, "generation", Kind::kIgnored},
                           {8, "creationTimestamp", Kind::kIgnored},
                           {9, "deletionTimestamp", Kind::kIgnored},
                           {10, "deletionGracePeriodSeconds", Kind::kIgnored},
                           {11, "labels", Kind::kStringMap},
                           {12, "annotations", Kind::kStringMap},
                           {14, "finalizers", Kind::kStringList}}};
const Message kNamespaceSpec{"NamespaceSpec", {{1, "finalizers", Kind::kStringList}}};
const Message kNamespace{"Namespace",
                         {{1, "metadata", Kind::kMessage, &kObjectMeta},
                          {2, "spec", Kind::kMessage, &kNamespaceSpec},
                          {3, "status", Kind::kIgnored}}};
const Message kConfigMap{"ConfigMap",
                         {{1, "metadata", Kind::kMessage, &kObjectMeta},
                          {2, "data", Kind::kStringMap},
                          {3, "binaryData", Kind::kBytesMap},
                          {4, "immutable", Kind::kBool}}};
// runtime.Unknown and its TypeMeta.
const Message kTypeMeta{"TypeMeta", {{1, "apiVersion", Kind::kString}, {2, "kind", Kind::kString}}};

const Message* MessageForKind(std::string_view api_version, std::string_view kind) {
  if (api_version != "v1") return nullptr;
  if (kind == "Namespace") return &kNamespace;
  if (kind == "ConfigMap") return &kConfigMap;
  return nullptr;
}

absl::Status Unsupported(std::string_view what) {
  return absl::UnimplementedError(absl::StrCat(
      "kubesched-testapi does not decode ", util::Absl(what),
      " in application/vnd.kubernetes.protobuf; send application/json or application/yaml"));
}

// Reads protobuf wire format from a byte range.
class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}
  bool done() const { return pos_ >= bytes_.size(); }

  absl::StatusOr<uint64_t> Varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (done()) return Truncated();
      const auto byte = static_cast<uint8_t>(bytes_[pos_++]);
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return value;
    }
    return absl::InvalidArgumentError("protobuf body: a varint is too long");
  }
  absl::StatusOr<std::string_view> Bytes() {
    absl::StatusOr<uint64_t> size = Varint();
    if (!size.ok()) return size.status();
    if (*size > bytes_.size() - pos_) return Truncated();
    std::string_view out = bytes_.substr(pos_, *size);
    pos_ += *size;
    return out;
  }
  // Skips a value of `wire_type`.
  absl::Status Skip(uint64_t wire_type) {
    switch (wire_type) {
      case 0:
        return Varint().status();
      case 1:
      case 5: {
        const size_t size = wire_type == 1 ? 8 : 4;
        if (size > bytes_.size() - pos_) return Truncated();
        pos_ += size;
        return absl::OkStatus();
      }
      case 2:
        return Bytes().status();
      default:
        return absl::InvalidArgumentError("protobuf body: unknown wire type");
    }
  }

 private:
  static absl::Status Truncated() {
    return absl::InvalidArgumentError("protobuf body: truncated message");
  }
  std::string_view bytes_;
  size_t pos_ = 0;
};

rapidjson::Value JsonString(std::string_view text, Allocator& allocator) {
  return rapidjson::Value(text.data(), static_cast<rapidjson::SizeType>(text.size()), allocator);
}

absl::Status Decode(const Message& message, std::string_view bytes, rapidjson::Value& out,
                    Allocator& allocator);

// A map entry message: key (1) and value (2), both length-delimited.
absl::Status AddMapEntry(std::string_view entry, bool base64, rapidjson::Value& map,
                         Allocator& allocator) {
  Reader reader(entry);
  std::string_view key;
  std::string value;
  while (!reader.done()) {
    absl::StatusOr<uint64_t> tag = reader.Varint();
    if (!tag.ok()) return tag.status();
    if ((*tag & 7) != 2) return absl::InvalidArgumentError("protobuf body: bad map entry");
    absl::StatusOr<std::string_view> bytes = reader.Bytes();
    if (!bytes.ok()) return bytes.status();
    if ((*tag >> 3) == 1) key = *bytes;
    if ((*tag >> 3) == 2)
      value = base64 ? absl::Base64Escape(util::Absl(*bytes)) : std::string(*bytes);
  }
  auto existing = map.FindMember(JsonString(key, allocator));
  if (existing != map.MemberEnd()) map.EraseMember(existing);
  map.AddMember(JsonString(key, allocator), JsonString(value, allocator), allocator);
  return absl::OkStatus();
}

// Adds one length-delimited field's value to `out`.
absl::Status AddField(const Field& field, std::string_view bytes, rapidjson::Value& out,
                      Allocator& allocator) {
  rapidjson::Value name = JsonString(field.json_name, allocator);
  auto member = [&](rapidjson::Type type) -> rapidjson::Value& {
    auto it = out.FindMember(name);
    if (it == out.MemberEnd()) {
      out.AddMember(rapidjson::Value(name, allocator), rapidjson::Value(type), allocator);
      it = out.FindMember(name);
    }
    return it->value;
  };
  switch (field.kind) {
    case Kind::kString:
      // Go writes every string field; JSON omits the empty ones (omitempty).
      if (bytes.empty()) return absl::OkStatus();
      member(rapidjson::kStringType).SetString(bytes.data(), bytes.size(), allocator);
      return absl::OkStatus();
    case Kind::kStringList:
      member(rapidjson::kArrayType).PushBack(JsonString(bytes, allocator), allocator);
      return absl::OkStatus();
    case Kind::kStringMap:
    case Kind::kBytesMap:
      return AddMapEntry(bytes, field.kind == Kind::kBytesMap, member(rapidjson::kObjectType),
                         allocator);
    case Kind::kMessage:
      return Decode(*field.message, bytes, member(rapidjson::kObjectType), allocator);
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("protobuf body: ", util::Absl(field.json_name), " has the wrong wire type"));
  }
}

absl::Status Decode(const Message& message, std::string_view bytes, rapidjson::Value& out,
                    Allocator& allocator) {
  Reader reader(bytes);
  while (!reader.done()) {
    absl::StatusOr<uint64_t> tag = reader.Varint();
    if (!tag.ok()) return tag.status();
    const uint64_t number = *tag >> 3;
    const uint64_t wire_type = *tag & 7;
    const Field* field = nullptr;
    for (const Field& candidate : message.fields) {
      if (static_cast<uint64_t>(candidate.number) == number) field = &candidate;
    }
    if (field == nullptr)
      return Unsupported(absl::StrCat(util::Absl(message.name), " field ", number));
    if (field->kind == Kind::kIgnored) {
      if (absl::Status skipped = reader.Skip(wire_type); !skipped.ok()) return skipped;
      continue;
    }
    if (field->kind == Kind::kBool) {
      absl::StatusOr<uint64_t> value =
          wire_type == 0 ? reader.Varint()
                         : absl::StatusOr<uint64_t>(
                               absl::InvalidArgumentError("protobuf body: a bool is not a varint"));
      if (!value.ok()) return value.status();
      out.RemoveMember(JsonString(field->json_name, allocator));
      out.AddMember(JsonString(field->json_name, allocator), rapidjson::Value(*value != 0),
                    allocator);
      continue;
    }
    if (wire_type != 2) {
      return absl::InvalidArgumentError(absl::StrCat(
          "protobuf body: ", util::Absl(field->json_name), " has the wrong wire type"));
    }
    absl::StatusOr<std::string_view> value = reader.Bytes();
    if (!value.ok()) return value.status();
    if (absl::Status added = AddField(*field, *value, out, allocator); !added.ok()) return added;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<rapidjson::Document> DecodeProtobufObject(std::string_view body) {
  constexpr std::string_view kMagic("k8s\0", 4);
  if (!body.starts_with(kMagic)) {
    return absl::InvalidArgumentError("protobuf body: missing the \"k8s\\0\" prefix");
  }
  Reader envelope(body.substr(kMagic.size()));
  rapidjson::Document type_meta(rapidjson::kObjectType);
  std::string_view raw;
  while (!envelope.done()) {
    absl::StatusOr<uint64_t> tag = envelope.Varint();
    if (!tag.ok()) return tag.status();
    if ((*tag >> 3) == 1 && (*tag & 7) == 2) {
      absl::StatusOr<std::string_view> bytes = envelope.Bytes();
      if (!bytes.ok()) return bytes.status();
      absl::Status decoded = Decode(kTypeMeta, *bytes, type_meta, type_meta.GetAllocator());
      if (!decoded.ok()) return decoded;
    } else if ((*tag >> 3) == 2 && (*tag & 7) == 2) {
      absl::StatusOr<std::string_view> bytes = envelope.Bytes();
      if (!bytes.ok()) return bytes.status();
      raw = *bytes;
    } else if (absl::Status skipped = envelope.Skip(*tag & 7); !skipped.ok()) {
      return skipped;
    }
  }
  auto text = [&](const char* name) {
    return type_meta.HasMember(name) ? std::string(type_meta[name].GetString()) : std::string();
  };
  const std::string api_version = text("apiVersion");
  const std::string kind = text("kind");
  const Message* message = MessageForKind(api_version, kind);
  if (message == nullptr) {
    return Unsupported(absl::StrCat(api_version.empty() ? "" : api_version + " ",
                                    kind.empty() ? "an object without a kind" : kind));
  }
  rapidjson::Document object(rapidjson::kObjectType);
  auto& allocator = object.GetAllocator();
  object.AddMember("apiVersion", JsonString(api_version, allocator), allocator);
  object.AddMember("kind", JsonString(kind, allocator), allocator);
  if (absl::Status decoded = Decode(*message, raw, object, allocator); !decoded.ok()) {
    return decoded;
  }
  return object;
}

}  // namespace kubesched::testapi
