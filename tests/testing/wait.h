#pragma once

// Waiting in tests for something another thread or process does: poll a condition until it
// holds or a deadline passes. The deadline only bounds how long a failing test takes; it never
// decides the outcome of a passing one (no "sleep, then check").

#include <functional>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace kubesched::testing {

// Polls `done` every `interval` until it returns true (then true) or `timeout` has passed
// (then false, after one last try).
inline bool WaitUntil(const std::function<bool()>& done, absl::Duration timeout = absl::Seconds(10),
                      absl::Duration interval = absl::Milliseconds(20)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!done()) {
    if (absl::Now() >= deadline) return done();
    absl::SleepFor(interval);
  }
  return true;
}

}  // namespace kubesched::testing
