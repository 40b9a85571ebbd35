// The scheduling queue: ordering, backoff, the unschedulable set and the events that empty it,
// move requests during a cycle, deletion and updates (nominations: nominator_test.cc).

#include "scheduler/queue/scheduling_queue.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "scheduler/quota/quota_tracker.h"
#include "tests/scheduler/queue/queue_fixture.h"
#include "tests/testing/builders.h"

namespace kubesched {
namespace {

using framework::ClusterEvent;
using framework::MakePodInfo;
using framework::PodInfoPtr;
using queue::QueuedPodInfo;
using queue::SchedulingQueue;
using testing::PodBuilder;
using testing::QueuedPod;

struct Fixture : testing::QueueFixture {
  // Adds a pod, pops it and reports it unschedulable, helped by `events` (what the plugins that
  // rejected it registered).
  void MakeUnschedulable(const std::string& name,
                         framework::ClusterEventSet events = framework::kAllEvents) {
    queue.Add(QueuedPod(name));
    auto popped = queue.Pop();
    REQUIRE(popped.has_value());
    popped->helpful_events = events;
    queue.AddUnschedulable(std::move(*popped), /*unschedulable=*/true);
  }
  std::vector<std::string> PopAll() {
    std::vector<std::string> keys;
    while (auto pod = queue.Pop()) keys.push_back(pod->pod_info->key);
    return keys;
  }
};

TEST_CASE("pods pop by priority, then in arrival order", "[core]") {
  Fixture f;
  f.queue.Add(QueuedPod("low-1", 1));
  f.clock.Advance(absl::Seconds(1));
  f.queue.Add(QueuedPod("high", 10));
  f.queue.Add(QueuedPod("low-2", 1));
  f.queue.Add(QueuedPod("low-3", 1));  // same timestamp as low-2: insertion order decides
  CHECK(f.PopAll() == std::vector<std::string>{"default/high", "default/low-1", "default/low-2",
                                               "default/low-3"});
}

// Orders by name, descending, to show the plugin replaces the default order.
class ByNameDescending : public framework::QueueSortPlugin {
 public:
  std::string_view Name() const override { return "ByNameDescending"; }
  bool Less(const framework::PodInfo& a, int64_t, const framework::PodInfo& b,
            int64_t) const override {
    return a.key > b.key;
  }
};

TEST_CASE("a queue sort plugin replaces the default order", "[core]") {
  util::FakeClock clock;
  ByNameDescending order;
  SchedulingQueue queue(&clock, queue::QueueOptions{}, &order);
  queue.Add(QueuedPod("a", 100));
  queue.Add(QueuedPod("c"));
  queue.Add(QueuedPod("b"));
  std::vector<std::string> keys;
  while (auto pod = queue.Pop()) keys.push_back(pod->pod_info->key);
  CHECK(keys == std::vector<std::string>{"default/c", "default/b", "default/a"});
}

TEST_CASE("adding a pod that is already queued is ignored", "[core]") {
  Fixture f;
  f.queue.Add(QueuedPod("p"));
  f.queue.Add(QueuedPod("p"));
  CHECK(f.queue.ActiveCount() == 1);
}

TEST_CASE("Pop counts attempts and records the first attempt", "[core]") {
  Fixture f;
  f.queue.Add(QueuedPod("p"));
  f.clock.Advance(absl::Seconds(3));
  auto first = f.queue.Pop();
  REQUIRE(first.has_value());
  CHECK(first->attempts == 1);
  CHECK(first->initial_attempt_timestamp == absl::UnixEpoch() + absl::Seconds(3));
  f.queue.AddBackoff(std::move(*first));
  f.clock.Advance(absl::Seconds(10));
  f.queue.FlushBackoffCompleted();
  auto second = f.queue.Pop();
  REQUIRE(second.has_value());
  CHECK(second->attempts == 2);
  CHECK(second->initial_attempt_timestamp == absl::UnixEpoch() + absl::Seconds(3));
}

TEST_CASE("Pop on an empty queue returns nothing", "[core]") {
  Fixture f;
  CHECK_FALSE(f.queue.Pop().has_value());
}

TEST_CASE("backoff doubles with each attempt up to the maximum", "[core]") {
  const std::vector<std::pair<int32_t, absl::Duration>> table = {
      {1, absl::Seconds(1)}, {2, absl::Seconds(2)},  {3, absl::Seconds(4)},
      {4, absl::Seconds(8)}, {5, absl::Seconds(10)}, {30, absl::Seconds(10)},
  };
  for (const auto& [attempts, expected] : table) {
    INFO("attempts " << attempts);
    Fixture f;
    f.queue.Add(QueuedPod("p"));
    auto pod = f.queue.Pop();
    REQUIRE(pod.has_value());
    pod->attempts = attempts;
    f.queue.AddBackoff(std::move(*pod));
    REQUIRE(f.queue.NextBackoffExpiry().has_value());
    CHECK(*f.queue.NextBackoffExpiry() - f.clock.Now() == expected);
  }
}

TEST_CASE("a pod leaves backoffQ only when its backoff has expired", "[core]") {
  Fixture f;
  f.queue.Add(QueuedPod("p"));
  auto pod = f.queue.Pop();
  f.queue.AddUnschedulable(std::move(*pod), /*unschedulable=*/false);  // an error
  CHECK(f.queue.BackoffCount() == 1);
  f.clock.Advance(absl::Milliseconds(999));
  f.queue.FlushBackoffCompleted();
  CHECK(f.queue.BackoffCount() == 1);
  f.clock.Advance(absl::Milliseconds(1));
  f.queue.FlushBackoffCompleted();
  CHECK(f.queue.ActiveCount() == 1);
  CHECK(f.queue.BackoffCount() == 0);
}

TEST_CASE("backoffQ releases pods in order of expiry", "[core]") {
  Fixture f;
  for (const char* name : {"long", "short"}) {
    f.queue.Add(QueuedPod(name));
    auto pod = f.queue.Pop();
    pod->attempts = std::string(name) == "long" ? 3 : 1;
    f.queue.AddBackoff(std::move(*pod));
  }
  CHECK(*f.queue.NextBackoffExpiry() == f.clock.Now() + absl::Seconds(1));
  f.clock.Advance(absl::Seconds(2));
  f.queue.FlushBackoffCompleted();
  CHECK(f.PopAll() == std::vector<std::string>{"default/short"});
}

TEST_CASE("an unschedulable pod waits for a cluster event", "[core]") {
  Fixture f;
  f.MakeUnschedulable("p");
  CHECK(f.queue.UnschedulableCount() == 1);
  f.clock.Advance(absl::Minutes(1));
  f.queue.FlushBackoffCompleted();
  CHECK(f.queue.ActiveCount() == 0);
}

// What InterPodAffinity registers: the default events and an assigned pod appearing.
constexpr framework::ClusterEventSet kAffinityEvents =
    framework::kDefaultEvents | framework::EventBit(framework::ClusterEvent::kAssignedPodAdded);

TEST_CASE("node and pod-deletion events move every pod whose plugins registered them", "[core]") {
  for (framework::ClusterEvent event :
       {framework::ClusterEvent::kNodeAdded, framework::ClusterEvent::kNodeUpdated,
        framework::ClusterEvent::kPodDeleted, framework::ClusterEvent::kUnschedulableTimeout}) {
    INFO("event " << static_cast<int>(event));
    Fixture f;
    f.MakeUnschedulable("fit", framework::kDefaultEvents);
    f.MakeUnschedulable("affinity", kAffinityEvents);
    f.clock.Advance(absl::Seconds(5));  // past the first backoff
    f.queue.MoveAllToActiveOrBackoff(event);
    CHECK(f.queue.UnschedulableCount() == 0);
    CHECK(f.queue.ActiveCount() == 2);
  }
}

TEST_CASE("a gang giving back its room moves no gang member", "[core]") {
  Fixture f;
  for (const char* name : {"w-0", "w-1"}) {
    f.queue.Add(MakePodInfo(PodBuilder(name).Label(framework::kPodGroupLabel, "train").Ptr(), 0));
    auto popped = f.queue.Pop();
    REQUIRE(popped.has_value());
    f.queue.AddUnschedulable(std::move(*popped), /*unschedulable=*/true);
  }
  f.MakeUnschedulable("other");
  f.clock.Advance(absl::Seconds(5));
  f.queue.MoveAllToActiveOrBackoff(ClusterEvent::kPodDeleted, /*except_gang_members=*/true);
  CHECK(f.PopAll() == std::vector<std::string>{"default/other"});
  CHECK(f.queue.UnschedulableCount() == 2);
}

TEST_CASE("an activated gang pops before every other pod, whatever its backoff", "[core]") {
  Fixture f;
  f.MakeUnschedulable("plain");
  f.queue.Add(QueuedPod("high", 100));
  f.queue.Add(MakePodInfo(PodBuilder("w-0").Label(framework::kPodGroupLabel, "job").Ptr(), 0));
  // w-1 failed once (backoff), w-2 waits as unschedulable.
  for (const char* name : {"w-1", "w-2"}) {
    f.queue.Add(MakePodInfo(PodBuilder(name).Label(framework::kPodGroupLabel, "job").Ptr(), 0));
  }
  auto high = f.queue.Pop();  // priority 100 first
  REQUIRE(high->pod_info->key == "default/high");
  auto w0 = f.queue.Pop();
  REQUIRE(w0->pod_info->key == "default/w-0");
  f.queue.AddUnschedulable(std::move(*f.queue.Pop()), /*unschedulable=*/false);  // w-1: backoff
  f.queue.AddUnschedulable(std::move(*f.queue.Pop()), /*unschedulable=*/true);   // w-2
  f.queue.Add(QueuedPod("later", 50));
  f.queue.ActivateGang("default/job");
  CHECK(f.PopAll() == std::vector<std::string>{"default/w-1", "default/w-2", "default/later"});
  CHECK(f.queue.UnschedulableCount() == 1);  // plain stays
}

TEST_CASE("a parked gang waits as unschedulable for the events of its rejecting plugin", "[core]") {
  Fixture f;
  for (const char* name : {"w-0", "w-1"}) {
    f.queue.Add(MakePodInfo(PodBuilder(name).Label(framework::kPodGroupLabel, "job").Ptr(), 0));
  }
  f.queue.Add(QueuedPod("other"));
  f.queue.ParkGang("default/job", {"Coscheduling"}, framework::EventBit(ClusterEvent::kNodeAdded));
  CHECK(f.queue.UnschedulableCount() == 2);
  CHECK(f.PopAll() == std::vector<std::string>{"default/other"});
  f.clock.Advance(absl::Seconds(5));
  f.queue.MoveAllToActiveOrBackoff(ClusterEvent::kPodDeleted);
  CHECK(f.queue.UnschedulableCount() == 2);  // not an event that helps them
  f.queue.MoveAllToActiveOrBackoff(ClusterEvent::kNodeAdded);
  CHECK(f.PopAll() == std::vector<std::string>{"default/w-0", "default/w-1"});
}

TEST_CASE("an assigned pod moves only pods it could help", "[core]") {
  Fixture f;
  f.MakeUnschedulable("fit", framework::kDefaultEvents);
  f.MakeUnschedulable("affinity", kAffinityEvents);
  f.MakeUnschedulable("unknown", framework::kAllEvents);
  f.clock.Advance(absl::Seconds(5));
  f.queue.MoveAllToActiveOrBackoff(framework::ClusterEvent::kAssignedPodAdded);
  CHECK(f.queue.UnschedulableCount() == 1);
  CHECK(f.PopAll() == std::vector<std::string>{"default/affinity", "default/unknown"});
}

TEST_CASE("an event the rejecting plugins did not register leaves the pod waiting", "[core]") {
  Fixture f;
  f.MakeUnschedulable("nodes-only", framework::EventBit(framework::ClusterEvent::kNodeAdded));
  f.clock.Advance(absl::Seconds(5));
  f.queue.MoveAllToActiveOrBackoff(framework::ClusterEvent::kPodDeleted);
  f.queue.MoveAllToActiveOrBackoff(framework::ClusterEvent::kNodeUpdated);
  CHECK(f.queue.UnschedulableCount() == 1);
  f.queue.MoveAllToActiveOrBackoff(framework::ClusterEvent::kNodeAdded);
  CHECK(f.queue.UnschedulableCount() == 0);
  CHECK(f.PopAll() == std::vector<std::string>{"default/nodes-only"});
}

TEST_CASE("a PodGroup change moves only pods whose plugins registered it", "[core]") {
  Fixture f;
  f.MakeUnschedulable("gang", framework::kDefaultEvents |
                                  framework::EventBit(framework::ClusterEvent::kPodGroupChanged));
  f.MakeUnschedulable("fit", framework::kDefaultEvents);
  f.clock.Advance(absl::Seconds(5));
  f.queue.MoveAllToActiveOrBackoff(framework::ClusterEvent::kPodGroupChanged);
  CHECK(f.queue.UnschedulableCount() == 1);
  CHECK(f.PopAll() == std::vector<std::string>{"default/gang"});
  CHECK(f.queue.Incoming()[0][static_cast<size_t>(queue::IncomingEvent::kPodGroupChange)] == 1);
  CHECK(queue::IncomingEventName(queue::IncomingEvent::kPodGroupChange) == "PodGroupChange");
}

TEST_CASE("a move request for an event the pod ignores does not send it to backoffQ", "[core]") {
  Fixture f;
  f.queue.Add(QueuedPod("p"));
  auto pod = f.queue.Pop();
  f.queue.MoveAllToActiveOrBackoff(framework::ClusterEvent::kPodDeleted);
  pod->helpful_events = framework::EventBit(framework::ClusterEvent::kNodeAdded);
  f.queue.AddUnschedulable(std::move(*pod), /*unschedulable=*/true);
  CHECK(f.queue.UnschedulableCount() == 1);
  CHECK(f.queue.BackoffCount() == 0);
}

TEST_CASE("a moved pod whose backoff has not expired goes to backoffQ", "[core]") {
  Fixture f;
  f.MakeUnschedulable("p");
  f.clock.Advance(absl::Milliseconds(500));
  f.queue.MoveAllToActiveOrBackoff(framework::ClusterEvent::kNodeAdded);
  CHECK(f.queue.BackoffCount() == 1);
  CHECK(*f.queue.NextBackoffExpiry() == absl::UnixEpoch() + absl::Seconds(1));
}

TEST_CASE("a move request during a scheduling cycle sends the failed pod to backoffQ", "[core]") {
  Fixture f;
  f.queue.Add(QueuedPod("p"));
  auto pod = f.queue.Pop();
  f.queue.MoveAllToActiveOrBackoff(framework::ClusterEvent::kNodeAdded);
  f.queue.AddUnschedulable(std::move(*pod), /*unschedulable=*/true);
  CHECK(f.queue.UnschedulableCount() == 0);
  CHECK(f.queue.BackoffCount() == 1);
}

TEST_CASE("a move request before the pod was popped does not count", "[core]") {
  Fixture f;
  f.queue.MoveAllToActiveOrBackoff(framework::ClusterEvent::kNodeAdded);
  f.MakeUnschedulable("p");
  CHECK(f.queue.UnschedulableCount() == 1);
}

TEST_CASE("an assigned pod during a cycle sends only pods it could help to backoffQ", "[core]") {
  Fixture f;
  f.queue.Add(QueuedPod("fit"));
  f.queue.Add(QueuedPod("affinity"));
  auto fit = f.queue.Pop();
  auto affinity = f.queue.Pop();
  f.queue.MoveAllToActiveOrBackoff(framework::ClusterEvent::kAssignedPodAdded);
  fit->helpful_events = framework::kDefaultEvents;
  affinity->helpful_events = kAffinityEvents;
  f.queue.AddUnschedulable(std::move(*fit), true);
  f.queue.AddUnschedulable(std::move(*affinity), true);
  CHECK(f.queue.UnschedulableCount() == 1);
  CHECK(f.queue.BackoffCount() == 1);
}

TEST_CASE("pods unschedulable for longer than the limit are flushed", "[core]") {
  Fixture f;
  f.MakeUnschedulable("p");
  f.clock.Advance(absl::Minutes(4));
  f.queue.FlushUnschedulableLeftover();
  CHECK(f.queue.UnschedulableCount() == 1);
  f.clock.Advance(absl::Minutes(1) + absl::Seconds(1));
  f.queue.FlushUnschedulableLeftover();
  CHECK(f.queue.UnschedulableCount() == 0);
  CHECK(f.queue.ActiveCount() == 1);
}

TEST_CASE("Delete removes a pod from whichever sub-queue holds it", "[core]") {
  for (const std::string where : {"active", "backoff", "unschedulable"}) {
    INFO(where);
    Fixture f;
    if (where == "active") {
      f.queue.Add(QueuedPod("p"));
    } else if (where == "backoff") {
      f.queue.Add(QueuedPod("p"));
      f.queue.AddBackoff(*f.queue.Pop());
    } else {
      f.MakeUnschedulable("p");
    }
    REQUIRE(f.queue.PendingPods().size() == 1);
    f.queue.Delete("default/p");
    CHECK(f.queue.PendingPods().empty());
    CHECK(f.queue.ActiveCount() + f.queue.BackoffCount() + f.queue.UnschedulableCount() == 0);
  }
}

TEST_CASE("Delete keeps the heap order of the remaining pods", "[core]") {
  Fixture f;
  for (int i = 0; i < 20; ++i) f.queue.Add(QueuedPod(absl::StrCat("p", i), i));
  for (int i = 0; i < 20; i += 3) f.queue.Delete(absl::StrCat("default/p", i));
  std::vector<int32_t> priorities;
  while (auto pod = f.queue.Pop()) priorities.push_back(pod->pod_info->priority);
  CHECK(priorities.size() == 13);
  CHECK(std::is_sorted(priorities.rbegin(), priorities.rend()));
}

TEST_CASE("a pod deleted while being scheduled is not queued again", "[core]") {
  Fixture f;
  f.queue.Add(QueuedPod("p"));
  auto pod = f.queue.Pop();
  f.queue.Delete("default/p");
  f.queue.AddUnschedulable(std::move(*pod), true);
  CHECK(f.queue.PendingPods().empty());
}

TEST_CASE("a pod being scheduled is not added twice", "[core]") {
  Fixture f;
  f.queue.Add(QueuedPod("p"));
  auto pod = f.queue.Pop();
  f.queue.Add(QueuedPod("p"));
  CHECK(f.queue.ActiveCount() == 0);
}

TEST_CASE("an unschedulable pod whose spec changed moves to activeQ", "[core]") {
  Fixture f;
  f.MakeUnschedulable("p");
  f.queue.Update(MakePodInfo(PodBuilder("p").Label("fixed", "yes").Ptr(), 0));
  CHECK(f.queue.UnschedulableCount() == 0);
  CHECK(f.queue.ActiveCount() == 1);
}

TEST_CASE("a status-only update leaves an unschedulable pod where it is", "[core]") {
  Fixture f;
  f.MakeUnschedulable("p");
  api::Pod pod = PodBuilder("p").Build();
  pod.status.conditions.push_back({"PodScheduled", "False", "Unschedulable", "0/3 nodes"});
  pod.meta.resource_version = "42";
  f.queue.Update(MakePodInfo(std::make_shared<const api::Pod>(pod), 0));
  CHECK(f.queue.UnschedulableCount() == 1);
}

TEST_CASE("an update of an active pod re-sorts it by its new priority", "[core]") {
  Fixture f;
  f.queue.Add(QueuedPod("a", 5));
  f.queue.Add(QueuedPod("b", 1));
  f.queue.Update(QueuedPod("b", 10));
  CHECK(f.PopAll() == std::vector<std::string>{"default/b", "default/a"});
}

TEST_CASE("a pod updated while being scheduled comes back through backoffQ", "[core]") {
  Fixture f;
  f.queue.Add(QueuedPod("p"));
  auto pod = f.queue.Pop();
  f.queue.Update(MakePodInfo(PodBuilder("p").Label("fixed", "yes").Ptr(), 0));
  CHECK(f.queue.ActiveCount() == 0);
  f.queue.AddUnschedulable(std::move(*pod), true);
  CHECK(f.queue.BackoffCount() == 1);
  f.clock.Advance(absl::Seconds(1));
  f.queue.FlushBackoffCompleted();
  auto again = f.queue.Pop();
  REQUIRE(again.has_value());
  CHECK(again->pod_info->get().meta.labels.Has(api::Intern("fixed")));
}

TEST_CASE("an update of an unknown pod queues it", "[core]") {
  Fixture f;
  f.queue.Update(QueuedPod("p"));
  CHECK(f.queue.ActiveCount() == 1);
}

TEST_CASE("PopWait returns a pod added by another thread", "[core]") {
  Fixture f;
  std::thread producer([&f] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    f.queue.Add(QueuedPod("p"));
  });
  auto pod = f.queue.PopWait(absl::Seconds(10));
  producer.join();
  REQUIRE(pod.has_value());
  CHECK(pod->pod_info->key == "default/p");
}

TEST_CASE("PopWait gives up after its timeout", "[core]") {
  Fixture f;
  CHECK_FALSE(f.queue.PopWait(absl::Milliseconds(10)).has_value());
}

TEST_CASE("PendingPods lists every queued pod", "[core]") {
  Fixture f;
  f.MakeUnschedulable("parked");
  f.queue.Add(QueuedPod("active"));
  f.queue.Add(QueuedPod("active"));
  CHECK(f.queue.PendingPods().size() == 2);
}

}  // namespace
}  // namespace kubesched

