#pragma once

// Where binding cycles (and preemption's deletions) run: never on the scheduling thread in run
// mode, so that the scheduling loop does not wait on the network.

#include <cstddef>
#include <functional>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace kubesched::scheduler {

// Runs binding cycles off the scheduling thread. simulate queues them and runs them between
// cycles; run mode uses a bounded pool of workers.
class BindExecutor {
 public:
  virtual ~BindExecutor() = default;
  virtual void Submit(std::function<void()> task) = 0;
};

// A BindExecutor that runs tasks only when asked, on the caller's thread (simulate).
class DeferredBindExecutor : public BindExecutor {
 public:
  void Submit(std::function<void()> task) override;
  // Runs every queued task (and tasks they queue); returns how many ran.
  size_t RunPending();

 private:
  mutable absl::Mutex mu_;
  std::vector<std::function<void()>> tasks_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubesched::scheduler
