// Per-pod policies: the decoder shared by the file's `policies:` and the ConfigMap, node-affinity
// templates (compiled at parse time, rendered per pod) and the immutable policy set.

#include "config/policies.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <exception>
#include <optional>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "config/decode_internal.h"
#include "config/merge.h"
#include "config/yaml_reader.h"
#include "rapidjson/document.h"
#include "rapidjson/error/en.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "scheduler/api/decode.h"
#include "scheduler/api/labels.h"
#include "scheduler/util/strings.h"

namespace kubesched::config {
namespace {

using util::Absl;
using yaml::Field;
using yaml::Get;
using yaml::HasValue;
using yaml::Index;
using yaml::PathError;
using yaml::Reader;

constexpr std::array<std::string_view, 5> kPolicyFields = {
    "name", "plugins", "pluginConfig", "percentageOfNodesToScore", "nodeAffinity"};

constexpr char kNodeAffinityField[] = "nodeAffinity";
constexpr char kRequiredField[] = "requiredDuringSchedulingIgnoredDuringExecution";
constexpr char kPreferredField[] = "preferredDuringSchedulingIgnoredDuringExecution";
constexpr char kTermsField[] = "nodeSelectorTerms";
constexpr char kExpressionsField[] = "matchExpressions";
constexpr char kFieldsField[] = "matchFields";

constexpr size_t kMaxPolicyNameLength = 63;
constexpr char kPolicyNameRule[] =
    "lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 "
    "characters";

// Every hole gets this value when a template is checked at parse time. On its own it is a valid
// label key, label value, integer and node name, so a failure points at the text around the
// holes, which no args can repair.
constexpr std::string_view kPlaceholder = "0";

constexpr std::array<std::string_view, 3> kDataKeyExtensions = {".yaml", ".yml", ".json"};

std::string Quote(std::string_view text) { return absl::StrCat("\"", Absl(text), "\""); }

absl::Status PolicyError(std::string_view policy, std::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("policy ", Quote(policy), ": ", Absl(message)));
}

// ---------------------------------------------------------------------------------------------
// Names

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

// An RFC 1123 label without the length limit: [a-z0-9]([-a-z0-9]*[a-z0-9])?
bool IsDnsLabelText(std::string_view text) {
  if (text.empty() || !IsLowerAlnum(text.front()) || !IsLowerAlnum(text.back())) return false;
  return std::all_of(text.begin(), text.end(), [](char c) { return IsLowerAlnum(c) || c == '-'; });
}

bool IsValidPolicyName(std::string_view name) {
  return name.size() <= kMaxPolicyNameLength && IsDnsLabelText(name);
}

// A node name, as upstream validates a matchFields metadata.name value: an RFC 1123 subdomain.
bool IsValidNodeName(std::string_view name) {
  constexpr size_t kMaxSubdomainLength = 253;
  if (name.empty() || name.size() > kMaxSubdomainLength) return false;
  size_t start = 0;
  while (true) {
    const size_t dot = name.find('.', start);
    if (!IsDnsLabelText(name.substr(start, dot - start))) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

// Go's strconv.ParseInt(text, 10, 64), which upstream uses for Gt and Lt.
bool IsInteger(std::string_view text) {
  if (text.size() > 1 && text[0] == '+' && text[1] != '-') text.remove_prefix(1);
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return !text.empty() && error == std::errc() && end == text.data() + text.size();
}

// "gpu-pack.yaml" -> "gpu-pack": a data key may carry the format of its value.
std::string_view PolicyNameOfDataKey(std::string_view key) {
  for (std::string_view extension : kDataKeyExtensions) {
    if (key.size() > extension.size() && key.substr(key.size() - extension.size()) == extension) {
      return key.substr(0, key.size() - extension.size());
    }
  }
  return key;
}

// ---------------------------------------------------------------------------------------------
// Template strings: "pool-{{ .Pool }}" is the literal "pool-" followed by the hole Pool.

// What a template string must render to.
enum class TextKind { kLabelKey, kLabelValue, kInteger, kFieldKey, kNodeName };

// "a valid label key": completes `"x" is not ...`.
std::string_view Expected(TextKind kind) {
  switch (kind) {
    case TextKind::kLabelKey:
      return "a valid label key";
    case TextKind::kLabelValue:
      return "a valid label value";
    case TextKind::kInteger:
      return "an integer";
    case TextKind::kFieldKey:
      return "metadata.name (the only field matchFields take)";
    case TextKind::kNodeName:
      return "a valid node name";
  }
  return "valid";
}

bool IsValidText(TextKind kind, std::string_view text) {
  switch (kind) {
    case TextKind::kLabelKey:
      return api::IsValidLabelKey(text);
    case TextKind::kLabelValue:
      return api::IsValidLabelValue(text);
    case TextKind::kInteger:
      return IsInteger(text);
    case TextKind::kFieldKey:
      return text == "metadata.name";
    case TextKind::kNodeName:
      return IsValidNodeName(text);
  }
  return false;
}

constexpr int kLiteral = -1;

struct Segment {
  std::string literal;
  int hole = kLiteral;  // index into NodeAffinityTemplate::holes
};

// One key or value of the template.
struct TemplateText {
  std::string written;  // as in the policy, for messages
  std::vector<Segment> segments;
  bool has_holes = false;
  TextKind kind = TextKind::kLabelValue;
  std::string path;  // "nodeAffinity.....values[1]", for messages
};

bool IsHoleNameStart(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}
bool IsHoleNameChar(char c) { return IsHoleNameStart(c) || (c >= '0' && c <= '9'); }

bool IsHoleName(std::string_view name) {
  return !name.empty() && IsHoleNameStart(name.front()) &&
         std::all_of(name.begin(), name.end(), IsHoleNameChar);
}

std::string_view TrimSpace(std::string_view text) {
  constexpr std::string_view kSpace = " \t\r\n";
  const size_t first = text.find_first_not_of(kSpace);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpace) - first + 1);
}

int HoleIndex(std::string_view name, std::vector<std::string>* holes) {
  const auto it = std::find(holes->begin(), holes->end(), name);
  if (it != holes->end()) return static_cast<int>(it - holes->begin());
  holes->emplace_back(name);
  return static_cast<int>(holes->size() - 1);
}

// Splits `text` into literal and hole segments, adding new hole names to `holes`. Errors have no
// path.
absl::Status SplitHoles(std::string_view text, std::vector<std::string>* holes, TemplateText* out) {
  constexpr std::string_view kOpen = "{{";
  constexpr std::string_view kClose = "}}";
  size_t position = 0;
  while (position < text.size()) {
    const size_t open = text.find(kOpen, position);
    if (open != position) {
      out->segments.push_back({std::string(text.substr(position, open - position)), kLiteral});
    }
    if (open == std::string_view::npos) break;
    const size_t close = text.find(kClose, open + kOpen.size());
    if (close == std::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("unterminated hole ", Quote(text.substr(open))));
    }
    const std::string_view hole = text.substr(open, close + kClose.size() - open);
    const std::string_view inside =
        TrimSpace(text.substr(open + kOpen.size(), close - open - kOpen.size()));
    if (inside.empty() || inside.front() != '.' || !IsHoleName(inside.substr(1))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad hole ", Quote(hole),
          ": want {{.Name}}, Name a letter or '_' followed by letters, digits or '_'"));
    }
    out->segments.push_back({std::string(), HoleIndex(inside.substr(1), holes)});
    out->has_holes = true;
    position = close + kClose.size();
  }
  return absl::OkStatus();
}

