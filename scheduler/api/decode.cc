#include "scheduler/api/decode.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "rapidjson/document.h"
#include "rapidjson/error/en.h"
#include "scheduler/api/decode_internal.h"
#include "scheduler/api/decode_value.h"
#include "scheduler/api/yaml_to_json_internal.h"
#include "scheduler/util/file.h"
#include "scheduler/util/status_macros.h"
#include "scheduler/util/strings.h"

namespace kubesched::api {
namespace {

using internal::Find;
using internal::Json;
using internal::View;
using util::Absl;

// One entry per kind the scheduler reads.
struct KindDecoder {
  std::string_view kind;
  bool namespaced;
  absl::StatusOr<Object> (*decode)(const Json&);
};

template <typename T, absl::StatusOr<T> (*Decode)(const Json&)>
absl::StatusOr<Object> DecodeAs(const Json& json) {
  absl::StatusOr<T> decoded = Decode(json);
  if (!decoded.ok()) return decoded.status();
  return Object(*std::move(decoded));
}

constexpr KindDecoder kDecoders[] = {
    {"Pod", true, &DecodeAs<Pod, internal::DecodePod>},
    {"Node", false, &DecodeAs<Node, internal::DecodeNode>},
    {"Namespace", false, &DecodeAs<Namespace, internal::DecodeNamespace>},
    {"PriorityClass", false, &DecodeAs<PriorityClass, internal::DecodePriorityClass>},
    {"ConfigMap", true, &DecodeAs<ConfigMap, internal::DecodeConfigMap>},
    {"PodDisruptionBudget", true,
     &DecodeAs<PodDisruptionBudget, internal::DecodePodDisruptionBudget>},
    {"NodeMetrics", false, &DecodeAs<NodeMetrics, internal::DecodeNodeMetrics>},
    {"PersistentVolumeClaim", true,
     &DecodeAs<PersistentVolumeClaim, internal::DecodePersistentVolumeClaim>},
    {"PersistentVolume", false, &DecodeAs<PersistentVolume, internal::DecodePersistentVolume>},
    {"StorageClass", false, &DecodeAs<StorageClass, internal::DecodeStorageClass>},
    {"CSINode", false, &DecodeAs<CsiNode, internal::DecodeCsiNode>},
    {"VolumeAttachment", false, &DecodeAs<VolumeAttachment, internal::DecodeVolumeAttachment>},
    {"PodGroup", true, &DecodeAs<PodGroup, internal::DecodePodGroup>},
    {"DeviceClass", false, &DecodeAs<DeviceClass, internal::DecodeDeviceClass>},
    {"ResourceSlice", false, &DecodeAs<ResourceSlice, internal::DecodeResourceSlice>},
    {"ResourceClaim", true, &DecodeAs<ResourceClaim, internal::DecodeResourceClaim>},
    {"ResourceClaimTemplate", true,
     &DecodeAs<ResourceClaimTemplate, internal::DecodeResourceClaimTemplate>},
};

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

// A string member of `object`, or "" when it is absent or not a string.
std::string_view StringMember(const Json& object, std::string_view name) {
  const Json* value = Find(object, name);
  return value != nullptr && value->IsString() ? View(*value) : std::string_view();
}

bool LooksLikeJson(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && (text[first] == '{' || text[first] == '[');
}

absl::Status JsonError(std::string_view source, std::string_view text, size_t offset,
                       std::string_view what) {
  offset = std::min(offset, text.size());
  const std::string_view before = text.substr(0, offset);
  const size_t line = 1 + static_cast<size_t>(std::count(before.begin(), before.end(), '\n'));
  const size_t line_start = before.rfind('\n');
  const size_t column = offset - (line_start == std::string_view::npos ? 0 : line_start + 1) + 1;
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: invalid JSON at line %d, column %d (offset %d): %s", Absl(source), line,
                      column, offset, Absl(what)));
}

// Parses JSON in place: `buffer` is the input copied once, and the DOM's strings point into it,
// so it must outlive `doc`. Iterative parsing keeps deep nesting off the C++ stack.
absl::Status ParseJson(std::string_view text, std::string_view source, std::string* buffer,
                       rapidjson::Document* doc) {
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    return JsonError(source, text, nul, "NUL byte in input");
  }
  buffer->assign(text.data(), text.size());
  doc->ParseInsitu<rapidjson::kParseIterativeFlag>(buffer->data());
  if (doc->HasParseError()) {
    return JsonError(source, text, doc->GetErrorOffset(), GetParseError_En(doc->GetParseError()));
  }
  return absl::OkStatus();
}

// The parsed input. JSON is parsed in place, so its strings point into `buffer`.
struct ParsedText {
  std::string buffer;
  rapidjson::Document doc;
  bool documents = false;  // YAML: the root is an array with one value per document
};

