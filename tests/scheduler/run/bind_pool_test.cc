#include "scheduler/run/bind_pool.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <condition_variable>
#include <mutex>

namespace kubesched::scheduler {
namespace {

TEST_CASE("the bind pool runs every task and WaitIdle sees them finish", "[bind_pool]") {
  BindWorkerPool pool(4);
  std::atomic<int> done{0};
  for (int i = 0; i < 100; ++i) pool.Submit([&done] { ++done; });
  REQUIRE(pool.WaitIdle(absl::Seconds(10)));
  CHECK(done == 100);
  CHECK(pool.InFlight() == 0);
}

TEST_CASE("no more tasks run at once than there are workers", "[bind_pool]") {
  BindWorkerPool pool(3);
  std::atomic<int> running{0};
  std::atomic<int> most{0};
  for (int i = 0; i < 30; ++i) {
    pool.Submit([&] {
      const int now = ++running;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      --running;
    });
  }
  REQUIRE(pool.WaitIdle(absl::Seconds(10)));
  CHECK(most <= 3);
  CHECK(most >= 1);
}

TEST_CASE("WaitIdle gives up after its timeout while a task is stuck", "[bind_pool]") {
  std::mutex mu;
  std::condition_variable cv;
  bool release = false;
  BindWorkerPool pool(1);
  pool.Submit([&] {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return release; });
  });
  CHECK_FALSE(pool.WaitIdle(absl::Milliseconds(50)));
  CHECK(pool.InFlight() == 1);
  {
    std::lock_guard<std::mutex> lock(mu);
    release = true;
  }
  cv.notify_all();
  CHECK(pool.WaitIdle(absl::Seconds(10)));
}

TEST_CASE("destroying the pool still runs what was queued", "[bind_pool]") {
  std::atomic<int> done{0};
  {
    BindWorkerPool pool(1);
    for (int i = 0; i < 20; ++i) pool.Submit([&done] { ++done; });
  }
  CHECK(done == 20);
}

}  // namespace
}  // namespace kubesched::scheduler
