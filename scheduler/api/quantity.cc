#include "scheduler/api/quantity.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "scheduler/util/strings.h"

namespace kubesched::api {
namespace {

constexpr int64_t kMaxMilli = std::numeric_limits<int64_t>::max();
// A parsed exponent beyond this is certain overflow (or certain rounding to 1m); capping it keeps
// the arithmetic below in int64.
constexpr int64_t kMaxExponent = 1'000'000'000;

// The multiplier a suffix stands for: 10^exponent for decimal SI and e-notation, 1024^exponent
// for binary SI.
struct Suffix {
  Quantity::Format format = Quantity::Format::kDecimalSI;
  int64_t exponent = 0;
};

struct SuffixEntry {
  std::string_view text;
  Suffix suffix;
};

constexpr std::array<SuffixEntry, 16> kSuffixes = {{
    {"", {Quantity::Format::kDecimalSI, 0}},
    {"n", {Quantity::Format::kDecimalSI, -9}},
    {"u", {Quantity::Format::kDecimalSI, -6}},
    {"m", {Quantity::Format::kDecimalSI, -3}},
    {"k", {Quantity::Format::kDecimalSI, 3}},
    {"M", {Quantity::Format::kDecimalSI, 6}},
    {"G", {Quantity::Format::kDecimalSI, 9}},
    {"T", {Quantity::Format::kDecimalSI, 12}},
    {"P", {Quantity::Format::kDecimalSI, 15}},
    {"E", {Quantity::Format::kDecimalSI, 18}},
    {"Ki", {Quantity::Format::kBinarySI, 1}},
    {"Mi", {Quantity::Format::kBinarySI, 2}},
    {"Gi", {Quantity::Format::kBinarySI, 3}},
    {"Ti", {Quantity::Format::kBinarySI, 4}},
    {"Pi", {Quantity::Format::kBinarySI, 5}},
    {"Ei", {Quantity::Format::kBinarySI, 6}},
}};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

absl::Status Invalid(std::string_view text, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrFormat("invalid quantity \"%s\": %s", util::Absl(text), util::Absl(why)));
}

// Length of the run of digits at the start of `s`.
size_t DigitRun(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && IsDigit(s[n])) ++n;
  return n;
}

// Parses "e<signed digits>" / "E<signed digits>"; the exponent is capped at ±kMaxExponent.
bool ParseExponentSuffix(std::string_view s, Suffix* out) {
  if (s.size() < 2 || (s[0] != 'e' && s[0] != 'E')) return false;
  s.remove_prefix(1);
  bool negative = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty() || DigitRun(s) != s.size()) return false;
  int64_t exponent = 0;
  for (char c : s) exponent = std::min(kMaxExponent, exponent * 10 + (c - '0'));
  *out = {Quantity::Format::kDecimalExponent, negative ? -exponent : exponent};
  return true;
}

bool ParseSuffix(std::string_view s, Suffix* out) {
  for (const auto& entry : kSuffixes) {
    if (entry.text == s) {
      *out = entry.suffix;
      return true;
    }
  }
  return ParseExponentSuffix(s, out);
}

// Multiplies a decimal digit string in place by 1024.
void MultiplyBy1024(std::string& digits) {
  uint32_t carry = 0;
  for (size_t i = digits.size(); i-- > 0;) {
    const uint32_t t = static_cast<uint32_t>(digits[i] - '0') * 1024 + carry;
    digits[i] = static_cast<char>('0' + t % 10);
    carry = t / 10;
  }
  while (carry > 0) {
    digits.insert(digits.begin(), static_cast<char>('0' + carry % 10));
    carry /= 10;
  }
}

// Moves trailing zeros of `digits` into the decimal exponent.
void StripTrailingZeros(std::string& digits, int64_t* exponent) {
  const size_t last = digits.find_last_not_of('0');
  *exponent += static_cast<int64_t>(digits.size() - 1 - last);
  digits.resize(last + 1);
}

// Parses at most 19 decimal digits (fits uint64 without overflow).
uint64_t ParseDigits(std::string_view digits) {
  uint64_t v = 0;
  for (char c : digits) v = v * 10 + static_cast<uint64_t>(c - '0');
  return v;
}

// Converts the exact value digits × 10^exponent to milli-units, rounding away from zero (as
// upstream rounds the magnitude up). `digits` has no leading or trailing zeros and is non-empty.
bool DigitsToMilli(const std::string& digits, int64_t exponent, uint64_t* milli) {
  const int64_t shift = exponent + 3;  // exponent of the last digit in milli-units
  const auto size = static_cast<int64_t>(digits.size());
  if (shift >= 0) {
    if (size + shift > 19) return false;
    uint64_t v = ParseDigits(digits);
    for (int64_t i = 0; i < shift; ++i) v *= 10;
    *milli = v;
    return v <= static_cast<uint64_t>(kMaxMilli);
  }
  // The dropped digits end in a non-zero digit, so the remainder is never zero: round up.
  const int64_t kept = size + shift;
  if (kept <= 0) {
    *milli = 1;
    return true;
  }
  if (kept > 19) return false;
  const uint64_t v = ParseDigits(std::string_view(digits).substr(0, static_cast<size_t>(kept)));
  *milli = v + 1;
  return *milli <= static_cast<uint64_t>(kMaxMilli);
}

