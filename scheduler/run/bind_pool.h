#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/time/time.h"
#include "scheduler/core/scheduler.h"

namespace kubesched::scheduler {

// Run mode's BindExecutor: a fixed number of worker threads take binding cycles from a FIFO, so
// the scheduling thread never waits on the network and the API server sees at most `workers`
// binds at once (the client's QPS limiter paces them further).
//
// Threads: Submit may be called from any thread; mu_ guards the queue and the counters.
class BindWorkerPool : public BindExecutor {
 public:
  explicit BindWorkerPool(int workers);
  ~BindWorkerPool() override;  // runs what is queued, then joins
  BindWorkerPool(const BindWorkerPool&) = delete;
  BindWorkerPool& operator=(const BindWorkerPool&) = delete;

  void Submit(std::function<void()> task) override;

  // Waits until every submitted task has finished, at most `timeout`. Returns whether they all
  // did. Tasks submitted meanwhile count too.
  bool WaitIdle(absl::Duration timeout);

  // Waits until fewer than `limit` tasks are queued or running, at most `timeout`. Returns
  // whether there is room.
  bool WaitForRoom(size_t limit, absl::Duration timeout);

  // Queued plus running tasks.
  size_t InFlight() const;

 private:
  void WorkerLoop();

  mutable std::mutex mu_;
  std::condition_variable work_available_;
  std::condition_variable idle_;
  std::condition_variable task_done_;
  std::deque<std::function<void()>> tasks_;  // guarded by mu_
  size_t running_ = 0;                       // guarded by mu_
  bool stopping_ = false;                    // guarded by mu_
  std::vector<std::thread> workers_;
};

}  // namespace kubesched::scheduler
