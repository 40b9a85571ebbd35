#include "scheduler/cel/semver.h"

#include <cstdint>
#include <limits>
#include <string_view>

namespace kubesched::cel {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentifierChar(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}
bool AllDigits(std::string_view text) {
  for (const char c : text) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

bool ParseNumber(std::string_view text, uint64_t& out) {
  if (text.empty() || !AllDigits(text) || (text.size() > 1 && text[0] == '0')) return false;
  out = 0;
  for (const char c : text) {
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (out > (std::numeric_limits<uint64_t>::max() - digit) / 10) return false;
    out = out * 10 + digit;
  }
  return true;
}

// Dot-separated identifiers, none empty; numeric ones in a pre-release have no leading zero.
bool ValidIdentifiers(std::string_view text, bool prerelease) {
  if (text.empty()) return false;
  size_t start = 0;
  while (true) {
    const size_t dot = text.find('.', start);
    const std::string_view part =
        text.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (part.empty()) return false;
    for (const char c : part) {
      if (!IsIdentifierChar(c)) return false;
    }
    if (prerelease && part.size() > 1 && part[0] == '0' && AllDigits(part)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

std::string_view NextIdentifier(std::string_view& rest) {
  const size_t dot = rest.find('.');
  const std::string_view part = rest.substr(0, dot);
  rest = dot == std::string_view::npos ? std::string_view() : rest.substr(dot + 1);
  return part;
}

int CompareIdentifier(std::string_view a, std::string_view b) {
  const bool a_numeric = AllDigits(a);
  const bool b_numeric = AllDigits(b);
  if (a_numeric && b_numeric) {
    if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;  // no leading zeros
    return a.compare(b);
  }
  if (a_numeric != b_numeric) return a_numeric ? -1 : 1;
  return a.compare(b);
}

}  // namespace

bool ParseSemver(std::string_view text, Semver& out) {
  const size_t plus = text.find('+');
  if (plus != std::string_view::npos) {
    if (!ValidIdentifiers(text.substr(plus + 1), /*prerelease=*/false)) return false;
    text = text.substr(0, plus);
  }
  const size_t dash = text.find('-');
  out.prerelease = {};
  if (dash != std::string_view::npos) {
    out.prerelease = text.substr(dash + 1);
    if (!ValidIdentifiers(out.prerelease, /*prerelease=*/true)) return false;
    text = text.substr(0, dash);
  }
  const size_t first = text.find('.');
  if (first == std::string_view::npos) return false;
  const size_t second = text.find('.', first + 1);
  if (second == std::string_view::npos) return false;
  return ParseNumber(text.substr(0, first), out.major) &&
         ParseNumber(text.substr(first + 1, second - first - 1), out.minor) &&
         ParseNumber(text.substr(second + 1), out.patch);
}

int CompareSemver(const Semver& a, const Semver& b) {
  if (a.major != b.major) return a.major < b.major ? -1 : 1;
  if (a.minor != b.minor) return a.minor < b.minor ? -1 : 1;
  if (a.patch != b.patch) return a.patch < b.patch ? -1 : 1;
  if (a.prerelease.empty() || b.prerelease.empty()) {
    if (a.prerelease.empty() == b.prerelease.empty()) return 0;
    return a.prerelease.empty() ? 1 : -1;
  }
  std::string_view rest_a = a.prerelease;
  std::string_view rest_b = b.prerelease;
  while (!rest_a.empty() && !rest_b.empty()) {
    const int order = CompareIdentifier(NextIdentifier(rest_a), NextIdentifier(rest_b));
    if (order != 0) return order < 0 ? -1 : 1;
  }
  if (rest_a.empty() == rest_b.empty()) return 0;
  return rest_a.empty() ? -1 : 1;
}

}  // namespace kubesched::cel
