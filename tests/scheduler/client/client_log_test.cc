// Levelled logging: LogV writes only up to the configured verbosity.

#include "scheduler/client/client_log.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace kubesched::client {
namespace {

TEST_CASE("LogV writes a line only when the verbosity reaches its level", "[client][log]") {
  std::vector<std::string> lines;
  SetLogSinkForTesting([&lines](std::string_view level, std::string_view message) {
    lines.push_back(std::string(level) + " " + std::string(message));
  });
  const int before = Verbosity();
  SetVerbosity(0);
  LogV(1, "preemption detail");
  LogInfo("always");
  SetVerbosity(2);
  LogV(1, "level one");
  LogV(2, "level two");
  LogV(3, "level three");
  SetVerbosity(before);
  SetLogSinkForTesting({});
  CHECK(lines == std::vector<std::string>{"I always", "I level one", "I level two"});
}

}  // namespace
}  // namespace kubesched::client
