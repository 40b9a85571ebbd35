#include "scheduler/util/parallel.h"

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <vector>

namespace kubesched::util {
namespace {

TEST_CASE("every index is visited exactly once, across many jobs", "[util]") {
  WorkerPool pool(4);
  for (size_t n : {0u, 1u, 7u, 31u, 32u, 33u, 1000u, 5000u}) {
    std::vector<std::atomic<int>> visits(n);
    pool.ParallelFor(n, 32, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) visits[i].fetch_add(1);
    });
    for (size_t i = 0; i < n; ++i) REQUIRE(visits[i].load() == 1);
  }
}

TEST_CASE("a pool of one runs the job inline", "[util]") {
  WorkerPool pool(1);
  CHECK(pool.threads() == 1);
  int sum = 0;  // no synchronisation needed: inline
  pool.ParallelFor(100, 10, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) sum += static_cast<int>(i);
  });
  CHECK(sum == 4950);
}

// Jobs keep per-chunk results at begin / chunk: every call must be exactly one chunk, inline too.
TEST_CASE("each call is one chunk, with threads or inline", "[util]") {
  for (const int threads : {1, 2, 4}) {
    WorkerPool pool(threads);
    for (size_t n : {1u, 10u, 31u, 32u, 33u, 100u, 1000u}) {
      INFO(threads << " threads, n " << n);
      std::vector<std::atomic<int>> calls((n + 31) / 32);
      std::atomic<bool> aligned{true};
      pool.ParallelFor(n, 32, [&](size_t begin, size_t end) {
        if (begin % 32 != 0 || end != std::min(n, begin + 32)) aligned = false;
        calls[begin / 32].fetch_add(1);
      });
      CHECK(aligned.load());
      for (const auto& count : calls) CHECK(count.load() == 1);
    }
  }
}

}  // namespace
}  // namespace kubesched::util
