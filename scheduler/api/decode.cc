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
#include "scheduler/api/decode_collector.h"
#include "scheduler/api/decode_internal.h"
#include "scheduler/api/decode_value.h"
#include "scheduler/api/yaml_to_json_internal.h"
#include "scheduler/util/file.h"
#include "scheduler/util/status_macros.h"
#include "scheduler/util/strings.h"

namespace kubesched::api {
namespace {

using internal::Describe;
using internal::Find;
using internal::FindDecoder;
using internal::Json;
using internal::KindDecoder;
using internal::StringMember;
using internal::View;
using util::Absl;

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

std::string DecodeProblem::ToString() const {
  return absl::StrCat(source, ": ", object, ": ", message);
}

absl::StatusOr<DecodedObjects> DecodeObjects(std::string_view text, std::string_view source) {
  ParsedText parsed;
  KUBESCHED_RETURN_IF_ERROR(Parse(text, source, &parsed));
  DecodedObjects decoded;
  const auto keep = [&decoded](Object&& object) { decoded.objects.push_back(std::move(object)); };
  internal::Collector collector(source, keep, &decoded.problems);
  ForEachDocument(parsed, [&](const Json& root) { collector.AddDocument(root); });
  return decoded;
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
