// The metrics stay bounded whatever pods carry: the real scheduler on the embedded cluster is
// flooded with pods whose policy annotations, queue labels, extended resources, group names,
// labels and annotations are random, and the set of series must not grow with them, nor keep
// anything of them once they are gone.

#include <catch2/catch.hpp>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "config/config.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/framework/gang_membership.h"
#include "scheduler/instrumentation/instrumentation.h"
#include "scheduler/metrics/metrics_server.h"
#include "scheduler/simulate/simulation.h"
#include "tests/feature/instrumented_world.h"
#include "tests/testing/builders.h"
#include "tests/testing/metrics_series.h"
#include "tests/testing/scrape.h"

namespace kubesched::metrics {
namespace {

using testing::LabelValues;
using testing::NodeBuilder;
using testing::PodBuilder;
using testing::Scrape;
using testing::Series;

// Every random value carries this, so a series that took one is easy to find.
constexpr char kMarker[] = "junk";

// One policy, so that a configured policy name is a label and an unknown one is not; a binding
// gives it to pods labelled placement=stack, which count under it as if they named it.
constexpr char kConfig[] = R"(
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
  - schedulerName: kubesched
policies:
  - name: stack
    pluginConfig:
      - name: NodeResourcesFit
        args: {scoringStrategy: {type: MostAllocated}}
policyBindings:
  - name: stack-by-label
    selector: {matchLabels: {placement: stack}}
    policy: stack
)";

config::Configuration Config() {
  auto parsed = config::ParseConfiguration(kConfig);
  REQUIRE(parsed.ok());
  return *std::move(parsed);
}

struct World : InstrumentedWorld {
  World() : InstrumentedWorld(Config()) {}
};

std::vector<std::string> WithMarker(const std::set<std::string>& series) {
  std::vector<std::string> found;
  for (const std::string& s : series) {
    if (absl::StrContains(s, kMarker)) found.push_back(s);
  }
  return found;
}

std::vector<std::string> Minus(const std::set<std::string>& a, const std::set<std::string>& b) {
  std::vector<std::string> out;
  for (const std::string& s : a) {
    if (!b.contains(s)) out.push_back(s);
  }
  return out;
}

// `count` pods in four kinds, all with random labels and annotations: one names a policy that
// does not exist, one a queue that does not exist, one requests an extended resource no node
// has, one joins a pod group of random name that never fills; every other one fits and binds.
std::vector<std::string> Flood(World& world, std::mt19937_64& random, int count,
                               const std::string& round) {
  const auto junk = [&random] { return absl::StrCat(kMarker, "-", random() % 1'000'000'000); };
  std::vector<std::string> names;
  for (int i = 0; i < count; ++i) {
    const std::string name = absl::StrCat("flood-", round, "-", i);
    PodBuilder pod(name);
    pod.Label(absl::StrCat("example.com/", junk()), junk())
        .Annotation(absl::StrCat("example.com/", junk()), junk());
    switch (i % 8) {
      case 0:
        pod.Container({{"cpu", "10m"}}).Annotation("kubesched.io/policy", junk());
        break;
      case 2:
        pod.Container({{"cpu", "10m"}}).Label("kubesched.io/queue", absl::StrCat("root.", junk()));
        break;
      case 4:
        pod.Container({{"cpu", "10m"}, {absl::StrCat("example.com/", junk()), "1"}});
        break;
      case 6:
        pod.Container({{"cpu", "10m"}})
            .Annotation(framework::kPodGroupAnnotation, junk())
            .Annotation(framework::kPodGroupMinMemberAnnotation, "5");
        break;
      default:
        pod.Container({{"cpu", "10m"}});
    }
    world.Add(pod.Build());
    names.push_back(name);
  }
  world.Run();
  return names;
}

TEST_CASE("metrics: pods with random annotations, queues and resources add no series",
          "[metrics][simulation]") {
  const uint64_t seed = std::random_device()();
  INFO("seed " << seed);
  std::mt19937_64 random(seed);
  World world;
  for (int i = 0; i < 3; ++i) {
    world.Add(NodeBuilder(absl::StrCat("node-", i))
                  .Capacity({{"cpu", "64"}, {"memory", "64Gi"}, {"pods", "200"}})
                  .Build());
  }
  // What ordinary pods make happen: binds, a pod too big, a pod under the configured policy.
  world.Add(PodBuilder("plain").Container({{"cpu", "1"}}).Build());
  world.Add(PodBuilder("too-big").Container({{"cpu", "1000"}}).Build());
  world.Add(PodBuilder("stacked")
                .Container({{"cpu", "1"}})
                .Annotation("kubesched.io/policy", "stack")
                .Build());
  world.Add(PodBuilder("too-big-by-binding")
                .Container({{"cpu", "1000"}})
                .Label("placement", "stack")
                .Build());
  world.Add(PodBuilder("stacked-by-binding")
                .Container({{"cpu", "1"}})
                .Label("placement", "stack")
                .Build());
  world.Run();
  const Scrape before_scrape = world.Metrics();
  const std::set<std::string> before = Series(before_scrape);
  CHECK(before_scrape.Value(kScheduleAttemptsTotal,
                            {{"profile", "stack"}, {"result", "scheduled"}}) == 2);
  CHECK(before_scrape.Value(kScheduleAttemptsTotal,
                            {{"profile", "kubesched"}, {"result", "scheduled"}}) == 1);
  // Waiting, the pod a binding placed under "stack" is counted there too.
  CHECK(before_scrape.Value(kUnschedulablePods,
                            {{"plugin", "NodeResourcesFit"}, {"profile", "stack"}}) == 1);
  CHECK(before_scrape.Value(kUnschedulablePods,
                            {{"plugin", "NodeResourcesFit"}, {"profile", "kubesched"}}) == 1);

  std::vector<std::string> pods = Flood(world, random, 40, "a");
  const Scrape flooded_scrape = world.Metrics();
  const std::set<std::string> flooded = Series(flooded_scrape);
  INFO("new after the first flood: " << absl::StrJoin(Minus(flooded, before), "\n"));
  CHECK(WithMarker(flooded).empty());
  // The flood did happen: its unschedulable pods wait, under the pod's own profile.
  CHECK(flooded_scrape.Value(kPendingPods, {{"queue", "unschedulable"}}) >= 20);
  CHECK(flooded_scrape.Value(kUnschedulablePods,
                             {{"plugin", "PolicySelection"}, {"profile", "kubesched"}}) == 5);

  const std::vector<std::string> more = Flood(world, random, 40, "b");
  pods.insert(pods.end(), more.begin(), more.end());
  const std::set<std::string> flooded_twice = Series(world.Metrics());
  INFO("new after the second flood: " << absl::StrJoin(Minus(flooded_twice, flooded), "\n"));
  CHECK(WithMarker(flooded_twice).empty());
  CHECK(flooded_twice == flooded);
  CHECK(LabelValues(world.Metrics()) == LabelValues(flooded_scrape));

  for (const std::string& name : pods) REQUIRE(world.cluster.DeletePod("default", name).ok());
  world.Run();
  const Scrape after_scrape = world.Metrics();
  const std::set<std::string> after = Series(after_scrape);
  CHECK(WithMarker(after).empty());
  CHECK(Minus(after, flooded).empty());
  CHECK(LabelValues(after_scrape) == LabelValues(flooded_scrape));
  CHECK(after_scrape.Value(kPendingPods, {{"queue", "unschedulable"}}) == 2);  // the too-big
  CHECK_FALSE(after_scrape.Has(kUnschedulablePods, {{"plugin", "PolicySelection"}}));
}

}  // namespace
}  // namespace kubesched::metrics
