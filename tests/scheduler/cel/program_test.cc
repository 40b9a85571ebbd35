#include "scheduler/cel/program.h"

#include <catch2/catch.hpp>
#include <string>
#include <string_view>

#include "scheduler/cel/device_view.h"
#include "tests/scheduler/cel/device_fixture.h"

namespace kubesched::cel {
namespace {

using testing::TestDevice;

bool Matches(std::string_view expression, const DeviceView& device) {
  absl::StatusOr<Program> program = Compile(expression);
  INFO(expression << ": " << (program.ok() ? "" : std::string(program.status().message())));
  REQUIRE(program.ok());
  const absl::StatusOr<bool> result = program->Evaluate(device);
  INFO(expression << ": " << (result.ok() ? "" : std::string(result.status().message())));
  REQUIRE(result.ok());
  return *result;
}

bool Matches(std::string_view expression) { return Matches(expression, TestDevice().View()); }

TEST_CASE("upstream's selector examples evaluate as upstream's tests expect", "[cel]") {
  TestDevice device;
  CHECK(Matches("true"));
  CHECK_FALSE(Matches("false"));
  CHECK_FALSE(Matches(R"("no-such-domain" in device.attributes)"));
  CHECK(Matches(R"("dra.example.com" in device.attributes)"));
  CHECK(Matches(R"(device.driver == "dra.example.com")"));
  CHECK(Matches(R"(device.attributes["dra.example.com"].bool)"));
  CHECK(Matches(R"(device.attributes["dra.example.com"]["bool"])"));
  CHECK(Matches(R"(device.attributes["dra.example.com"].int > 0)"));
  CHECK(Matches(R"(device.attributes["dra.example.com"].string == "fish")"));
  CHECK(Matches(R"(device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")))"));
  CHECK(Matches(R"(device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")))"));
  CHECK(Matches(R"("quantity" in device.capacity["dra.example.com"] && )"
                R"(device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")))"));
  CHECK(Matches(R"(!("name" in device.capacity["dra.example.com"]) || )"
                R"(device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki")))"));
  CHECK(Matches(R"(device.attributes["dra.example.com"].services.matches("[^a]?sym"))"));
  CHECK(Matches(R"(
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["int"] > 0
)"));
  CHECK(Matches("device.allowMultipleAllocations == false"));
  device.allow_multiple_allocations = true;
  CHECK(Matches("device.allowMultipleAllocations == true", device.View()));
  device.driver = "";
  CHECK(Matches(R"(device.driver == "")", device.View()));
}

TEST_CASE("a GPU is selected by product name, memory and compute capability", "[cel]") {
  CHECK(Matches(
      R"(device.driver == "dra.example.com" && )"
      R"(device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA A100") && )"
      R"(device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) >= 0 && )"
      R"(device.attributes["gpu.nvidia.com"].cudaComputeCapability.isGreaterThan(semver("7.5.0")))"));
  CHECK_FALSE(
      Matches(R"(device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("40Gi")))"));
  CHECK(Matches(R"(device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("39Gi")))"));
  CHECK(Matches(R"(device.capacity["gpu.nvidia.com"].memory.isLessThan(quantity("41Gi")))"));
  CHECK(Matches(R"(device.capacity["gpu.nvidia.com"].memory == quantity("40960Mi"))"));
  CHECK(Matches(R"(device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) == 0)"));
  CHECK(Matches(
      R"(device.capacity["gpu.nvidia.com"].multiprocessors.compareTo(quantity("200")) == -1)"));
  CHECK(Matches(R"(quantity("1k").compareTo(quantity("999")) == 1)"));
  CHECK(Matches(R"(device.attributes["gpu.nvidia.com"].architecture in ["Hopper", "Ampere"])"));
  CHECK_FALSE(
      Matches(R"(device.attributes["gpu.nvidia.com"].architecture in ["Hopper", "Blackwell"])"));
  CHECK(Matches(R"(device.attributes["gpu.nvidia.com"].index in [1, 2, 3])"));
}

TEST_CASE("comparisons order ints, strings and bools and compare everything for equality",
          "[cel]") {
  CHECK(Matches("1 < 2"));
  CHECK(Matches("2 <= 2"));
  CHECK(Matches("3 > 2"));
  CHECK(Matches("2 >= 2"));
  CHECK_FALSE(Matches("2 > 2"));
  CHECK(Matches("-5 < 0x10"));
  CHECK(Matches("-9223372036854775808 < 9223372036854775807"));
  CHECK(Matches(R"("abc" < "abd")"));
  CHECK(Matches("false < true"));
  CHECK(Matches(R"("a" != "b")"));
  CHECK(Matches("true == true"));
  CHECK(Matches(R"(semver("1.2.3") == semver("1.2.3+build"))"));
  CHECK(Matches(R"(quantity("1") == quantity("1000m"))"));
  // An attribute of another kind is simply not equal, as CEL's equality across types.
  CHECK_FALSE(Matches(R"(device.attributes["dra.example.com"].string == 1)"));
  CHECK(Matches(R"(device.attributes["dra.example.com"].string != 1)"));
}

