#pragma once

// Small text parsers shared by the api sources; not part of the api contract.

#include <cstdint>
#include <limits>
#include <string_view>

namespace kubesched::api::internal {

// Parses a base-10 int64 the way Go's strconv.ParseInt(s, 10, 64) does: an optional sign, then
// one or more digits, nothing else; false on overflow.
inline bool ParseInt64(std::string_view text, int64_t* out) {
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  if (text.empty()) return false;
  // Accumulate the magnitude as unsigned so that INT64_MIN parses without overflow.
  const uint64_t limit =
      negative ? uint64_t{1} << 63 : uint64_t{std::numeric_limits<int64_t>::max()};
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    const auto digit = static_cast<uint64_t>(c - '0');
    if (value > (limit - digit) / 10) return false;
    value = value * 10 + digit;
  }
  *out = negative ? static_cast<int64_t>(0 - value) : static_cast<int64_t>(value);
  return true;
}

}  // namespace kubesched::api::internal
