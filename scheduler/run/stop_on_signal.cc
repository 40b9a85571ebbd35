#include "scheduler/run/stop_on_signal.h"

#include <pthread.h>

#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/util/log.h"

namespace kubesched::scheduler {

StopOnSignal::StopOnSignal(std::stop_source stop) : stop_(std::move(stop)) {
  sigemptyset(&signals_);
  sigaddset(&signals_, SIGTERM);
  sigaddset(&signals_, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
  thread_ = std::jthread([this](std::stop_token own) { Wait(own); });
}

void StopOnSignal::Wait(const std::stop_token& own) {
  // Polled, so that the thread notices its own stop request within this long.
  const timespec poll{0, 200'000'000};
  while (!own.stop_requested()) {
    const int signal = sigtimedwait(&signals_, nullptr, &poll);
    if (signal == SIGTERM || signal == SIGINT) {
      util::LogInfo(
          absl::StrCat("received ", signal == SIGTERM ? "SIGTERM" : "SIGINT", ", shutting down"));
      stop_.request_stop();
    }
  }
}

}  // namespace kubesched::scheduler
