#include "scheduler/client/rate_limiter.h"

#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "scheduler/util/clock.h"

namespace kubesched::client {
namespace {

TEST_CASE("RateLimiter allows a burst, then refills at qps", "[client]") {
  util::FakeClock clock;
  RateLimiter limiter(/*qps=*/10, /*burst=*/3, &clock);
  CHECK(limiter.TryAcquire());
  CHECK(limiter.TryAcquire());
  CHECK(limiter.TryAcquire());
  CHECK_FALSE(limiter.TryAcquire());
  clock.Advance(absl::Milliseconds(99));
  CHECK_FALSE(limiter.TryAcquire());
  clock.Advance(absl::Milliseconds(1));
  CHECK(limiter.TryAcquire());
  CHECK_FALSE(limiter.TryAcquire());
  // Idle time refills only up to the burst.
  clock.Advance(absl::Seconds(60));
  for (int i = 0; i < 3; ++i) CHECK(limiter.TryAcquire());
  CHECK_FALSE(limiter.TryAcquire());
}

TEST_CASE("RateLimiter::Acquire sleeps for exactly the missing time", "[client]") {
  util::FakeClock clock;
  std::vector<absl::Duration> sleeps;
  RateLimiter limiter(/*qps=*/4, /*burst=*/1, &clock, [&](absl::Duration d) {
    sleeps.push_back(d);
    clock.Advance(d);
  });
  limiter.Acquire();
  CHECK(sleeps.empty());
  limiter.Acquire();
  limiter.Acquire();
  REQUIRE(sleeps.size() == 2);
  CHECK(sleeps[0] == absl::Milliseconds(250));
  CHECK(sleeps[1] == absl::Milliseconds(250));
}

TEST_CASE("RateLimiter queues concurrent waiters in order of reservation", "[client]") {
  util::FakeClock clock;
  std::vector<absl::Duration> sleeps;
  // Nobody sleeps for real and the clock doesn't move: each caller reserves one token further out.
  RateLimiter limiter(/*qps=*/2, /*burst=*/1, &clock,
                      [&](absl::Duration d) { sleeps.push_back(d); });
  for (int i = 0; i < 4; ++i) limiter.Acquire();
  CHECK(sleeps == std::vector<absl::Duration>{absl::Milliseconds(500), absl::Seconds(1),
                                              absl::Milliseconds(1500)});
}

TEST_CASE("RateLimiter::AcquireWithin refuses waits beyond the limit without taking a token",
          "[client]") {
  util::FakeClock clock;
  RateLimiter limiter(/*qps=*/1, /*burst=*/1, &clock, [&](absl::Duration d) { clock.Advance(d); });
  CHECK(limiter.AcquireWithin(absl::ZeroDuration()));
  CHECK_FALSE(limiter.AcquireWithin(absl::Milliseconds(500)));
  CHECK(limiter.AcquireWithin(absl::Seconds(1)));  // the refused call reserved nothing
}

TEST_CASE("RateLimiter with qps <= 0 is unlimited", "[client]") {
  RateLimiter limiter(0, 1);
  CHECK(limiter.unlimited());
  for (int i = 0; i < 1000; ++i) REQUIRE(limiter.TryAcquire());
}

TEST_CASE("RateLimiter is thread-safe with the real clock", "[client]") {
  RateLimiter limiter(/*qps=*/1000, /*burst=*/20);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) limiter.Acquire();
    });
  }
  for (std::thread& thread : threads) thread.join();
  SUCCEED();  // 40 tokens at burst 20 + 1000 qps: about 20 ms; TSan/ASan check the locking
}

}  // namespace
}  // namespace kubesched::client
