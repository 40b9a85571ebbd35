#include "scheduler/cel/evaluator.h"

#include <cstdint>
#include <string_view>

#include "absl/strings/match.h"
#include "re2/re2.h"
#include "scheduler/cel/semver.h"
#include "scheduler/util/strings.h"

namespace kubesched::cel {
namespace {

Value Bool(bool value) { return Value{.type = Type::kBool, .boolean = value}; }

Value FromAttribute(const AttributeValue& attribute) {
  switch (attribute.kind) {
    case AttributeValue::Kind::kString:
      return Value{.type = Type::kString, .text = attribute.text};
    case AttributeValue::Kind::kInt:
      return Value{.type = Type::kInt, .integer = attribute.integer};
    case AttributeValue::Kind::kBool:
      return Bool(attribute.boolean);
    case AttributeValue::Kind::kVersion:
      return Value{.type = Type::kVersion, .text = attribute.text};
  }
  return Value{};
}

int64_t CodePoints(std::string_view text) {
  int64_t count = 0;
  for (const char c : text) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return count;
}

}  // namespace

std::string_view Evaluator::Text(const Node& node) const {
  return std::string_view(program_.strings_).substr(node.text_offset, node.text_size);
}

bool Evaluator::Fail(Fault fault, const Node& node, std::string_view key, Type left, Type right) {
  failure = Failure{fault, static_cast<uint32_t>(&node - program_.nodes_.data()), key, left, right};
  return false;
}

// The literals and the fields of device: the nodes that read no operand.
bool Evaluator::Leaf(uint32_t index, const Node& node, Value& out) {
  switch (node.op) {
    case Op::kBoolLiteral:
      out = Bool(node.value != 0);
      return true;
    case Op::kIntLiteral:
      out = Value{.type = Type::kInt, .integer = node.value};
      return true;
    case Op::kStringLiteral:
      out = Value{.type = Type::kString, .text = Text(node)};
      return true;
    case Op::kQuantityLiteral:
      out = Value{.type = Type::kQuantity, .integer = node.value};
      return true;
    case Op::kVersionLiteral:
      out = Value{.type = Type::kVersion, .text = Text(node)};
      return true;
    case Op::kList:
      out = Value{.type = Type::kList, .node = index};
      return true;
    case Op::kDevice:
      out = Value{.type = Type::kDevice};
      return true;
    case Op::kDriver:
      out = Value{.type = Type::kString, .text = device_.driver};
      return true;
    case Op::kAllowMultipleAllocations:
      out = Bool(device_.allow_multiple_allocations);
      return true;
    case Op::kAttributes:
      out = Value{.type = Type::kDomains};
      return true;
    case Op::kCapacity:
      out = Value{.type = Type::kDomains, .capacity = true};
      return true;
    default:
      return Fail(Fault::kNoSuchOverload, node);
  }
}

bool Evaluator::Eval(uint32_t index, Value& out) {
  const Node& node = program_.nodes_[index];
  if (node.op <= Op::kCapacity) return Leaf(index, node, out);
  switch (node.op) {
    case Op::kSelect: {
      Value map;
      return Eval(node.a, map) && Lookup(node, map, Text(node), out);
    }
    case Op::kIndex: {
      Value map;
      Value key;
      if (!Eval(node.a, map) || !Eval(node.b, key)) return false;
      if (key.type != Type::kString)
        return Fail(Fault::kNoSuchOverload, node, {}, map.type, key.type);
      return Lookup(node, map, key.text, out);
    }
    case Op::kHas:
      return Has(node, out);
    case Op::kNot: {
      Value operand;
      if (!Eval(node.a, operand)) return false;
      if (operand.type != Type::kBool)
        return Fail(Fault::kNoSuchOverload, node, {}, operand.type, operand.type);
      out = Bool(!operand.boolean);
      return true;
    }
    case Op::kAnd:
    case Op::kOr:
      return Logical(node, out);
    case Op::kConditional: {
      Value condition;
      if (!Eval(node.a, condition)) return false;
      if (condition.type != Type::kBool)
        return Fail(Fault::kNoSuchOverload, node, {}, condition.type, condition.type);
      return Eval(condition.boolean ? node.b : node.c, out);
    }
    case Op::kEqual:
    case Op::kNotEqual: {
      Value left;
      Value right;
      bool equal = false;
      if (!Eval(node.a, left) || !Eval(node.b, right) || !Equal(node, left, right, equal))
        return false;
      out = Bool(equal == (node.op == Op::kEqual));
      return true;
    }
    case Op::kLess:
    case Op::kLessEqual:
    case Op::kGreater:
    case Op::kGreaterEqual:
      return Order(node, out);
    case Op::kIn:
      return In(node, out);
    case Op::kCompareTo:
    case Op::kIsGreaterThan:
    case Op::kIsLessThan:
      return CompareMethod(node, out);
    case Op::kStartsWith:
    case Op::kEndsWith:
    case Op::kContains:
    case Op::kMatches:
      return StringMethod(node, out);
    case Op::kSize:
      return Size(node, out);
    default:
      break;
  }
  return Fail(Fault::kNoSuchOverload, node);
}

// CEL's && and || are commutative over errors: an error on one side is absorbed when the other
// side alone decides the result (false for &&, true for ||).
bool Evaluator::Logical(const Node& node, Value& out) {
  const bool deciding = node.op == Op::kOr;
  Value left;
  const bool left_ok = Eval(node.a, left);
  const bool left_bool = left_ok && left.type == Type::kBool;
  if (left_bool && left.boolean == deciding) {
    out = Bool(deciding);
    return true;
  }
  const Failure left_failure = left_ok
                                   ? Failure{Fault::kNoSuchOverload,
                                             static_cast<uint32_t>(&node - program_.nodes_.data()),
                                             {},
                                             left.type,
                                             Type::kBool}
                                   : failure;
  Value right;
  const bool right_ok = Eval(node.b, right);
  if (right_ok && right.type == Type::kBool && right.boolean == deciding) {
    out = Bool(deciding);
    return true;
  }
  if (!left_bool) {
    failure = left_failure;
    return false;
  }
  if (!right_ok) return false;
  if (right.type != Type::kBool)
    return Fail(Fault::kNoSuchOverload, node, {}, left.type, right.type);
  out = Bool(!deciding);
  return true;
}

// A key of device.attributes or device.capacity is a domain; a domain nobody published is an
// empty map, as upstream's. A key of a domain's map is an attribute or capacity name, and a
// missing one is an error: "no such key".
bool Evaluator::Lookup(const Node& node, const Value& map, std::string_view key, Value& out) {
  if (map.type == Type::kDomains) {
    out = Value{.type = Type::kNames, .capacity = map.capacity, .text = key};
    return true;
  }
  if (map.type != Type::kNames)
    return Fail(Fault::kNoSuchOverload, node, {}, map.type, Type::kString);
  if (map.capacity) {
    for (const DeviceCapacity& capacity : device_.capacity) {
      if (capacity.domain == map.text && capacity.name == key) {
        out = Value{.type = Type::kQuantity, .integer = capacity.value.milli()};
        return true;
      }
    }
  } else {
    for (const DeviceAttribute& attribute : device_.attributes) {
      if (attribute.domain == map.text && attribute.name == key) {
        out = FromAttribute(attribute.value);
        return true;
      }
    }
  }
  return Fail(Fault::kNoSuchKey, node, key);
}

namespace {

bool DomainExists(const DeviceView& device, bool capacity, std::string_view domain) {
  if (capacity) {
    for (const DeviceCapacity& entry : device.capacity) {
      if (entry.domain == domain) return true;
    }
    return false;
  }
  for (const DeviceAttribute& entry : device.attributes) {
    if (entry.domain == domain) return true;
  }
  return false;
}

bool NameExists(const DeviceView& device, bool capacity, std::string_view domain,
                std::string_view name) {
  if (capacity) {
    for (const DeviceCapacity& entry : device.capacity) {
      if (entry.domain == domain && entry.name == name) return true;
    }
    return false;
  }
  for (const DeviceAttribute& entry : device.attributes) {
    if (entry.domain == domain && entry.name == name) return true;
  }
  return false;
}

bool MapHasKey(const DeviceView& device, const Value& map, std::string_view key) {
  return map.type == Type::kDomains ? DomainExists(device, map.capacity, key)
                                    : NameExists(device, map.capacity, map.text, key);
}

}  // namespace

bool Evaluator::Has(const Node& node, Value& out) {
  const Node& selection = program_.nodes_[node.a];
  if (selection.op != Op::kSelect) {
    out = Bool(true);  // the fields of device are always present
    return true;
  }
  Value map;
  if (!Eval(selection.a, map)) return false;
  out = Bool(MapHasKey(device_, map, Text(selection)));
  return true;
}

bool Evaluator::In(const Node& node, Value& out) {
  Value item;
  Value container;
  if (!Eval(node.a, item) || !Eval(node.b, container)) return false;
  if (container.type == Type::kList) {
    const Node& list = program_.nodes_[container.node];
    for (uint32_t i = 0; i < list.b; ++i) {
      Value element;
      bool equal = false;
      if (!Eval(program_.list_items_[list.a + i], element) || !Equal(node, item, element, equal))
        return false;
      if (equal) {
        out = Bool(true);
        return true;
      }
    }
    out = Bool(false);
    return true;
  }
  if ((container.type != Type::kDomains && container.type != Type::kNames) ||
      item.type != Type::kString) {
    return Fail(Fault::kNoSuchOverload, node, {}, item.type, container.type);
  }
  out = Bool(MapHasKey(device_, container, item.text));
  return true;
}

bool Evaluator::CompareVersions(const Node& node, const Value& left, const Value& right,
                                int& order) {
  Semver a;
  Semver b;
  if (!ParseSemver(left.text, a)) return Fail(Fault::kInvalidVersion, node, left.text);
  if (!ParseSemver(right.text, b)) return Fail(Fault::kInvalidVersion, node, right.text);
  order = CompareSemver(a, b);
  return true;
}

// CEL's equality across types is false rather than an error (a string attribute compared with
// an int is simply not equal).
bool Evaluator::Equal(const Node& node, const Value& left, const Value& right, bool& equal) {
  equal = false;
  if (left.type != right.type) return true;
  switch (left.type) {
    case Type::kBool:
      equal = left.boolean == right.boolean;
      return true;
    case Type::kInt:
    case Type::kQuantity:
      equal = left.integer == right.integer;
      return true;
    case Type::kString:
      equal = left.text == right.text;
      return true;
    case Type::kVersion: {
      int order = 0;
      if (!CompareVersions(node, left, right, order)) return false;
      equal = order == 0;
      return true;
    }
    default:
      return Fail(Fault::kNoSuchOverload, node, {}, left.type, right.type);
  }
}

bool Evaluator::Order(const Node& node, Value& out) {
  Value left;
  Value right;
  if (!Eval(node.a, left) || !Eval(node.b, right)) return false;
  int order = 0;
  if (left.type != right.type) return Fail(Fault::kNoSuchOverload, node, {}, left.type, right.type);
  switch (left.type) {
    case Type::kInt:
      order = left.integer < right.integer ? -1 : (left.integer > right.integer ? 1 : 0);
      break;
    case Type::kBool:
      order = static_cast<int>(left.boolean) - static_cast<int>(right.boolean);
      break;
    case Type::kString:
      order = left.text.compare(right.text);
      break;
    default:
      return Fail(Fault::kNoSuchOverload, node, {}, left.type, right.type);
  }
  switch (node.op) {
    case Op::kLess:
      out = Bool(order < 0);
      break;
    case Op::kLessEqual:
      out = Bool(order <= 0);
      break;
    case Op::kGreater:
      out = Bool(order > 0);
      break;
    default:
      out = Bool(order >= 0);
      break;
  }
  return true;
}

bool Evaluator::CompareMethod(const Node& node, Value& out) {
  Value left;
  Value right;
  if (!Eval(node.a, left) || !Eval(node.b, right)) return false;
  int order = 0;
  if (left.type != right.type) return Fail(Fault::kNoSuchOverload, node, {}, left.type, right.type);
  if (left.type == Type::kQuantity) {
    order = left.integer < right.integer ? -1 : (left.integer > right.integer ? 1 : 0);
  } else if (left.type == Type::kVersion) {
    if (!CompareVersions(node, left, right, order)) return false;
  } else {
    return Fail(Fault::kNoSuchOverload, node, {}, left.type, right.type);
  }
  if (node.op == Op::kCompareTo) {
    out = Value{.type = Type::kInt, .integer = order};
  } else {
    out = Bool(node.op == Op::kIsGreaterThan ? order > 0 : order < 0);
  }
  return true;
}

bool Evaluator::StringMethod(const Node& node, Value& out) {
  Value left;
  Value right;
  if (!Eval(node.a, left) || !Eval(node.b, right)) return false;
  if (left.type != Type::kString || right.type != Type::kString) {
    return Fail(Fault::kNoSuchOverload, node, {}, left.type, right.type);
  }
  switch (node.op) {
    case Op::kStartsWith:
      out = Bool(absl::StartsWith(util::Absl(left.text), util::Absl(right.text)));
      break;
    case Op::kEndsWith:
      out = Bool(absl::EndsWith(util::Absl(left.text), util::Absl(right.text)));
      break;
    case Op::kContains:
      out = Bool(absl::StrContains(util::Absl(left.text), util::Absl(right.text)));
      break;
    default:
      // CEL's matches() finds the pattern anywhere in the string, as RE2's PartialMatch does.
      out = Bool(RE2::PartialMatch(re2::StringPiece(left.text.data(), left.text.size()),
                                   *program_.regexes_[static_cast<size_t>(node.value)]));
      break;
  }
  return true;
}

bool Evaluator::Size(const Node& node, Value& out) {
  Value operand;
  if (!Eval(node.a, operand)) return false;
  int64_t size = 0;
  switch (operand.type) {
    case Type::kString:
      size = CodePoints(operand.text);
      break;
    case Type::kList:
      size = program_.nodes_[operand.node].b;
      break;
    case Type::kNames:
      if (operand.capacity) {
        for (const DeviceCapacity& entry : device_.capacity) size += entry.domain == operand.text;
      } else {
        for (const DeviceAttribute& entry : device_.attributes)
          size += entry.domain == operand.text;
      }
      break;
    case Type::kDomains:
      // Distinct domains, counted without a set: an entry counts if no earlier one has its domain.
      if (operand.capacity) {
        for (size_t i = 0; i < device_.capacity.size(); ++i) {
          size += !DomainExists(DeviceView{.capacity = device_.capacity.subspan(0, i)}, true,
                                device_.capacity[i].domain);
        }
      } else {
        for (size_t i = 0; i < device_.attributes.size(); ++i) {
          size += !DomainExists(DeviceView{.attributes = device_.attributes.subspan(0, i)}, false,
                                device_.attributes[i].domain);
        }
      }
      break;
    default:
      return Fail(Fault::kNoSuchOverload, node, {}, operand.type, operand.type);
  }
  out = Value{.type = Type::kInt, .integer = size};
  return true;
}

}  // namespace kubesched::cel
