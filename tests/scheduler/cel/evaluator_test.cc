// Evaluation of device selectors: runtime errors, what they say and where, and CEL's error
// semantics for && and ||.

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

std::string EvaluationError(std::string_view expression, const DeviceView& device) {
  const absl::StatusOr<Program> program = Compile(expression);
  INFO(expression << ": " << (program.ok() ? "" : std::string(program.status().message())));
  REQUIRE(program.ok());
  const absl::StatusOr<bool> result = program->Evaluate(device);
  INFO(expression);
  REQUIRE_FALSE(result.ok());
  return std::string(result.status().message());
}

std::string EvaluationError(std::string_view expression) {
  return EvaluationError(expression, TestDevice().View());
}

TEST_CASE("a missing attribute is an error naming the key and its position", "[cel]") {
  CHECK_THAT(EvaluationError(
                 R"(device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0")))"),
             StartsWith("1:37: no such key: noSuchAttr; expression: device.attributes"));
  CHECK_THAT(
      EvaluationError(
          R"(device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0")))"),
      StartsWith("1:36: no such key: noSuchAttr"));
  CHECK_THAT(
      EvaluationError(R"(device.capacity["gpu.nvidia.com"].cores.isGreaterThan(quantity("1")))"),
      StartsWith("1:35: no such key: cores"));
}

TEST_CASE("a value of the wrong kind at run time is an error naming the operation", "[cel]") {
  CHECK_THAT(EvaluationError(R"(device.attributes["dra.example.com"].string > 1)"),
             StartsWith("1:45: no such overload: _>_(string, int)"));
  CHECK_THAT(EvaluationError(R"(device.attributes["dra.example.com"].int.startsWith("1"))"),
             StartsWith("1:42: no such overload: startsWith(int, string)"));
  CHECK_THAT(EvaluationError(
                 R"(device.attributes["dra.example.com"].string.isGreaterThan(semver("1.0.0")))"),
             Contains("no such overload: isGreaterThan(string, Semver)"));
  CHECK_THAT(EvaluationError(R"(!device.attributes["dra.example.com"].int)"),
             StartsWith("1:1: no such overload: !_(int)"));
  CHECK_THAT(EvaluationError(
                 R"(device.attributes["gpu.nvidia.com"].badVersion.isLessThan(semver("1.0.0")))"),
             Contains("invalid semantic version 'not-a-version'"));
  CHECK_THAT(EvaluationError(R"(device.attributes["dra.example.com"].string)"),
             StartsWith("1:38: CEL result of type string could not be converted to bool"));
  CHECK_THAT(EvaluationError(R"(device.attributes["dra.example.com"].string && true)"),
             Contains("no such overload: _&&_(string, bool)"));
}

TEST_CASE("&& and || absorb an error when the other side decides, as CEL does", "[cel]") {
  const TestDevice device;
  const auto evaluate = [&](std::string_view expression) {
    absl::StatusOr<Program> program = Compile(expression);
    REQUIRE(program.ok());
    return program->Evaluate(device.View());
  };
  CHECK(*evaluate(R"(device.attributes["x"].missing || true)"));
  CHECK(*evaluate(R"(true || device.attributes["x"].missing)"));
  CHECK_FALSE(*evaluate(R"(device.attributes["x"].missing && false)"));
  CHECK_FALSE(*evaluate(R"(false && device.attributes["x"].missing)"));
  CHECK_THAT(std::string(evaluate(R"(device.attributes["x"].missing || false)").status().message()),
             StartsWith("1:24: no such key: missing"));
  CHECK_THAT(std::string(evaluate(R"(true && device.attributes["x"].missing)").status().message()),
             StartsWith("1:32: no such key: missing"));
  // Both sides failing reports the left one.
  CHECK_THAT(
      std::string(
          evaluate(R"(device.attributes["x"].a && device.attributes["x"].b)").status().message()),
      StartsWith("1:24: no such key: a"));
}

TEST_CASE("one compiled program evaluates many devices without keeping state between them",
          "[cel]") {
  absl::StatusOr<Program> program =
      Compile(R"(device.attributes["gpu.nvidia.com"].productName.matches("A100") && )"
              R"(device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0)");
  REQUIRE(program.ok());
  TestDevice a100;
  TestDevice h100;
  h100.attributes[5].value = AttributeValue::String("NVIDIA H100 80GB HBM3");
  TestDevice small;
  small.capacity[1].value = *api::Quantity::Parse("20Gi");
  for (int i = 0; i < 1000; ++i) {
    REQUIRE(*program->Evaluate(a100.View()));
    REQUIRE_FALSE(*program->Evaluate(h100.View()));
    REQUIRE_FALSE(*program->Evaluate(small.View()));
  }
  Program moved = *std::move(program);
  CHECK(*moved.Evaluate(a100.View()));
  CHECK_THAT(std::string(moved.expression()), StartsWith("device.attributes"));
}

}  // namespace
}  // namespace kubesched::cel
