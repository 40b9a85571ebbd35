#pragma once

#include <cstdint>
#include <string_view>

namespace kubesched::cel {

// A semantic version (semver.org 2.0.0) as device attributes and semver() carry them. The
// pre-release part borrows from the parsed text; build metadata is checked and then ignored, as
// it does not take part in precedence.
struct Semver {
  uint64_t major = 0;
  uint64_t minor = 0;
  uint64_t patch = 0;
  std::string_view prerelease;
};

// Strict parse of MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD]: no leading zeros, no "v" prefix.
bool ParseSemver(std::string_view text, Semver& out);

// <0, 0, >0 by semver precedence: the numbers, then a release above any of its pre-releases,
// then the pre-release identifiers one by one (numeric ones numerically and below alphanumeric).
int CompareSemver(const Semver& a, const Semver& b);

}  // namespace kubesched::cel
