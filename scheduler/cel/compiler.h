#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/cel/ast.h"
#include "scheduler/cel/lexer.h"
#include "scheduler/cel/program.h"

namespace kubesched::cel {

// Recursive descent over CEL's grammar (conditional, ||, &&, relations, unary, member, primary),
// building the flat node vector and checking types as each node is made. Arithmetic, maps,
// doubles, unsigned and bytes literals and the comprehension macros are refused as unsupported.
class Compiler {
 public:
  explicit Compiler(std::string_view source);

  absl::StatusOr<Program> Run();

 private:
  absl::Status Advance();
  absl::Status Expect(TokenKind kind, std::string_view spelling);
  absl::Status SyntaxError(const Token& at) const;
  absl::Status Error(uint32_t position, std::string_view what) const;

  absl::StatusOr<uint32_t> Conditional(int depth);
  absl::StatusOr<uint32_t> Logical(int depth, TokenKind op_token, Op op);
  absl::StatusOr<uint32_t> Relation(int depth);
  absl::StatusOr<uint32_t> Unary(int depth);
  absl::StatusOr<uint32_t> Member(int depth, uint32_t operand);
  absl::StatusOr<uint32_t> Primary(int depth);
  absl::StatusOr<uint32_t> ListLiteral(int depth);
  absl::StatusOr<std::vector<uint32_t>> Arguments(int depth);

  // compiler_calls.cc: the functions, the methods and the operators' type rules.
  absl::StatusOr<uint32_t> GlobalCall(const Token& name, int depth);
  absl::StatusOr<uint32_t> MethodCall(const Token& name, uint32_t receiver, int depth);
  absl::StatusOr<uint32_t> Select(uint32_t receiver, uint32_t position, std::string_view name);
  absl::StatusOr<uint32_t> IndexInto(uint32_t receiver, uint32_t key, uint32_t position);
  absl::StatusOr<uint32_t> Binary(Op op, uint32_t position, uint32_t left, uint32_t right);
  absl::StatusOr<uint32_t> Not(uint32_t position, uint32_t operand);
  absl::StatusOr<uint32_t> Has(uint32_t position, uint32_t argument);
  absl::StatusOr<uint32_t> Size(uint32_t position, uint32_t operand);
  absl::StatusOr<uint32_t> LiteralConversion(const Token& name, const std::vector<uint32_t>& args);
  absl::StatusOr<uint32_t> ComparisonMethod(Op op, const Token& name, uint32_t receiver,
                                            uint32_t argument);
  absl::StatusOr<uint32_t> StringMethod(Op op, const Token& name, uint32_t receiver,
                                        uint32_t argument);
  absl::Status NoOverload(std::string_view function, uint32_t position,
                          std::vector<Type> types) const;
  absl::StatusOr<std::string_view> LiteralString(uint32_t node, std::string_view function) const;

  uint32_t Add(Node node);
  uint32_t AddString(std::string_view text, Node node);
  Type TypeOf(uint32_t node) const { return program_.nodes_[node].type; }

  std::string_view source_;
  Lexer lexer_;
  Token current_;
  Program program_;
  std::vector<uint16_t> heights_;  // per node; deep trees are refused so evaluation cannot overflow
};

}  // namespace kubesched::cel
