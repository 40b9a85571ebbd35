#include "scheduler/util/file.h"

#include <catch2/catch.hpp>
#include <string>

#include "tests/testing/temp_file.h"

namespace kubesched::util {
namespace {

TEST_CASE("a file within the limit is read whole", "[file]") {
  const testing::TempFile file("abc\ndef\n", "f.txt");
  const auto contents = ReadFileAtMost(file.path(), 8);  // exactly the file's size
  REQUIRE(contents.ok());
  CHECK(*contents == "abc\ndef\n");
}

TEST_CASE("a regular file over the limit is refused", "[file]") {
  const testing::TempFile file(std::string(100, 'x'), "f.txt");
  const auto contents = ReadFileAtMost(file.path(), 99);
  REQUIRE_FALSE(contents.ok());
  CHECK(contents.status().message() == "larger than the limit of 99 bytes");
  CHECK(ReadFileAtMost(file.path(), 100).ok());
}

TEST_CASE("an endless device ends at the limit with an error", "[file]") {
  const auto contents = ReadFileAtMost("/dev/zero", 1 << 20);
  REQUIRE_FALSE(contents.ok());
  CHECK(contents.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(contents.status().message() == "larger than the limit of 1048576 bytes");
}

TEST_CASE("a missing file is NotFound and a directory is refused", "[file]") {
  const auto missing = ReadFileAtMost("/nonexistent/file", 10);
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == absl::StatusCode::kNotFound);
  CHECK(missing.status().message() == "No such file or directory");
  const auto directory = ReadFileAtMost("/", 10);
  REQUIRE_FALSE(directory.ok());
  CHECK(directory.status().message() == "is a directory");
}

}  // namespace
}  // namespace kubesched::util
