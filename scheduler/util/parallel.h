#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace kubesched::util {

// A fixed pool of worker threads that runs one index-range job at a time, with the calling
// thread taking part. Used for Filter and Score over nodes.
//
// Workers spin briefly before sleeping, because the scheduling loop hands out a job every few
// tens of microseconds and a sleeping thread takes longer than that to wake.
//
// Threads: ParallelFor must be called from one thread at a time (the scheduling thread). The job
// function is called concurrently for disjoint chunks and must be thread-safe.
class WorkerPool {
 public:
  // `threads` counts the caller: 1 means "run inline", no extra threads.
  explicit WorkerPool(int threads);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls fn(begin, end) once for each chunk [k * chunk, min(n, (k + 1) * chunk)) of [0, n), and
  // returns when all chunks are done. Each call is exactly one chunk, also when run inline, so a
  // job may keep per-chunk results at index begin / chunk.
  void ParallelFor(size_t n, size_t chunk, const std::function<void(size_t, size_t)>& fn);

 private:
  void WorkerLoop();
  void RunChunks();

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;  // guarded by mu_

  // The current job. The caller writes the fields, then opens the job (release) and bumps the
  // generation to wake workers. A worker counts itself in `joined_` before it checks `open_`, and
  // the caller closes the job and waits only for workers that joined: a worker that was not
  // running when the job came never delays the caller.
  const std::function<void(size_t, size_t)>* job_ = nullptr;
  size_t job_size_ = 0;
  size_t job_chunk_ = 1;
  // Every thread writes it for each chunk it takes: alone on its cache line (the flags start the
  // next one), so that taking a chunk does not take from the other threads the line of the job's
  // fields and flags.
  alignas(64) std::atomic<size_t> next_index_{0};
  alignas(64) std::atomic<bool> open_{false};
  std::atomic<int> joined_{0};
  std::atomic<uint64_t> job_generation_{0};
};

}  // namespace kubesched::util
