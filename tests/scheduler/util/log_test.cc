// Levelled logging: util::LogV writes only up to the configured verbosity.

#include "scheduler/util/log.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace kubesched::client {
namespace {

TEST_CASE("util::LogV writes a line only when the verbosity reaches its level", "[client][log]") {
  std::vector<std::string> lines;
  util::SetLogSinkForTesting([&lines](std::string_view level, std::string_view message) {
    lines.push_back(std::string(level) + " " + std::string(message));
  });
  const int before = util::Verbosity();
  util::SetVerbosity(0);
  util::LogV(1, "preemption detail");
  util::LogInfo("always");
  util::SetVerbosity(2);
  util::LogV(1, "level one");
  util::LogV(2, "level two");
  util::LogV(3, "level three");
  util::SetVerbosity(before);
  util::SetLogSinkForTesting({});
  CHECK(lines == std::vector<std::string>{"I always", "I level one", "I level two"});
}

}  // namespace
}  // namespace kubesched::client