absl::Status Parse(std::string_view text, std::string_view source, ParsedText* out) {
  if (LooksLikeJson(text)) return ParseJson(text, source, &out->buffer, &out->doc);
  if (const size_t nul = text.find('\0'); nul != std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: invalid YAML at offset %d: NUL byte in input", Absl(source), nul));
  }
  out->documents = true;
  return internal::YamlToJson(text, source, &out->doc);
}

// Calls fn(root) for every document of the parsed input.
template <typename Fn>
void ForEachDocument(const ParsedText& parsed, Fn&& fn) {
  if (!parsed.documents) {
    fn(static_cast<const Json&>(parsed.doc));
    return;
  }
  for (const Json& document : parsed.doc.GetArray()) fn(document);
}

// Walks documents, lists and items, decoding each item and recording the bad ones.
class Collector {
 public:
  explicit Collector(std::string_view source) : source_(source) {}

  void AddDocument(const Json& root) {
    if (root.IsNull()) return;  // an empty YAML document
    if (root.IsArray()) {
      for (const Json& element : root.GetArray()) AddItemOrList(element, 1);
      return;
    }
    AddItemOrList(root, 0);
  }

  DecodedObjects Take() { return std::move(result_); }

 private:
  static constexpr int kMaxListDepth = 8;

  static bool IsList(const Json& value) {
    if (!value.IsObject() || Find(value, "items") == nullptr) return false;
    const Json* kind = Find(value, "kind");
    return kind == nullptr || (kind->IsString() && View(*kind).ends_with("List"));
  }

  void AddItemOrList(const Json& value, int depth) {
    if (!IsList(value)) return AddItem(value);
    const Json& items = *Find(value, "items");
    if (!items.IsArray()) return AddProblem(value, nullptr, "items: expected array");
    if (depth >= kMaxListDepth) return AddProblem(value, nullptr, "lists nested too deeply");
    for (const Json& item : items.GetArray()) AddItemOrList(item, depth + 1);
  }

  void AddItem(const Json& item) {
    ++items_seen_;
    if (!item.IsObject()) {
      return AddProblem(item, nullptr,
                        absl::StrCat("expected an object, got ", Absl(internal::TypeName(item))));
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
    result_.objects.push_back(*std::move(object));
  }

  void AddProblem(const Json& item, const KindDecoder* decoder, std::string_view message) {
    result_.problems.push_back(
        {std::string(source_), DescribeItem(item, decoder), std::string(message)});
  }

  // "Pod ns/name" when the item has a kind and a name, else "item N (kind K)" or "item N".
  std::string DescribeItem(const Json& item, const KindDecoder* decoder) const {
    const std::string_view kind = StringMember(item, "kind");
    const Json* metadata = Find(item, "metadata");
    const std::string_view name = metadata ? StringMember(*metadata, "name") : std::string_view();
    if (!kind.empty() && !name.empty()) {
      const Json* ns = Find(*metadata, "namespace");
      // Unknown kinds are shown with a namespace only when they carry one.
      const bool namespaced = decoder != nullptr ? decoder->namespaced : ns != nullptr;
      const std::string_view ns_name =
          ns == nullptr ? internal::kDefaultNamespace : StringMember(*metadata, "namespace");
      return Describe(kind, namespaced, ns_name, name);
    }
    if (kind.empty()) return absl::StrCat("item ", items_seen_);
    return absl::StrCat("item ", items_seen_, " (kind ", Absl(kind), ")");
  }

  std::string_view source_;
  size_t items_seen_ = 0;  // 1-based number of the current item across all documents
  DecodedObjects result_;
};

// Decodes a single JSON object of a known kind; errors name the object and the field.
template <typename T>
absl::StatusOr<T> DecodeSingleJson(std::string_view json, std::string_view kind,
                                   absl::StatusOr<T> (*decode)(const Json&)) {
  const std::string source = absl::StrCat(Absl(kind), " JSON");
  ParsedText parsed;
  KUBESCHED_RETURN_IF_ERROR(ParseJson(json, source, &parsed.buffer, &parsed.doc));
  const Json& root = parsed.doc;
  if (!root.IsObject()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": expected an object, got ", Absl(internal::TypeName(root))));
  }
  const Json* actual_kind = Find(root, "kind");
  if (actual_kind != nullptr && !(actual_kind->IsString() && View(*actual_kind) == kind)) {
    return absl::InvalidArgumentError(absl::StrCat(source, ": kind is not ", Absl(kind)));
  }
  absl::StatusOr<T> decoded = decode(root);
  if (decoded.ok()) return decoded;
  const Json* metadata = Find(root, "metadata");
  const std::string_view name = metadata ? StringMember(*metadata, "name") : std::string_view();
  return absl::InvalidArgumentError(absl::StrCat(
      Absl(kind), " ", name.empty() ? "(no name)" : Absl(name), ": ", decoded.status().message()));
}

}  // namespace

