#include "scheduler/client/retry.h"

#include <catch2/catch.hpp>

#include "absl/time/time.h"

namespace kubesched::client {
namespace {

TEST_CASE("BackoffDelay grows exponentially, caps, and jitters upward", "[client]") {
  BackoffPolicy policy;
  policy.initial = absl::Milliseconds(100);
  policy.max = absl::Seconds(1);
  policy.factor = 2;
  policy.jitter = 0.5;
  CHECK(BackoffDelay(policy, 0, 0.0) == absl::Milliseconds(100));
  CHECK(BackoffDelay(policy, 1, 0.0) == absl::Milliseconds(200));
  CHECK(BackoffDelay(policy, 3, 0.0) == absl::Milliseconds(800));
  CHECK(BackoffDelay(policy, 4, 0.0) == absl::Seconds(1));
  CHECK(BackoffDelay(policy, 1000, 0.0) == absl::Seconds(1));
  CHECK(BackoffDelay(policy, 0, 1.0) == absl::Milliseconds(150));
  for (int i = 0; i < 100; ++i) {
    const absl::Duration d = BackoffDelay(policy, 2);
    CHECK(d >= absl::Milliseconds(400));
    CHECK(d <= absl::Milliseconds(600));
  }
}

TEST_CASE("ParseRetryAfter reads seconds and HTTP dates", "[client]") {
  const absl::Time now = absl::FromUnixSeconds(784111777);  // Sun, 06 Nov 1994 08:49:37 GMT
  CHECK(ParseRetryAfter("120", now) == absl::Seconds(120));
  CHECK(ParseRetryAfter(" 0 ", now) == absl::ZeroDuration());
  CHECK(ParseRetryAfter("Sun, 06 Nov 1994 08:50:07 GMT", now) == absl::Seconds(30));
  CHECK(ParseRetryAfter("Sunday, 06-Nov-94 08:49:47 GMT", now) == absl::Seconds(10));
  CHECK(ParseRetryAfter("Sun Nov  6 08:49:57 1994", now) == absl::Seconds(20));
  CHECK(ParseRetryAfter("Sun, 06 Nov 1994 08:00:00 GMT", now) == absl::ZeroDuration());
  CHECK_FALSE(ParseRetryAfter("", now).has_value());
  CHECK_FALSE(ParseRetryAfter("soon", now).has_value());
  CHECK_FALSE(ParseRetryAfter("-5", now).has_value());
  CHECK_FALSE(ParseRetryAfter("12abc", now).has_value());
}

TEST_CASE("RetryDelay prefers a capped Retry-After over backoff", "[client]") {
  BackoffPolicy policy;
  policy.initial = absl::Milliseconds(100);
  policy.jitter = 0;
  policy.max_retry_after = absl::Seconds(10);
  CHECK(RetryDelay(policy, 0, absl::Seconds(3)) == absl::Seconds(3));
  CHECK(RetryDelay(policy, 0, absl::Hours(1)) == absl::Seconds(10));
  CHECK(RetryDelay(policy, 1, std::nullopt) == absl::Milliseconds(200));
}

}  // namespace
}  // namespace kubesched::client
