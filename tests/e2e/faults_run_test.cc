// The fault suite, part one: binds whose answers are lost, a pod watch that stalls, leaders that
// stop, pause or lose their nodes while binds are queued. Each case drives `kubesched run` against
// the test API server with faults injected, and ends by checking the promises of fault_suite.h.
// Each prints its seed; KUBESCHED_FAULT_SEED replays one.

#include <catch2/catch.hpp>
#include <csignal>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/e2e/fault_suite.h"

namespace kubesched::faults {
namespace {

using testapi::TestApiProcess;
using testing::ChildProcess;
using testing::RequireEventually;
using testing::StartKubeschedRun;
using testing::WaitForLog;

int64_t Counter(FaultApi& api, const char* name) {
  rapidjson::Document stats = api.Stats();
  const rapidjson::Value& counters = stats["counters"];
  return counters.HasMember(name) ? counters[name].GetInt64() : 0;
}

double Gauge(ChildProcess& scheduler, const std::string& name) {
  return testing::ScrapeMetrics(scheduler).Value(name);
}

// Pods of kubesched that wait, each having said why, before the faults begin.
void CreateWaitingPods(FaultApi& api, ChildProcess& scheduler, int count) {
  api.CreatePods("p-", count, "1");
  RequirePendingSayWhy(api, scheduler);
}

TEST_CASE("faults: a lost bind answer while the pod watch stalls never hands out its room twice",
          "[e2e][faults]") {
  const uint64_t seed = SuiteSeed("lost bind answers");
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  FaultApi api(**server);
  auto scheduler = StartKubeschedRun({.kubeconfig = (*server)->kubeconfig(), .verbosity = 1});
  // Nine pods for six slots, known to kubesched before its pod watch goes quiet.
  CreateWaitingPods(api, *scheduler, 9);
  api.SetFaults(absl::StrCat(R"({"seed": )", seed, R"(, "watchStall": ["pods"],
          "drops": [{"verb": "create", "resource": "pods/binding", "count": 3,
                     "probability": 0.7}],
          "errors": [{"verb": "patch", "resource": "pods/status", "code": 500,
                      "probability": 0.3}]})"));
  for (int i = 0; i < 3; ++i) api.CreateNode(absl::StrCat("node-", i), 2);

  WaitForBound(api, 6, *scheduler);
  // Every answer lost was followed by the same Binding again, which the server refused (409):
  // by then a scheduler that took the loss for a failure has handed the room out again.
  RequireEventually("every dropped bind answer was resolved", *scheduler,
                    [&] { return Counter(api, "binds.conflicts") >= Counter(api, "faults.drop"); });
  CHECK(Counter(api, "faults.drop") >= 1);
  CHECK(Gauge(*scheduler, "kubesched_pod_watch_unconfirmed_binds") >= 1);

  api.SetFaults("{}");
  RequireEventually("the pod watch confirmed every bind", *scheduler, [&] {
    return Gauge(*scheduler, "kubesched_pod_watch_unconfirmed_binds") == 0;
  });
  CHECK(CountBound(api.Pods()) == 6);
  RequirePromisesKept(api, *scheduler);
  CHECK(testing::CountInLog(*scheduler, "outcome unknown") >= 1);
  // Counted as what happened: six pods bound, none failed, though some answers were 409s.
  const testing::Scrape metrics = testing::ScrapeMetrics(*scheduler);
  CHECK(metrics.Value("kubesched_binds_total", {{"result", "bound"}}) == 6);
  CHECK(metrics.Value("kubesched_binds_total", {{"result", "failed"}}) == 0);
}

TEST_CASE("faults: pods bound while the pod watch stalls past 30 s keep their room",
          "[e2e][faults]") {
  auto server = TestApiProcess::Start();
  REQUIRE(server.ok());
  FaultApi api(**server);
  auto scheduler = StartKubeschedRun({.kubeconfig = (*server)->kubeconfig()});
  CreateWaitingPods(api, *scheduler, 12);
  api.SetFaults(R"({"watchStall": ["pods"]})");
  api.CreateNode("node-0", 4);
  api.CreateNode("node-1", 4);
  WaitForBound(api, 8, *scheduler);

  // Past the 30 s an assumed pod used to live: the stall is reported, and nothing expires.
  WaitForLog(*scheduler, "the pod watch has not shown 8 successful bind(s)", 1, absl::Seconds(45));
  RequireEventually(
      "the oldest unconfirmed bind is 33 s old", *scheduler,
      [&] {
        return Gauge(*scheduler, "kubesched_pod_watch_oldest_unconfirmed_bind_seconds") >= 33;
      },
      absl::Seconds(20));
  CHECK(CountBound(api.Pods()) == 8);

  api.SetFaults("{}");
  WaitForLog(*scheduler, "the pod watch caught up with the binds");
  CHECK(CountBound(api.Pods()) == 8);
  RequirePromisesKept(api, *scheduler);
}

// Two replicas that the server tells apart by their tokens, on a 3 s lease.
struct Replicas {
  explicit Replicas(const std::vector<std::string>& extra_args) {
    auto started = TestApiProcess::Start({"--token", "replica-a", "--token", "replica-b"});
    REQUIRE(started.ok());
    server = *std::move(started);
    api = std::make_unique<FaultApi>(*server);
    const std::string config = WriteShortLeaseConfig(*server);
    auto start = [&](const std::string& identity) {
      return StartKubeschedRun({.kubeconfig = WriteTokenKubeconfig(*server, "replica-" + identity),
                                .config_path = config,
                                .leader_elect = true,
                                .identity = identity,
                                .shutdown_grace = "2s",
                                .extra_args = extra_args});
    };
    a = start("a");
    WaitForLog(*a, "became the leader");
    b = start("b");
    WaitForLog(*b, "the leader is a");
  }

