#include "scheduler/core/bind_executor.h"

#include <utility>

namespace kubesched::scheduler {

void DeferredBindExecutor::Submit(std::function<void()> task) {
  absl::MutexLock lock(&mu_);
  tasks_.push_back(std::move(task));
}

size_t DeferredBindExecutor::RunPending() {
  size_t ran = 0;
  for (;;) {
    std::vector<std::function<void()>> batch;
    {
      absl::MutexLock lock(&mu_);
      batch.swap(tasks_);
    }
    if (batch.empty()) return ran;
    for (auto& task : batch) task();
    ran += batch.size();
  }
}

}  // namespace kubesched::scheduler
