#pragma once

#include <cstdint>
#include <string_view>

#include "scheduler/cel/ast.h"
#include "scheduler/cel/device_view.h"
#include "scheduler/cel/program.h"

namespace kubesched::cel {

// A value while evaluating: plain data that borrows from the program and the device, so that an
// evaluation lives on the stack.
struct Value {
  Type type = Type::kBool;
  bool capacity = false;  // a kDomains or kNames map under device.capacity
  bool boolean = false;
  int64_t integer = 0;    // kInt; a kQuantity's milli-units
  std::string_view text;  // kString; a kVersion as written; the domain of a kNames map
  uint32_t node = 0;      // a kList's node
};

enum class Fault : uint8_t { kNoSuchKey, kNoSuchOverload, kInvalidVersion, kNotBool };

// The first runtime error, kept as data; the message is only formatted when it reaches the
// caller, so that an error that && or || absorbs costs nothing.
struct Failure {
  Fault fault = Fault::kNoSuchKey;
  uint32_t node = 0;
  std::string_view key;  // kNoSuchKey: the key; kInvalidVersion: the text
  Type left = Type::kBool;
  Type right = Type::kBool;
};

class Evaluator {
 public:
  Evaluator(const Program& program, const DeviceView& device)
      : program_(program), device_(device) {}

  // False with `failure` set when the node cannot be evaluated.
  bool Eval(uint32_t index, Value& out);
  Failure failure;

 private:
  bool Leaf(uint32_t index, const Node& node, Value& out);
  bool Logical(const Node& node, Value& out);
  bool Lookup(const Node& node, const Value& map, std::string_view key, Value& out);
  bool Has(const Node& node, Value& out);
  bool In(const Node& node, Value& out);
  bool Equal(const Node& node, const Value& left, const Value& right, bool& equal);
  bool Order(const Node& node, Value& out);
  bool CompareMethod(const Node& node, Value& out);
  bool StringMethod(const Node& node, Value& out);
  bool Size(const Node& node, Value& out);
  bool Fail(Fault fault, const Node& node, std::string_view key = {}, Type left = Type::kBool,
            Type right = Type::kBool);
  bool CompareVersions(const Node& node, const Value& left, const Value& right, int& order);
  std::string_view Text(const Node& node) const;

  const Program& program_;
  const DeviceView& device_;
};

}  // namespace kubesched::cel