namespace kubesched {
namespace {

// Adds a pod, pops it and parks it as held back by quota under `keys`.
void ParkOnQuota(queue::SchedulingQueue& q, const std::string& name,
                 std::vector<std::string> keys) {
  q.Add(framework::MakePodInfo(testing::PodBuilder(name).Ptr(), 0));
  auto popped = q.Pop();
  REQUIRE(popped.has_value());
  popped->unschedulable_plugins = {"QueueQuota"};
  popped->quota_wait_keys = std::move(keys);
  q.AddUnschedulable(std::move(*popped), /*unschedulable=*/true);
}

TEST_CASE("quota-waiting pods ignore cluster events and leave on their own keys", "[core][quota]") {
  util::FakeClock clock;
  queue::SchedulingQueue q(&clock, queue::QueueOptions{});
  ParkOnQuota(q, "a", {"quota:root.a"});
  ParkOnQuota(q, "b", {"quota:root.b", "budget:root"});
  CHECK(q.QuotaWaitingCount() == 2);
  CHECK(q.UnschedulableCount() == 2);
  clock.Advance(absl::Seconds(30));  // past every backoff
  q.MoveAllToActiveOrBackoff(framework::ClusterEvent::kNodeAdded);
  q.MoveAllToActiveOrBackoff(framework::ClusterEvent::kPodDeleted);
  CHECK(q.ActiveCount() == 0);

  q.MoveQuotaWaiters({"quota:root.b"});
  CHECK(q.QuotaWaitingCount() == 1);
  auto popped = q.Pop();
  REQUIRE(popped.has_value());
  CHECK(popped->pod_info->key == "default/b");
  CHECK(popped->quota_wait_keys.empty());  // a new attempt starts without them

  q.MoveQuotaWaiters({std::string(quota::kWakeAll)});
  CHECK(q.QuotaWaitingCount() == 0);
  CHECK(q.Pop()->pod_info->key == "default/a");
}

TEST_CASE("a quota release during a pod's attempt sends it to backoff, not to wait",
          "[core][quota]") {
  util::FakeClock clock;
  queue::SchedulingQueue q(&clock, queue::QueueOptions{});
  q.Add(framework::MakePodInfo(testing::PodBuilder("a").Ptr(), 0));
  auto popped = q.Pop();
  REQUIRE(popped.has_value());
  q.MoveQuotaWaiters({"quota:root.x"});  // released while the pod was being scheduled
  popped->quota_wait_keys = {"quota:root.a"};
  q.AddUnschedulable(std::move(*popped), /*unschedulable=*/true);
  CHECK(q.QuotaWaitingCount() == 0);
  CHECK(q.BackoffCount() == 1);
}

TEST_CASE("a quota-waiting pod whose spec changes is retried at once", "[core][quota]") {
  util::FakeClock clock;
  queue::SchedulingQueue q(&clock, queue::QueueOptions{});
  ParkOnQuota(q, "a", {"placement"});
  q.Update(framework::MakePodInfo(
      testing::PodBuilder("a").Label("kubesched.io/queue", "root.b").Ptr(), 0));
  CHECK(q.QuotaWaitingCount() == 0);
  CHECK(q.ActiveCount() == 1);
}

}  // namespace
}  // namespace kubesched

