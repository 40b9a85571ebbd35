// Decoding policy bindings: the one decoder for the file's `policyBindings:` list and the
// ConfigMap's `policyBindings` value. Selectors are checked as upstream validates a
// metav1.LabelSelector, so a binding never holds a requirement that silently matches nothing.

#include "policy/binding.h"

#include <algorithm>
#include <array>
#include <exception>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "config/yaml_reader.h"
#include "policy/template_text.h"

namespace kubesched::policy {
namespace {

using config::yaml::Field;
using config::yaml::Get;
using config::yaml::HasValue;
using config::yaml::Index;
using config::yaml::Reader;

constexpr std::array<std::string_view, 5> kBindingFields = {"name", "namespaceSelector", "selector",
                                                            "policy", "args"};
constexpr std::array<std::string_view, 2> kSelectorFields = {"matchLabels", "matchExpressions"};
constexpr std::array<std::string_view, 3> kRequirementFields = {"key", "operator", "values"};
constexpr size_t kMaxBindingNameLength = 63;

struct LabelOperator {
  std::string_view name;
  api::SelectorOperator op;
  bool takes_values;
};

// metav1.LabelSelectorOperator: no Gt or Lt, which only node selectors have.
constexpr std::array<LabelOperator, 4> kLabelOperators = {{
    {"In", api::SelectorOperator::kIn, true},
    {"NotIn", api::SelectorOperator::kNotIn, true},
    {"Exists", api::SelectorOperator::kExists, false},
    {"DoesNotExist", api::SelectorOperator::kDoesNotExist, false},
}};

void CheckKey(Reader& r, std::string_view key, std::string_view path) {
  if (!api::IsValidLabelKey(key)) {
    r.Fail(path, absl::StrCat(Quote(key), " is not a valid label key"));
  }
}

void CheckValue(Reader& r, std::string_view value, std::string_view path) {
  if (!api::IsValidLabelValue(value)) {
    r.Fail(path, absl::StrCat(Quote(value), " is not a valid label value"));
  }
}

// Symbols sorted and unique, as Requirement::Matches searches them.
std::vector<api::Symbol> SortedSymbols(const std::vector<std::string>& values) {
  std::vector<api::Symbol> symbols;
  symbols.reserve(values.size());
  for (const std::string& value : values) symbols.push_back(api::Intern(value));
  std::sort(symbols.begin(), symbols.end());
  symbols.erase(std::unique(symbols.begin(), symbols.end()), symbols.end());
  return symbols;
}

void DecodeMatchLabels(Reader& r, const YAML::Node& node, std::string_view path,
                       api::LabelSelector* out) {
  if (!r.ok() || !HasValue(node)) return;
  if (!node.IsMap()) {
    r.Fail(path, "must be a map of label keys to values, got " + config::yaml::Describe(node));
    return;
  }
  for (const auto& entry : node) {
    std::string key;
    std::string value;
    r.String(entry.first, path, &key);
    const std::string entry_path = Field(path, key);
    r.String(entry.second, entry_path, &value);
    CheckKey(r, key, entry_path);
    CheckValue(r, value, entry_path);
    if (!r.ok()) return;
    out->requirements.push_back(
        {api::Intern(key), api::SelectorOperator::kIn, {api::Intern(value)}, 0, true});
  }
}

void DecodeRequirement(Reader& r, const YAML::Node& node, const std::string& path,
                       api::LabelSelector* out) {
  if (!r.Map(node, path, kRequirementFields)) return;
  std::string key;
  std::string op_name;
  std::vector<std::string> values;
  r.String(Get(node, "key"), Field(path, "key"), &key);
  r.String(Get(node, "operator"), Field(path, "operator"), &op_name);
  r.StringList(Get(node, "values"), Field(path, "values"), &values);
  if (!r.ok()) return;
  if (key.empty()) r.Fail(Field(path, "key"), "required");
  CheckKey(r, key, Field(path, "key"));
  const auto found = std::find_if(kLabelOperators.begin(), kLabelOperators.end(),
                                  [&](const LabelOperator& o) { return o.name == op_name; });
  if (found == kLabelOperators.end()) {
    r.Fail(Field(path, "operator"), absl::StrCat("unknown operator ", Quote(op_name),
                                                 " (In, NotIn, Exists or DoesNotExist)"));
    return;
  }
  if (found->takes_values && values.empty()) {
    r.Fail(Field(path, "values"), absl::StrCat(op_name, " needs at least one value"));
  } else if (!found->takes_values && !values.empty()) {
    r.Fail(Field(path, "values"), absl::StrCat(op_name, " takes no values, got ", values.size()));
  }
  for (size_t i = 0; i < values.size(); ++i) {
    CheckValue(r, values[i], Index(Field(path, "values"), i));
  }
  if (!r.ok()) return;
  out->requirements.push_back({api::Intern(key), found->op, SortedSymbols(values), 0, true});
}

std::optional<api::LabelSelector> DecodeSelector(Reader& r, const YAML::Node& node,
                                                 std::string_view path) {
  if (!HasValue(node) || !r.Map(node, path, kSelectorFields)) return std::nullopt;
  api::LabelSelector selector;
  DecodeMatchLabels(r, Get(node, "matchLabels"), Field(path, "matchLabels"), &selector);
  const YAML::Node expressions = Get(node, "matchExpressions");
  const std::string expressions_path = Field(path, "matchExpressions");
  if (r.List(expressions, expressions_path) && HasValue(expressions)) {
    for (size_t i = 0; i < expressions.size() && r.ok(); ++i) {
      DecodeRequirement(r, expressions[i], Index(expressions_path, i), &selector);
    }
  }
  if (!r.ok()) return std::nullopt;
  return selector;
}

void DecodeArgs(Reader& r, const YAML::Node& node, std::string_view path,
                std::map<std::string, std::string>* out) {
  if (!r.ok() || !HasValue(node)) return;
  if (!node.IsMap()) {
    r.Fail(path, "must be a map of hole names to strings, got " + config::yaml::Describe(node));
    return;
  }
  for (const auto& entry : node) {
    std::string name;
    std::string value;
    r.String(entry.first, path, &name);
    r.String(entry.second, Field(path, name), &value);
    if (!r.ok()) return;
    (*out)[name] = value;
  }
}

void DecodeBinding(Reader& r, const YAML::Node& node, const std::string& path,
                   const std::vector<PolicyBinding>& earlier, PolicyBinding* out) {
  if (!HasValue(node) || !node.IsMap()) {
    r.Fail(path, "must be a map with a policy and a selector, got " + config::yaml::Describe(node));
    return;
  }
  if (!r.Map(node, path, kBindingFields)) return;
  r.String(Get(node, "name"), Field(path, "name"), &out->name);
  r.String(Get(node, "policy"), Field(path, "policy"), &out->policy);
  out->namespace_selector =
      DecodeSelector(r, Get(node, "namespaceSelector"), Field(path, "namespaceSelector"));
  out->pod_selector = DecodeSelector(r, Get(node, "selector"), Field(path, "selector"));
  DecodeArgs(r, Get(node, "args"), Field(path, "args"), &out->args);
  if (!r.ok()) return;
  if (!out->name.empty() &&
      (out->name.size() > kMaxBindingNameLength || !IsDnsLabelText(out->name))) {
    r.Fail(Field(path, "name"), absl::StrCat("invalid binding name ", Quote(out->name),
                                             " (lowercase letters, digits and '-', at most 63)"));
  }
  for (size_t j = 0; j < earlier.size() && !out->name.empty(); ++j) {
    if (earlier[j].name != out->name) continue;
    r.Fail(Field(path, "name"), absl::StrCat("duplicate binding name ", Quote(out->name), " (also ",
                                             Index(kBindingsField, j), ")"));
  }
  if (out->policy.empty()) r.Fail(Field(path, "policy"), "required");
  if (!out->namespace_selector.has_value() && !out->pod_selector.has_value()) {
    r.Fail(path, "needs a namespaceSelector, a selector or both");
  }
}

absl::StatusOr<std::vector<PolicyBinding>> DecodeBindings(const YAML::Node& node) {
  Reader r;
  std::vector<PolicyBinding> out;
  if (!r.List(node, kBindingsField)) return r.status();
  if (!HasValue(node)) return out;
  for (size_t i = 0; i < node.size() && r.ok(); ++i) {
    PolicyBinding binding;
    DecodeBinding(r, node[i], Index(kBindingsField, i), out, &binding);
    if (r.ok()) out.push_back(std::move(binding));
  }
  if (!r.ok()) return r.status();
  return out;
}

const api::LabelSet& NoLabels() {
  static const api::LabelSet* const empty = new api::LabelSet();
  return *empty;
}

}  // namespace

absl::StatusOr<std::vector<PolicyBinding>> ParseFileBindings(
    const std::shared_ptr<const YAML::Node>& list) {
  if (list == nullptr) return std::vector<PolicyBinding>();
  try {
    return DecodeBindings(*list);
  } catch (const std::exception& e) {
    // yaml-cpp throws on misuse; no exception may leave policy/.
    return absl::InvalidArgumentError(absl::StrCat(kBindingsField, ": cannot decode: ", e.what()));
  }
}

absl::StatusOr<std::vector<PolicyBinding>> ParseBindings(std::string_view text) {
  try {
    absl::StatusOr<YAML::Node> root = config::yaml::ParseDocument(text);
    if (!root.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(kBindingsField, ": ", root.status().message()));
    }
    return DecodeBindings(*root);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat(kBindingsField, ": cannot decode: ", e.what()));
  }
}

bool BindingMatches(const PolicyBinding& binding, const api::LabelSet& pod_labels,
                    const api::LabelSet* namespace_labels) {
  if (binding.pod_selector.has_value() && !binding.pod_selector->Matches(pod_labels)) return false;
  if (!binding.namespace_selector.has_value()) return true;
  return binding.namespace_selector->Matches(namespace_labels != nullptr ? *namespace_labels
                                                                         : NoLabels());
}

std::string DescribeBinding(size_t index, const PolicyBinding& binding) {
  std::string out = absl::StrCat("binding ", index + 1);
  if (!binding.name.empty()) absl::StrAppend(&out, " ", Quote(binding.name));
  return out;
}

}  // namespace kubesched::policy
