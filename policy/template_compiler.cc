// Compiling a policy's node-affinity template from YAML: keys and values split into literal and
// hole segments, operators and value counts checked as upstream validates node selectors.

#include <array>
#include <utility>

#include "absl/strings/str_cat.h"
#include "policy/node_affinity_template.h"
#include "scheduler/util/strings.h"

namespace kubesched::policy {
namespace {

using config::yaml::Field;
using config::yaml::Get;
using config::yaml::HasValue;
using config::yaml::Index;
using config::yaml::Reader;
using util::Absl;

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

}  // namespace

std::shared_ptr<const NodeAffinityTemplate> CompileNodeAffinityTemplate(Reader& r,
                                                                        const YAML::Node& node,
                                                                        std::string_view path) {
  if (!r.Map(node, path, {kRequiredField, kPreferredField}) || !HasValue(node)) return nullptr;
  auto affinity = std::make_shared<NodeAffinityTemplate>();
  TemplateDecoder decoder(r, affinity.get());
  decoder.Required(Get(node, kRequiredField), Field(path, kRequiredField));
  decoder.Preferred(Get(node, kPreferredField), Field(path, kPreferredField));
  if (!r.ok()) return nullptr;
  if (!affinity->has_required && affinity->preferred.empty()) return nullptr;  // `nodeAffinity: {}`
  const std::vector<std::string_view> placeholders(affinity->holes.size(), kPlaceholder);
  if (!r.Merge(RenderWith(*affinity, placeholders, Fill::kPlaceholders).status())) return nullptr;
  return affinity;
}

}  // namespace kubesched::policy
