#pragma once

// A token bucket in front of the API server, like client-go's default client-side throttle:
// `qps` tokens per second refill a bucket holding at most `burst` tokens, and every request takes
// one. Keeps a scheduler from flooding the API server during large bursts of binds and lists.

#include <functional>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "scheduler/util/clock.h"

namespace kubesched::client {

// Thread-safe: any number of threads may call any method concurrently (one mutex, `mu_`, guards
// the bucket; waiting happens outside it). Callers are served in the order they reserved.
class RateLimiter {
 public:
  using SleepFunction = std::function<void(absl::Duration)>;

  // qps <= 0 means unlimited (every call returns at once). burst < 1 is treated as 1. `clock`
  // (null = the real clock) must outlive the limiter; `sleep` (null = absl::SleepFor) is how
  // Acquire waits, injectable so tests with a FakeClock can advance it instead of sleeping.
  RateLimiter(double qps, int burst, const util::Clock* clock = nullptr,
              SleepFunction sleep = nullptr);

  RateLimiter(const RateLimiter&) = delete;
  RateLimiter& operator=(const RateLimiter&) = delete;

  // Takes a token, sleeping (never spinning) until one is available.
  void Acquire();

  // Takes a token if one becomes available within `max_wait`, sleeping until then, and returns
  // true; otherwise takes nothing, returns false at once.
  bool AcquireWithin(absl::Duration max_wait);

  // Takes a token only if one is available now.
  bool TryAcquire();

  bool unlimited() const { return qps_ <= 0; }

 private:
  // Reserves a token if it is available within `max_wait`, setting `*wait` to how long the caller
  // must wait for it; returns false (and reserves nothing) otherwise.
  bool Reserve(absl::Duration max_wait, absl::Duration* wait);
  void RefillLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const double qps_;
  const double burst_;
  const util::Clock* const clock_;
  const SleepFunction sleep_;

  absl::Mutex mu_;
  // May go negative: tokens already promised to callers that are still waiting.
  double tokens_ ABSL_GUARDED_BY(mu_);
  absl::Time last_refill_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubesched::client