std::string DescribeObject(const Object& object) {
  // kDecoders lists the kinds in the variant's order.
  static_assert(std::size(kDecoders) == std::variant_size_v<Object>);
  const KindDecoder& decoder = kDecoders[object.index()];
  return std::visit(
      [&](const auto& o) {
        return Describe(decoder.kind, decoder.namespaced, o.meta.namespace_name, o.meta.name);
      },
      object);
}

std::string DecodeProblem::ToString() const {
  return absl::StrCat(source, ": ", object, ": ", message);
}

absl::StatusOr<DecodedObjects> DecodeObjects(std::string_view text, std::string_view source) {
  ParsedText parsed;
  KUBESCHED_RETURN_IF_ERROR(Parse(text, source, &parsed));
  Collector collector(source);
  ForEachDocument(parsed, [&](const Json& root) { collector.AddDocument(root); });
  return collector.Take();
}

absl::StatusOr<DecodedObjects> DecodeFile(const std::string& path) {
  absl::StatusOr<std::string> contents = util::ReadFileAtMost(path, kMaxObjectFileBytes);
  if (!contents.ok()) {
    return absl::Status(contents.status().code(),
                        absl::StrCat("cannot read ", path, ": ", contents.status().message()));
  }
  return DecodeObjects(*contents, path);
}

absl::StatusOr<Pod> DecodePodJson(std::string_view json) {
  return DecodeSingleJson<Pod>(json, "Pod", internal::DecodePod);
}

absl::StatusOr<Node> DecodeNodeJson(std::string_view json) {
  return DecodeSingleJson<Node>(json, "Node", internal::DecodeNode);
}

absl::StatusOr<Object> DecodeObjectValue(const rapidjson::Value& json, std::string_view kind) {
  const KindDecoder* decoder = FindDecoder(kind);
  if (decoder == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("unknown kind \"", Absl(kind), "\""));
  }
  if (!json.IsObject()) {
    return absl::InvalidArgumentError(
        absl::StrCat(Absl(kind), ": expected an object, got ", Absl(internal::TypeName(json))));
  }
  const Json* actual_kind = Find(json, "kind");
  if (actual_kind != nullptr && !(actual_kind->IsString() && View(*actual_kind) == kind)) {
    return absl::InvalidArgumentError(absl::StrCat(Absl(kind), ": object has another kind"));
  }
  absl::StatusOr<Object> decoded = decoder->decode(json);
  if (decoded.ok()) return decoded;
  const Json* metadata = Find(json, "metadata");
  const std::string_view ns = metadata ? StringMember(*metadata, "namespace") : std::string_view();
  const std::string_view name = metadata ? StringMember(*metadata, "name") : std::string_view();
  return absl::InvalidArgumentError(absl::StrCat(Describe(kind, decoder->namespaced, ns, name),
                                                 ": ", decoded.status().message()));
}

absl::StatusOr<NodeAffinity> DecodeNodeAffinity(std::string_view json_or_yaml) {
  constexpr std::string_view kSource = "node affinity";
  ParsedText parsed;
  KUBESCHED_RETURN_IF_ERROR(Parse(json_or_yaml, kSource, &parsed));
  const Json* root = &parsed.doc;
  if (parsed.documents) {
    if (parsed.doc.Size() > 1) {
      return absl::InvalidArgumentError("node affinity: expected one YAML document");
    }
    if (parsed.doc.Empty()) return NodeAffinity{};
    root = &parsed.doc[0];
  }
  if (root->IsNull()) return NodeAffinity{};
  absl::StatusOr<NodeAffinity> affinity =
      internal::DecodeNodeAffinityValue(*root, internal::Path());
  if (!affinity.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("node affinity: ", affinity.status().message()));
  }
  return affinity;
}

absl::StatusOr<ResourceList> DecodeResourceListJson(std::string_view json) {
  // The object decoder's resource-list reader gives the same quantity rules and messages as
  // requests in a pod spec; it reads a member, so the value is wrapped in one.
  const std::string wrapped = absl::StrCat("{\"virtualRequest\":", util::Absl(json), "}");
  rapidjson::Document doc;
  doc.Parse(wrapped.data(), wrapped.size());
  if (doc.HasParseError() || !doc.IsObject()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "not a JSON resource list: ", rapidjson::GetParseError_En(doc.GetParseError())));
  }
  const rapidjson::Value& value = doc["virtualRequest"];
  if (!value.IsObject()) {
    return absl::InvalidArgumentError("not a JSON resource list: expected an object");
  }
  ResourceList out;
  const internal::Path root;
  if (absl::Status status = internal::ReadResources(doc, "virtualRequest", root, &out);
      !status.ok()) {
    return status;
  }
  return out;
}

}  // namespace kubesched::api
