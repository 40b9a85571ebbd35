#include "scheduler/util/utf8.h"

#include <cstddef>
#include <cstdint>

namespace kubesched::util {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// The length of the well-formed sequence at s[i], or 0 when the byte there starts none. The
// ranges of the second byte follow the Unicode standard's table of well-formed sequences.
size_t SequenceLength(std::string_view s, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<uint8_t>(s[i + k]); };
  const auto continuation = [&](size_t k, uint8_t lo, uint8_t hi) {
    return i + k < s.size() && byte(k) >= lo && byte(k) <= hi;
  };
  const uint8_t lead = byte(0);
  if (lead < 0x80) return 1;
  if (lead >= 0xC2 && lead <= 0xDF) return continuation(1, 0x80, 0xBF) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    const uint8_t lo = lead == 0xE0 ? 0xA0 : 0x80;  // no overlong forms
    const uint8_t hi = lead == 0xED ? 0x9F : 0xBF;  // no surrogates
    return continuation(1, lo, hi) && continuation(2, 0x80, 0xBF) ? 3 : 0;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    const uint8_t lo = lead == 0xF0 ? 0x90 : 0x80;  // no overlong forms
    const uint8_t hi = lead == 0xF4 ? 0x8F : 0xBF;  // nothing past U+10FFFF
    return continuation(1, lo, hi) && continuation(2, 0x80, 0xBF) && continuation(3, 0x80, 0xBF)
               ? 4
               : 0;
  }
  return 0;
}

}  // namespace

bool IsValidUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const size_t n = SequenceLength(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string ToValidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const size_t n = SequenceLength(s, i);
    if (n == 0) {
      out.append(kReplacement);
      ++i;
      continue;
    }
    out.append(s.substr(i, n));
    i += n;
  }
  return out;
}

}  // namespace kubesched::util
