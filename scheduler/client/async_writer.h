#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "absl/time/time.h"

namespace kubesched::client {

// Runs fire-and-forget writes (events, status patches) on one background thread, so that the
// thread that produces them never waits on the network. A bounded FIFO: when it is full, new
// tasks are dropped and counted rather than queued without limit, since these writes are
// best-effort and the API server may be the reason the queue is backing up.
//
// Tasks run one at a time, in submission order. Tasks enqueued before Start() wait for it.
//
// Thread-safe: Enqueue and the counters from any thread; Start and Stop from the owner.
class AsyncWriter {
 public:
  explicit AsyncWriter(size_t capacity = 1024);
  // Stop(ZeroDuration()) if still running: the running task finishes, queued ones are dropped.
  ~AsyncWriter();
  AsyncWriter(const AsyncWriter&) = delete;
  AsyncWriter& operator=(const AsyncWriter&) = delete;

  // Starts the worker. No-op if already started; a stopped writer cannot be restarted.
  void Start();

  // Queues `task`. Returns false, and counts a drop, when the queue is full or the writer is
  // stopping. Never blocks on a running task.
  bool Enqueue(std::function<void()> task);

  // Stops accepting tasks, keeps running queued ones until `timeout` has passed, then drops the
  // rest (counted) and joins the worker. A task already running is not interrupted: the
  // transport's request timeout bounds it. Idempotent.
  void Stop(absl::Duration timeout);

  // Tasks dropped: queue full, enqueued after Stop, or left over at Stop's deadline.
  uint64_t dropped() const;
  // Tasks that ran to completion.
  uint64_t completed() const;
  // Tasks queued and not yet started.
  size_t pending() const;

 private:
  void WorkerLoop();

  const size_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable work_or_stop_;
  std::deque<std::function<void()>> queue_;  // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  absl::Time stop_deadline_;                 // guarded by mu_; set with stopping_
  uint64_t dropped_ = 0;                     // guarded by mu_
  uint64_t completed_ = 0;                   // guarded by mu_
  std::thread worker_;                       // touched only by Start/Stop
};

}  // namespace kubesched::client
