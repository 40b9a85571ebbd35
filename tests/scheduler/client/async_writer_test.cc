#include "scheduler/client/async_writer.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"

namespace kubesched::client {
namespace {

TEST_CASE("AsyncWriter runs tasks in order on one worker", "[writer]") {
  AsyncWriter writer(16);
  absl::Mutex mu;
  std::vector<int> order;
  writer.Start();
  for (int i = 0; i < 10; ++i) {
    CHECK(writer.Enqueue([&, i] {
      absl::MutexLock lock(&mu);
      order.push_back(i);
    }));
  }
  writer.Stop(absl::Seconds(10));
  CHECK(order == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(writer.completed() == 10);
  CHECK(writer.dropped() == 0);
}

TEST_CASE("AsyncWriter drops and counts when full, never blocking the producer", "[writer]") {
  AsyncWriter writer(2);
  absl::Notification started;
  absl::Notification release;
  writer.Start();
  REQUIRE(writer.Enqueue([&] {
    started.Notify();
    release.WaitForNotification();
  }));
  started.WaitForNotification();  // the worker holds the first task; the queue is empty

  const absl::Time before = absl::Now();
  CHECK(writer.Enqueue([] {}));
  CHECK(writer.Enqueue([] {}));
  CHECK_FALSE(writer.Enqueue([] {}));
  CHECK_FALSE(writer.Enqueue([] {}));
  CHECK(absl::Now() - before < absl::Seconds(1));
  CHECK(writer.dropped() == 2);
  CHECK(writer.pending() == 2);

  release.Notify();
  writer.Stop(absl::Seconds(10));
  CHECK(writer.completed() == 3);
  CHECK(writer.dropped() == 2);
}

TEST_CASE("AsyncWriter Stop drops what is left at the deadline", "[writer]") {
  AsyncWriter writer(100);
  absl::Notification started;
  std::atomic<bool> release{false};
  writer.Start();
  REQUIRE(writer.Enqueue([&] {
    started.Notify();
    // Outlasts Stop's deadline, so nothing queued behind it may run.
    while (!release.load()) absl::SleepFor(absl::Milliseconds(1));
  }));
  std::atomic<int> ran{0};
  for (int i = 0; i < 5; ++i) REQUIRE(writer.Enqueue([&] { ran++; }));
  started.WaitForNotification();

  std::thread releaser([&] {
    absl::SleepFor(absl::Milliseconds(50));
    release.store(true);
  });
  writer.Stop(absl::Milliseconds(10));
  releaser.join();
  CHECK(ran.load() == 0);
  CHECK(writer.completed() == 1);
  CHECK(writer.dropped() == 5);
  CHECK_FALSE(writer.Enqueue([] {}));  // stopped
  CHECK(writer.dropped() == 6);
}

TEST_CASE("AsyncWriter runs tasks queued before Start, an unstarted Stop drops them", "[writer]") {
  {
    AsyncWriter writer(4);
    std::atomic<int> ran{0};
    REQUIRE(writer.Enqueue([&] { ran++; }));
    writer.Start();
    writer.Stop(absl::Seconds(10));
    CHECK(ran.load() == 1);
  }
  {
    AsyncWriter writer(4);
    REQUIRE(writer.Enqueue([] {}));
    writer.Stop(absl::Seconds(1));
    CHECK(writer.dropped() == 1);
    CHECK(writer.completed() == 0);
  }
}

}  // namespace
}  // namespace kubesched::client
