#include "scheduler/cel/semver.h"

#include <catch2/catch.hpp>
#include <string_view>

namespace kubesched::cel {
namespace {

TEST_CASE("semantic versions parse strictly as semver.org 2.0.0 writes them", "[cel]") {
  Semver version;
  REQUIRE(ParseSemver("1.2.3", version));
  CHECK(version.major == 1);
  CHECK(version.minor == 2);
  CHECK(version.patch == 3);
  CHECK(version.prerelease.empty());
  REQUIRE(ParseSemver("10.20.30-rc.1+build.5", version));
  CHECK(version.prerelease == "rc.1");
  CHECK(ParseSemver("0.0.0", version));
  CHECK(ParseSemver("1.0.0-0A.is.legal", version));
  CHECK(ParseSemver("1.0.0+0.build.1-rc.10000aaa-kk-0.1", version));
  for (const std::string_view bad :
       {"", "1", "1.2", "1.2.3.4", "01.2.3", "1.02.3", "1.2.03", "v1.2.3", "1.2.3-", "1.2.3+",
        "1.2.3-01", "1.2.3-a..b", "1.2.3-a_b", "-1.2.3", "1.2.x", "99999999999999999999.0.0"}) {
    INFO(bad);
    CHECK_FALSE(ParseSemver(bad, version));
  }
}

TEST_CASE("versions order by semver precedence", "[cel]") {
  // semver.org's example chain, each lower than the next.
  const std::string_view chain[] = {"1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta",
                                    "1.0.0-beta",  "1.0.0-beta.2",  "1.0.0-beta.11",
                                    "1.0.0-rc.1",  "1.0.0",         "1.0.1",
                                    "1.1.0",       "2.0.0",         "10.0.0"};
  for (size_t i = 0; i + 1 < std::size(chain); ++i) {
    Semver lower;
    Semver higher;
    REQUIRE(ParseSemver(chain[i], lower));
    REQUIRE(ParseSemver(chain[i + 1], higher));
    INFO(chain[i] << " < " << chain[i + 1]);
    CHECK(CompareSemver(lower, higher) < 0);
    CHECK(CompareSemver(higher, lower) > 0);
    CHECK(CompareSemver(lower, lower) == 0);
  }
  Semver with_build;
  Semver without_build;
  REQUIRE(ParseSemver("1.0.0+linux", with_build));
  REQUIRE(ParseSemver("1.0.0", without_build));
  CHECK(CompareSemver(with_build, without_build) == 0);
}

}  // namespace
}  // namespace kubesched::cel
