// Metrics of the real scheduler on the embedded cluster (what `simulate` runs): counts checked
// against what a test observer saw happen, and `simulate --metrics FILE`.

#include <catch2/catch.hpp>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "rapidjson/document.h"
#include "scheduler/cmd/cli.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/instrumentation/instrumentation.h"
#include "scheduler/metrics/metrics_server.h"
#include "scheduler/simulate/simulation.h"
#include "tests/feature/instrumented_world.h"
#include "tests/testing/builders.h"
#include "tests/testing/scrape.h"
#include "tests/testing/temp_file.h"

namespace kubesched::metrics {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;
using testing::Scrape;

// Counts what the scheduler reports, to compare with the metrics. Simulate runs everything on
// the driver's thread, so no locking.
class CountingObserver : public scheduler::SchedulingObserver {
 public:
  void OnAttempt(const framework::PodInfo&, double) override { ++attempts; }
  void OnUnschedulable(const framework::PodInfo&, const std::string&, int) override {
    ++unschedulable;
  }
  void OnError(const framework::PodInfo&, const std::string&, int) override { ++errors; }
  void OnBound(const framework::PodInfo& pod, const std::string&, int) override {
    ++bound;
    bound_keys.push_back(pod.key);
  }
  void OnPreempted(const framework::PodInfo&, const std::string&,
                   const std::vector<std::string>& victims) override {
    ++preemptions;
    victim_count += static_cast<int>(victims.size());
  }

