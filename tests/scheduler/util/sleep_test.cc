#include "scheduler/util/sleep.h"

#include <catch2/catch.hpp>
#include <chrono>
#include <stop_token>
#include <thread>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace kubesched::util {
namespace {

// Generous bounds: the machine running the tests may be busy.
constexpr absl::Duration kPromptly = absl::Seconds(2);

TEST_CASE("SleepFor sleeps the whole duration when nobody stops it", "[util]") {
  std::stop_source stop;
  const absl::Time start = absl::Now();
  CHECK(SleepFor(stop.get_token(), absl::Milliseconds(50)));
  CHECK(absl::Now() - start >= absl::Milliseconds(50));
}

TEST_CASE("SleepFor returns false at once when stop was already requested", "[util]") {
  std::stop_source stop;
  stop.request_stop();
  const absl::Time start = absl::Now();
  CHECK_FALSE(SleepFor(stop.get_token(), absl::Hours(1)));
  CHECK_FALSE(SleepFor(stop.get_token(), absl::InfiniteDuration()));
  CHECK_FALSE(SleepFor(stop.get_token(), absl::ZeroDuration()));
  CHECK(absl::Now() - start < kPromptly);
}

TEST_CASE("SleepFor wakes when stop is requested from another thread", "[util]") {
  for (const absl::Duration duration : {absl::Hours(1), absl::InfiniteDuration()}) {
    INFO(absl::FormatDuration(duration));
    std::stop_source stop;
    std::jthread stopper([&stop] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      stop.request_stop();
    });
    const absl::Time start = absl::Now();
    CHECK_FALSE(SleepFor(stop.get_token(), duration));
    CHECK(absl::Now() - start < kPromptly);
  }
}

TEST_CASE("SleepFor returns at once for a zero or negative duration", "[util]") {
  std::stop_source stop;
  const absl::Time start = absl::Now();
  CHECK(SleepFor(stop.get_token(), absl::ZeroDuration()));
  CHECK(SleepFor(stop.get_token(), absl::Seconds(-5)));
  CHECK(SleepFor(stop.get_token(), -absl::InfiniteDuration()));
  CHECK(absl::Now() - start < kPromptly);
}

TEST_CASE("SleepFor with a token that can never stop still ends on time", "[util]") {
  const std::stop_token never;  // no stop state
  CHECK(SleepFor(never, absl::Milliseconds(10)));
}

}  // namespace
}  // namespace kubesched::util
