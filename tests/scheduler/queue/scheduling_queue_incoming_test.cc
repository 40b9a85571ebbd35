// What the scheduling queue counts for scheduler_queue_incoming_pods_total and shows for
// scheduler_unschedulable_pods.

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "scheduler/queue/scheduling_queue.h"
#include "tests/scheduler/queue/queue_fixture.h"
#include "tests/testing/builders.h"

namespace kubesched {
namespace {

using queue::IncomingEvent;
using queue::SchedulingQueue;
using testing::QueuedPod;

constexpr size_t kActive = 0, kBackoff = 1, kUnschedulable = 2;

uint64_t Count(const SchedulingQueue& queue, size_t sub_queue, IncomingEvent event) {
  return queue.Incoming()[sub_queue][static_cast<size_t>(event)];
}

// Adds a pod, pops it and reports it rejected by `plugin`.
void MakeUnschedulable(SchedulingQueue& queue, const std::string& name, const std::string& plugin) {
  queue.Add(QueuedPod(name));
  auto popped = queue.Pop();
  REQUIRE(popped.has_value());
  popped->unschedulable_plugins = {plugin};
  queue.AddUnschedulable(*std::move(popped), /*unschedulable=*/true);
}

TEST_CASE("metrics: the queue counts pods entering each sub-queue by event", "[metrics][core]") {
  util::FakeClock clock;
  SchedulingQueue queue(&clock, queue::QueueOptions{});
  MakeUnschedulable(queue, "a", "NodeResourcesFit");
  MakeUnschedulable(queue, "b", "TaintToleration");
  CHECK(Count(queue, kActive, IncomingEvent::kPodAdd) == 2);
  CHECK(Count(queue, kUnschedulable, IncomingEvent::kScheduleAttemptFailure) == 2);

  // A node appears within the pods' backoff: both go to backoffQ, then to activeQ once it ends.
  queue.MoveAllToActiveOrBackoff(framework::ClusterEvent::kNodeAdded);
  CHECK(Count(queue, kBackoff, IncomingEvent::kNodeAdd) == 2);
  clock.Advance(absl::Seconds(2));
  queue.FlushBackoffCompleted();
  CHECK(Count(queue, kActive, IncomingEvent::kBackoffComplete) == 2);

  // An error sends a pod to backoffQ, counted as a failed attempt there.
  auto popped = queue.Pop();
  REQUIRE(popped.has_value());
  queue.AddUnschedulable(*std::move(popped), /*unschedulable=*/false);
  CHECK(Count(queue, kBackoff, IncomingEvent::kScheduleAttemptFailure) == 1);
  CHECK(queue::IncomingEventName(IncomingEvent::kAssignedPodDelete) == "AssignedPodDelete");
  CHECK(queue::IncomingEventName(IncomingEvent::kQuotaChange) == "QuotaChange");
}

TEST_CASE("metrics: the queue shows each unschedulable pod once, with its rejecting plugins",
          "[metrics][core]") {
  util::FakeClock clock;
  SchedulingQueue queue(&clock, queue::QueueOptions{});
  MakeUnschedulable(queue, "a", "NodeResourcesFit");
  MakeUnschedulable(queue, "b", "NodeResourcesFit");
  // A quota waiter listed under two keys is still one pod.
  queue.Add(QueuedPod("c"));
  auto popped = queue.Pop();
  REQUIRE(popped.has_value());
  popped->unschedulable_plugins = {"QueueQuota"};
  popped->quota_wait_keys = {"root.a", "root"};
  queue.AddUnschedulable(*std::move(popped), /*unschedulable=*/true);
  queue.Add(QueuedPod("active"));

  std::map<std::string, int> by_plugin;
  int pods = 0;
  queue.ForEachUnschedulable([&](const queue::QueuedPodInfo& pod) {
    ++pods;
    for (const std::string& plugin : pod.unschedulable_plugins) ++by_plugin[plugin];
  });
  CHECK(pods == 3);
  CHECK(by_plugin == std::map<std::string, int>{{"NodeResourcesFit", 2}, {"QueueQuota", 1}});
  CHECK(queue.UnschedulableCount() == 3);
}

}  // namespace
}  // namespace kubesched