  int attempts = 0, unschedulable = 0, errors = 0, bound = 0, preemptions = 0, victim_count = 0;
  std::vector<std::string> bound_keys;
};

struct Counted {
  CountingObserver observer;
};

// The instrumented scheduler under upstream's defaults, its outcomes also counted (the observer
// first: built before the scheduler, gone after it).
struct World : Counted, InstrumentedWorld {
  World() : InstrumentedWorld(config::DefaultConfiguration(), &observer) {}
};

api::Node CpuNode(const std::string& name, const std::string& cpu) {
  return NodeBuilder(name).Capacity({{"cpu", cpu}, {"memory", "16Gi"}, {"pods", "110"}}).Build();
}

api::Pod CpuPod(const std::string& name, const std::string& cpu, int32_t priority = 0) {
  return PodBuilder(name).Container({{"cpu", cpu}}).Priority(priority).Build();
}

double Attempts(const Scrape& scrape, const std::string& result) {
  return scrape.Value(kScheduleAttemptsTotal, {{"result", result}, {"profile", "kubesched"}});
}

TEST_CASE("metrics: simulate counts every attempt once, by result, and binds and SLI per pod",
          "[metrics][simulation]") {
  World world;
  for (int i = 0; i < 2; ++i) world.Add(CpuNode(absl::StrCat("node-", i), "4"));
  for (int i = 0; i < 6; ++i) world.Add(CpuPod(absl::StrCat("small-", i), "1"));
  world.Add(CpuPod("huge-0", "8"));
  world.Add(CpuPod("huge-1", "16"));
  world.Run();
  const Scrape scrape = world.Metrics();
  const CountingObserver& seen = world.observer;
  REQUIRE(seen.bound == 6);

  const double scheduled = Attempts(scrape, "scheduled");
  const double unschedulable = Attempts(scrape, "unschedulable");
  const double error = Attempts(scrape, "error");
  CHECK(scheduled + unschedulable + error == seen.attempts);
  CHECK(scheduled == seen.bound);
  CHECK(unschedulable == seen.unschedulable);
  CHECK(error == seen.errors);
  const std::string attempt_count = std::string(kSchedulingAttemptDuration) + "_count";
  CHECK(scrape.Value(attempt_count) == seen.attempts);
  // Every attempt ran PreFilter once; the algorithm is timed for the attempts that found a node.
  CHECK(scrape.Value(std::string(kFrameworkExtensionPointDuration) + "_count",
                     {{"extension_point", "PreFilter"}, {"profile", "kubesched"}}) ==
        seen.attempts);
  CHECK(scrape.Value(std::string(kSchedulingAlgorithmDuration) + "_count") == seen.bound);
  CHECK(scrape.Value(std::string(kFrameworkExtensionPointDuration) + "_count",
                     {{"extension_point", "Bind"}, {"status", "Success"}}) == seen.bound);

  CHECK(scrape.Value(kBindsTotal, {{"result", "bound"}, {"profile", "kubesched"}}) == seen.bound);
  CHECK(scrape.Value(std::string(kPodSchedulingSliDuration) + "_count") == seen.bound);
  CHECK(scrape.Value(std::string(kPodSchedulingSliDuration) + "_count", {{"attempts", "1"}}) ==
        seen.bound);
  CHECK(scrape.Value(std::string(kPodSchedulingAttempts) + "_sum") == seen.bound);

  // The two huge pods wait in the unschedulable set, rejected by NodeResourcesFit.
  CHECK(scrape.Value(kPendingPods, {{"queue", "unschedulable"}}) == 2);
  CHECK(scrape.Value(kPendingPods, {{"queue", "active"}}) == 0);
  CHECK(scrape.Value(kPendingPods, {{"queue", "backoff"}}) == 0);
  CHECK(scrape.Value(kPendingPods, {{"queue", "gated"}}) == 0);
  CHECK(scrape.LabelSets(kUnschedulablePods) ==
        std::set<std::set<std::string>>{{"plugin", "profile"}});
  CHECK(scrape.Value(kUnschedulablePods,
                     {{"plugin", "NodeResourcesFit"}, {"profile", "kubesched"}}) == 2);
  CHECK(scrape.Value(kQueueIncomingPodsTotal, {{"queue", "active"}, {"event", "PodAdd"}}) == 8);
  CHECK(scrape.Value(kQueueIncomingPodsTotal, {{"event", "ScheduleAttemptFailure"}}) ==
        seen.unschedulable + seen.errors);

  CHECK(scrape.Value(kCacheSize, {{"type", "nodes"}}) == 2);
  CHECK(scrape.Value(kCacheSize, {{"type", "pods"}}) == 6);
  CHECK(scrape.Value(kCacheSize, {{"type", "assumed"}}) == 0);  // the watch confirmed them all
  CHECK(scrape.Value(kClusterAllocatedRatio, {{"resource", "cpu"}}) == Approx(6.0 / 8.0));
  CHECK(scrape.Value(kQueueQuotaUsed, {{"queue", "root"}, {"resource", "cpu"}}) == Approx(6));
  CHECK(scrape.Value(kQueueConfigReloadsTotal, {{"result", "rejected"}}) == 0);
  // No huge pod preempted anybody: all pods have the same priority.
  CHECK(scrape.Value(kPreemptionAttemptsTotal) == seen.unschedulable);
  CHECK(scrape.Value(std::string(kPreemptionVictims) + "_count") == 0);
}

TEST_CASE("metrics: preemption attempts and victims match the preemptions that happened",
          "[metrics][simulation]") {
  World world;
  world.Add(CpuNode("node-0", "4"));
  for (int i = 0; i < 4; ++i) world.Add(CpuPod(absl::StrCat("low-", i), "1", /*priority=*/0));
  world.Run();
  world.Add(CpuPod("high", "2", /*priority=*/1000));
  world.Run();
  const Scrape scrape = world.Metrics();
  const CountingObserver& seen = world.observer;
  REQUIRE(seen.preemptions == 1);
  REQUIRE(seen.victim_count == 2);
  CHECK(scrape.Value(kPreemptionAttemptsTotal) >= 1);
  CHECK(scrape.Value(kPreemptionAttemptsTotal) == seen.unschedulable);
  CHECK(scrape.Value(std::string(kPreemptionVictims) + "_count") == 1);
  CHECK(scrape.Value(std::string(kPreemptionVictims) + "_sum") == 2);
  CHECK(scrape.Value(std::string(kFrameworkExtensionPointDuration) + "_count",
                     {{"extension_point", "PostFilter"}, {"status", "Success"}}) == 1);
  // The preemptor was bound on its second attempt, after its victims were gone.
  CHECK(Attempts(scrape, "scheduled") + Attempts(scrape, "unschedulable") +
            Attempts(scrape, "error") ==
        seen.attempts);
  CHECK(scrape.Value(std::string(kPodSchedulingSliDuration) + "_count", {{"attempts", "2"}}) == 1);
  CHECK(scrape.Value(kCacheSize, {{"type", "pods"}}) == 3);
}

TEST_CASE("metrics: gated pods count as gated, by their plugin, until their last gate goes",
          "[metrics][simulation][gates]") {
  World world;
  world.Add(CpuNode("node-0", "4"));
  auto gated = [](std::vector<std::string> gates) {
    return PodBuilder("gated").Container({{"cpu", "1"}}).SchedulingGates(std::move(gates)).Build();
  };
  world.Add(gated({"example.com/foo"}));
  world.Run();
  Scrape scrape = world.Metrics();
  CHECK(scrape.Value(kPendingPods, {{"queue", "gated"}}) == 1);
  CHECK(scrape.Value(kPendingPods, {{"queue", "unschedulable"}}) == 0);
  CHECK(scrape.Value(kPendingPods, {{"queue", "active"}}) == 0);
  CHECK(scrape.Value(kUnschedulablePods,
                     {{"plugin", "SchedulingGates"}, {"profile", "kubesched"}}) == 1);
  // As upstream labels it: a gated pod enters the unschedulable pods.
  CHECK(scrape.Value(kQueueIncomingPodsTotal, {{"queue", "unschedulable"}, {"event", "PodAdd"}}) ==
        1);
  CHECK(world.observer.attempts == 0);

  REQUIRE(world.cluster.UpdatePod(gated({})).ok());
  world.Run();
  scrape = world.Metrics();
  CHECK(scrape.Value(kPendingPods, {{"queue", "gated"}}) == 0);
  CHECK(scrape.Value(kUnschedulablePods,
                     {{"plugin", "SchedulingGates"}, {"profile", "kubesched"}}) == 0);
  CHECK(scrape.Value(kQueueIncomingPodsTotal, {{"queue", "active"}, {"event", "PodUpdate"}}) == 1);
  CHECK(world.observer.bound == 1);
}

// Runs the CLI in-process.
struct CliResult {
  int code = 0;
  std::string out, err;
};
CliResult Cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = scheduler::RunCli(args, out, err);
  return {code, out.str(), err.str()};
}