// The significant digits of int_part.frac_part, and the decimal exponent of the last one.
void Significand(std::string_view int_part, std::string_view frac_part, std::string* digits,
                 int64_t* exponent) {
  digits->reserve(int_part.size() + frac_part.size());
  digits->append(int_part.data(), int_part.size());
  digits->append(frac_part.data(), frac_part.size());
  *exponent = -static_cast<int64_t>(frac_part.size());
  const size_t first = digits->find_first_not_of('0');
  if (first == std::string::npos) {
    digits->clear();
    return;
  }
  digits->erase(0, first);
  StripTrailingZeros(*digits, exponent);
}

std::string_view DecimalSuffix(int exponent) {
  switch (exponent) {
    case -3:
      return "m";
    case 3:
      return "k";
    case 6:
      return "M";
    case 9:
      return "G";
    case 12:
      return "T";
    case 15:
      return "P";
    case 18:
      return "E";
    default:
      return "";
  }
}

// Upstream's canonical decimal form: move factors of ten into the exponent, then keep the
// exponent a multiple of three.
std::string DecimalString(int64_t milli, Quantity::Format format) {
  int64_t mantissa = milli;
  int exponent = -3;
  while (mantissa % 10 == 0) {
    mantissa /= 10;
    ++exponent;
  }
  // exponent >= -3, so the remainder is non-negative. Multiplying back only undoes divisions
  // made above, so it cannot overflow.
  const int extra = (exponent + 3) % 3;
  for (int i = 0; i < extra; ++i) mantissa *= 10;
  exponent -= extra;
  if (format == Quantity::Format::kDecimalExponent) {
    return exponent == 0 ? absl::StrCat(mantissa) : absl::StrCat(mantissa, "e", exponent);
  }
  return absl::StrCat(mantissa, util::Absl(DecimalSuffix(exponent)));
}

}  // namespace

absl::StatusOr<Quantity> Quantity::Parse(std::string_view text) {
  std::string_view rest = text;
  bool negative = false;
  if (!rest.empty() && (rest[0] == '+' || rest[0] == '-')) {
    negative = rest[0] == '-';
    rest.remove_prefix(1);
  }
  const std::string_view int_part = rest.substr(0, DigitRun(rest));
  rest.remove_prefix(int_part.size());
  std::string_view frac_part;
  if (!rest.empty() && rest[0] == '.') {
    rest.remove_prefix(1);
    frac_part = rest.substr(0, DigitRun(rest));
    rest.remove_prefix(frac_part.size());
  }
  if (int_part.empty() && frac_part.empty()) return Invalid(text, "no digits");
  Suffix suffix;
  if (!ParseSuffix(rest, &suffix)) {
    return Invalid(text, absl::StrCat("unknown suffix \"", util::Absl(rest), "\""));
  }

  std::string digits;
  int64_t exponent = 0;
  Significand(int_part, frac_part, &digits, &exponent);
  if (digits.empty()) return FromMilli(0, suffix.format);
  if (suffix.format == Format::kBinarySI) {
    for (int64_t i = 0; i < suffix.exponent; ++i) MultiplyBy1024(digits);
    StripTrailingZeros(digits, &exponent);
  } else {
    exponent += suffix.exponent;
  }
  uint64_t magnitude = 0;
  if (!DigitsToMilli(digits, exponent, &magnitude)) return Invalid(text, "value out of range");
  const auto milli = static_cast<int64_t>(magnitude);
  Format format = suffix.format;
  // Like upstream, a binary quantity under 1Ki prints in decimal (no fractional Ki).
  if (format == Format::kBinarySI && milli < int64_t{1024} * 1000) format = Format::kDecimalSI;
  return FromMilli(negative ? -milli : milli, format);
}

Quantity Quantity::FromMilli(int64_t milli, Format format) {
  Quantity q;
  q.milli_ = milli;
  q.format_ = format;
  return q;
}

Quantity Quantity::FromValue(int64_t value, Format format) {
  constexpr int64_t kLimit = kMaxMilli / 1000;
  // Saturate rather than wrap: callers pass amounts that already passed range checks.
  if (value > kLimit) return FromMilli(kMaxMilli, format);
  if (value < -kLimit) return FromMilli(-kMaxMilli, format);
  return FromMilli(value * 1000, format);
}

int64_t Quantity::ValueCeil() const {
  const int64_t whole = milli_ / 1000;
  if (milli_ % 1000 == 0) return whole;
  return milli_ > 0 ? whole + 1 : whole - 1;  // magnitude rounds up, as upstream
}

std::string Quantity::ToString() const {
  if (milli_ == 0) return "0";
  if (format_ == Format::kBinarySI && milli_ % 1000 == 0 &&
      (milli_ >= int64_t{1024} * 1000 || milli_ <= -int64_t{1024} * 1000)) {
    static constexpr std::array<std::string_view, 7> kBinary = {"",   "Ki", "Mi", "Gi",
                                                                "Ti", "Pi", "Ei"};
    int64_t value = milli_ / 1000;
    size_t power = 0;
    while (power + 1 < kBinary.size() && value % 1024 == 0) {
      value /= 1024;
      ++power;
    }
    return absl::StrCat(value, util::Absl(kBinary[power]));
  }
  return DecimalString(milli_, format_);
}

}  // namespace kubesched::api
