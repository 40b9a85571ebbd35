// The functions and methods of the subset, and the type rules of its operators.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "re2/re2.h"
#include "scheduler/api/quantity.h"
#include "scheduler/cel/compiler.h"
#include "scheduler/cel/semver.h"
#include "scheduler/util/status_macros.h"
#include "scheduler/util/strings.h"

namespace kubesched::cel {
namespace {

bool IsBoolish(Type type) { return type == Type::kBool || type == Type::kDyn; }
// A scalar: what equality applies to (lists, maps and the device have none in the subset).
bool IsValue(Type type) { return type < Type::kList || type == Type::kDyn; }
bool Comparable(Type left, Type right) {
  return left == right || left == Type::kDyn || right == Type::kDyn;
}

// The macros and functions of full CEL that a selector might reach for, so that the error says
// "not supported" rather than "undeclared".
bool IsKnownUnsupported(std::string_view name) {
  static constexpr std::string_view kNames[] = {"all",        "exists",
                                                "exists_one", "map",
                                                "filter",     "includes",
                                                "split",      "lowerAscii",
                                                "upperAscii", "replace",
                                                "trim",       "join",
                                                "indexOf",    "lastIndexOf",
                                                "substring",  "find",
                                                "findAll",    "int",
                                                "uint",       "double",
                                                "string",     "bool",
                                                "bytes",      "type",
                                                "dyn",        "duration",
                                                "timestamp",  "bind",
                                                "url",        "ip",
                                                "cidr",       "format",
                                                "quote",      "sign",
                                                "add",        "sub",
                                                "asInteger",  "asApproximateFloat",
                                                "isInteger",  "major",
                                                "minor",      "patch"};
  for (const std::string_view known : kNames) {
    if (known == name) return true;
  }
  return false;
}

}  // namespace

std::string_view OperatorName(Op op) {
  switch (op) {
    case Op::kSelect:
      return "_._";
    case Op::kIndex:
      return "_[_]";
    case Op::kNot:
      return "!_";
    case Op::kAnd:
      return "_&&_";
    case Op::kOr:
      return "_||_";
    case Op::kConditional:
      return "_?_:_";
    case Op::kEqual:
      return "_==_";
    case Op::kNotEqual:
      return "_!=_";
    case Op::kLess:
      return "_<_";
    case Op::kLessEqual:
      return "_<=_";
    case Op::kGreater:
      return "_>_";
    case Op::kGreaterEqual:
      return "_>=_";
    case Op::kIn:
      return "@in";
    case Op::kCompareTo:
      return "compareTo";
    case Op::kIsGreaterThan:
      return "isGreaterThan";
    case Op::kIsLessThan:
      return "isLessThan";
    case Op::kStartsWith:
      return "startsWith";
    case Op::kEndsWith:
      return "endsWith";
    case Op::kContains:
      return "contains";
    case Op::kMatches:
      return "matches";
    case Op::kSize:
      return "size";
    default:
      return "?";
  }
}

std::string_view TypeName(Type type) {
  switch (type) {
    case Type::kBool:
      return "bool";
    case Type::kInt:
      return "int";
    case Type::kString:
      return "string";
    case Type::kQuantity:
      return "Quantity";
    case Type::kVersion:
      return "Semver";
    case Type::kList:
      return "list";
    case Type::kDyn:
      return "dyn";
    case Type::kDevice:
      return "device";
    case Type::kDomains:
      return "map(string, map)";
    case Type::kNames:
      return "map(string, dyn)";
  }
  return "?";
}

absl::Status Compiler::NoOverload(std::string_view function, uint32_t position,
                                  std::vector<Type> types) const {
  std::vector<std::string_view> names;
  for (const Type type : types) names.push_back(TypeName(type));
  return Error(position, Cat({"found no matching overload for '", function, "' applied to '(",
                              util::Join(names, ", "), ")'"}));
}

absl::StatusOr<std::string_view> Compiler::LiteralString(uint32_t node,
                                                         std::string_view function) const {
  const Node& argument = program_.nodes_[node];
  if (argument.op != Op::kStringLiteral) {
    return Error(
        argument.position,
        Cat({function, "() takes a string literal in device selectors, not a computed value"}));
  }
  return std::string_view(program_.strings_).substr(argument.text_offset, argument.text_size);
}

absl::StatusOr<uint32_t> Compiler::Select(uint32_t receiver, uint32_t position,
                                          std::string_view name) {
  const Node& from = program_.nodes_[receiver];
  switch (from.type) {
    case Type::kDevice:
      if (name == "driver")
        return Add({.op = Op::kDriver, .type = Type::kString, .position = position, .a = receiver});
      if (name == "attributes") {
        return Add(
            {.op = Op::kAttributes, .type = Type::kDomains, .position = position, .a = receiver});
      }
      if (name == "capacity") {
        return Add({.op = Op::kCapacity,
                    .type = Type::kDomains,
                    .capacity = true,
                    .position = position,
                    .a = receiver});
      }
      if (name == "allowMultipleAllocations") {
        return Add({.op = Op::kAllowMultipleAllocations,
                    .type = Type::kBool,
                    .position = position,
                    .a = receiver});
      }
      return Error(position, Cat({"undefined field '", name, "'"}));
    case Type::kDomains:
    case Type::kNames: {
      const Type type = from.type == Type::kDomains
                            ? Type::kNames
                            : (from.capacity ? Type::kQuantity : Type::kDyn);
      return AddString(name, {.op = Op::kSelect,
                              .type = type,
                              .capacity = from.capacity,
                              .position = position,
                              .a = receiver});
    }
    default:
      return Error(position,
                   Cat({"type '", TypeName(from.type), "' does not support field selection"}));
  }
}

absl::StatusOr<uint32_t> Compiler::IndexInto(uint32_t receiver, uint32_t key, uint32_t position) {
  const Node& from = program_.nodes_[receiver];
  if ((from.type != Type::kDomains && from.type != Type::kNames) ||
      (TypeOf(key) != Type::kString && TypeOf(key) != Type::kDyn)) {
    return NoOverload("_[_]", position, {from.type, TypeOf(key)});
  }
  const Type type =
      from.type == Type::kDomains ? Type::kNames : (from.capacity ? Type::kQuantity : Type::kDyn);
  return Add({.op = Op::kIndex,
              .type = type,
              .capacity = from.capacity,
              .position = position,
              .a = receiver,
              .b = key});
}

absl::StatusOr<uint32_t> Compiler::Binary(Op op, uint32_t position, uint32_t left, uint32_t right) {
  const Type left_type = TypeOf(left);
  const Type right_type = TypeOf(right);
  bool allowed = false;
  switch (op) {
    case Op::kAnd:
    case Op::kOr:
      allowed = IsBoolish(left_type) && IsBoolish(right_type);
      break;
    case Op::kEqual:
    case Op::kNotEqual:
      allowed = Comparable(left_type, right_type) && IsValue(left_type) && IsValue(right_type);
      break;
    case Op::kLess:
    case Op::kLessEqual:
    case Op::kGreater:
    case Op::kGreaterEqual:
      // CEL orders ints, strings and bools; quantities and versions compare through methods.
      allowed = Comparable(left_type, right_type) &&
                (left_type == Type::kInt || left_type == Type::kString ||
                 left_type == Type::kBool || left_type == Type::kDyn) &&
                (right_type == Type::kInt || right_type == Type::kString ||
                 right_type == Type::kBool || right_type == Type::kDyn);
      break;
    case Op::kIn:
      allowed = right_type == Type::kList ||
                ((right_type == Type::kDomains || right_type == Type::kNames) &&
                 (left_type == Type::kString || left_type == Type::kDyn));
      break;
    default:
      break;
  }
  if (!allowed) return NoOverload(OperatorName(op), position, {left_type, right_type});
  return Add({.op = op, .type = Type::kBool, .position = position, .a = left, .b = right});
}

absl::StatusOr<uint32_t> Compiler::Not(uint32_t position, uint32_t operand) {
  if (!IsBoolish(TypeOf(operand))) return NoOverload("!_", position, {TypeOf(operand)});
  return Add({.op = Op::kNot, .type = Type::kBool, .position = position, .a = operand});
}

absl::StatusOr<uint32_t> Compiler::Size(uint32_t position, uint32_t operand) {
  const Type type = TypeOf(operand);
  if (type != Type::kString && type != Type::kList && type != Type::kDomains &&
      type != Type::kNames && type != Type::kDyn) {
    return NoOverload("size", position, {type});
  }
  return Add({.op = Op::kSize, .type = Type::kInt, .position = position, .a = operand});
}

absl::StatusOr<uint32_t> Compiler::Has(uint32_t position, uint32_t argument) {
  const Op op = program_.nodes_[argument].op;
  if (op != Op::kSelect && op != Op::kDriver && op != Op::kAttributes && op != Op::kCapacity &&
      op != Op::kAllowMultipleAllocations) {
    return Error(position, "invalid argument to has() macro");
  }
  return Add({.op = Op::kHas, .type = Type::kBool, .position = position, .a = argument});
}

absl::StatusOr<uint32_t> Compiler::GlobalCall(const Token& name, int depth) {
  if (IsKnownUnsupported(name.text)) {
    return Error(name.position,
                 Cat({"function '", name.text, "' is not supported in device selectors"}));
  }
  absl::StatusOr<std::vector<uint32_t>> args = Arguments(depth + 1);
  if (!args.ok()) return args.status();
  const auto arity = [&](size_t count) -> absl::Status {
    if (args->size() == count) return absl::OkStatus();
    return Error(name.position, Cat({name.text, "() takes ", std::to_string(count), " argument",
                                     count == 1 ? "" : "s", " in device selectors, not ",
                                     std::to_string(args->size())}));
  };
  if (name.text == "has") {
    KUBESCHED_RETURN_IF_ERROR(arity(1));
    return Has(name.position, args->front());
  }
  if (name.text == "size") {
    KUBESCHED_RETURN_IF_ERROR(arity(1));
    return Size(name.position, args->front());
  }
  if (name.text == "quantity" || name.text == "semver" || name.text == "isQuantity" ||
      name.text == "isSemver") {
    KUBESCHED_RETURN_IF_ERROR(arity(1));
    return LiteralConversion(name, *args);
  }
  return Error(name.position, Cat({"undeclared reference to '", name.text, "'"}));
}

// quantity("40Gi") and semver("1.2.3") are parsed here, once: their argument must be a literal.
absl::StatusOr<uint32_t> Compiler::LiteralConversion(const Token& name,
                                                     const std::vector<uint32_t>& args) {
  absl::StatusOr<std::string_view> text = LiteralString(args.front(), name.text);
  if (!text.ok()) return text.status();
  const bool quantity = name.text == "quantity" || name.text == "isQuantity";
  bool valid = false;
  absl::StatusOr<api::Quantity> parsed_quantity = absl::UnknownError("");
  if (quantity) {
    parsed_quantity = api::Quantity::Parse(*text);
    valid = parsed_quantity.ok();
  } else {
    Semver version;
    valid = ParseSemver(*text, version);
  }
  if (name.text == "isQuantity" || name.text == "isSemver") {
    return Add(
        {.op = Op::kBoolLiteral, .type = Type::kBool, .position = name.position, .value = valid});
  }
  if (!valid) {
    return Error(program_.nodes_[args.front()].position,
                 quantity ? Cat({"quantity(): ", util::Std(parsed_quantity.status().message())})
                          : Cat({"semver(): invalid semantic version '", *text, "'"}));
  }
  if (quantity) {
    return Add({.op = Op::kQuantityLiteral,
                .type = Type::kQuantity,
                .position = name.position,
                .value = parsed_quantity->milli()});
  }
  return AddString(*text,
                   {.op = Op::kVersionLiteral, .type = Type::kVersion, .position = name.position});
}

absl::StatusOr<uint32_t> Compiler::MethodCall(const Token& name, uint32_t receiver, int depth) {
  // A macro's arguments bind variables, so the call is refused before they are read.
  if (IsKnownUnsupported(name.text)) {
    return Error(name.position,
                 Cat({"function '", name.text, "' is not supported in device selectors"}));
  }
  absl::StatusOr<std::vector<uint32_t>> args = Arguments(depth + 1);
  if (!args.ok()) return args.status();
  struct Method {
    std::string_view name;
    Op op;
  };
  static constexpr Method kMethods[] = {
      {"compareTo", Op::kCompareTo},   {"isGreaterThan", Op::kIsGreaterThan},
      {"isLessThan", Op::kIsLessThan}, {"startsWith", Op::kStartsWith},
      {"endsWith", Op::kEndsWith},     {"contains", Op::kContains},
      {"matches", Op::kMatches},       {"size", Op::kSize}};
  for (const Method& method : kMethods) {
    if (method.name != name.text) continue;
    const size_t want = method.op == Op::kSize ? 0 : 1;
    if (args->size() != want) {
      return Error(name.position, Cat({name.text, "() takes ", std::to_string(want), " argument",
                                       want == 1 ? "" : "s", " in device selectors, not ",
                                       std::to_string(args->size())}));
    }
    if (method.op == Op::kSize) return Size(name.position, receiver);
    if (method.op == Op::kCompareTo || method.op == Op::kIsGreaterThan ||
        method.op == Op::kIsLessThan) {
      return ComparisonMethod(method.op, name, receiver, args->front());
    }
    return StringMethod(method.op, name, receiver, args->front());
  }
  return Error(name.position, Cat({"undeclared reference to '", name.text, "'"}));
}

// x.compareTo(y), x.isGreaterThan(y), x.isLessThan(y) on two quantities or two versions.
absl::StatusOr<uint32_t> Compiler::ComparisonMethod(Op op, const Token& name, uint32_t receiver,
                                                    uint32_t argument) {
  const Type left = TypeOf(receiver);
  const Type right = TypeOf(argument);
  const auto orderable = [](Type type) {
    return type == Type::kQuantity || type == Type::kVersion || type == Type::kDyn;
  };
  if (!orderable(left) || !orderable(right) || !Comparable(left, right)) {
    return NoOverload(name.text, name.position, {left, right});
  }
  return Add({.op = op,
              .type = op == Op::kCompareTo ? Type::kInt : Type::kBool,
              .position = name.position,
              .a = receiver,
              .b = argument});
}

absl::StatusOr<uint32_t> Compiler::StringMethod(Op op, const Token& name, uint32_t receiver,
                                                uint32_t argument) {
  const Type left = TypeOf(receiver);
  const Type right = TypeOf(argument);
  const auto stringish = [](Type type) { return type == Type::kString || type == Type::kDyn; };
  if (!stringish(left) || !stringish(right))
    return NoOverload(name.text, name.position, {left, right});
  if (op != Op::kMatches) {
    return Add(
        {.op = op, .type = Type::kBool, .position = name.position, .a = receiver, .b = argument});
  }
  absl::StatusOr<std::string_view> pattern = LiteralString(argument, "matches");
  if (!pattern.ok()) return pattern.status();
  RE2::Options options;
  options.set_log_errors(false);
  auto regex = std::make_unique<RE2>(re2::StringPiece(pattern->data(), pattern->size()), options);
  if (!regex->ok()) {
    return Error(program_.nodes_[argument].position,
                 Cat({"matches(): invalid regular expression '", *pattern,
                      "': ", std::string_view(regex->error())}));
  }
  program_.regexes_.push_back(std::move(regex));
  return Add({.op = op,
              .type = Type::kBool,
              .position = name.position,
              .a = receiver,
              .b = argument,
              .value = static_cast<int64_t>(program_.regexes_.size() - 1)});
}

}  // namespace kubesched::cel