// A member of the implicit group `group` (annotations) of `min_member`, asking for one cpu.
api::Pod GangMember(const std::string& name, const std::string& group, int min_member) {
  return PodBuilder(name)
      .Container({{"cpu", "1"}})
      .Annotation(framework::kPodGroupAnnotation, group)
      .Annotation(framework::kPodGroupMinMemberAnnotation, std::to_string(min_member))
      .Build();
}

TEST_CASE("metrics: simulate counts pod groups by phase and times each group placed whole once",
          "[metrics][simulation][gang]") {
  World world;
  world.Add(CpuNode("node-0", "4"));
  // "late" has two of its three members; they wait for the third.
  world.Add(GangMember("late-0", "late", 3));
  world.Add(GangMember("late-1", "late", 3));
  world.Run();
  Scrape scrape = world.Metrics();
  CHECK(scrape.Value(kPodGroups, {{"phase", "Pending"}}) == 1);
  CHECK(scrape.Value(std::string(kPodGroupSchedulingDuration) + "_count") == 0);

  // The third member comes a minute later: the group is placed, timed from its first attempt.
  world.clock.Advance(absl::Minutes(1));
  world.Add(GangMember("late-2", "late", 3));
  world.Run();
  // "big" needs five cpus where one is left: it is given up, and never timed.
  for (int i = 0; i < 5; ++i) world.Add(GangMember(absl::StrCat("big-", i), "big", 5));
  world.Run();
  REQUIRE(world.observer.bound == 3);
  scrape = world.Metrics();
  CHECK(scrape.Value(kPodGroups, {{"phase", "Scheduled"}}) == 1);
  CHECK(scrape.Value(kPodGroups, {{"phase", "Pending"}}) == 1);
  CHECK(scrape.Value(kPodGroups, {{"phase", "Scheduling"}}) == 0);
  CHECK(scrape.Value(std::string(kPodGroupSchedulingDuration) + "_count") == 1);
  CHECK(scrape.Value(std::string(kPodGroupSchedulingDuration) + "_sum") >= 60);
  // A node more and "big" fits: one more group placed, one more observation.
  world.Add(CpuNode("node-1", "4"));
  world.Run();
  scrape = world.Metrics();
  CHECK(world.observer.bound == 8);
  CHECK(scrape.Value(kPodGroups, {{"phase", "Scheduled"}}) == 2);
  CHECK(scrape.Value(std::string(kPodGroupSchedulingDuration) + "_count") == 2);
}

