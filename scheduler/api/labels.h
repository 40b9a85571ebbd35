#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scheduler/api/symbol.h"

namespace kubesched::api {

// A set of labels (or a nodeSelector map) as interned (key, value) pairs sorted by key, so that a
// look-up is a short binary search over integers.
class LabelSet {
 public:
  LabelSet() = default;
  // Later duplicates of a key replace earlier ones.
  static LabelSet FromPairs(std::vector<std::pair<Symbol, Symbol>> pairs);

  // The value of `key`, or nullopt.
  std::optional<Symbol> Get(Symbol key) const;
  bool Has(Symbol key) const { return Get(key).has_value(); }
  void Set(Symbol key, Symbol value);
  size_t size() const { return pairs_.size(); }
  bool empty() const { return pairs_.empty(); }
  const std::vector<std::pair<Symbol, Symbol>>& pairs() const { return pairs_; }

  friend bool operator==(const LabelSet& a, const LabelSet& b) { return a.pairs_ == b.pairs_; }

 private:
  std::vector<std::pair<Symbol, Symbol>> pairs_;  // sorted by key, unique keys
};

enum class SelectorOperator : uint8_t { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };

// The operator as the API spells it ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt").
std::string_view SelectorOperatorName(SelectorOperator op);

// One requirement of a label selector or node selector term, compiled at decode time.
// `valid` is false when upstream's validation would reject it (In/NotIn with no values, Exists
// with values, Gt/Lt without exactly one integer, a malformed key or value): an invalid
// requirement matches nothing, as upstream's selector conversion error does.
struct Requirement {
  Symbol key = kEmptySymbol;
  SelectorOperator op = SelectorOperator::kIn;
  std::vector<Symbol> values;  // sorted, for In/NotIn
  int64_t number = 0;          // for Gt/Lt
  bool valid = true;

  bool Matches(const LabelSet& labels) const;
  bool operator==(const Requirement&) const = default;
};

// metav1.LabelSelector: matchLabels become In requirements. An empty selector matches everything;
// whether a selector is present at all is expressed with std::optional by the owner (a missing
// selector in a pod affinity term matches nothing).
struct LabelSelector {
  std::vector<Requirement> requirements;

  bool Matches(const LabelSet& labels) const;
  bool empty() const { return requirements.empty(); }
  bool operator==(const LabelSelector&) const = default;
};

// A matchFields requirement; only metadata.name is supported upstream.
struct FieldRequirement {
  std::string field;  // "metadata.name"
  SelectorOperator op = SelectorOperator::kIn;
  std::vector<std::string> values;
  bool valid = true;

  bool Matches(std::string_view node_name) const;
  bool operator==(const FieldRequirement&) const = default;
};

// v1.NodeSelectorTerm: match_expressions and match_fields are ANDed. A term with no requirements
// matches nothing (upstream).
struct NodeSelectorTerm {
  std::vector<Requirement> match_expressions;
  std::vector<FieldRequirement> match_fields;

  bool Matches(const LabelSet& node_labels, std::string_view node_name) const;
  bool operator==(const NodeSelectorTerm&) const = default;
};

// v1.NodeSelector: terms are ORed.
struct NodeSelector {
  std::vector<NodeSelectorTerm> terms;

  bool Matches(const LabelSet& node_labels, std::string_view node_name) const;
  bool operator==(const NodeSelector&) const = default;
};

// Label key/value syntax as upstream validates them (qualified name; value of at most 63
// characters of [A-Za-z0-9_.-] starting and ending alphanumeric).
bool IsValidLabelKey(std::string_view key);
bool IsValidLabelValue(std::string_view value);

}  // namespace kubesched::api