  // Every Binding `first` sent reached the server before any that `second` sent.
  void RequireBindsDoNotOverlap(const std::string& first, const std::string& second) {
    int64_t last_first = 0;
    int64_t first_second = INT64_MAX;
    for (const BindRecord& bind : BindLog(*api)) {
      if (bind.by == first) last_first = std::max(last_first, bind.at_micros);
      if (bind.by == second) first_second = std::min(first_second, bind.at_micros);
    }
    INFO(first << "'s last bind at " << last_first << ", " << second << "'s first at "
               << first_second);
    CHECK(last_first < first_second);
  }

  std::unique_ptr<TestApiProcess> server;
  std::unique_ptr<FaultApi> api;
  std::unique_ptr<ChildProcess> a;
  std::unique_ptr<ChildProcess> b;
};

TEST_CASE("faults: a leader stopped with binds queued stops binding before the standby starts",
          "[e2e][faults]") {
  Replicas replicas({"--bind-workers", "4"});
  FaultApi& api = *replicas.api;
  // More binds than the 2 s grace lets 4 workers send at 400 ms each.
  api.SetFaults(R"({"latency": [{"verb": "create", "resource": "pods/binding", "ms": 400}]})");
  for (int i = 0; i < 5; ++i) api.CreateNode(absl::StrCat("node-", i), 10);
  api.CreatePods("p-", 60, "1");
  WaitForBound(api, 8, *replicas.a);

  auto exit_code = replicas.a->Stop(SIGTERM, absl::Seconds(15));
  REQUIRE(exit_code.ok());
  CHECK(*exit_code == 0);
  WaitForLog(*replicas.b, "became the leader");
  WaitForBound(api, 50, *replicas.b);
  replicas.RequireBindsDoNotOverlap("replica-a", "replica-b");
  RequirePromisesKept(api, *replicas.b);
}

TEST_CASE("faults: a leader paused past its lease binds nothing once it resumes", "[e2e][faults]") {
  Replicas replicas({"--bind-workers", "4"});
  FaultApi& api = *replicas.api;
  api.SetFaults(R"({"latency": [{"verb": "create", "resource": "pods/binding", "ms": 400}]})");
  for (int i = 0; i < 5; ++i) api.CreateNode(absl::StrCat("node-", i), 10);
  api.CreatePods("p-", 60, "1");
  WaitForBound(api, 8, *replicas.a);

  REQUIRE(replicas.a->Signal(SIGSTOP).ok());
  WaitForLog(*replicas.b, "became the leader", 1, absl::Seconds(20));
  WaitForBound(api, 20, *replicas.b);
  REQUIRE(replicas.a->Signal(SIGCONT).ok());

  // It sees another holder and exits at once, having bound nothing more.
  auto exit_code = replicas.a->Wait(absl::Seconds(20));
  INFO(replicas.a->ReadStderr());
  REQUIRE(exit_code.ok());
  CHECK(*exit_code == 1);
  WaitForBound(api, 50, *replicas.b);
  replicas.RequireBindsDoNotOverlap("replica-a", "replica-b");
  RequirePromisesKept(api, *replicas.b);
}

// kubesched with `workers` bind workers against a server that holds every Binding 300 ms, so
// that binds queue up behind the workers.
struct SlowBinds {
  explicit SlowBinds(int workers) {
    auto started = TestApiProcess::Start();
    REQUIRE(started.ok());
    server = *std::move(started);
    api = std::make_unique<FaultApi>(*server);
    scheduler = StartKubeschedRun({.kubeconfig = server->kubeconfig(),
                                   .extra_args = {"--bind-workers", absl::StrCat(workers)}});
    api->SetFaults(R"({"latency": [{"verb": "create", "resource": "pods/binding", "ms": 300}]})");
  }

