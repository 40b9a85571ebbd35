#include "config/yaml_reader.h"

#include <charconv>
#include <cmath>
#include <exception>
#include <limits>
#include <string>
#include <system_error>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/api/yaml_guard.h"
#include "scheduler/util/strings.h"

namespace kubesched::config::yaml {
namespace {

using util::Absl;

// Deeper than any object a config holds; guards the recursive emitter against alias cycles.
constexpr int kMaxEmitDepth = 64;

// A quoted scalar is a string even when it reads like a number ("5"); yaml-cpp tags quoted
// scalars "!" and plain ones "?".
bool IsPlainScalar(const YAML::Node& node) { return node.IsScalar() && node.Tag() != "!"; }

std::string Quote(std::string_view text) { return absl::StrCat("\"", Absl(text), "\""); }

// Decimal integer in [lo, hi], written as a plain scalar.
bool ParseInteger(const YAML::Node& node, int64_t lo, int64_t hi, int64_t* out) {
  if (!IsPlainScalar(node)) return false;
  const std::string& text = node.Scalar();
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return false;
  if (value < lo || value > hi) return false;
  *out = value;
  return true;
}

absl::Status EmitNode(YAML::Emitter& out, const YAML::Node& node, int depth) {
  if (depth > kMaxEmitDepth) {
    return absl::InvalidArgumentError(absl::StrCat("nested deeper than ", kMaxEmitDepth));
  }
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      if (IsPlainScalar(node)) {
        out << node.Scalar();
      } else {
        out << YAML::DoubleQuoted << node.Scalar();
      }
      return absl::OkStatus();
    case YAML::NodeType::Sequence:
      out << YAML::BeginSeq;
      for (const YAML::Node& item : node) {
        if (auto s = EmitNode(out, item, depth + 1); !s.ok()) return s;
      }
      out << YAML::EndSeq;
      return absl::OkStatus();
    case YAML::NodeType::Map:
      out << YAML::BeginMap;
      for (const auto& entry : node) {
        out << YAML::Key;
        if (auto s = EmitNode(out, entry.first, depth + 1); !s.ok()) return s;
        out << YAML::Value;
        if (auto s = EmitNode(out, entry.second, depth + 1); !s.ok()) return s;
      }
      out << YAML::EndMap;
      return absl::OkStatus();
    default:
      out << YAML::Null;
      return absl::OkStatus();
  }
}

}  // namespace

std::string Field(std::string_view path, std::string_view name) {
  if (path.empty()) return std::string(name);
  return absl::StrCat(Absl(path), ".", Absl(name));
}

std::string Index(std::string_view path, size_t index) {
  return absl::StrCat(Absl(path), "[", index, "]");
}

absl::Status PathError(std::string_view path, std::string_view message) {
  if (path.empty()) return absl::InvalidArgumentError(Absl(message));
  return absl::InvalidArgumentError(absl::StrCat(Absl(path), ": ", Absl(message)));
}

absl::StatusOr<YAML::Node> ParseDocument(std::string_view text) {
  absl::StatusOr<std::vector<YAML::Node>> documents = api::LoadYamlDocuments(text);
  if (!documents.ok()) return documents.status();
  if (documents->empty()) return YAML::Node(YAML::NodeType::Null);
  if (documents->size() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected one document, found ", documents->size()));
  }
  return documents->front();
}

bool HasValue(const YAML::Node& node) { return node.IsDefined() && !node.IsNull(); }

YAML::Node Get(const YAML::Node& map, std::string_view key) {
  if (map.IsMap()) {
    for (const auto& entry : map) {
      if (entry.first.IsScalar() && entry.first.Scalar() == key) return entry.second;
    }
  }
  return YAML::Node(YAML::NodeType::Null);
}

std::string Describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a map";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return IsPlainScalar(node) ? Quote(node.Scalar()) : "string " + Quote(node.Scalar());
    default:
      return "null";
  }
}

absl::StatusOr<std::string> EmitBlock(const YAML::Node& node) {
  YAML::Emitter out;
  out.SetMapFormat(YAML::Block);
  out.SetSeqFormat(YAML::Block);
  if (auto s = EmitNode(out, node, 0); !s.ok()) return s;
  if (!out.good()) return absl::InvalidArgumentError(out.GetLastError());
  return std::string(out.c_str(), out.size());
}

