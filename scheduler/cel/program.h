#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/cel/ast.h"
#include "scheduler/cel/device_view.h"

namespace re2 {
class RE2;
}

namespace kubesched::cel {

// A compiled device selector: the subset of CEL that DRA device selectors use (docs/cel.md).
// Compiled once per selector; Evaluate walks a flat node vector with values on the stack, so
// evaluating a device allocates nothing (a regular expression's lazily built automaton aside,
// which is built once and shared). A Program is immutable after Compile and may be evaluated
// from several threads at once.
class Program {
 public:
  Program(Program&&) noexcept;
  Program& operator=(Program&&) noexcept;
  ~Program();

  // True when the device satisfies the expression. An error (missing key without has(), a value
  // of the wrong type, a result that is not a bool) names the position and the expression:
  // "1:36: no such key: model; expression: device.attributes[...]".
  absl::StatusOr<bool> Evaluate(const DeviceView& device) const;

  std::string_view expression() const { return expression_; }

 private:
  friend class Compiler;
  friend class Evaluator;
  Program();

  std::string expression_;
  std::vector<Node> nodes_;
  std::vector<uint32_t> list_items_;
  std::string strings_;  // the literal strings, unescaped; nodes refer to them by offset
  std::vector<std::unique_ptr<re2::RE2>> regexes_;
  uint32_t root_ = 0;
};

// Parses and type-checks `expression`. Errors are InvalidArgument with "line:column: what" and
// the expression; anything outside the subset is named as unsupported.
absl::StatusOr<Program> Compile(std::string_view expression);

}  // namespace kubesched::cel
