#include "scheduler/client/retry.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/random/random.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "scheduler/util/strings.h"

namespace kubesched::client {

absl::Duration BackoffDelay(const BackoffPolicy& policy, int attempt, double unit_random) {
  const double initial_seconds = absl::ToDoubleSeconds(policy.initial);
  const double max_seconds = absl::ToDoubleSeconds(policy.max);
  double seconds = initial_seconds * std::pow(std::max(policy.factor, 1.0), std::max(attempt, 0));
  if (!std::isfinite(seconds) || seconds > max_seconds) seconds = max_seconds;
  seconds *= 1.0 + std::clamp(unit_random, 0.0, 1.0) * std::max(policy.jitter, 0.0);
  return absl::Seconds(seconds);
}

absl::Duration BackoffDelay(const BackoffPolicy& policy, int attempt) {
  thread_local absl::BitGen random;
  return BackoffDelay(policy, attempt, absl::Uniform(random, 0.0, 1.0));
}

std::optional<absl::Duration> ParseRetryAfter(std::string_view value, absl::Time now) {
  const absl::string_view trimmed = absl::StripAsciiWhitespace(util::Absl(value));
  if (trimmed.empty()) return std::nullopt;
  if (absl::ascii_isdigit(static_cast<unsigned char>(trimmed.front()))) {
    int64_t seconds = 0;
    if (!absl::SimpleAtoi(trimmed, &seconds) || seconds < 0) return std::nullopt;
    return absl::Seconds(seconds);
  }
  // The three date forms RFC 9110 requires recipients to accept.
  static constexpr const char* kDateFormats[] = {
      "%a, %d %b %Y %H:%M:%S GMT",  // IMF-fixdate
      "%A, %d-%b-%y %H:%M:%S GMT",  // RFC 850
      "%a %b %e %H:%M:%S %Y",       // asctime
  };
  for (const char* format : kDateFormats) {
    absl::Time when;
    std::string error;
    if (absl::ParseTime(format, trimmed, absl::UTCTimeZone(), &when, &error)) {
      return std::max(when - now, absl::ZeroDuration());
    }
  }
  return std::nullopt;
}

absl::Duration RetryDelay(const BackoffPolicy& policy, int attempt,
                          std::optional<absl::Duration> retry_after) {
  if (retry_after.has_value()) {
    return std::clamp(*retry_after, absl::ZeroDuration(), policy.max_retry_after);
  }
  return BackoffDelay(policy, attempt);
}

}  // namespace kubesched::client
