#include "scheduler/util/parallel.h"

#include <algorithm>
#include <chrono>

namespace kubesched::util {
namespace {
constexpr auto kSpinTime = std::chrono::microseconds(200);

// A spin-wait hint: lets a sibling hyperthread (often the scheduling thread itself) run at full
// speed while this one waits, where yield() would enter the kernel.
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}
}  // namespace

WorkerPool::WorkerPool(int threads) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& worker : workers_) worker.join();
}

void WorkerPool::RunChunks() {
  // The job's fields stay as they are while it is open; read once, rather than after every call
  // (which the compiler must assume may change them).
  const std::function<void(size_t, size_t)>& job = *job_;
  const size_t size = job_size_;
  const size_t chunk = job_chunk_;
  for (;;) {
    const size_t begin = next_index_.fetch_add(chunk, std::memory_order_relaxed);
    if (begin >= size) return;
    job(begin, std::min(size, begin + chunk));
  }
}

void WorkerPool::ParallelFor(size_t n, size_t chunk,
                             const std::function<void(size_t, size_t)>& fn) {
  if (n == 0) return;
  if (chunk == 0) chunk = 1;
  if (workers_.empty() || n <= chunk) {
    for (size_t begin = 0; begin < n; begin += chunk) fn(begin, std::min(n, begin + chunk));
    return;
  }
  job_ = &fn;
  job_size_ = n;
  job_chunk_ = chunk;
  next_index_.store(0, std::memory_order_relaxed);
  open_.store(true, std::memory_order_seq_cst);
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_generation_.fetch_add(1, std::memory_order_release);
  }
  wake_.notify_all();
  RunChunks();
  // Close the job, then wait for the workers inside it, so `fn` may be destroyed after return.
  open_.store(false, std::memory_order_seq_cst);
  while (joined_.load(std::memory_order_seq_cst) != 0) CpuRelax();
  job_ = nullptr;
}

void WorkerPool::WorkerLoop() {
  uint64_t seen = 0;
  for (;;) {
    // Spin for a short while: the next job usually comes within microseconds.
    const auto spin_until = std::chrono::steady_clock::now() + kSpinTime;
    while (job_generation_.load(std::memory_order_acquire) == seen &&
           std::chrono::steady_clock::now() < spin_until) {
      for (int i = 0; i < 16; ++i) CpuRelax();
    }
    if (job_generation_.load(std::memory_order_acquire) == seen) {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] {
        return stopping_ || job_generation_.load(std::memory_order_acquire) != seen;
      });
      if (stopping_) return;
    }
    seen = job_generation_.load(std::memory_order_acquire);
    joined_.fetch_add(1, std::memory_order_seq_cst);
    if (open_.load(std::memory_order_seq_cst)) RunChunks();
    joined_.fetch_sub(1, std::memory_order_seq_cst);
  }
}

}  // namespace kubesched::util
