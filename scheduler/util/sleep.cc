#include "scheduler/util/sleep.h"

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace kubesched::util {

bool SleepFor(const std::stop_token& stop, absl::Duration duration) {
  using SteadyClock = std::chrono::steady_clock;
  if (duration <= absl::ZeroDuration()) return !stop.stop_requested();
  // Nobody notifies this variable: condition_variable_any's stop_token waits register a stop
  // callback that does, so only the stop request (or the deadline) ends the wait.
  std::mutex mu;
  std::condition_variable_any stopped;
  std::unique_lock<std::mutex> lock(mu);
  const auto stop_requested = [&stop] { return stop.stop_requested(); };
  const SteadyClock::time_point now = SteadyClock::now();
  // Past the clock's range a deadline would overflow: such a sleep only ends with the stop.
  if (duration >= absl::FromChrono(SteadyClock::time_point::max() - now)) {
    stopped.wait(lock, stop, stop_requested);
  } else {
    const SteadyClock::time_point deadline =
        now +
        std::chrono::duration_cast<SteadyClock::duration>(absl::ToChronoNanoseconds(duration));
    stopped.wait_until(lock, stop, deadline, stop_requested);
  }
  return !stop.stop_requested();
}

}  // namespace kubesched::util
