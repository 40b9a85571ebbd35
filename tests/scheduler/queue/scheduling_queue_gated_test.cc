// Gated pods in the scheduling queue: pods a PreEnqueue plugin rejected are kept apart from
// activeQ, backoffQ and the unschedulable set, are counted and listed as gated, and enter activeQ
// as soon as an update passes PreEnqueue.

#include <catch2/catch.hpp>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scheduler/api/symbol.h"
#include "scheduler/queue/scheduling_queue.h"
#include "tests/scheduler/queue/queue_fixture.h"
#include "tests/testing/builders.h"

namespace kubesched {
namespace {

using framework::ClusterEvent;
using framework::Status;
using queue::IncomingEvent;
using queue::QueuedPodInfo;
using queue::SchedulingQueue;
using testing::QueuedPod;

constexpr size_t kActive = 0, kUnschedulable = 2;

// What SchedulingGates says of a pod with `gates`, stamped as the framework stamps it.
Status Gated(const std::string& gates) {
  Status status = Status::Unresolvable(api::StableText("waiting for scheduling gates: " + gates));
  status.set_plugin("SchedulingGates");
  return status;
}

struct Fixture : testing::QueueFixture {
  // The queue's view of the pod `name` ("default/<name>").
  std::optional<QueuedPodInfo> Find(const std::string& name) const {
    for (QueuedPodInfo& pod : queue.PendingPods()) {
      if (pod.pod_info->key == "default/" + name) return pod;
    }
    return std::nullopt;
  }
};

TEST_CASE("a gated pod is counted apart and never popped", "[core][gates]") {
  Fixture f;
  f.queue.Add(QueuedPod("gated"), Gated("[a]"));
  CHECK_FALSE(f.queue.Pop().has_value());
  CHECK(f.queue.GatedCount() == 1);
  CHECK(f.queue.ActiveCount() == 0);
  CHECK(f.queue.BackoffCount() == 0);
  CHECK(f.queue.UnschedulableCount() == 0);
  const auto gated = f.Find("gated");
  REQUIRE(gated.has_value());
  CHECK(gated->gated);
  CHECK(gated->gated_message == "waiting for scheduling gates: [a]");
  CHECK(gated->attempts == 0);
}

TEST_CASE("no cluster event, quota change or flush moves a gated pod", "[core][gates]") {
  Fixture f;
  f.queue.Add(QueuedPod("gated"), Gated("[a]"));
  for (size_t e = 0; e < framework::kClusterEventCount; ++e) {
    f.queue.MoveAllToActiveOrBackoff(static_cast<ClusterEvent>(e));
  }
  f.queue.MoveQuotaWaiters({"*"});
  f.clock.Advance(absl::Minutes(10));
  f.queue.FlushUnschedulableLeftover();
  f.queue.FlushBackoffCompleted();
  CHECK_FALSE(f.queue.Pop().has_value());
  CHECK(f.queue.GatedCount() == 1);
}

TEST_CASE("an update that passes PreEnqueue sends a gated pod to activeQ at once",
          "[core][gates]") {
  Fixture f;
  f.queue.Add(QueuedPod("gated"), Gated("[a]"));
  f.queue.Add(QueuedPod("other"));
  REQUIRE(f.queue.Pop().has_value());  // "other"; the clock never moves
  f.queue.Update(QueuedPod("gated"), Status::Success());
  const auto popped = f.queue.Pop();
  REQUIRE(popped.has_value());
  CHECK(popped->pod_info->key == "default/gated");
  CHECK(popped->attempts == 1);
  CHECK_FALSE(popped->gated);
  CHECK(popped->unschedulable_plugins.empty());
  CHECK(f.queue.GatedCount() == 0);
  CHECK(f.queue.Incoming()[kActive][static_cast<size_t>(IncomingEvent::kPodUpdate)] == 1);
}

TEST_CASE("an update that still fails PreEnqueue keeps the pod gated, with the new reason",
          "[core][gates]") {
  Fixture f;
  f.queue.Add(QueuedPod("gated"), Gated("[a b]"));
  f.queue.Update(QueuedPod("gated"), Gated("[b]"));
  CHECK_FALSE(f.queue.Pop().has_value());
  CHECK(f.queue.GatedCount() == 1);
  CHECK(f.Find("gated")->gated_message == "waiting for scheduling gates: [b]");
  // Counted once, when it entered.
  CHECK(f.queue.Incoming()[kUnschedulable][static_cast<size_t>(IncomingEvent::kPodUpdate)] == 0);
}

TEST_CASE("an update that fails PreEnqueue takes a queued pod out of activeQ", "[core][gates]") {
  Fixture f;
  f.queue.Add(QueuedPod("p"));
  f.queue.Update(QueuedPod("p"), Gated("[a]"));
  CHECK(f.queue.ActiveCount() == 0);
  CHECK(f.queue.GatedCount() == 1);
  CHECK_FALSE(f.queue.Pop().has_value());
}

TEST_CASE("a pod gated by an update while being scheduled comes back gated", "[core][gates]") {
  Fixture f;
  f.queue.Add(QueuedPod("p"));
  auto popped = f.queue.Pop();
  REQUIRE(popped.has_value());
  f.queue.Update(QueuedPod("p"), Gated("[a]"));
  f.queue.AddUnschedulable(*std::move(popped), /*unschedulable=*/true);
  CHECK(f.queue.GatedCount() == 1);
  CHECK(f.queue.UnschedulableCount() == 0);
  CHECK(f.queue.BackoffCount() == 0);
  CHECK(f.Find("p")->gated_message == "waiting for scheduling gates: [a]");
}

TEST_CASE("a deleted gated pod is forgotten", "[core][gates]") {
  Fixture f;
  f.queue.Add(QueuedPod("gated"), Gated("[a]"));
  f.queue.Delete("default/gated");
  CHECK(f.queue.GatedCount() == 0);
  CHECK(f.queue.PendingPods().empty());
  CHECK_FALSE(f.queue.Pop().has_value());
}

TEST_CASE("metrics: a gated pod enters the unschedulable set and is listed by its plugin",
          "[metrics][core][gates]") {
  Fixture f;
  f.queue.Add(QueuedPod("gated"), Gated("[a]"));
  f.queue.Add(QueuedPod("active"));
  CHECK(f.queue.Incoming()[kUnschedulable][static_cast<size_t>(IncomingEvent::kPodAdd)] == 1);
  CHECK(f.queue.Incoming()[kActive][static_cast<size_t>(IncomingEvent::kPodAdd)] == 1);
  std::map<std::string, int> by_plugin;
  f.queue.ForEachUnschedulable([&](const QueuedPodInfo& pod) {
    for (const std::string& plugin : pod.unschedulable_plugins) ++by_plugin[plugin];
  });
  CHECK(by_plugin == std::map<std::string, int>{{"SchedulingGates", 1}});
}

}  // namespace
}  // namespace kubesched
