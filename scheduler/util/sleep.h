#pragma once

// A sleep that a stop request cuts short, for the background threads of `run` (backoffs,
// periodic work) so that shutdown never waits out an interval.

#include <stop_token>

#include "absl/time/time.h"

namespace kubesched::util {

// Sleeps for `duration` unless `stop` is requested first. Returns true when the whole duration
// elapsed, false when stop was requested (also when it already was on entry, or arrives as the
// duration ends): the caller should then stop too. The stop request itself wakes the sleeper, so
// nothing polls. absl::InfiniteDuration() (or any duration too long for the steady clock) sleeps
// until stop is requested; a zero or negative duration returns at once.
//
// Thread-safe; any number of threads may sleep on one stop token.
bool SleepFor(const std::stop_token& stop, absl::Duration duration);

}  // namespace kubesched::util
