#pragma once

#include <bit>
#include <cstdint>

#include "absl/numeric/int128.h"

namespace kubesched::plugins::helper {

// a / b exactly as int64_t division gives it (b != 0), done in 32 bits when both operands fit.
// The Score phase divides per node (a resource's share of a node, a weighted mean, a normalised
// score), and a 64-bit division takes several times as long as a 32-bit one on x86-64.
inline int64_t Divide(int64_t a, int64_t b) {
  if (((static_cast<uint64_t>(a) | static_cast<uint64_t>(b)) >> 32) == 0) {
    return static_cast<int64_t>(static_cast<uint32_t>(a) / static_cast<uint32_t>(b));
  }
  return a / b;
}

// Division by a divisor fixed before the loop that divides by it (a weighted mean's weight sum,
// which the configuration sets), as a multiplication and a shift: at the end of a node's score the
// hardware division was the longest wait of the loop (bench/RESULTS.md). Granlund and
// Montgomery's round-up method: with l = ceil(log2 d) and m = ceil(2^(32+l) / d), m*d exceeds
// 2^(32+l) by less than d <= 2^l, so floor(n / d) = floor(m*n / 2^(32+l)) for every n in
// [0, 2^32). Other dividends, negative ones too, take the hardware division.
class ConstantDivisor {
 public:
  explicit ConstantDivisor(uint32_t divisor)
      : divisor_(divisor == 0 ? 1 : divisor),
        shift_(32 + static_cast<int>(std::bit_width(divisor_ - 1))),
        multiplier_(absl::Uint128Low64(((absl::uint128(1) << shift_) + divisor_ - 1) / divisor_)) {}

  // dividend / divisor as int64_t division gives it.
  int64_t Divide(int64_t dividend) const {
    if ((static_cast<uint64_t>(dividend) >> 32) != 0) {
      return dividend / static_cast<int64_t>(divisor_);
    }
    return static_cast<int64_t>(absl::Uint128Low64(
        (absl::uint128(static_cast<uint64_t>(dividend)) * multiplier_) >> shift_));
  }

 private:
  uint32_t divisor_;  // 0 is taken as 1: a divisor of 0 is the caller's to rule out
  int shift_;
  uint64_t multiplier_;  // below 2^33
};

}  // namespace kubesched::plugins::helper
