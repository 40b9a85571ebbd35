// The Score phase's division: the same quotient as int64_t division, for every operand size.

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

}  // namespace
}  // namespace kubesched::plugins::helper
