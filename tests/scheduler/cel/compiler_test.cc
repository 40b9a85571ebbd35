// Compile errors of device selectors: what they say and where.

#include <catch2/catch.hpp>
#include <string>
#include <string_view>

#include "scheduler/cel/device_view.h"
#include "scheduler/cel/program.h"
#include "tests/scheduler/cel/device_fixture.h"

namespace kubesched::cel {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using testing::TestDevice;

std::string CompileError(std::string_view expression) {
  const absl::StatusOr<Program> program = Compile(expression);
  INFO(expression);
  REQUIRE_FALSE(program.ok());
  CHECK(program.status().code() == absl::StatusCode::kInvalidArgument);
  return std::string(program.status().message());
}

TEST_CASE("syntax errors name the line and column and quote the expression", "[cel]") {
  CHECK_THAT(CompileError("?!"), StartsWith("1:1: Syntax error: unexpected '?'"));
  CHECK_THAT(CompileError("true &&"), StartsWith("1:8: Syntax error: unexpected '<EOF>'"));
  CHECK_THAT(CompileError("true && #"),
             StartsWith("1:9: Syntax error: token recognition error at: '#'"));
  CHECK_THAT(CompileError("(true"), StartsWith("1:6: Syntax error: expected ')'"));
  CHECK_THAT(CompileError("true true"), StartsWith("1:6: Syntax error: unexpected 'true'"));
  CHECK_THAT(CompileError(R"(device.driver == "dra)"),
             StartsWith("1:18: Syntax error: unterminated string"));
  CHECK_THAT(CompileError(R"("\q" == "")"), StartsWith("1:2: Syntax error: invalid escape '\\q'"));
  CHECK_THAT(CompileError("true &&\n  nothing"),
             StartsWith("2:3: undeclared reference to 'nothing'"));
  CHECK_THAT(CompileError("true &&\n  nothing"), Contains("; expression: true &&\n  nothing"));
  CHECK_THAT(CompileError("9223372036854775808 > 0"), StartsWith("1:1: invalid int literal"));
  CHECK_THAT(CompileError("99999999999999999999 > 0"), StartsWith("1:1: invalid int literal"));
}

TEST_CASE("constructs outside the subset are refused as unsupported at their position", "[cel]") {
  CHECK_THAT(CompileError("1 + 2 == 3"),
             StartsWith("1:3: arithmetic operator '+' is not supported"));
  CHECK_THAT(CompileError("-(1) < 0"), StartsWith("1:1: arithmetic operator '-' is not supported"));
  CHECK_THAT(CompileError("1.5 > 1"), StartsWith("1:1: literal '1.5' is not supported"));
  CHECK_THAT(CompileError("1u > 0u"), StartsWith("1:1: literal '1u' is not supported"));
  CHECK_THAT(CompileError(R"(b"x" == b"x")"), StartsWith("1:1: literal 'b\"x\"' is not supported"));
  CHECK_THAT(CompileError("{} == {}"),
             StartsWith("1:1: map and message literals are not supported"));
  CHECK_THAT(CompileError("null == null"), StartsWith("1:1: null is not supported"));
  CHECK_THAT(CompileError(R"("""a""" == "a")"),
             StartsWith("1:1: triple-quoted strings are not supported"));
  CHECK_THAT(CompileError(R"(device.attributes["dra.example.com"].names.exists(x, x > 0))"),
             StartsWith("1:44: function 'exists' is not supported in device selectors"));
  CHECK_THAT(CompileError(R"(cel.bind(x, 1, true))"),
             StartsWith("1:1: undeclared reference to 'cel'"));
  CHECK_THAT(CompileError(R"(int("1") == 1)"), StartsWith("1:1: function 'int' is not supported"));
  CHECK_THAT(CompileError(R"(semver("v1.0.0", true).isGreaterThan(semver("1.0.0")))"),
             StartsWith("1:1: semver() takes 1 argument in device selectors, not 2"));
  CHECK_THAT(CompileError(R"(quantity(device.driver).isGreaterThan(quantity("1")))"),
             StartsWith("1:17: quantity() takes a string literal in device selectors"));
  CHECK_THAT(CompileError(R"(device.driver.matches(device.driver))"),
             StartsWith("1:30: matches() takes a string literal"));
}

TEST_CASE("type errors are found when the expression is compiled", "[cel]") {
  CHECK_THAT(CompileError("1"),
             StartsWith("1:1: expression must evaluate to bool or the unknown type, not int"));
  CHECK_THAT(CompileError(R"(device.capacity["gpu.nvidia.com"].memory)"),
             Contains("must evaluate to bool or the unknown type, not Quantity"));
  CHECK_THAT(CompileError("device.foo == 1"), StartsWith("1:8: undefined field 'foo'"));
  CHECK_THAT(CompileError(R"("a" == 1)"),
             StartsWith("1:5: found no matching overload for '_==_' applied to '(string, int)'"));
  CHECK_THAT(CompileError(R"(device.capacity["gpu.nvidia.com"].memory > 1)"),
             StartsWith("1:42: found no matching overload for '_>_' applied to '(Quantity, int)'"));
  CHECK_THAT(
      CompileError(R"(quantity("1").isGreaterThan(semver("1.0.0")))"),
      Contains("found no matching overload for 'isGreaterThan' applied to '(Quantity, Semver)'"));
  CHECK_THAT(CompileError(R"(1.startsWith("a"))"),
             Contains("found no matching overload for 'startsWith'"));
  CHECK_THAT(CompileError("!1"),
             StartsWith("1:1: found no matching overload for '!_' applied to '(int)'"));
  CHECK_THAT(CompileError("1 && true"), Contains("found no matching overload for '_&&_'"));
  CHECK_THAT(CompileError("1 in 2"), Contains("found no matching overload for '@in'"));
  CHECK_THAT(CompileError("device == device"), Contains("found no matching overload for '_==_'"));
  CHECK_THAT(CompileError("device.driver.x == 1"),
             StartsWith("1:15: type 'string' does not support field"));
  CHECK_THAT(CompileError(R"(device.attributes[1].x)"),
             Contains("found no matching overload for '_[_]'"));
  CHECK_THAT(CompileError("has(device)"), StartsWith("1:1: invalid argument to has() macro"));
  CHECK_THAT(CompileError("true ? 1 : \"a\""), Contains("found no matching overload for '_?_:_'"));
  CHECK_THAT(CompileError(R"(quantity("4OGi").isGreaterThan(quantity("1")))"),
             StartsWith("1:10: quantity(): "));
  CHECK_THAT(CompileError(R"(semver("1.0").isGreaterThan(semver("1.0.0")))"),
             StartsWith("1:8: semver(): invalid semantic version '1.0'"));
  CHECK_THAT(CompileError(R"(device.driver.matches("(unclosed"))"),
             StartsWith("1:23: matches(): invalid regular expression '(unclosed'"));
}

TEST_CASE("deep nesting is refused while long chains of clauses compile", "[cel]") {
  CHECK_THAT(CompileError(std::string(300, '(') + "true" + std::string(300, ')')),
             Contains("nests too deeply"));
  CHECK_THAT(CompileError(std::string(300, '!') + "true"), Contains("nests too deeply"));
  std::string chain = "true";
  for (int i = 0; i < 300; ++i) chain += " == true";
  CHECK_THAT(CompileError(chain), Contains("nests too deeply"));
  std::string clauses = "true";
  for (int i = 0; i < 2000; ++i) clauses += " && device.driver != \"x\"";
  const absl::StatusOr<Program> program = Compile(clauses);
  REQUIRE(program.ok());
  const absl::StatusOr<bool> result = program->Evaluate(TestDevice().View());
  REQUIRE(result.ok());
  CHECK(*result);
}

}  // namespace
}  // namespace kubesched::cel
