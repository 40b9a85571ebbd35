// Rendering a policy's node-affinity template: the template as Kubernetes JSON with its holes
// filled, decoded by the object decoder pods' affinity uses, so a rendered affinity is exactly
// what the same affinity written in a pod would be.

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "policy/node_affinity_template.h"
#include "policy/policy.h"
#include "rapidjson/document.h"
#include "rapidjson/error/en.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "scheduler/api/decode.h"
#include "scheduler/util/strings.h"

namespace kubesched::policy {
namespace {

using config::yaml::Field;
using config::yaml::Index;
using config::yaml::PathError;
using util::Absl;

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

}  // namespace

absl::StatusOr<api::NodeAffinity> RenderWith(const NodeAffinityTemplate& affinity,
                                             absl::Span<const std::string_view> hole_values,
                                             Fill fill) {
  Renderer renderer(hole_values, fill);
  return renderer.Render(affinity);
}

absl::StatusOr<api::NodeAffinity> RenderTemplate(const NodeAffinityTemplate& affinity,
                                                 std::string_view args_json) {
  rapidjson::Document args;  // owns the strings hole_values points to
  std::vector<std::string_view> hole_values(affinity.holes.size());
  if (!affinity.holes.empty()) {
    if (absl::Status status = ReadArgs(args_json, affinity.holes, &args, &hole_values);
        !status.ok()) {
      return status;
    }
  }
  return RenderWith(affinity, hole_values, Fill::kArgs);
}

}  // namespace kubesched::policy
