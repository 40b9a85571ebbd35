#include "tests/testapi/selectors.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/str_cat.h"
#include "scheduler/util/strings.h"

namespace kubesched::testapi {
namespace {

using util::Absl;

std::string_view Trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

// Splits on commas that are not inside parentheses ("a in (x,y),b" has two parts).
absl::StatusOr<std::vector<std::string_view>> SplitTopLevel(std::string_view text) {
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '(') ++depth;
    if (text[i] == ')' && --depth < 0) break;
    if (text[i] == ',' && depth == 0) {
      parts.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  if (depth != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unable to parse requirement: unbalanced parentheses in \"", Absl(text), "\""));
  }
  parts.push_back(text.substr(start));
  return parts;
}

bool IsLabelKeyChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' ||
         c == '/';
}

bool IsValidLabelKey(std::string_view key) {
  return !key.empty() && key.size() <= 316 && std::all_of(key.begin(), key.end(), IsLabelKeyChar);
}

bool IsValidLabelValue(std::string_view value) {
  return value.size() <= 63 && std::all_of(value.begin(), value.end(), [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
         });
}

absl::Status InvalidRequirement(std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("unable to parse requirement: ", Absl(why), ": \"", Absl(text), "\""));
}

absl::StatusOr<std::vector<std::string>> ParseValueSet(std::string_view text) {
  text = Trim(text);
  if (text.size() < 2 || text.front() != '(' || text.back() != ')') {
    return InvalidRequirement(text, "found '" + std::string(text) + "', expected: '('");
  }
  std::vector<std::string> values;
  std::string_view inner = text.substr(1, text.size() - 2);
  size_t start = 0;
  while (true) {
    size_t comma = inner.find(',', start);
    std::string_view value = Trim(inner.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (!IsValidLabelValue(value)) return InvalidRequirement(text, "invalid label value");
    values.emplace_back(value);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return values;
}

// Finds the " in " / " notin " keyword of a set-based requirement.
bool SplitSetRequirement(std::string_view text, std::string_view keyword, std::string_view* key,
                         std::string_view* rest) {
  size_t pos = 0;
  while ((pos = text.find(keyword, pos)) != std::string_view::npos) {
    bool space_before = pos > 0 && std::isspace(static_cast<unsigned char>(text[pos - 1]));
    size_t after = pos + keyword.size();
    bool boundary_after =
        after < text.size() &&
        (std::isspace(static_cast<unsigned char>(text[after])) || text[after] == '(');
    if (space_before && boundary_after) {
      *key = Trim(text.substr(0, pos));
      *rest = text.substr(after);
      return true;
    }
    pos = after;
  }
  return false;
}

absl::StatusOr<LabelSelector::Requirement> ParseLabelRequirement(std::string_view text) {
  using Op = LabelSelector::Operator;
  LabelSelector::Requirement requirement;
  std::string_view key;
  std::string_view rest;
  bool not_in = SplitSetRequirement(text, "notin", &key, &rest);
  if (not_in || SplitSetRequirement(text, "in", &key, &rest)) {
    requirement.op = not_in ? Op::kNotIn : Op::kIn;
    auto values = ParseValueSet(rest);
    if (!values.ok()) return values.status();
    requirement.values = *std::move(values);
  } else if (size_t pos = text.find("!="); pos != std::string_view::npos) {
    key = Trim(text.substr(0, pos));
    requirement.op = Op::kNotEquals;
    requirement.values.emplace_back(Trim(text.substr(pos + 2)));
  } else if (size_t eq = text.find('='); eq != std::string_view::npos) {
    key = Trim(text.substr(0, eq));
    size_t value_start = eq + 1 < text.size() && text[eq + 1] == '=' ? eq + 2 : eq + 1;
    requirement.op = Op::kEquals;
    requirement.values.emplace_back(Trim(text.substr(value_start)));
  } else if (!text.empty() && text.front() == '!') {
    key = Trim(text.substr(1));
    requirement.op = Op::kNotExists;
  } else {
    key = text;
    requirement.op = Op::kExists;
  }
  if (!IsValidLabelKey(key)) return InvalidRequirement(text, "invalid label key");
  for (const std::string& value : requirement.values) {
    if (!IsValidLabelValue(value)) return InvalidRequirement(text, "invalid label value");
  }
  requirement.key = std::string(key);
  return requirement;
}

}  // namespace

absl::StatusOr<LabelSelector> LabelSelector::Parse(std::string_view text) {
  LabelSelector selector;
  text = Trim(text);
  if (text.empty()) return selector;
  auto parts = SplitTopLevel(text);
  if (!parts.ok()) return parts.status();
  for (std::string_view part : *parts) {
    part = Trim(part);
    if (part.empty()) return InvalidRequirement(text, "empty requirement");
    auto requirement = ParseLabelRequirement(part);
    if (!requirement.ok()) return requirement.status();
    selector.requirements_.push_back(*std::move(requirement));
  }
  return selector;
}

bool LabelSelector::Matches(const Labels& labels) const {
  for (const Requirement& requirement : requirements_) {
    auto it = labels.find(requirement.key);
    bool present = it != labels.end();
    auto value_in_set = [&] {
      return present && std::find(requirement.values.begin(), requirement.values.end(),
                                  it->second) != requirement.values.end();
    };
    bool ok = true;
    switch (requirement.op) {
      case Operator::kEquals:
      case Operator::kIn:
        ok = value_in_set();
        break;
      case Operator::kNotEquals:
      case Operator::kNotIn:
        ok = !value_in_set();
        break;
      case Operator::kExists:
        ok = present;
        break;
      case Operator::kNotExists:
        ok = !present;
        break;
    }
    if (!ok) return false;
  }
  return true;
}

absl::StatusOr<FieldSelector> FieldSelector::Parse(std::string_view text) {
  FieldSelector selector;
  text = Trim(text);
  if (text.empty()) return selector;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    std::string_view part = Trim(text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    Requirement requirement;
    size_t op_pos = part.find("!=");
    size_t value_start;
    if (op_pos != std::string_view::npos) {
      requirement.negated = true;
      value_start = op_pos + 2;
    } else if ((op_pos = part.find("==")) != std::string_view::npos) {
      value_start = op_pos + 2;
    } else if ((op_pos = part.find('=')) != std::string_view::npos) {
      value_start = op_pos + 1;
    } else {
      return absl::InvalidArgumentError(absl::StrCat("invalid selector: '", Absl(text),
                                                     "'; can't understand '", Absl(part), "'"));
    }
    requirement.field = std::string(Trim(part.substr(0, op_pos)));
    requirement.value = std::string(Trim(part.substr(value_start)));
    if (requirement.field.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("invalid selector: '", Absl(text), "'"));
    }
    selector.requirements_.push_back(std::move(requirement));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return selector;
}

bool FieldSelector::Matches(const FieldLookup& lookup) const {
  for (const Requirement& requirement : requirements_) {
    bool equal = lookup(requirement.field) == requirement.value;
    if (equal == requirement.negated) return false;
  }
  return true;
}

FieldSelector FieldSelector::RenameFields(
    const std::function<std::string(std::string_view)>& rename) const {
  FieldSelector renamed = *this;
  for (Requirement& requirement : renamed.requirements_) {
    requirement.field = rename(requirement.field);
  }
  return renamed;
}

}  // namespace kubesched::testapi