bool Reader::Fail(std::string_view path, std::string_view message) {
  if (status_.ok()) status_ = PathError(path, message);
  return false;
}

bool Reader::Merge(const absl::Status& status) {
  if (status_.ok()) status_ = status;
  return status.ok();
}

bool Reader::Map(const YAML::Node& node, std::string_view path,
                 absl::Span<const std::string_view> known) {
  if (!ok()) return false;
  if (!HasValue(node)) return true;
  if (!node.IsMap()) return Fail(path, "must be a map, got " + Describe(node));
  absl::flat_hash_set<std::string> seen;
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) return Fail(path, "field names must be strings");
    const std::string& key = entry.first.Scalar();
    bool is_known = false;
    for (std::string_view name : known) is_known = is_known || name == key;
    if (!is_known) return Fail(path, "unknown field " + Quote(key));
    if (!seen.insert(key).second) return Fail(path, "field " + Quote(key) + " is given twice");
  }
  return true;
}

bool Reader::List(const YAML::Node& node, std::string_view path) {
  if (!ok()) return false;
  if (!HasValue(node) || node.IsSequence()) return true;
  return Fail(path, "must be a list, got " + Describe(node));
}

void Reader::String(const YAML::Node& node, std::string_view path, std::string* out) {
  if (!ok() || !HasValue(node)) return;
  if (!node.IsScalar()) {
    Fail(path, "must be a string, got " + Describe(node));
    return;
  }
  *out = node.Scalar();
}

void Reader::Int32(const YAML::Node& node, std::string_view path, int32_t* out) {
  int64_t value = *out;
  if (!ok() || !HasValue(node)) return;
  if (!ParseInteger(node, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max(),
                    &value)) {
    Fail(path, "must be a 32-bit integer, got " + Describe(node));
    return;
  }
  *out = static_cast<int32_t>(value);
}

void Reader::Int64(const YAML::Node& node, std::string_view path, int64_t* out) {
  if (!ok() || !HasValue(node)) return;
  if (!ParseInteger(node, std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(),
                    out)) {
    Fail(path, "must be an integer, got " + Describe(node));
  }
}

void Reader::Bool(const YAML::Node& node, std::string_view path, bool* out) {
  if (!ok() || !HasValue(node)) return;
  bool value = false;
  if (!IsPlainScalar(node) || !YAML::convert<bool>::decode(node, value)) {
    Fail(path, "must be true or false, got " + Describe(node));
    return;
  }
  *out = value;
}

void Reader::Double(const YAML::Node& node, std::string_view path, double* out) {
  if (!ok() || !HasValue(node)) return;
  double value = 0;
  if (!IsPlainScalar(node) || !absl::SimpleAtod(node.Scalar(), &value) || !std::isfinite(value)) {
    Fail(path, "must be a number, got " + Describe(node));
    return;
  }
  *out = value;
}

void Reader::Duration(const YAML::Node& node, std::string_view path, absl::Duration* out) {
  if (!ok() || !HasValue(node)) return;
  absl::Duration value;
  // absl::ParseDuration reads Go's syntax; a bare number is not a duration in Go either.
  if (!node.IsScalar() || node.Scalar().empty() || !absl::ParseDuration(node.Scalar(), &value) ||
      value == absl::InfiniteDuration() || value == -absl::InfiniteDuration()) {
    Fail(path, "must be a duration such as \"15s\" or \"1m30s\", got " + Describe(node));
    return;
  }
  *out = value;
}

void Reader::StringList(const YAML::Node& node, std::string_view path,
                        std::vector<std::string>* out) {
  if (!List(node, path) || !HasValue(node)) return;
  std::vector<std::string> values;
  for (const YAML::Node& item : node) {
    std::string value;
    String(item, Index(path, values.size()), &value);
    values.push_back(std::move(value));
  }
  if (ok()) *out = std::move(values);
}

void Reader::InRange(int64_t value, std::string_view path, int64_t lo, int64_t hi) {
  if (!ok() || (value >= lo && value <= hi)) return;
  Fail(path, absl::StrCat("must be in ", lo, "..", hi, ", got ", value));
}

}  // namespace kubesched::config::yaml