  std::unique_ptr<TestApiProcess> server;
  std::unique_ptr<FaultApi> api;
  std::unique_ptr<ChildProcess> scheduler;
};

// Two bind workers, binds slowed down; the big node has the most room left, so it takes most
// pods, until `take_away` makes it leave: then the small ones take the rest, and only the binds
// already sent (one per worker) may still land on it.
void RequireNoBindsAfter(const std::function<void(FaultApi&)>& take_away) {
  SlowBinds slow(2);
  FaultApi& api = *slow.api;
  ChildProcess* scheduler = slow.scheduler.get();
  api.CreateNode("big", 64);
  api.CreateNode("small-0", 16);
  api.CreateNode("small-1", 16);
  api.CreatePods("p-", 30, "1");
  WaitForBound(api, 2, *scheduler);
  auto bound_to_big = [&] {
    int count = 0;
    for (const api::Pod& pod : api.Pods()) count += pod.spec.node_name == "big" ? 1 : 0;
    return count;
  };
  const int before = bound_to_big();
  take_away(api);
  WaitForBound(api, 30, *scheduler);
  CHECK(bound_to_big() <= before + 2);
  RequirePromisesKept(api, *scheduler);
}

TEST_CASE("faults: a node deleted while binds are queued gets no more of them", "[e2e][faults]") {
  RequireNoBindsAfter(
      [](FaultApi& api) { REQUIRE(api.Send("DELETE", "/api/v1/nodes/big").status == 200); });
}

TEST_CASE("faults: a node cordoned while binds are queued gets no more of them", "[e2e][faults]") {
  RequireNoBindsAfter([](FaultApi& api) {
    REQUIRE(api.Send("PATCH", "/api/v1/nodes/big", R"({"spec":{"unschedulable":true}})",
                     "application/merge-patch+json")
                .status == 200);
  });
}

TEST_CASE("faults: a pod deleted while its bind is queued leaves no trace", "[e2e][faults]") {
  SlowBinds slow(1);
  FaultApi& api = *slow.api;
  ChildProcess* scheduler = slow.scheduler.get();
  api.CreateNode("node-0", 4);
  api.CreatePods("p-", 6, "1");
  WaitForBound(api, 1, *scheduler);
  for (int i = 0; i < 6; ++i) {
    api.Send("DELETE", absl::StrCat("/api/v1/namespaces/default/pods/p-", i));
  }
  api.CreatePods("q-", 4, "1");
  // The four new pods fit only if every room the deleted ones held came back.
  WaitForBound(api, 4, *scheduler);
  RequirePromisesKept(api, *scheduler);
}

}  // namespace
}  // namespace kubesched::faults

namespace kubesched::faults {
namespace {

TEST_CASE("faults: a pod re-created under its name while its bind is in flight keeps its room",
          "[e2e][faults]") {
  auto server = testapi::TestApiProcess::Start();
  REQUIRE(server.ok());
  FaultApi api(**server);
  auto scheduler =
      testing::StartKubeschedRun({.kubeconfig = (*server)->kubeconfig(), .verbosity = 2});
  api.CreateNode("node-0", 4);
  api.SetFaults(R"({"latency": [{"verb": "create", "resource": "pods/binding", "ms": 1500}]})");
  api.CreatePod("web-0", "3");
  testing::RequireEventually("the first web-0's Binding is on its way", *scheduler, [&] {
    return !BindLog(api).empty() || api.Stats()["counters"].HasMember("faults.latency");
  });
  // A StatefulSet replaces the pod under the same name, with another UID; the successor's bind is
  // slower, so that the old bind fails while the successor's is still on its way.
  REQUIRE(api.Send("DELETE", "/api/v1/namespaces/default/pods/web-0").status == 200);
  api.SetFaults(R"({"latency": [{"verb": "create", "resource": "pods/binding", "ms": 4000}]})");
  api.CreatePod("web-0", "3");
  api.CreatePods("filler-", 3, "1");

  std::vector<api::Pod> pods = WaitForBound(api, 2, *scheduler);
  api.SetFaults("{}");
  RequirePendingSayWhy(api, *scheduler);
  pods = api.Pods();
  RequireNoOverCommit(pods, api.Nodes());
  RequireBoundOnce(api, pods);
  for (const api::Pod& pod : pods) {
    if (pod.meta.name == "web-0") CHECK(pod.spec.node_name == "node-0");
  }
  CHECK(CountBound(pods) == 2);
  // The deleted pod's stale queue entry was dropped, not tried again as if it were the successor
  // (which would write PodScheduled=False onto it).
  CHECK(testing::CountInLog(*scheduler, "pod default/web-0 unschedulable") == 0);
}

}  // namespace
}  // namespace kubesched::faults
