// The Score phase's divisions: the same quotient as int64_t division, for every operand size, and
// by a divisor fixed ahead as by any other.

#include "plugins/helper/integer_division.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace kubesched::plugins::helper {
namespace {

TEST_CASE("Divide gives int64_t division's quotient whatever the operands' size and sign",
          "[plugins]") {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const std::vector<int64_t> edges = {
      0,  1,    2,           99,   100,      4294967295, 4294967296,   4294967297,
      -1, -100, -4294967296, kMax, kMax - 1, -kMax,      137438953472, 12345678901};
  for (const int64_t a : edges) {
    for (const int64_t b : edges) {
      if (b == 0) continue;
      INFO(a << " / " << b);
      CHECK(Divide(a, b) == a / b);
    }
  }
  // Amounts as the Score phase divides them: millicores, bytes, scores times weights.
  std::mt19937_64 random(7);
  for (int i = 0; i < 100000; ++i) {
    const int shift_a = static_cast<int>(random() % 63);
    const int shift_b = static_cast<int>(random() % 63);
    const auto a = static_cast<int64_t>(random() >> (1 + shift_a)) * (random() % 4 == 0 ? -1 : 1);
    auto b = static_cast<int64_t>(random() >> (1 + shift_b));
    if (b == 0) b = 1;
    INFO(a << " / " << b);
    REQUIRE(Divide(a, b) == a / b);
  }
}

// The dividends a constant divisor gets near each multiple of it and near the 32-bit boundary,
// where a multiplier one short or one over would first give a wrong quotient.
std::vector<int64_t> DividendsAround(int64_t divisor) {
  std::vector<int64_t> dividends = {
      0,          1,          2,          4294967295,
      4294967294, 4294967296, 4294967297, std::numeric_limits<int64_t>::max(),
      -1,         -divisor};
  const int64_t last_multiple = 4294967295 / divisor * divisor;
  for (const int64_t multiple : {divisor, 2 * divisor, 100 * divisor, last_multiple}) {
    for (int64_t offset = -2; offset <= 2; ++offset) dividends.push_back(multiple + offset);
  }
  return dividends;
}

TEST_CASE("a constant divisor gives int64_t division's quotient for every dividend", "[plugins]") {
  std::mt19937_64 random(11);
  std::vector<uint32_t> divisors;
  for (uint32_t d = 1; d <= 300; ++d) divisors.push_back(d);  // every weight sum there can be
  for (const uint32_t d : {1u << 16, (1u << 16) + 1, 0x7fffffffu, 0x80000000u, 0xffffffffu}) {
    divisors.push_back(d);
  }
  for (int i = 0; i < 200; ++i) divisors.push_back(static_cast<uint32_t>(random() | 1));
  for (const uint32_t d : divisors) {
    const ConstantDivisor divisor(d);
    const auto wide = static_cast<int64_t>(d);
    for (const int64_t n : DividendsAround(wide)) {
      INFO(n << " / " << d);
      REQUIRE(divisor.Divide(n) == n / wide);
    }
    for (int i = 0; i < 2000; ++i) {
      const auto n = static_cast<int64_t>(random() >> (32 + random() % 32));  // below 2^32
      INFO(n << " / " << d);
      REQUIRE(divisor.Divide(n) == n / wide);
    }
  }
  // Scores as NodeResourcesFit's weighted mean divides them: every sum of two shares of at most
  // 100 times weights of at most 100.
  for (int64_t weights = 2; weights <= 200; ++weights) {
    const ConstantDivisor divisor(static_cast<uint32_t>(weights));
    for (int64_t n = 0; n <= 100 * weights; ++n) REQUIRE(divisor.Divide(n) == n / weights);
  }
}

}  // namespace
}  // namespace kubesched::plugins::helper
