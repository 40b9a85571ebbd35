#pragma once

// When to try an API request again: jittered exponential backoff between attempts, and the
// server's own Retry-After answer (429 and 503 carry one) taking precedence, within a cap.

#include <optional>
#include <string_view>

#include "absl/time/time.h"

namespace kubesched::client {

struct BackoffPolicy {
  absl::Duration initial = absl::Milliseconds(200);
  absl::Duration max = absl::Seconds(5);
  double factor = 2.0;
  // Fraction of the delay added at random (0.2 = up to +20%), so that many clients retrying the
  // same failure spread out instead of arriving together.
  double jitter = 0.2;
  // Upper bound for a server-supplied Retry-After, so a misbehaving server can't park a caller.
  absl::Duration max_retry_after = absl::Seconds(10);
};

// Delay before retry number `attempt` (0 = the first retry): initial * factor^attempt, capped at
// `max`, then jittered by `unit_random` in [0, 1) times `jitter`. Pure, for tests.
absl::Duration BackoffDelay(const BackoffPolicy& policy, int attempt, double unit_random);

// As above with a thread-safe random source.
absl::Duration BackoffDelay(const BackoffPolicy& policy, int attempt);

// Parses a Retry-After header value: delay-seconds ("120") or an HTTP-date (IMF-fixdate
// "Sun, 06 Nov 1994 08:49:37 GMT", RFC 850 or asctime), relative to `now`. Dates in the past
// give zero; unparseable values give nullopt. Not capped.
std::optional<absl::Duration> ParseRetryAfter(std::string_view value, absl::Time now);

// The delay before retry `attempt`: the server's Retry-After when present (capped at
// policy.max_retry_after), else BackoffDelay.
absl::Duration RetryDelay(const BackoffPolicy& policy, int attempt,
                          std::optional<absl::Duration> retry_after);

}  // namespace kubesched::client
