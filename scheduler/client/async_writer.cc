#include "scheduler/client/async_writer.h"

#include <algorithm>
#include <utility>

#include "absl/time/clock.h"

namespace kubesched::client {

AsyncWriter::AsyncWriter(size_t capacity) : capacity_(std::max<size_t>(capacity, 1)) {}

AsyncWriter::~AsyncWriter() { Stop(absl::ZeroDuration()); }

void AsyncWriter::Start() {
  std::lock_guard<std::mutex> lock(mu_);
  if (worker_.joinable() || stopping_) return;
  worker_ = std::thread([this] { WorkerLoop(); });
}

bool AsyncWriter::Enqueue(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || queue_.size() >= capacity_) {
      ++dropped_;
      return false;
    }
    queue_.push_back(std::move(task));
  }
  work_or_stop_.notify_one();
  return true;
}

void AsyncWriter::Stop(absl::Duration timeout) {
  std::thread worker;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopping_) {
      stopping_ = true;
      stop_deadline_ = absl::Now() + timeout;
    }
    worker = std::move(worker_);
    if (!worker.joinable()) {
      // Never started: nothing will run what is queued.
      dropped_ += queue_.size();
      queue_.clear();
    }
  }
  work_or_stop_.notify_one();
  if (worker.joinable()) worker.join();
}

uint64_t AsyncWriter::dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

uint64_t AsyncWriter::completed() const {
  std::lock_guard<std::mutex> lock(mu_);
  return completed_;
}

size_t AsyncWriter::pending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return queue_.size();
}

void AsyncWriter::WorkerLoop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    work_or_stop_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (stopping_ && (queue_.empty() || absl::Now() >= stop_deadline_)) {
      dropped_ += queue_.size();
      queue_.clear();
      return;
    }
    std::function<void()> task = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    task();
    // Destroy captures outside the lock too: they may own large request bodies.
    task = nullptr;
    lock.lock();
    ++completed_;
  }
}

}  // namespace kubesched::client
