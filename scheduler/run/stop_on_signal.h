#pragma once

#include <signal.h>

#include <stop_token>
#include <thread>

namespace kubesched::scheduler {

// SIGTERM and SIGINT become a stop request on `stop`. The signals are blocked in every thread (the
// mask is set before any thread starts and inherited), and one thread takes them with
// sigtimedwait, so no code runs in a signal handler.
//
// Construct it on the main thread before any other thread starts; its own thread ends when it is
// destroyed.
class StopOnSignal {
 public:
  explicit StopOnSignal(std::stop_source stop);
  StopOnSignal(const StopOnSignal&) = delete;
  StopOnSignal& operator=(const StopOnSignal&) = delete;

 private:
  void Wait(const std::stop_token& own);

  std::stop_source stop_;
  sigset_t signals_;
  std::jthread thread_;  // last: stopped and joined before the rest goes away
};

}  // namespace kubesched::scheduler
