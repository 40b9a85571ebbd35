#include "scheduler/cel/compiler.h"

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "scheduler/util/status_macros.h"

namespace kubesched::cel {
namespace {

// Deeper than any selector a person writes; keeps parsing and evaluation well inside the stack.
constexpr int kMaxDepth = 100;

std::string_view Describe(const Token& token) {
  if (token.kind == TokenKind::kEnd && token.text.empty()) return "<EOF>";
  return token.text;
}

}  // namespace

Compiler::Compiler(std::string_view source) : source_(source), lexer_(source) {}

absl::StatusOr<Program> Compiler::Run() {
  program_.expression_ = std::string(source_);
  KUBESCHED_RETURN_IF_ERROR(Advance());
  absl::StatusOr<uint32_t> root = Conditional(0);
  if (!root.ok()) return root.status();
  if (current_.kind != TokenKind::kEnd || !current_.text.empty()) return SyntaxError(current_);
  const Type type = TypeOf(*root);
  if (type != Type::kBool && type != Type::kDyn) {
    return Error(
        0, Cat({"expression must evaluate to bool or the unknown type, not ", TypeName(type)}));
  }
  program_.root_ = *root;
  return std::move(program_);
}

absl::Status Compiler::Advance() {
  absl::StatusOr<Token> next = lexer_.Next();
  if (!next.ok()) return next.status();
  current_ = *std::move(next);
  return absl::OkStatus();
}

absl::Status Compiler::Expect(TokenKind kind, std::string_view spelling) {
  if (current_.kind != kind) {
    return Error(current_.position, Cat({"Syntax error: expected '", spelling, "', found '",
                                         Describe(current_), "'"}));
  }
  return Advance();
}

absl::Status Compiler::SyntaxError(const Token& at) const {
  if (at.kind == TokenKind::kEnd && !at.text.empty()) {
    return Error(at.position, Cat({"Syntax error: token recognition error at: '", at.text, "'"}));
  }
  return Error(at.position, Cat({"Syntax error: unexpected '", Describe(at), "'"}));
}

absl::Status Compiler::Error(uint32_t position, std::string_view what) const {
  return ErrorAt(source_, position, what);
}

uint32_t Compiler::Add(Node node) {
  uint16_t height = 0;
  for (const uint32_t child : {node.a, node.b, node.c}) {
    if (child != kNoNode && node.op != Op::kList) height = std::max(height, heights_[child]);
  }
  if (node.op == Op::kList) {
    for (uint32_t i = 0; i < node.b; ++i)
      height = std::max(height, heights_[program_.list_items_[node.a + i]]);
  }
  program_.nodes_.push_back(node);
  heights_.push_back(static_cast<uint16_t>(height + 1));
  return static_cast<uint32_t>(program_.nodes_.size() - 1);
}

uint32_t Compiler::AddString(std::string_view text, Node node) {
  node.text_offset = static_cast<uint32_t>(program_.strings_.size());
  node.text_size = static_cast<uint32_t>(text.size());
  program_.strings_.append(text);
  return Add(node);
}

absl::StatusOr<uint32_t> Compiler::Conditional(int depth) {
  if (depth > kMaxDepth) return Error(current_.position, "expression nests too deeply");
  absl::StatusOr<uint32_t> condition = Logical(depth + 1, TokenKind::kOr, Op::kOr);
  if (!condition.ok() || current_.kind != TokenKind::kQuestion) return condition;
  const uint32_t position = current_.position;
  KUBESCHED_RETURN_IF_ERROR(Advance());
  absl::StatusOr<uint32_t> then = Logical(depth + 1, TokenKind::kOr, Op::kOr);
  if (!then.ok()) return then;
  KUBESCHED_RETURN_IF_ERROR(Expect(TokenKind::kColon, ":"));
  absl::StatusOr<uint32_t> otherwise = Conditional(depth + 1);
  if (!otherwise.ok()) return otherwise;
  const Type condition_type = TypeOf(*condition);
  if (condition_type != Type::kBool && condition_type != Type::kDyn) {
    return NoOverload("_?_:_", position, {condition_type, TypeOf(*then), TypeOf(*otherwise)});
  }
  Type type = TypeOf(*then);
  if (type != TypeOf(*otherwise)) {
    if (type != Type::kDyn && TypeOf(*otherwise) != Type::kDyn) {
      return NoOverload("_?_:_", position, {condition_type, type, TypeOf(*otherwise)});
    }
    type = Type::kDyn;
  }
  return Add({.op = Op::kConditional,
              .type = type,
              .position = position,
              .a = *condition,
              .b = *then,
              .c = *otherwise});
}

// A chain of && (or of ||) is built as a balanced tree, as CEL's parser does, so that a long
// chain of clauses stays shallow.
absl::StatusOr<uint32_t> Compiler::Logical(int depth, TokenKind op_token, Op op) {
  const bool is_or = op == Op::kOr;
  std::vector<uint32_t> operands;
  std::vector<uint32_t> positions;
  while (true) {
    absl::StatusOr<uint32_t> operand =
        is_or ? Logical(depth + 1, TokenKind::kAnd, Op::kAnd) : Relation(depth + 1);
    if (!operand.ok()) return operand;
    operands.push_back(*operand);
    if (current_.kind != op_token) break;
    positions.push_back(current_.position);
    KUBESCHED_RETURN_IF_ERROR(Advance());
  }
  // Pairs are joined level by level: [a b c d e] -> [(a b) (c d) e] -> [((a b)(c d)) e] -> ...
  while (operands.size() > 1) {
    std::vector<uint32_t> joined;
    std::vector<uint32_t> joined_positions;
    for (size_t i = 0; i + 1 < operands.size(); i += 2) {
      absl::StatusOr<uint32_t> node = Binary(op, positions[i], operands[i], operands[i + 1]);
      if (!node.ok()) return node;
      joined.push_back(*node);
      if (i + 2 < operands.size()) joined_positions.push_back(positions[i + 1]);
    }
    if (operands.size() % 2 == 1) joined.push_back(operands.back());
    operands = std::move(joined);
    positions = std::move(joined_positions);
  }
  return operands.front();
}

absl::StatusOr<uint32_t> Compiler::Relation(int depth) {
  if (depth > kMaxDepth) return Error(current_.position, "expression nests too deeply");
  absl::StatusOr<uint32_t> left = Unary(depth + 1);
  if (!left.ok()) return left;
  while (true) {
    Op op;
    switch (current_.kind) {
      case TokenKind::kEqual:
        op = Op::kEqual;
        break;
      case TokenKind::kNotEqual:
        op = Op::kNotEqual;
        break;
      case TokenKind::kLess:
        op = Op::kLess;
        break;
      case TokenKind::kLessEqual:
        op = Op::kLessEqual;
        break;
      case TokenKind::kGreater:
        op = Op::kGreater;
        break;
      case TokenKind::kGreaterEqual:
        op = Op::kGreaterEqual;
        break;
      case TokenKind::kPlus:
      case TokenKind::kMinus:
      case TokenKind::kStar:
      case TokenKind::kSlash:
      case TokenKind::kPercent:
        return Error(current_.position, Cat({"arithmetic operator '", current_.text,
                                             "' is not supported in device selectors"}));
      case TokenKind::kIdentifier:
        if (current_.text == "in") {
          op = Op::kIn;
          break;
        }
        return SyntaxError(current_);
      default:
        return left;
    }
    const uint32_t position = current_.position;
    KUBESCHED_RETURN_IF_ERROR(Advance());
    absl::StatusOr<uint32_t> right = Unary(depth + 1);
    if (!right.ok()) return right;
    left = Binary(op, position, *left, *right);
    if (!left.ok()) return left;
    if (heights_[*left] > kMaxDepth) return Error(position, "expression nests too deeply");
  }
}

absl::StatusOr<uint32_t> Compiler::Unary(int depth) {
  if (depth > kMaxDepth) return Error(current_.position, "expression nests too deeply");
  const Token token = current_;
  if (token.kind == TokenKind::kNot) {
    KUBESCHED_RETURN_IF_ERROR(Advance());
    absl::StatusOr<uint32_t> operand = Unary(depth + 1);
    if (!operand.ok()) return operand;
    return Not(token.position, *operand);
  }
  if (token.kind == TokenKind::kMinus) {
    KUBESCHED_RETURN_IF_ERROR(Advance());
    if (current_.kind != TokenKind::kInt) {
      return Error(token.position, "arithmetic operator '-' is not supported in device selectors");
    }
    const int64_t magnitude =
        current_.integer;  // INT64_MIN stands for 2^63, which negates to itself
    KUBESCHED_RETURN_IF_ERROR(Advance());
    return Member(depth + 1,
                  Add({.op = Op::kIntLiteral,
                       .type = Type::kInt,
                       .position = token.position,
                       .value = static_cast<int64_t>(0ULL - static_cast<uint64_t>(magnitude))}));
  }
  absl::StatusOr<uint32_t> primary = Primary(depth + 1);
  if (!primary.ok()) return primary;
  return Member(depth + 1, *primary);
}

absl::StatusOr<uint32_t> Compiler::Member(int depth, uint32_t operand) {
  while (true) {
    if (depth > kMaxDepth) return Error(current_.position, "expression nests too deeply");
    const Token token = current_;
    if (token.kind == TokenKind::kDot) {
      KUBESCHED_RETURN_IF_ERROR(Advance());
      const Token name = current_;
      if (name.kind != TokenKind::kIdentifier) return SyntaxError(name);
      KUBESCHED_RETURN_IF_ERROR(Advance());
      absl::StatusOr<uint32_t> next = current_.kind == TokenKind::kLeftParen
                                          ? MethodCall(name, operand, depth + 1)
                                          : Select(operand, name.position, name.text);
      if (!next.ok()) return next;
      operand = *next;
    } else if (token.kind == TokenKind::kLeftBracket) {
      KUBESCHED_RETURN_IF_ERROR(Advance());
      absl::StatusOr<uint32_t> key = Conditional(depth + 1);
      if (!key.ok()) return key;
      KUBESCHED_RETURN_IF_ERROR(Expect(TokenKind::kRightBracket, "]"));
      absl::StatusOr<uint32_t> next = IndexInto(operand, *key, token.position);
      if (!next.ok()) return next;
      operand = *next;
    } else {
      return operand;
    }
    ++depth;
  }
}

absl::StatusOr<uint32_t> Compiler::Primary(int depth) {
  const Token token = current_;
  switch (token.kind) {
    case TokenKind::kInt:
      if (token.integer < 0)
        return Error(token.position, Cat({"invalid int literal '", token.text, "'"}));
      KUBESCHED_RETURN_IF_ERROR(Advance());
      return Add({.op = Op::kIntLiteral,
                  .type = Type::kInt,
                  .position = token.position,
                  .value = token.integer});
    case TokenKind::kString:
      KUBESCHED_RETURN_IF_ERROR(Advance());
      return AddString(
          token.string,
          {.op = Op::kStringLiteral, .type = Type::kString, .position = token.position});
    case TokenKind::kUint:
    case TokenKind::kDouble:
    case TokenKind::kBytes:
      return Error(token.position,
                   Cat({"literal '", token.text, "' is not supported in device selectors: ",
                        "only int, string and bool literals are"}));
    case TokenKind::kLeftParen: {
      KUBESCHED_RETURN_IF_ERROR(Advance());
      absl::StatusOr<uint32_t> inner = Conditional(depth + 1);
      if (!inner.ok()) return inner;
      KUBESCHED_RETURN_IF_ERROR(Expect(TokenKind::kRightParen, ")"));
      return inner;
    }
    case TokenKind::kLeftBracket:
      return ListLiteral(depth + 1);
    case TokenKind::kLeftBrace:
      return Error(token.position,
                   "map and message literals are not supported in device selectors");
    case TokenKind::kIdentifier:
      break;
    default:
      return SyntaxError(token);
  }
  KUBESCHED_RETURN_IF_ERROR(Advance());
  if (current_.kind == TokenKind::kLeftParen) return GlobalCall(token, depth + 1);
  if (token.text == "true" || token.text == "false") {
    return Add({.op = Op::kBoolLiteral,
                .type = Type::kBool,
                .position = token.position,
                .value = token.text == "true"});
  }
  if (token.text == "device")
    return Add({.op = Op::kDevice, .type = Type::kDevice, .position = token.position});
  if (token.text == "null")
    return Error(token.position, "null is not supported in device selectors");
  return Error(token.position, Cat({"undeclared reference to '", token.text, "'"}));
}

absl::StatusOr<uint32_t> Compiler::ListLiteral(int depth) {
  const uint32_t position = current_.position;
  KUBESCHED_RETURN_IF_ERROR(Advance());
  std::vector<uint32_t> elements;
  while (current_.kind != TokenKind::kRightBracket) {
    absl::StatusOr<uint32_t> element = Conditional(depth + 1);
    if (!element.ok()) return element;
    elements.push_back(*element);
    if (current_.kind != TokenKind::kComma) break;
    KUBESCHED_RETURN_IF_ERROR(Advance());
  }
  KUBESCHED_RETURN_IF_ERROR(Expect(TokenKind::kRightBracket, "]"));
  const uint32_t first = static_cast<uint32_t>(program_.list_items_.size());
  program_.list_items_.insert(program_.list_items_.end(), elements.begin(), elements.end());
  return Add({.op = Op::kList,
              .type = Type::kList,
              .position = position,
              .a = first,
              .b = static_cast<uint32_t>(elements.size())});
}

// The arguments of a call, from "(" to ")".
absl::StatusOr<std::vector<uint32_t>> Compiler::Arguments(int depth) {
  KUBESCHED_RETURN_IF_ERROR(Expect(TokenKind::kLeftParen, "("));
  std::vector<uint32_t> arguments;
  while (current_.kind != TokenKind::kRightParen) {
    absl::StatusOr<uint32_t> argument = Conditional(depth + 1);
    if (!argument.ok()) return argument.status();
    arguments.push_back(*argument);
    if (current_.kind != TokenKind::kComma) break;
    KUBESCHED_RETURN_IF_ERROR(Advance());
  }
  KUBESCHED_RETURN_IF_ERROR(Expect(TokenKind::kRightParen, ")"));
  return arguments;
}

}  // namespace kubesched::cel
