#include "scheduler/client/rate_limiter.h"

#include <algorithm>
#include <utility>

#include "absl/time/clock.h"

namespace kubesched::client {
namespace {

const util::Clock* RealClockInstance() {
  static const util::RealClock* const clock = new util::RealClock();
  return clock;
}

}  // namespace

RateLimiter::RateLimiter(double qps, int burst, const util::Clock* clock, SleepFunction sleep)
    : qps_(qps),
      burst_(std::max(burst, 1)),
      clock_(clock != nullptr ? clock : RealClockInstance()),
      sleep_(sleep ? std::move(sleep) : SleepFunction([](absl::Duration d) { absl::SleepFor(d); })),
      tokens_(burst_),
      last_refill_(clock_->Now()) {}

void RateLimiter::RefillLocked(absl::Time now) {
  if (now <= last_refill_) return;
  tokens_ = std::min(burst_, tokens_ + absl::ToDoubleSeconds(now - last_refill_) * qps_);
  last_refill_ = now;
}

bool RateLimiter::Reserve(absl::Duration max_wait, absl::Duration* wait) {
  *wait = absl::ZeroDuration();
  if (unlimited()) return true;
  absl::MutexLock lock(&mu_);
  RefillLocked(clock_->Now());
  // Waiters queue up by driving the balance negative; the deficit says when our token exists.
  const double deficit = 1.0 - tokens_;
  if (deficit > 0) *wait = absl::Seconds(deficit / qps_);
  if (*wait > max_wait) return false;
  tokens_ -= 1.0;
  return true;
}

void RateLimiter::Acquire() { AcquireWithin(absl::InfiniteDuration()); }

bool RateLimiter::AcquireWithin(absl::Duration max_wait) {
  absl::Duration wait;
  if (!Reserve(max_wait, &wait)) return false;
  if (wait > absl::ZeroDuration()) sleep_(wait);
  return true;
}

bool RateLimiter::TryAcquire() {
  absl::Duration wait;
  return Reserve(absl::ZeroDuration(), &wait);
}

}  // namespace kubesched::client
