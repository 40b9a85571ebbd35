#include "scheduler/run/bind_pool.h"

#include <chrono>
#include <utility>

namespace kubesched::scheduler {

BindWorkerPool::BindWorkerPool(int workers) {
  const int count = workers > 0 ? workers : 1;
  workers_.reserve(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

BindWorkerPool::~BindWorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  work_available_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void BindWorkerPool::Submit(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    tasks_.push_back(std::move(task));
  }
  work_available_.notify_one();
}

bool BindWorkerPool::WaitIdle(absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return idle_.wait_for(lock, absl::ToChronoNanoseconds(timeout),
                        [this] { return tasks_.empty() && running_ == 0; });
}

bool BindWorkerPool::WaitForRoom(size_t limit, absl::Duration timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  return task_done_.wait_for(lock, absl::ToChronoNanoseconds(timeout),
                             [&] { return tasks_.size() + running_ < limit; });
}

size_t BindWorkerPool::InFlight() const {
  std::lock_guard<std::mutex> lock(mu_);
  return tasks_.size() + running_;
}

void BindWorkerPool::WorkerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    // Queued tasks run even while stopping: a bind that was started must finish or be undone by
    // its own failure path, never silently dropped.
    work_available_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
    if (tasks_.empty()) return;
    std::function<void()> task = std::move(tasks_.front());
    tasks_.pop_front();
    ++running_;
    lock.unlock();
    task();
    lock.lock();
    --running_;
    task_done_.notify_all();
    if (tasks_.empty() && running_ == 0) idle_.notify_all();
  }
}

}  // namespace kubesched::scheduler
