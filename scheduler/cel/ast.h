#pragma once

#include <cstdint>
#include <string_view>

namespace kubesched::cel {

// The static type of a node. kDyn is an attribute value, whose kind only the device knows; the
// maps are the two levels of device.attributes and device.capacity.
enum class Type : uint8_t {
  kBool,
  kInt,
  kString,
  kQuantity,
  kVersion,
  kList,
  kDyn,
  kDevice,
  kDomains,  // device.attributes or device.capacity: domain -> map of names
  kNames,    // one domain's map: name -> attribute value or quantity
};

std::string_view TypeName(Type type);

// The literals and the fields of device come first: evaluation tells them apart by order.
enum class Op : uint8_t {
  kBoolLiteral,
  kIntLiteral,
  kStringLiteral,
  kQuantityLiteral,
  kVersionLiteral,
  kList,  // elements: Program::list_items_[a, a + b)
  kDevice,
  kDriver,
  kAllowMultipleAllocations,
  kAttributes,
  kCapacity,
  kSelect,  // a.name (name in the string pool) on a map
  kIndex,   // a[b] on a map
  kHas,     // has(a.name)
  kNot,
  kAnd,
  kOr,
  kConditional,  // a ? b : c
  kEqual,
  kNotEqual,
  kLess,
  kLessEqual,
  kGreater,
  kGreaterEqual,
  kIn,
  kCompareTo,
  kIsGreaterThan,
  kIsLessThan,
  kStartsWith,
  kEndsWith,
  kContains,
  kMatches,  // the pattern is Program::regexes_[value]
  kSize,
};

// CEL's name of an operator or function, as its error messages give it ("_==_", "@in",
// "startsWith").
std::string_view OperatorName(Op op);

inline constexpr uint32_t kNoNode = UINT32_MAX;

// One node of the flat tree. Operands are indices into the node vector; a string (a literal, a
// selected name) is an offset and length into the program's string pool. `capacity` marks map
// nodes under device.capacity, whose values are quantities.
struct Node {
  Op op = Op::kBoolLiteral;
  Type type = Type::kBool;
  bool capacity = false;
  uint32_t position = 0;  // byte offset in the expression, for errors
  uint32_t a = kNoNode;
  uint32_t b = kNoNode;
  uint32_t c = kNoNode;
  int64_t value = 0;  // int literal, bool literal, quantity milli-units, regex index
  uint32_t text_offset = 0;
  uint32_t text_size = 0;
};

}  // namespace kubesched::cel