namespace kubesched {
namespace {

// A pod deleted and re-created under the same name while its bind is in flight (a StatefulSet's).
PodInfoPtr Successor(const std::string& name) {
  return MakePodInfo(PodBuilder(name).Uid(name + "-successor").Ptr(), 0);
}

TEST_CASE("a deleted pod's stale entry neither ends its successor's flight nor comes back",
          "[core]") {
  Fixture f;
  f.queue.Add(QueuedPod("web-0"));
  auto old = f.queue.Pop();
  REQUIRE(old.has_value());
  f.queue.Delete("default/web-0");
  f.queue.Add(Successor("web-0"));
  auto successor = f.queue.Pop();
  REQUIRE(successor.has_value());
  CHECK(successor->pod_info->get().meta.uid == "web-0-successor");

  // The old pod's bind fails: its entry is dropped, not requeued over the successor.
  f.queue.AddUnschedulable(std::move(*old), /*unschedulable=*/false);
  f.queue.Done("default/web-0", "default-web-0-uid");
  CHECK(f.queue.PendingPods().empty());
  // The successor's own failure still brings it back.
  f.queue.AddUnschedulable(std::move(*successor), /*unschedulable=*/false);
  const std::vector<QueuedPodInfo> pending = f.queue.PendingPods();
  REQUIRE(pending.size() == 1);
  CHECK(pending[0].pod_info->get().meta.uid == "web-0-successor");
}

}  // namespace
}  // namespace kubesched
