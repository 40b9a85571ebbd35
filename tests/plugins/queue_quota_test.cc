// QueueQuota: PreFilter's verdict per pod, Filter by node model for typed limits, Reserve and
// Unreserve against the QuotaTracker.

#include "plugins/queue_quota/queue_quota.h"

#include <catch2/catch.hpp>

#include "config/queues.h"
#include "plugins/names.h"
#include "tests/plugins/plugin_fixture.h"

namespace kubesched::plugins {
namespace {

using plugin_testing::Cluster;
using plugin_testing::Info;
using plugin_testing::NodeBuilder;
using plugin_testing::PodBuilder;
using plugin_testing::Verdict;

constexpr char kTree[] = R"(
tree:
- name: ml
  max: {nvidia.com/gpu: "8", nvidia.com/gpu.A100: "2"}
)";

struct Fixture {
  util::FakeClock clock;
  quota::QuotaTracker tracker{&clock, *config::ParseQueuesDocument(kTree)};
  QueueQuota plugin{&tracker};
  Cluster cluster;
  Fixture() {
    for (const auto& [name, model] : {std::pair{"a100", "A100"}, std::pair{"v100", "V100"}}) {
      auto node = NodeBuilder(name)
                      .Capacity({{"nvidia.com/gpu", "8"}})
                      .Label("nvidia.com/gpu.product", model);
      cluster.Node(node);
      tracker.SetNode(node.Build());
    }
  }
};

PodBuilder GpuPod(const std::string& name, const std::string& gpus) {
  return PodBuilder(name)
      .Container({{"nvidia.com/gpu", gpus}})
      .Label("kubesched.io/queue", "root.ml");
}

TEST_CASE("QueueQuota skips Filter when nothing is blocked per model", "[plugins][quota]") {
  Fixture f;
  framework::CycleState state;
  const auto outcome = f.plugin.PreFilter(state, *Info(GpuPod("p", "1")), f.cluster.Build());
  CHECK(outcome.status.IsSkip());
}

TEST_CASE("QueueQuota: with the A100 quota used up, only V100 nodes pass", "[plugins][quota]") {
  Fixture f;
  const auto& snapshot = f.cluster.Build();
  {
    framework::CycleState state;
    auto first = Info(GpuPod("first", "2"));
    REQUIRE(f.plugin.PreFilter(state, *first, snapshot).status.IsSkip());
    REQUIRE(f.plugin.Reserve(state, *first, "a100").IsSuccess());
  }
  framework::CycleState state;
  auto pod = Info(GpuPod("second", "1"));
  const auto outcome = f.plugin.PreFilter(state, *pod, snapshot);
  REQUIRE(outcome.status.IsSuccess());
  CHECK(Verdict(f.plugin.Filter(state, *pod, *snapshot.Get("a100"))) ==
        std::vector<std::string>{"queue root.ml: insufficient quota for nvidia.com/gpu.A100 "
                                 "(used 2, max 2, requested 1)"});
  CHECK(f.plugin.Filter(state, *pod, *snapshot.Get("a100")).code() ==
        framework::Code::kUnschedulable);
  CHECK(Verdict(f.plugin.Filter(state, *pod, *snapshot.Get("v100"))) ==
        std::vector<std::string>{"pass"});
  const auto refused = f.plugin.Reserve(state, *pod, "a100");
  CHECK(refused.code() == framework::Code::kUnschedulable);
  CHECK(refused.Message() ==
        "queue root.ml: insufficient quota for nvidia.com/gpu.A100 (used 2, max 2, requested 1)");
  CHECK(f.plugin.Reserve(state, *pod, "v100").IsSuccess());
}

TEST_CASE("QueueQuota rejects every node in PreFilter when the queue is full", "[plugins][quota]") {
  Fixture f;
  framework::CycleState filler;
  auto big = Info(GpuPod("big", "8"));
  REQUIRE(f.plugin.Reserve(filler, *big, "v100").IsSuccess());
  framework::CycleState state;
  auto pod = Info(GpuPod("late", "1"));
  const auto outcome = f.plugin.PreFilter(state, *pod, f.cluster.Build());
  CHECK(outcome.status.code() == framework::Code::kUnschedulable);
  CHECK(outcome.status.Message() ==
        "queue root.ml: insufficient quota for nvidia.com/gpu (used 8, max 8, requested 1)");
  // Unreserve refunds: the next pod fits again.
  f.plugin.Unreserve(filler, *big, "v100");
  framework::CycleState again;
  CHECK(f.plugin.PreFilter(again, *pod, f.cluster.Build()).status.IsSkip());
}

TEST_CASE("QueueQuota: a pod aimed at a parent queue is unresolvable", "[plugins][quota]") {
  util::FakeClock clock;
  quota::QuotaTracker tracker(
      &clock, *config::ParseQueuesDocument("tree: [{name: p, queues: [{name: c}]}]"));
  QueueQuota plugin(&tracker);
  Cluster cluster;
  cluster.Node(NodeBuilder("n"));
  framework::CycleState state;
  auto pod = Info(PodBuilder("x").Label("kubesched.io/queue", "root.p"));
  const auto outcome = plugin.PreFilter(state, *pod, cluster.Build());
  CHECK(outcome.status.code() == framework::Code::kUnschedulableAndUnresolvable);
  CHECK_THAT(outcome.status.Message(), Catch::Contains("is a parent queue"));
}

TEST_CASE("QueueQuota without a tracker lets everything through", "[plugins][quota]") {
  auto made = NewQueueQuota({}, PluginHandle{});
  REQUIRE(made.ok());
  auto* plugin = dynamic_cast<QueueQuota*>(made->get());
  REQUIRE(plugin != nullptr);
  Cluster cluster;
  framework::CycleState state;
  CHECK(plugin->PreFilter(state, *Info(PodBuilder("x")), cluster.Build()).status.IsSkip());
  CHECK(plugin->Name() == names::kQueueQuota);
}

}  // namespace
}  // namespace kubesched::plugins