TEST_CASE("logical operators, negation, conditionals and parentheses follow CEL's precedence",
          "[cel]") {
  CHECK(Matches("!false"));
  CHECK(Matches("!!true"));
  CHECK(Matches("!true || true"));           // ! binds tighter than ||
  CHECK(Matches("true || false && false"));  // && binds tighter than ||
  CHECK(Matches("false && false || true"));
  CHECK_FALSE(Matches("false && (false || true)"));
  CHECK(Matches("1 < 2 == true"));  // relations share one level, left to right
  CHECK(Matches("!(1 > 2) && 2 in [1, 2]"));
  CHECK(Matches("true ? 1 < 2 : false"));
  CHECK_FALSE(Matches("false ? true : false"));
  CHECK(Matches("false ? false : true ? true : false"));  // the conditional nests to the right
  CHECK(Matches("(((true)))"));
  CHECK(Matches("true // a comment\n && true"));
}

TEST_CASE("has, in and size look at the device's domains and names", "[cel]") {
  CHECK(Matches(R"(has(device.attributes["gpu.nvidia.com"].productName))"));
  CHECK_FALSE(Matches(R"(has(device.attributes["gpu.nvidia.com"].memory))"));
  CHECK(Matches(R"(has(device.capacity["gpu.nvidia.com"].memory))"));
  CHECK_FALSE(Matches(R"(has(device.attributes["other.example.com"].x))"));
  CHECK(Matches("has(device.driver)"));
  CHECK(Matches(R"("memory" in device.capacity["gpu.nvidia.com"])"));
  CHECK_FALSE(Matches(R"("productName" in device.capacity["gpu.nvidia.com"])"));
  CHECK(Matches(
      R"(!has(device.attributes["gpu.nvidia.com"].mig) || device.attributes["gpu.nvidia.com"].mig)"));
  CHECK(Matches("size(device.attributes) == 2"));
  CHECK(Matches(R"(device.attributes["gpu.nvidia.com"].size() == 6)"));
  CHECK(Matches(R"(size(device.capacity["dra.example.com"]) == 1)"));
  CHECK(Matches(R"(size(device.attributes["none.example.com"]) == 0)"));
  CHECK(Matches(
      R"("fish".size() == 4 && size("añb") == 3 && [1, 2, 3].size() == 3 && size([]) == 0)"));
  CHECK(Matches(R"(device.driver in ["a", "dra.example.com"])"));
  CHECK_FALSE(Matches(R"(device.driver in [])"));
}

TEST_CASE("string functions test prefixes, suffixes, substrings and RE2 patterns", "[cel]") {
  CHECK(Matches(R"(device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA"))"));
  CHECK(Matches(R"(device.attributes["gpu.nvidia.com"].productName.endsWith("40GB"))"));
  CHECK(Matches(R"(device.attributes["gpu.nvidia.com"].productName.contains("A100"))"));
  CHECK_FALSE(Matches(R"(device.attributes["gpu.nvidia.com"].productName.contains("H100"))"));
  CHECK(Matches(
      R"(device.attributes["gpu.nvidia.com"].productName.matches("^NVIDIA (A|H)100-\\w+-\\d+GB$"))"));
  CHECK(Matches(R"(device.attributes["gpu.nvidia.com"].productName.matches('A100'))"));
  CHECK_FALSE(Matches(R"(device.attributes["gpu.nvidia.com"].productName.matches("^A100"))"));
}

TEST_CASE("string literals resolve escapes and raw strings keep backslashes", "[cel]") {
  CHECK(Matches(R"("\x41\101\u0042" == "AAB")"));
  CHECK(Matches(R"('it\'s' == "it's")"));
  CHECK(Matches(R"(r"\d" == "\\d")"));
  CHECK(Matches(R"("é".size() == 1 && "\u00e9" == "é")"));
  CHECK(Matches(R"("a\nb".contains("\n"))"));
  CHECK(Matches(R"("\xe9" == "é" && "\351" == "é" && "\U0001F600".size() == 1)"));
}

TEST_CASE("versions compare by semver precedence, pre-releases below their release", "[cel]") {
  CHECK(Matches(R"(semver("1.10.0").isGreaterThan(semver("1.9.0")))"));
  CHECK(Matches(R"(semver("1.0.0-alpha").isLessThan(semver("1.0.0")))"));
  CHECK(Matches(R"(semver("1.0.0-alpha").isLessThan(semver("1.0.0-alpha.1")))"));
  CHECK(Matches(R"(semver("1.0.0-alpha.1").isLessThan(semver("1.0.0-alpha.beta")))"));
  CHECK(Matches(R"(semver("1.0.0-beta.2").isLessThan(semver("1.0.0-beta.11")))"));
  CHECK(Matches(R"(semver("1.0.0-rc.1").isLessThan(semver("1.0.0")))"));
  CHECK(Matches(R"(semver("2.0.0").compareTo(semver("2.0.0")) == 0)"));
  CHECK(Matches(
      R"(device.attributes["gpu.nvidia.com"].driverVersion.isLessThan(semver("550.54.15")))"));
  CHECK(Matches(
      R"(device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("550.54.14")))"));
  CHECK(Matches(
      R"(isSemver("1.2.3") && !isSemver("1.2") && !isSemver("01.2.3") && isQuantity("40Gi") && )"
      R"(!isQuantity("forty"))"));
}

}  // namespace
}  // namespace kubesched::cel
