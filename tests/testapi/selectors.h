#pragma once

// Label and field selectors in the syntax of the `labelSelector` and `fieldSelector` query
// parameters. Immutable after parsing, so safe to share between threads.

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace kubesched::testapi {

using Labels = std::map<std::string, std::string, std::less<>>;

class LabelSelector {
 public:
  enum class Operator { kEquals, kNotEquals, kIn, kNotIn, kExists, kNotExists };
  struct Requirement {
    std::string key{};
    Operator op = Operator::kExists;
    std::vector<std::string> values{};
  };

  // Parses "a=b,c!=d,e in (x,y),f notin (z),g,!h". An empty text selects everything. Errors are
  // InvalidArgument with the real API's wording where practical.
  static absl::StatusOr<LabelSelector> Parse(std::string_view text);

  bool Matches(const Labels& labels) const;
  bool empty() const { return requirements_.empty(); }
  const std::vector<Requirement>& requirements() const { return requirements_; }

 private:
  std::vector<Requirement> requirements_{};
};

class FieldSelector {
 public:
  struct Requirement {
    std::string field{};
    bool negated = false;  // "!="
    std::string value{};
  };
  // The value of a field of an object ("" when the object does not set it).
  using FieldLookup = std::function<std::string_view(std::string_view field)>;

  // Parses "metadata.name=x,spec.nodeName!=,status.phase==Running". An empty text selects
  // everything.
  static absl::StatusOr<FieldSelector> Parse(std::string_view text);

  bool Matches(const FieldLookup& lookup) const;
  // This selector with every field name replaced by `rename(field)`: for a type served from the
  // storage of another whose fields are named differently.
  FieldSelector RenameFields(const std::function<std::string(std::string_view)>& rename) const;
  bool empty() const { return requirements_.empty(); }
  const std::vector<Requirement>& requirements() const { return requirements_; }

 private:
  std::vector<Requirement> requirements_{};
};

}  // namespace kubesched::testapi
