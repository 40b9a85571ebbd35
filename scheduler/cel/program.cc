#include "scheduler/cel/program.h"

#include <string>
#include <string_view>

#include "re2/re2.h"
#include "scheduler/cel/compiler.h"
#include "scheduler/cel/evaluator.h"
#include "scheduler/cel/lexer.h"

namespace kubesched::cel {
namespace {

std::string Describe(const Failure& failure, const Node& node) {
  switch (failure.fault) {
    case Fault::kNoSuchKey:
      return Cat({"no such key: ", failure.key});
    case Fault::kInvalidVersion:
      return Cat({"invalid semantic version '", failure.key, "'"});
    case Fault::kNotBool:
      return Cat(
          {"CEL result of type ", TypeName(failure.left), " could not be converted to bool"});
    case Fault::kNoSuchOverload:
      break;
  }
  if (node.op == Op::kNot || node.op == Op::kSize || node.op == Op::kConditional) {
    return Cat({"no such overload: ", OperatorName(node.op), "(", TypeName(failure.left), ")"});
  }
  return Cat({"no such overload: ", OperatorName(node.op), "(", TypeName(failure.left), ", ",
              TypeName(failure.right), ")"});
}

}  // namespace

Program::Program() = default;
Program::Program(Program&&) noexcept = default;
Program& Program::operator=(Program&&) noexcept = default;
Program::~Program() = default;

absl::StatusOr<bool> Program::Evaluate(const DeviceView& device) const {
  Evaluator evaluator(*this, device);
  Value result;
  if (evaluator.Eval(root_, result)) {
    if (result.type == Type::kBool) return result.boolean;
    evaluator.failure = Failure{.fault = Fault::kNotBool, .node = root_, .left = result.type};
  }
  const Failure& failure = evaluator.failure;
  const Node& node = nodes_[failure.node];
  return ErrorAt(expression_, node.position, Describe(failure, node));
}

absl::StatusOr<Program> Compile(std::string_view expression) { return Compiler(expression).Run(); }

}  // namespace kubesched::cel
