#include "scheduler/api/quantity.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>

namespace kubesched::api {
namespace {

TEST_CASE("valid quantities parse to exact milli-units and print canonically", "[api]") {
  struct Case {
    std::string text;
    int64_t milli;
    std::string canonical;
  };
  const Case cases[] = {
      {"0", 0, "0"},
      {"-0", 0, "0"},
      {"100m", 100, "100m"},
      {"1", 1000, "1"},
      {"2", 2000, "2"},
      {"+1", 1000, "1"},
      {"-1", -1000, "-1"},
      {"-100m", -100, "-100m"},
      {"1500m", 1500, "1500m"},
      {"1.5", 1500, "1500m"},
      {"0.1", 100, "100m"},
      {".5", 500, "500m"},
      {"5.", 5000, "5"},
      {"00001", 1000, "1"},
      {"1k", 1000000, "1k"},
      {"2000", 2000000, "2k"},
      {"1.5G", 1500000000000, "1500M"},
      {"1500M", 1500000000000, "1500M"},
      {"9P", 9000000000000000000, "9P"},
      {"1Ki", 1024000, "1Ki"},
      {"1Gi", 1073741824000, "1Gi"},
      {"1.5Gi", 1610612736000, "1536Mi"},
      {"1536Mi", 1610612736000, "1536Mi"},
      {"1025Ki", 1049600000, "1025Ki"},
      {"8Pi", 9007199254740992000, "8Pi"},
      {"0.5Ki", 512000, "512"},
      {"2e3", 2000000, "2e3"},
      {"1E-3", 1, "1e-3"},
      {"1e+3", 1000000, "1e3"},
      {"12e-1", 1200, "1200e-3"},
      {"1E3", 1000000, "1e3"},
      {"1000000n", 1, "1m"},
      {"1u", 1, "1m"},
      {"9223372036854775807m", INT64_MAX, "9223372036854775807m"},
  };
  for (const Case& c : cases) {
    INFO(c.text);
    auto q = Quantity::Parse(c.text);
    REQUIRE(q.ok());
    CHECK(q->milli() == c.milli);
    CHECK(q->ToString() == c.canonical);
  }
}

TEST_CASE("sub-milli quantities round their magnitude up to the next milli-unit", "[api]") {
  struct Case {
    std::string text;
    int64_t milli;
  };
  const Case cases[] = {
      {"0.0001", 1}, {"1n", 1},       {"1001u", 2},    {"0.0000000000000000000000000000001", 1},
      {"1e-30", 1},  {"-0.0001", -1}, {"0.1001", 101}, {"1.0001Ki", 1024103},  // 1024.1024 bytes
  };
  for (const Case& c : cases) {
    INFO(c.text);
    auto q = Quantity::Parse(c.text);
    REQUIRE(q.ok());
    CHECK(q->milli() == c.milli);
  }
}

TEST_CASE("malformed quantities are errors that name the text", "[api]") {
  const std::string cases[] = {"",     "abc",  "1.2.3", "1Kib",  "--1", " 1", "1 ", ".",
                               "1e",   "-",    "+",     "1e1.5", "1ki", "Ki", "e3", "1m1",
                               "1KiB", "0x10", "1_000", "1,5",   "1e+", "∞"};
  for (const std::string& text : cases) {
    INFO(text);
    auto q = Quantity::Parse(text);
    REQUIRE_FALSE(q.ok());
    CHECK(q.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(q.status().message()).find("\"" + text + "\"") != std::string::npos);
  }
}

TEST_CASE("quantities beyond the int64 milli range are overflow errors", "[api]") {
  const std::string cases[] = {"10Ei",
                               "1Ei",
                               "1E",
                               "9223372036854775808m",
                               "9223372036854776",
                               "99999999999999999999999999999999",
                               "1e100",
                               "1e999999999999999999999",
                               "-10Ei"};
  for (const std::string& text : cases) {
    INFO(text);
    auto q = Quantity::Parse(text);
    REQUIRE_FALSE(q.ok());
    CHECK(std::string(q.status().message()).find(text) != std::string::npos);
    CHECK(std::string(q.status().message()).find("out of range") != std::string::npos);
  }
}

TEST_CASE("a zero mantissa is zero whatever its exponent", "[api]") {
  for (const std::string text : {"0e999999999999", "0Ei", "0.000E", "-0.0e-5"}) {
    INFO(text);
    auto q = Quantity::Parse(text);
    REQUIRE(q.ok());
    CHECK(q->milli() == 0);
  }
}

TEST_CASE("ValueCeil rounds the magnitude up to whole units", "[api]") {
  struct Case {
    int64_t milli;
    int64_t value;
  };
  const Case cases[] = {{0, 0}, {1, 1}, {1000, 1}, {1500, 2}, {-1500, -2}, {-1000, -1}};
  for (const Case& c : cases) {
    INFO(c.milli);
    CHECK(Quantity::FromMilli(c.milli).ValueCeil() == c.value);
  }
}

TEST_CASE("quantities built from values print in their format", "[api]") {
  CHECK(Quantity::FromValue(3).ToString() == "3");
  CHECK(Quantity::FromValue(3 * 1024 * 1024, Quantity::Format::kBinarySI).ToString() == "3Mi");
  CHECK(Quantity::FromValue(1000, Quantity::Format::kBinarySI).ToString() == "1k");
  CHECK(Quantity::FromMilli(250).ToString() == "250m");
  CHECK(Quantity::FromValue(INT64_MAX).milli() == INT64_MAX);  // saturates, never wraps
}

TEST_CASE("quantities compare by value, not by format", "[api]") {
  CHECK(*Quantity::Parse("1Ki") == *Quantity::Parse("1024"));
  CHECK(*Quantity::Parse("1k") == *Quantity::Parse("1e3"));
  CHECK_FALSE(*Quantity::Parse("1k") == *Quantity::Parse("1Ki"));
}

}  // namespace
}  // namespace kubesched::api
