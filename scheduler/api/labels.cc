#include "scheduler/api/labels.h"

#include <algorithm>
#include <string_view>

#include "scheduler/api/parse_internal.h"

namespace kubesched::api {
namespace {

bool IsAlnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

// Upstream's qualifiedNameFmt / labelValueFmt: alphanumerics at both ends, [-_.] inside.
bool IsQualifiedNamePart(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  if (!IsAlnum(s.front()) || !IsAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return IsAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

bool IsDns1123Label(std::string_view s) {
  auto lower_alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); };
  if (s.empty() || !lower_alnum(s.front()) || !lower_alnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return lower_alnum(c) || c == '-'; });
}

// Upstream's IsDNS1123Subdomain: dot-separated DNS labels, at most 253 characters in all.
bool IsDns1123Subdomain(std::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  while (true) {
    const size_t dot = s.find('.');
    if (!IsDns1123Label(s.substr(0, dot))) return false;
    if (dot == std::string_view::npos) return true;
    s.remove_prefix(dot + 1);
  }
}

bool Contains(const std::vector<Symbol>& sorted, Symbol value) {
  return std::binary_search(sorted.begin(), sorted.end(), value);
}

// Gt/Lt compare the label's value as an integer; a label that is not one never matches.
bool MatchesNumber(const Requirement& r, Symbol label_value) {
  int64_t value = 0;
  if (!internal::ParseInt64(SymbolText(label_value), &value)) return false;
  return r.op == SelectorOperator::kGt ? value > r.number : value < r.number;
}

}  // namespace

std::string_view SelectorOperatorName(SelectorOperator op) {
  switch (op) {
    case SelectorOperator::kIn:
      return "In";
    case SelectorOperator::kNotIn:
      return "NotIn";
    case SelectorOperator::kExists:
      return "Exists";
    case SelectorOperator::kDoesNotExist:
      return "DoesNotExist";
    case SelectorOperator::kGt:
      return "Gt";
    case SelectorOperator::kLt:
      return "Lt";
  }
  return "In";
}

LabelSet LabelSet::FromPairs(std::vector<std::pair<Symbol, Symbol>> pairs) {
  std::stable_sort(pairs.begin(), pairs.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  LabelSet set;
  set.pairs_.reserve(pairs.size());
  for (const auto& pair : pairs) {
    // Stable order puts the later duplicate last, and it replaces the earlier one.
    if (!set.pairs_.empty() && set.pairs_.back().first == pair.first) {
      set.pairs_.back().second = pair.second;
    } else {
      set.pairs_.push_back(pair);
    }
  }
  return set;
}

std::optional<Symbol> LabelSet::Get(Symbol key) const {
  auto it = std::lower_bound(pairs_.begin(), pairs_.end(), key,
                             [](const auto& pair, Symbol k) { return pair.first < k; });
  if (it == pairs_.end() || it->first != key) return std::nullopt;
  return it->second;
}

void LabelSet::Set(Symbol key, Symbol value) {
  auto it = std::lower_bound(pairs_.begin(), pairs_.end(), key,
                             [](const auto& pair, Symbol k) { return pair.first < k; });
  if (it != pairs_.end() && it->first == key) {
    it->second = value;
  } else {
    pairs_.insert(it, {key, value});
  }
}

bool Requirement::Matches(const LabelSet& labels) const {
  if (!valid) return false;
  const std::optional<Symbol> value = labels.Get(key);
  switch (op) {
    case SelectorOperator::kIn:
      return value.has_value() && Contains(values, *value);
    case SelectorOperator::kNotIn:
      return !value.has_value() || !Contains(values, *value);
    case SelectorOperator::kExists:
      return value.has_value();
    case SelectorOperator::kDoesNotExist:
      return !value.has_value();
    case SelectorOperator::kGt:
    case SelectorOperator::kLt:
      return value.has_value() && MatchesNumber(*this, *value);
  }
  return false;
}

bool LabelSelector::Matches(const LabelSet& labels) const {
  return std::all_of(requirements.begin(), requirements.end(),
                     [&](const Requirement& r) { return r.Matches(labels); });
}

bool FieldRequirement::Matches(std::string_view node_name) const {
  if (!valid) return false;
  const bool listed = std::find(values.begin(), values.end(), node_name) != values.end();
  switch (op) {
    case SelectorOperator::kIn:
      return listed;
    case SelectorOperator::kNotIn:
      return !listed;
    default:
      return false;  // upstream supports only In and NotIn on fields
  }
}

bool NodeSelectorTerm::Matches(const LabelSet& node_labels, std::string_view node_name) const {
  if (match_expressions.empty() && match_fields.empty()) return false;
  return std::all_of(match_expressions.begin(), match_expressions.end(),
                     [&](const Requirement& r) { return r.Matches(node_labels); }) &&
         std::all_of(match_fields.begin(), match_fields.end(),
                     [&](const FieldRequirement& r) { return r.Matches(node_name); });
}

bool NodeSelector::Matches(const LabelSet& node_labels, std::string_view node_name) const {
  return std::any_of(terms.begin(), terms.end(), [&](const NodeSelectorTerm& term) {
    return term.Matches(node_labels, node_name);
  });
}

bool IsValidLabelKey(std::string_view key) {
  const size_t slash = key.find('/');
  if (slash == std::string_view::npos) return IsQualifiedNamePart(key);
  const std::string_view prefix = key.substr(0, slash);
  const std::string_view name = key.substr(slash + 1);
  return IsDns1123Subdomain(prefix) && IsQualifiedNamePart(name);  // a second '/' fails here
}

bool IsValidLabelValue(std::string_view value) {
  return value.empty() || IsQualifiedNamePart(value);
}

}  // namespace kubesched::api
