#pragma once

#include <cstdint>

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

}  // namespace kubesched::plugins::helper