void AppendRendered(const TemplateText& text, absl::Span<const std::string_view> hole_values,
                    std::string* out) {
  for (const Segment& segment : text.segments) {
    if (segment.hole == kLiteral) {
      out->append(segment.literal);
    } else {
      out->append(hole_values[static_cast<size_t>(segment.hole)]);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The node-affinity template, in Kubernetes' shape with TemplateText for keys and values.

struct RequirementTemplate {
  TemplateText key;
  std::string op;  // never a template: it decides what the key and values are
  std::vector<TemplateText> values;
};

struct TermTemplate {
  std::vector<RequirementTemplate> match_expressions;
  std::vector<RequirementTemplate> match_fields;
};

struct PreferredTemplate {
  int32_t weight = 0;
  TermTemplate preference;
};

}  // namespace

class NodeAffinityTemplate {
 public:
  bool has_required = false;
  std::vector<TermTemplate> required;  // nodeSelectorTerms
  std::vector<PreferredTemplate> preferred;
  std::vector<std::string> holes;  // hole names by index, in order of first use
};

namespace {

// ---------------------------------------------------------------------------------------------
// Decoding a template from YAML

// Which list a requirement is in, and so which operators and values it takes.
enum class RequirementList { kExpressions, kFields };

struct OperatorRule {
  std::string_view op;
  size_t min_values;
  size_t max_values;
  TextKind value_kind;
};

constexpr size_t kAnyNumber = static_cast<size_t>(-1);

// Upstream's ValidateNodeSelectorRequirement and ValidateNodeFieldSelectorRequirement.
constexpr std::array<OperatorRule, 6> kExpressionOperators = {{
    {"In", 1, kAnyNumber, TextKind::kLabelValue},
    {"NotIn", 1, kAnyNumber, TextKind::kLabelValue},
    {"Exists", 0, 0, TextKind::kLabelValue},
    {"DoesNotExist", 0, 0, TextKind::kLabelValue},
    {"Gt", 1, 1, TextKind::kInteger},
    {"Lt", 1, 1, TextKind::kInteger},
}};
constexpr std::array<OperatorRule, 2> kFieldOperators = {{
    {"In", 1, 1, TextKind::kNodeName},
    {"NotIn", 1, 1, TextKind::kNodeName},
}};

const OperatorRule* FindOperator(std::string_view op, RequirementList list) {
  const absl::Span<const OperatorRule> rules =
      list == RequirementList::kFields ? absl::Span<const OperatorRule>(kFieldOperators)
                                       : absl::Span<const OperatorRule>(kExpressionOperators);
  for (const OperatorRule& rule : rules) {
    if (rule.op == op) return &rule;
  }
  return nullptr;
}

// Empty when `count` values suit `rule`; otherwise what is wrong.
std::string CheckValueCount(const OperatorRule& rule, size_t count, RequirementList list) {
  const std::string_view where = list == RequirementList::kFields ? " in matchFields" : "";
  if (count >= rule.min_values && count <= rule.max_values) return "";
  if (rule.max_values == 0) {
    return absl::StrCat(Absl(rule.op), " takes no values, got ", count);
  }
  if (rule.max_values == 1) {
    return absl::StrCat(Absl(rule.op), " takes exactly one value", Absl(where), ", got ", count);
  }
  return absl::StrCat(Absl(rule.op), " needs at least one value");
}

// Reads the keys and values of a template with its holes split out; errors go to the Reader.
class TemplateDecoder {
 public:
  TemplateDecoder(Reader& reader, NodeAffinityTemplate* out) : r_(reader), out_(out) {}

  void Required(const YAML::Node& node, std::string_view path) {
    if (!r_.Map(node, path, {kTermsField}) || !HasValue(node)) return;
    const YAML::Node terms = Get(node, kTermsField);
    const std::string terms_path = Field(path, kTermsField);
    if (!r_.List(terms, terms_path)) return;
    if (!HasValue(terms) || terms.size() == 0) {
      r_.Fail(terms_path, "must have at least one term: with none, no node matches");
      return;
    }
    out_->has_required = true;
    for (size_t i = 0; i < terms.size() && r_.ok(); ++i) {
      out_->required.push_back(Term(terms[i], Index(terms_path, i)));
    }
  }

  void Preferred(const YAML::Node& node, std::string_view path) {
    if (!r_.List(node, path) || !HasValue(node)) return;
    for (size_t i = 0; i < node.size() && r_.ok(); ++i) {
      const std::string item_path = Index(path, i);
      const YAML::Node item = node[i];
      if (!r_.Map(item, item_path, {"weight", "preference"})) return;
      PreferredTemplate& preferred = out_->preferred.emplace_back();
      const std::string weight_path = Field(item_path, "weight");
      r_.Int32(Get(item, "weight"), weight_path, &preferred.weight);
      r_.InRange(preferred.weight, weight_path, 1, 100);
      preferred.preference = Term(Get(item, "preference"), Field(item_path, "preference"));
    }
  }

 private:
  TermTemplate Term(const YAML::Node& node, std::string_view path) {
    TermTemplate term;
    if (!r_.Map(node, path, {kExpressionsField, kFieldsField})) return term;
    Requirements(Get(node, kExpressionsField), Field(path, kExpressionsField),
                 RequirementList::kExpressions, &term.match_expressions);
    Requirements(Get(node, kFieldsField), Field(path, kFieldsField), RequirementList::kFields,
                 &term.match_fields);
    if (r_.ok() && term.match_expressions.empty() && term.match_fields.empty()) {
      // Upstream: a term with no requirements matches no node, surely not what was meant.
      r_.Fail(path,
              "must have a matchExpressions or matchFields entry: an empty term matches no "
              "node");
    }
    return term;
  }

  void Requirements(const YAML::Node& node, std::string_view path, RequirementList list,
                    std::vector<RequirementTemplate>* out) {
    if (!r_.List(node, path) || !HasValue(node)) return;
    for (size_t i = 0; i < node.size() && r_.ok(); ++i) {
      out->push_back(Requirement(node[i], Index(path, i), list));
    }
  }

  RequirementTemplate Requirement(const YAML::Node& node, std::string_view path,
                                  RequirementList list) {
    RequirementTemplate requirement;
    if (!r_.Map(node, path, {"key", "operator", "values"})) return requirement;
    const std::string key_path = Field(path, "key");
    const std::string op_path = Field(path, "operator");
    const std::string values_path = Field(path, "values");
    std::string key;
    ReadString(Get(node, "key"), key_path, &key);
    r_.String(Get(node, "operator"), op_path, &requirement.op);
    const YAML::Node values = Get(node, "values");
    if (!r_.List(values, values_path) || !r_.ok()) return requirement;
    if (key.empty()) {
      r_.Fail(key_path, "required");
      return requirement;
    }
    if (requirement.op.empty()) {
      r_.Fail(op_path, "required");
      return requirement;
    }
    const OperatorRule* rule = FindOperator(requirement.op, list);
    if (rule == nullptr) {
      r_.Fail(op_path, list == RequirementList::kFields
                           ? absl::StrCat("unknown operator ", Quote(requirement.op),
                                          " for matchFields (In or NotIn)")
                           : absl::StrCat("unknown operator ", Quote(requirement.op)));
      return requirement;
    }
    const size_t value_count = HasValue(values) ? values.size() : 0;
    if (const std::string problem = CheckValueCount(*rule, value_count, list); !problem.empty()) {
      r_.Fail(values_path, problem);
      return requirement;
    }
    requirement.key =
        Text(key, key_path,
             list == RequirementList::kFields ? TextKind::kFieldKey : TextKind::kLabelKey);
    for (size_t i = 0; i < value_count && r_.ok(); ++i) {
      const std::string value_path = Index(values_path, i);
      std::string value;
      ReadString(values[i], value_path, &value);
      requirement.values.push_back(Text(value, value_path, rule->value_kind));
    }
    return requirement;
  }

  // A string field; in YAML an unquoted {{.Name}} reads as a map, so that error says to quote.
  void ReadString(const YAML::Node& node, std::string_view path, std::string* out) {
    if (r_.ok() && node.IsMap()) {
      r_.Fail(path, "must be a string, got a map (quote values with holes: \"{{.Name}}\")");
      return;
    }
    r_.String(node, path, out);
  }

  TemplateText Text(std::string written, std::string path, TextKind kind) {
    TemplateText text;
    if (!r_.ok()) return text;
    if (absl::Status status = SplitHoles(written, &out_->holes, &text); !status.ok()) {
      r_.Fail(path, util::Std(status.message()));
      return text;
    }
    text.written = std::move(written);
    text.path = std::move(path);
    text.kind = kind;
    return text;
  }

  Reader& r_;
  NodeAffinityTemplate* out_;
};

// ---------------------------------------------------------------------------------------------
// Rendering: the template as Kubernetes JSON, decoded by the object decoder pods' affinity uses.

// The object decoder keeps a requirement upstream would reject, marked invalid (it matches no
// node). The checks while rendering should leave none; this makes sure no policy hands one out.
// Returns the requirement's path within the term, or nothing when all are valid.
std::optional<std::string> FirstInvalidRequirement(const api::NodeSelectorTerm& term) {
  for (size_t i = 0; i < term.match_expressions.size(); ++i) {
    if (!term.match_expressions[i].valid) return Index(kExpressionsField, i);
  }
  for (size_t i = 0; i < term.match_fields.size(); ++i) {
    if (!term.match_fields[i].valid) return Index(kFieldsField, i);
  }
  return std::nullopt;
}

absl::Status CheckDecoded(const api::NodeAffinity& affinity) {
  constexpr std::string_view kMessage = "invalid after rendering";
  const size_t required_terms = affinity.required.has_value() ? affinity.required->terms.size() : 0;
  for (size_t i = 0; i < required_terms; ++i) {
    if (auto invalid = FirstInvalidRequirement(affinity.required->terms[i])) {
      const std::string terms = Field(Field(kNodeAffinityField, kRequiredField), kTermsField);
      return PathError(Field(Index(terms, i), *invalid), kMessage);
    }
  }
  for (size_t i = 0; i < affinity.preferred.size(); ++i) {
    if (auto invalid = FirstInvalidRequirement(affinity.preferred[i].preference)) {
      const std::string preferred = Index(Field(kNodeAffinityField, kPreferredField), i);
      return PathError(Field(Field(preferred, "preference"), *invalid), kMessage);
    }
  }
  return absl::OkStatus();
}

// What fills the holes: the placeholder at parse time, the pod's args at render time.
enum class Fill { kPlaceholders, kArgs };

// Writes the template as Kubernetes JSON, checking each rendered key and value, then decodes it.
// One per rendering: the writer cannot be reset.
class Renderer {
 public:
  Renderer(absl::Span<const std::string_view> hole_values, Fill fill)
      : hole_values_(hole_values), fill_(fill), writer_(buffer_) {}

  absl::StatusOr<api::NodeAffinity> Render(const NodeAffinityTemplate& affinity) {
    writer_.StartObject();
    if (affinity.has_required) {
      writer_.Key(kRequiredField);
      writer_.StartObject();
      writer_.Key(kTermsField);
      writer_.StartArray();
      for (const TermTemplate& term : affinity.required) {
        if (absl::Status status = Term(term); !status.ok()) return status;
      }
      writer_.EndArray();
      writer_.EndObject();
    }
    if (!affinity.preferred.empty()) {
      writer_.Key(kPreferredField);
      writer_.StartArray();
      for (const PreferredTemplate& preferred : affinity.preferred) {
        writer_.StartObject();
        writer_.Key("weight");
        writer_.Int(preferred.weight);
        writer_.Key("preference");
        if (absl::Status status = Term(preferred.preference); !status.ok()) return status;
        writer_.EndObject();
      }
      writer_.EndArray();
    }
    writer_.EndObject();
    absl::StatusOr<api::NodeAffinity> decoded =
        api::DecodeNodeAffinity(std::string_view(buffer_.GetString(), buffer_.GetSize()));
    if (!decoded.ok()) {
      return PathError(kNodeAffinityField, absl::StrCat("the rendered template does not decode: ",
                                                        decoded.status().message()));
    }
    if (absl::Status status = CheckDecoded(*decoded); !status.ok()) return status;
    return decoded;
  }

 private:
  absl::Status Term(const TermTemplate& term) {
    writer_.StartObject();
    if (absl::Status status = Requirements(kExpressionsField, term.match_expressions);
        !status.ok()) {
      return status;
    }
    if (absl::Status status = Requirements(kFieldsField, term.match_fields); !status.ok()) {
      return status;
    }
    writer_.EndObject();
    return absl::OkStatus();
  }

  absl::Status Requirements(const char* name, const std::vector<RequirementTemplate>& list) {
    if (list.empty()) return absl::OkStatus();
    writer_.Key(name);
    writer_.StartArray();
    for (const RequirementTemplate& requirement : list) {
      writer_.StartObject();
      writer_.Key("key");
      if (absl::Status status = Text(requirement.key); !status.ok()) return status;
      writer_.Key("operator");
      WriteString(requirement.op);
      if (!requirement.values.empty()) {
        writer_.Key("values");
        writer_.StartArray();
        for (const TemplateText& value : requirement.values) {
          if (absl::Status status = Text(value); !status.ok()) return status;
        }
        writer_.EndArray();
      }
      writer_.EndObject();
    }
    writer_.EndArray();
    return absl::OkStatus();
  }

  // Writes one rendered key or value. Literal text was checked at parse time, so rendering args
  // only checks texts with holes.
  absl::Status Text(const TemplateText& text) {
    scratch_.clear();
    AppendRendered(text, hole_values_, &scratch_);
    if ((fill_ == Fill::kPlaceholders || text.has_holes) && !IsValidText(text.kind, scratch_)) {
      return TextError(text);
    }
    WriteString(scratch_);
    return absl::OkStatus();
  }

  absl::Status TextError(const TemplateText& text) const {
    const std::string_view expected = Expected(text.kind);
    if (!text.has_holes) {
      return PathError(text.path, absl::StrCat(Quote(scratch_), " is not ", Absl(expected)));
    }
    if (fill_ == Fill::kPlaceholders) {
      return PathError(text.path, absl::StrCat(Quote(text.written), " does not render to ",
                                               Absl(expected), " (with every hole set to ",
                                               Quote(kPlaceholder), ": ", Quote(scratch_), ")"));
    }
    return PathError(text.path,
                     absl::StrCat(Quote(scratch_), " is not ", Absl(expected), " (rendered from ",
                                  Quote(text.written), " with ", kPolicyArgsAnnotation, ")"));
  }

  void WriteString(std::string_view text) {
    writer_.String(text.data(), static_cast<rapidjson::SizeType>(text.size()), /*copy=*/true);
  }

  absl::Span<const std::string_view> hole_values_;
  Fill fill_;
  rapidjson::StringBuffer buffer_;
  rapidjson::Writer<rapidjson::StringBuffer> writer_;
  std::string scratch_;
};

// "a number": what a JSON value is, for type errors.
std::string_view JsonTypeName(const rapidjson::Value& value) {
  switch (value.GetType()) {
    case rapidjson::kNullType:
      return "null";
    case rapidjson::kFalseType:
    case rapidjson::kTrueType:
      return "a boolean";
    case rapidjson::kObjectType:
      return "an object";
    case rapidjson::kArrayType:
      return "an array";
    case rapidjson::kStringType:
      return "a string";
    case rapidjson::kNumberType:
      return "a number";
  }
  return "a value";
}

// Fills `hole_values` (by hole index) from the kubesched.io/policy-args text; the views point
// into `document`. Errors have no policy prefix.
absl::Status ReadArgs(std::string_view args_json, const std::vector<std::string>& holes,
                      rapidjson::Document* document, std::vector<std::string_view>* hole_values) {
  std::vector<bool> filled(holes.size(), false);
  if (!TrimSpace(args_json).empty()) {
    document->Parse(args_json.data(), args_json.size());
    if (document->HasParseError()) {
      return absl::InvalidArgumentError(absl::StrCat(
          kPolicyArgsAnnotation, ": not valid JSON at offset ", document->GetErrorOffset(), ": ",
          rapidjson::GetParseError_En(document->GetParseError())));
    }
    if (!document->IsObject()) {
      return absl::InvalidArgumentError(absl::StrCat(kPolicyArgsAnnotation,
                                                     ": must be a JSON object of strings, got ",
                                                     Absl(JsonTypeName(*document))));
    }
    for (const auto& member : document->GetObject()) {
      const std::string_view name(member.name.GetString(), member.name.GetStringLength());
      if (!member.value.IsString()) {
        return absl::InvalidArgumentError(absl::StrCat(kPolicyArgsAnnotation, ": ", Quote(name),
                                                       " must be a string, got ",
                                                       Absl(JsonTypeName(member.value))));
      }
      const auto hole = std::find(holes.begin(), holes.end(), name);
      if (hole == holes.end()) continue;  // args may carry more than this policy needs
      const auto index = static_cast<size_t>(hole - holes.begin());
      (*hole_values)[index] =
          std::string_view(member.value.GetString(), member.value.GetStringLength());
      filled[index] = true;
    }
  }
  std::vector<std::string_view> missing;
  for (size_t i = 0; i < holes.size(); ++i) {
    if (!filled[i]) missing.push_back(holes[i]);
  }
  if (missing.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(kPolicyArgsAnnotation, " has no value for ", util::Join(missing, ", ")));
}

// ---------------------------------------------------------------------------------------------
// Policies

// policy.node_affinity and policy.hole_names from the `nodeAffinity` field, checked by rendering
// it once with placeholders.
void DecodeNodeAffinityTemplate(Reader& r, const YAML::Node& node, std::string_view path,
                                Policy* policy) {
  if (!r.Map(node, path, {kRequiredField, kPreferredField}) || !HasValue(node)) return;
  auto affinity = std::make_shared<NodeAffinityTemplate>();
  TemplateDecoder decoder(r, affinity.get());
  decoder.Required(Get(node, kRequiredField), Field(path, kRequiredField));
  decoder.Preferred(Get(node, kPreferredField), Field(path, kPreferredField));
  if (!r.ok()) return;
  if (!affinity->has_required && affinity->preferred.empty()) return;  // `nodeAffinity: {}`
  const std::vector<std::string_view> placeholders(affinity->holes.size(), kPlaceholder);
  Renderer renderer(placeholders, Fill::kPlaceholders);
  if (!r.Merge(renderer.Render(*affinity).status())) return;
  policy->hole_names = std::set<std::string>(affinity->holes.begin(), affinity->holes.end());
  policy->node_affinity = std::move(affinity);
}

// One policy's fields. A `name` field, if any, must equal `name`. Errors are prefixed
// `policy "<name>": `.
absl::StatusOr<Policy> DecodePolicy(std::string_view name, const YAML::Node& node) {
  Reader r;
  Policy policy;
  policy.name = std::string(name);
  if (r.Map(node, "", kPolicyFields)) {
    std::string written_name;
    r.String(Get(node, "name"), "name", &written_name);
    if (r.ok() && !written_name.empty() && written_name != name) {
      r.Fail("name", absl::StrCat("must be ", Quote(name), " (the policy's name), got ",
                                  Quote(written_name)));
    }
    DecodeProfileBody(r, node, "", &policy.profile);
    DecodeNodeAffinityTemplate(r, Get(node, kNodeAffinityField), kNodeAffinityField, &policy);
  }
  if (!r.ok()) return PolicyError(name, util::Std(r.status().message()));
  policy.profile.scheduler_name = policy.name;
  policy.profile.plugins = MergeDefaults(DefaultPlugins(), policy.profile.plugins);
  return policy;
}

}  // namespace

void DecodePoliciesSection(Reader& r, const YAML::Node& node, std::string_view path,
                           std::vector<Policy>* out) {
  if (!r.List(node, path) || !HasValue(node)) return;
  for (size_t i = 0; i < node.size() && r.ok(); ++i) {
    const std::string item_path = Index(path, i);
    const std::string name_path = Field(item_path, "name");
    const YAML::Node item = node[i];
    if (!item.IsMap()) {
      r.Fail(item_path, "must be a map with a name, got " + yaml::Describe(item));
      return;
    }
    std::string name;
    r.String(Get(item, "name"), name_path, &name);
    if (!r.ok()) return;
    if (name.empty()) {
      r.Fail(name_path, "required");
      return;
    }
    if (!IsValidPolicyName(name)) {
      r.Fail(name_path,
             absl::StrCat("invalid policy name ", Quote(name), " (", kPolicyNameRule, ")"));
      return;
    }
    for (size_t j = 0; j < out->size(); ++j) {
      if ((*out)[j].name != name) continue;
      r.Fail(name_path,
             absl::StrCat("duplicate policy name ", Quote(name), " (also ", Index(path, j), ")"));
      return;
    }
    absl::StatusOr<Policy> policy = DecodePolicy(name, item);
    if (!policy.ok()) {
      r.Fail(item_path, util::Std(policy.status().message()));
      return;
    }
    out->push_back(*std::move(policy));
  }
}

void DecodePolicyConfigMap(Reader& r, const YAML::Node& node, std::string_view path,
                           PolicyConfigMap* out) {
  if (!r.Map(node, path, {"namespace", "name"}) || !HasValue(node)) return;
  r.String(Get(node, "namespace"), Field(path, "namespace"), &out->namespace_name);
  r.String(Get(node, "name"), Field(path, "name"), &out->name);
  if (r.ok() && (out->name.empty() || out->namespace_name.empty())) {
    r.Fail(Field(path, out->name.empty() ? "name" : "namespace"), "required");
  }
}

absl::StatusOr<Policy> ParsePolicy(std::string_view name, std::string_view text) {
  if (!IsValidPolicyName(name)) {
    return PolicyError(name, absl::StrCat("invalid name (", kPolicyNameRule, ")"));
  }
  try {
    absl::StatusOr<YAML::Node> root = yaml::ParseDocument(text);
    if (!root.ok()) return PolicyError(name, util::Std(root.status().message()));
    return DecodePolicy(name, *root);
  } catch (const std::exception& e) {
    // yaml-cpp throws on misuse; no exception may leave config/.
    return PolicyError(name, absl::StrCat("cannot decode: ", e.what()));
  }
}

absl::StatusOr<api::NodeAffinity> RenderNodeAffinity(const Policy& policy,
                                                     std::string_view args_json) {
  if (policy.node_affinity == nullptr) return api::NodeAffinity{};
  const NodeAffinityTemplate& affinity = *policy.node_affinity;
  rapidjson::Document args;  // owns the strings hole_values points to
  std::vector<std::string_view> hole_values(affinity.holes.size());
  if (!affinity.holes.empty()) {
    if (absl::Status status = ReadArgs(args_json, affinity.holes, &args, &hole_values);
        !status.ok()) {
      return PolicyError(policy.name, util::Std(status.message()));
    }
  }
  Renderer renderer(hole_values, Fill::kArgs);
  absl::StatusOr<api::NodeAffinity> rendered = renderer.Render(affinity);
  if (!rendered.ok()) return PolicyError(policy.name, util::Std(rendered.status().message()));
  return rendered;
}

const Policy* PolicySet::Find(std::string_view name) const {
  const auto it = policies_.find(name);
  return it == policies_.end() ? nullptr : &it->second;
}

std::vector<std::string> PolicySet::names() const {
  std::vector<std::string> names;
  names.reserve(policies_.size());
  for (const auto& [name, policy] : policies_) names.push_back(name);
  return names;
}

std::string PolicySet::Describe() const {
  const std::string count = policies_.size() == 1 ? "1 policy"
                            : policies_.empty()   ? "no policies"
                                                  : absl::StrCat(policies_.size(), " policies");
  std::string out = absl::StrCat(count, " (generation ", generation_, ")");
  if (!policies_.empty()) absl::StrAppend(&out, ": ", absl::StrJoin(names(), ", "));
  return out;
}

absl::StatusOr<std::shared_ptr<const PolicySet>> BuildPolicySet(
    const std::vector<Policy>& from_file, const std::map<std::string, std::string>& configmap_data,
    int64_t generation) {
  auto set = std::make_shared<PolicySet>();
  set->generation_ = generation;
  // Where each policy came from, for the error when a name is defined twice.
  std::map<std::string, std::string, std::less<>> origin;
  for (size_t i = 0; i < from_file.size(); ++i) {
    const std::string where = absl::StrCat("the configuration file (policies[", i, "])");
    const auto [it, inserted] = origin.emplace(from_file[i].name, where);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat("policy ", Quote(from_file[i].name),
                                                     " is defined twice: in ", it->second,
                                                     " and in ", where));
    }
    set->policies_.emplace(from_file[i].name, from_file[i]);
  }
  for (const auto& [key, text] : configmap_data) {
    const std::string_view name = PolicyNameOfDataKey(key);
    if (!IsValidPolicyName(name)) {
      return absl::InvalidArgumentError(absl::StrCat("ConfigMap key ", Quote(key),
                                                     ": invalid policy name ", Quote(name), " (",
                                                     kPolicyNameRule, ")"));
    }
    const std::string where = absl::StrCat("the ConfigMap (key ", Quote(key), ")");
    const auto [it, inserted] = origin.emplace(name, where);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat(
          "policy ", Quote(name), " is defined twice: in ", it->second, " and in ", where));
    }
    absl::StatusOr<Policy> policy = ParsePolicy(name, text);
    if (!policy.ok()) return policy.status();
    set->policies_.emplace(std::string(name), *std::move(policy));
  }
  return std::shared_ptr<const PolicySet>(std::move(set));
}

}  // namespace kubesched::config