TEST_CASE("metrics: simulate --metrics FILE writes the final scrape, parsable and consistent",
          "[metrics][simulation][cli]") {
  testing::TempFile placeholder("", "metrics.prom");
  const std::string path = placeholder.path();
  const CliResult result =
      Cli({"simulate", "--cluster", testing::SourcePath("examples/cluster.yaml"), "--workload",
           testing::SourcePath("examples/workload.yaml"), "--metrics", path, "--output", "json"});
  INFO(result.err);
  REQUIRE(result.code == scheduler::kExitOk);
  std::ifstream file(path);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  auto scrape = Scrape::Parse(text);
  INFO(scrape.status());
  REQUIRE(scrape.ok());
  for (const char* family :
       {kScheduleAttemptsTotal, kSchedulingAttemptDuration, kSchedulingAlgorithmDuration,
        kPendingPods, kPodSchedulingSliDuration, kPodSchedulingAttempts,
        kFrameworkExtensionPointDuration, kPreemptionAttemptsTotal, kPreemptionVictims,
        kQueueIncomingPodsTotal, kUnschedulablePods, kCacheSize, kQueueQuotaUsed,
        kClusterAllocatedRatio, kQueueConfigReloadsTotal, kPolicyReloadsTotal, kBindsTotal}) {
    INFO(family);
    CHECK_FALSE(scrape->Type(family).empty());
  }
  // About 25 of the ~250 cycles were sampled: plugin timings exist for the per-pod and the
  // per-node extension points.
  const std::string plugin_count = std::string(kPluginExecutionDuration) + "_count";
  CHECK(scrape->Value(plugin_count, {{"extension_point", "PreFilter"}}) > 0);
  CHECK(scrape->Value(plugin_count, {{"extension_point", "Filter"}}) > 0);
  CHECK(scrape->Value(plugin_count, {{"extension_point", "Score"}}) > 0);
  // Every pod the report shows scheduled was bound by a scheduled attempt; pods bound and then
  // preempted are not in the report but were attempts too. Simulate never fails a bind.
  rapidjson::Document report;
  report.Parse(result.out.data(), result.out.size());
  REQUIRE(report.IsObject());
  const int scheduled = report["summary"]["scheduled"].GetInt();
  const int preempted = report["summary"]["preempted"].GetInt();
  CHECK(scheduled > 200);
  const double scheduled_attempts =
      scrape->Value(kScheduleAttemptsTotal, {{"result", "scheduled"}});
  CHECK(scheduled_attempts >= scheduled);
  CHECK(scheduled_attempts <= scheduled + preempted);
  CHECK(scrape->Value(kBindsTotal, {{"result", "bound"}}) == scheduled_attempts);
  CHECK(scrape->Value(kPendingPods, {{"queue", "unschedulable"}}) ==
        report["summary"]["unschedulable"].GetInt());
}

TEST_CASE("metrics: simulate --metrics with a path that cannot be written fails before running",
          "[metrics][simulation][cli]") {
  const CliResult result =
      Cli({"simulate", "--cluster", testing::SourcePath("examples/cluster.yaml"), "--metrics",
           "/nonexistent-directory/metrics.prom"});
  CHECK(result.code == scheduler::kExitUsage);
  CHECK(absl::StrContains(result.err,
                          "--metrics: cannot write \"/nonexistent-directory/metrics.prom\""));
  CHECK(result.out.empty());
}

TEST_CASE("metrics: run rejects a bad --metrics-bind-address with exit code 2", "[metrics][cli]") {
  struct Case {
    std::string address;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{{"nope", "want host:port"},
                                         {"localhost:10251", "is not an IP address"},
                                         {"0.0.0.0:70000", "want host:port"}}) {
    INFO(c.address);
    const CliResult result = Cli({"run", "--metrics-bind-address", c.address});
    CHECK(result.code == scheduler::kExitUsage);
    CHECK(absl::StrContains(result.err, "--metrics-bind-address"));
    CHECK(absl::StrContains(result.err, c.message));
  }
}

}  // namespace
}  // namespace kubesched::metrics
