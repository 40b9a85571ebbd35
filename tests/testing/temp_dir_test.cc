// The temporary directories of tests/testing/temp_dir.h, which the test API server's helper
// keeps its certificates and state in.

#include "tests/testing/temp_dir.h"

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

namespace kubesched::testing {
namespace {

TEST_CASE("each temporary directory is fresh and removed with what it holds") {
  absl::StatusOr<std::string> first = MakeTempDirectory("kubesched-temp-dir-test");
  absl::StatusOr<std::string> second = MakeTempDirectory("kubesched-temp-dir-test");
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(*first != *second);
  CHECK(std::filesystem::is_directory(*first));
  CHECK(std::filesystem::path(*first).filename().string().starts_with("kubesched-temp-dir-test-"));

  std::filesystem::create_directories(*first + "/nested");
  std::ofstream(*first + "/nested/file") << "kept until the tree goes";
  REQUIRE(RemoveTree(*first).ok());
  CHECK_FALSE(std::filesystem::exists(*first));
  CHECK(std::filesystem::is_directory(*second));
  REQUIRE(RemoveTree(*second).ok());
  // Gone already: nothing to do, and no error.
  CHECK(RemoveTree(*second).ok());
}

TEST_CASE("removing a file reports what it could not remove") {
  absl::StatusOr<std::string> dir = MakeTempDirectory("kubesched-temp-dir-test");
  REQUIRE(dir.ok());
  const std::string file = *dir + "/state.jsonl";
  std::ofstream(file) << "{}\n";
  REQUIRE(RemoveFile(file).ok());
  CHECK_FALSE(std::filesystem::exists(file));
  CHECK(RemoveFile(file).ok());  // a file that is not there is not an error

  std::ofstream(*dir + "/inner-file") << "x";
  // The directory is not empty: RemoveFile does not remove trees, and says so.
  const absl::Status not_empty = RemoveFile(*dir);
  CHECK_FALSE(not_empty.ok());
  CHECK(std::string(not_empty.message()).find(*dir) != std::string::npos);
  CHECK(std::filesystem::is_directory(*dir));
  REQUIRE(RemoveTree(*dir).ok());
}

}  // namespace
}  // namespace kubesched::testing
