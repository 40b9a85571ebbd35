#pragma once

// Strict reading of YAML documents (JSON included: yaml-cpp reads JSON as YAML) into plain
// structs, the way upstream's strict decoder reads kube-scheduler configs: an unknown or repeated
// field is an error, a number must be written as a number, and every error names the field's
// path ("profiles[0].plugins.score.enabled[2].weight: ..."). Nothing here throws: yaml-cpp's
// exceptions are caught and returned as absl::Status. Used by config/ and by policy/, which decodes
// per-pod policies by the same rules.

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace kubesched::config::yaml {

// Path helpers: Field("", "a") == "a", Field("a", "b") == "a.b", Index("a", 3) == "a[3]".
std::string Field(std::string_view path, std::string_view name);
std::string Index(std::string_view path, size_t index);

// "<path>: <message>", or just the message when the path is empty, as InvalidArgument.
absl::Status PathError(std::string_view path, std::string_view message);

// Parses exactly one document. Empty text gives a null node; a syntax error names the line and
// column; several documents are an error (a config file holds one object).
absl::StatusOr<YAML::Node> ParseDocument(std::string_view text);

// True when `node` holds a value. Upstream's decoder reads an explicit null like a missing field.
bool HasValue(const YAML::Node& node);

// The value of `key` in a map, or a null node when the key is missing or `map` is not a map.
// (yaml-cpp's own operator[] inserts on non-const nodes and throws on missing const ones.)
YAML::Node Get(const YAML::Node& map, std::string_view key);

// "a map", "a list", "null", `string "5"` or the plain scalar text: what a type error got.
std::string Describe(const YAML::Node& node);

// Block-style YAML text of a subtree, quoted scalars kept quoted, for decoders that take text.
// Fails on nesting deeper than any Kubernetes object needs (also guards against alias cycles).
absl::StatusOr<std::string> EmitBlock(const YAML::Node& node);

// Reads fields and keeps the first error. Once an error is recorded every further read is a no-op,
// so a decoder is a flat list of reads followed by one status check. Not thread-safe; one per
// decode call.
class Reader {
 public:
  bool ok() const { return status_.ok(); }
  const absl::Status& status() const { return status_; }

  // Records PathError(path, message) unless an error is already recorded. Returns false.
  bool Fail(std::string_view path, std::string_view message);
  // Records an error that already names its path (from a nested decoder). Returns status.ok().
  bool Merge(const absl::Status& status);

  // True when `node` is a map (null counts as empty) whose keys are all in `known`, with no key
  // given twice. Unknown fields are errors because upstream decodes configs strictly.
  bool Map(const YAML::Node& node, std::string_view path, absl::Span<const std::string_view> known);
  // True when `node` is a list (null counts as empty).
  bool List(const YAML::Node& node, std::string_view path);

  // Scalar fields. A missing or null node leaves *out unchanged, so callers preset defaults.
  // Numbers and booleans must be plain (unquoted) scalars, as in JSON.
  void String(const YAML::Node& node, std::string_view path, std::string* out);
  void Int32(const YAML::Node& node, std::string_view path, int32_t* out);
  void Int64(const YAML::Node& node, std::string_view path, int64_t* out);
  void Bool(const YAML::Node& node, std::string_view path, bool* out);
  // A plain number (integer or decimal), finite.
  void Double(const YAML::Node& node, std::string_view path, double* out);
  // A Go duration string as metav1.Duration takes it: "15s", "1m30s", "250ms", "1h".
  void Duration(const YAML::Node& node, std::string_view path, absl::Duration* out);
  void StringList(const YAML::Node& node, std::string_view path, std::vector<std::string>* out);

  // Range check on a value already read: "must be in lo..hi, got v".
  void InRange(int64_t value, std::string_view path, int64_t lo, int64_t hi);

 private:
  absl::Status status_;
};

}  // namespace kubesched::config::yaml
