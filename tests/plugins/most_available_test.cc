// MostAvailable (load-aware scoring): the formula through the real cache (metrics samples,
// VirtualRequests of pods placed since a sample, staleness), the annotation, zero allocatable,
// weights, and args validation.

#include "plugins/most_available/most_available.h"

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "config/plugin_args.h"
#include "scheduler/api/decode.h"
#include "scheduler/cache/cache.h"
#include "scheduler/framework/virtual_request.h"
#include "scheduler/util/clock.h"
#include "scheduler/util/log.h"
#include "tests/plugins/plugin_fixture.h"

namespace kubesched::plugins {
namespace {

using plugin_testing::Info;
using plugin_testing::Unwrap;
using testing::NodeBuilder;
using testing::PodBuilder;

const absl::Time kStart = absl::FromUnixSeconds(1'700'000'000);

api::NodeMetrics Sample(const std::string& node, std::optional<absl::Time> at,
                        std::vector<std::pair<std::string, std::string>> usage) {
  api::NodeMetrics metrics;
  metrics.meta.name = node;
  metrics.timestamp = at;
  metrics.usage = testing::Resources(usage);
  return metrics;
}

// A cache on a fake clock and a MostAvailable plugin; Score runs PreScore then Score on one node.
struct Fixture {
  explicit Fixture(config::MostAvailableArgs args = CpuOnly()) {
    plugin = Unwrap<MostAvailable>(NewMostAvailable(args, {}));
  }
  static config::MostAvailableArgs CpuOnly() {
    config::MostAvailableArgs args;
    args.resources = {{"cpu", 1}};
    return args;
  }
  void Node(const std::string& name, std::vector<std::pair<std::string, std::string>> capacity) {
    cache.AddNode(NodeBuilder(name).Capacity(capacity).Ptr());
  }
  // A pod the informer shows bound (placed before any sample we know of).
  void Bound(const std::string& node, PodBuilder pod) {
    REQUIRE(cache.AddPod(Info(pod.NodeName(node))).ok());
  }
  // A pod this scheduler places now.
  void Assume(const std::string& node, PodBuilder pod) {
    REQUIRE(cache.AssumePod(Info(pod.NodeName(node))).ok());
  }
  int64_t Score(const std::string& node, const PodBuilder& pod) {
    cache.UpdateSnapshot(&snapshot);
    const framework::NodeInfo* info = snapshot.Get(node);
    REQUIRE(info != nullptr);
    framework::CycleState state;
    const auto incoming = Info(pod);
    REQUIRE(plugin->PreScore(state, *incoming, snapshot, snapshot.nodes()).IsSuccess());
    return plugin->Score(state, *incoming, *info);
  }

  util::FakeClock clock{kStart};
  cache::Cache cache{&clock};
  framework::Snapshot snapshot;
  std::unique_ptr<MostAvailable> plugin;
};

PodBuilder CpuPod(const std::string& name, const std::string& cpu) {
  return PodBuilder(name).Container({{"cpu", cpu}});
}

TEST_CASE("MostAvailable scores allocatable minus usage minus virtual requests",
          "[plugins][most_available]") {
  struct Case {
    std::string name;
    std::function<void(Fixture&)> setup;
    PodBuilder pod;
    int64_t want;
  };
  const std::vector<Case> cases = {
      {"fresh sample: (10 - 4 - 1) / 10",
       [](Fixture& f) {
         f.cache.SetNodeMetrics(Sample("n", kStart, {{"cpu", "4"}}));
       },
       CpuPod("p", "1"), 50},
      {"bound pods are in the measured usage, not subtracted again",
       [](Fixture& f) {
         f.cache.SetNodeMetrics(Sample("n", kStart, {{"cpu", "4"}}));
         f.Bound("n", CpuPod("old", "3"));
       },
       CpuPod("p", "1"), 50},
      {"a pod placed since the sample counts with its requests",
       [](Fixture& f) {
         f.cache.SetNodeMetrics(Sample("n", kStart, {{"cpu", "4"}}));
         f.clock.Advance(absl::Seconds(5));
         f.Assume("n", CpuPod("new", "2"));
       },
       CpuPod("p", "1"), 30},
      {"a pod placed since the sample counts with its annotation",
       [](Fixture& f) {
         f.cache.SetNodeMetrics(Sample("n", kStart, {{"cpu", "4"}}));
         f.Assume(
             "n",
             CpuPod("new", "2").Annotation("kubesched.io/virtual-request", R"({"cpu":"500m"})"));
       },
       CpuPod("p", "1"), 45},
      {"the incoming pod's annotation replaces its requests",
       [](Fixture& f) {
         f.cache.SetNodeMetrics(Sample("n", kStart, {{"cpu", "4"}}));
       },
       CpuPod("p", "1").Annotation("kubesched.io/virtual-request", R"({"cpu": 3})"), 30},
      {"a bad annotation falls back to the requests",
       [](Fixture& f) {
         f.cache.SetNodeMetrics(Sample("n", kStart, {{"cpu", "4"}}));
       },
       CpuPod("p", "1").Annotation("kubesched.io/virtual-request", "{cpu: two"), 50},
      {"a newer sample absorbs the pods placed before it",
       [](Fixture& f) {
         f.cache.SetNodeMetrics(Sample("n", kStart, {{"cpu", "4"}}));
         f.clock.Advance(absl::Seconds(5));
         f.Assume("n", CpuPod("new", "2"));
         f.clock.Advance(absl::Seconds(25));
         f.cache.SetNodeMetrics(Sample("n", kStart + absl::Seconds(30), {{"cpu", "6"}}));
       },
       CpuPod("p", "1"), 30},
      {"an older sample than the current one is ignored",
       [](Fixture& f) {
         f.cache.SetNodeMetrics(Sample("n", kStart, {{"cpu", "4"}}));
         f.cache.SetNodeMetrics(Sample("n", kStart - absl::Seconds(30), {{"cpu", "9"}}));
       },
       CpuPod("p", "1"), 50},
      {"a sample without a timestamp is taken now",
       [](Fixture& f) {
         f.cache.SetNodeMetrics(Sample("n", std::nullopt, {{"cpu", "4"}}));
       },
       CpuPod("p", "1"), 50},
      {"no sample: allocatable - requested", [](Fixture& f) { f.Bound("n", CpuPod("old", "2")); },
       CpuPod("p", "1"), 70},
      {"stale sample (older than 3m): allocatable - requested",
       [](Fixture& f) {
         f.cache.SetNodeMetrics(Sample("n", kStart, {{"cpu", "9"}}));
         f.Bound("n", CpuPod("old", "2"));
         f.clock.Advance(absl::Minutes(3) + absl::Seconds(1));
       },
       CpuPod("p", "1"), 70},
      {"a sample exactly at the staleness limit is still used",
       [](Fixture& f) {
         f.cache.SetNodeMetrics(Sample("n", kStart, {{"cpu", "4"}}));
         f.clock.Advance(absl::Minutes(3));
       },
       CpuPod("p", "1"), 50},
      {"usage above allocatable scores 0",
       [](Fixture& f) {
         f.cache.SetNodeMetrics(Sample("n", kStart, {{"cpu", "12"}}));
       },
       CpuPod("p", "1"), 0},
      {"a forgotten assumed pod stops counting",
       [](Fixture& f) {
         f.cache.SetNodeMetrics(Sample("n", kStart, {{"cpu", "4"}}));
         f.Assume("n", CpuPod("new", "2"));
         REQUIRE(f.cache.ForgetPod("default/new", "default-new-uid").ok());
       },
       CpuPod("p", "1"), 50},
      {"a confirmed assumed pod keeps counting",
       [](Fixture& f) {
         f.cache.SetNodeMetrics(Sample("n", kStart, {{"cpu", "4"}}));
         f.Assume("n", CpuPod("new", "2"));
         f.Bound("n", CpuPod("new", "2"));
       },
       CpuPod("p", "1"), 30},
      {"a sample that arrives before its node applies when the node appears",
       [](Fixture& f) {
         f.cache.SetNodeMetrics(Sample("late", kStart, {{"cpu", "4"}}));
       },
       CpuPod("p", "1"), 50},
  };
  for (const Case& c : cases) {
    SECTION(c.name) {
      util::SetLogSinkForTesting([](std::string_view, std::string_view) {});
      Fixture f;
      const bool late = c.name.find("before its node") != std::string::npos;
      if (!late) f.Node("n", {{"cpu", "10"}});
      c.setup(f);
      if (late) f.Node("late", {{"cpu", "10"}});
      CHECK(f.Score(late ? "late" : "n", c.pod) == c.want);
      util::SetLogSinkForTesting({});
    }
  }
}

TEST_CASE("MostAvailable weights resources and leaves out those a node has none of",
          "[plugins][most_available]") {
  config::MostAvailableArgs args;
  args.resources = {{"cpu", 3}, {"memory", 1}, {"nvidia.com/gpu", 2}};
  Fixture f(args);
  f.Node("cpu-mem", {{"cpu", "10"}, {"memory", "10Gi"}});
  f.Node("mem-only", {{"memory", "10Gi"}});
  f.Node("none", {{"pods", "110"}});
  f.cache.SetNodeMetrics(Sample("cpu-mem", kStart, {{"cpu", "4"}, {"memory", "0"}}));
  f.cache.SetNodeMetrics(Sample("mem-only", kStart, {{"memory", "5Gi"}}));
  const PodBuilder pod = PodBuilder("p").Container({{"cpu", "1"}, {"memory", "1Gi"}});
  // cpu 5/10 weight 3, memory 9/10 weight 1; no GPUs on the node: (1.5 + 0.9) / 4.
  CHECK(f.Score("cpu-mem", pod) == 60);
  // Only memory: 4/10.
  CHECK(f.Score("mem-only", pod) == 40);
  CHECK(f.Score("none", pod) == 0);
}

TEST_CASE("MostAvailable warns once per pod about a bad annotation", "[plugins][most_available]") {
  std::vector<std::string> lines;
  util::SetLogSinkForTesting(
      [&lines](std::string_view, std::string_view message) { lines.emplace_back(message); });
  Fixture f;
  f.Node("n", {{"cpu", "10"}});
  const PodBuilder pod =
      CpuPod("p", "1").Annotation("kubesched.io/virtual-request", R"({"cpu":"-1"})");
  CHECK(f.Score("n", pod) == 90);
  CHECK(f.Score("n", pod) == 90);
  util::SetLogSinkForTesting({});
  REQUIRE(lines.size() == 1);
  CHECK_THAT(lines[0], Catch::Contains("default/p") && Catch::Contains("virtual-request") &&
                           Catch::Contains("must not be negative"));
}

TEST_CASE("VirtualRequest annotation parsing", "[plugins][most_available]") {
  auto ok = api::DecodeResourceListJson(R"({"cpu":"2","memory":"4Gi","nvidia.com/gpu":1})");
  REQUIRE(ok.ok());
  CHECK(ok->Get(api::kCpu) == 2000);
  CHECK(ok->Get(api::kMemory) == 4LL << 30);
  CHECK(ok->Get(api::InternResource("nvidia.com/gpu")) == 1);
  for (const char* bad : {"", "[]", "\"2\"", "{\"cpu\":\"lots\"}", "{\"cpu\":\"1\"", "null"}) {
    INFO(bad);
    CHECK_FALSE(api::DecodeResourceListJson(bad).ok());
  }
}

std::string ArgsError(const std::string& yaml) {
  auto args = config::ParsePluginArgs("MostAvailable", yaml);
  return args.ok() ? "ok" : std::string(args.status().message());
}

TEST_CASE("MostAvailable args: defaults, decoding and validation with field paths",
          "[plugins][most_available]") {
  auto defaults = config::ParsePluginArgs("MostAvailable", "{}");
  REQUIRE(defaults.ok());
  const auto& typed = std::get<config::MostAvailableArgs>(*defaults);
  CHECK(typed.resources.size() == 2);
  CHECK(typed.metrics_poll_interval == absl::Seconds(30));
  CHECK(typed.metrics_staleness_limit == absl::Minutes(3));

  auto full = config::ParsePluginArgs(
      "MostAvailable",
      "resources: [{name: nvidia.com/gpu, weight: 5}]\nmetricsPollInterval: 10s\n"
      "metricsStalenessLimit: 1m\n");
  REQUIRE(full.ok());
  const auto& set = std::get<config::MostAvailableArgs>(*full);
  REQUIRE(set.resources.size() == 1);
  CHECK(set.resources[0].weight == 5);
  CHECK(set.metrics_poll_interval == absl::Seconds(10));
  CHECK(set.metrics_staleness_limit == absl::Minutes(1));

  CHECK_THAT(ArgsError("metricsPollInterval: 0s"),
             Catch::Contains("metricsPollInterval") && Catch::Contains("greater than zero"));
  CHECK_THAT(ArgsError("metricsStalenessLimit: -1m"),
             Catch::Contains("metricsStalenessLimit") && Catch::Contains("greater than zero"));
  CHECK_THAT(ArgsError("metricsPollInterval: 30"),
             Catch::Contains("metricsPollInterval") && Catch::Contains("duration"));
  CHECK_THAT(ArgsError("resources: [{name: cpu, weight: 0}]"),
             Catch::Contains("resources[0].weight"));
  CHECK_THAT(ArgsError("resources: [{name: cpu}, {name: cpu}]"),
             Catch::Contains("resources[1].name") && Catch::Contains("duplicate"));
  CHECK_THAT(ArgsError("pollInterval: 10s"), Catch::Contains("pollInterval"));
  CHECK_THAT(ArgsError("kind: NodeResourcesFitArgs"), Catch::Contains("kind"));

  config::MostAvailableArgs bad;
  bad.metrics_staleness_limit = absl::ZeroDuration();
  auto made = NewMostAvailable(bad, {});
  REQUIRE_FALSE(made.ok());
  CHECK_THAT(std::string(made.status().message()),
             Catch::Contains("MostAvailable: metricsStalenessLimit"));
}

}  // namespace
}  // namespace kubesched::plugins
