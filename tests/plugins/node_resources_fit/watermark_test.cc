// The Watermark strategy per pool: a pod's ratio over the nodes it could use (taints it does not
// tolerate and cordons left out), explicit pools by node labels, and one hysteresis per pool.

#include "plugins/node_resources_fit/watermark.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "scheduler/api/cordon.h"
#include "scheduler/cache/cache.h"
#include "scheduler/util/clock.h"
#include "tests/testing/builders.h"

namespace kubesched {
namespace {

using api::TaintEffect;
using plugins::Watermark;
using testing::NodeBuilder;
using testing::PodBuilder;
using Mode = Watermark::Mode;

const std::vector<Watermark::Weight> kCpu = {{api::kCpu, 1}};

std::vector<api::Toleration> GpuToleration() {
  return PodBuilder("t")
      .Toleration("nvidia.com/gpu", "present", TaintEffect::kNoSchedule)
      .Build()
      .spec.tolerations;
}

// CPU nodes of 10 cpus (label pool=cpu) and one tainted 40-cpu GPU node (pool=gpu), with pods
// set to the given cpus per node.
struct World {
  explicit World(std::vector<std::string> label_keys = {"pool"}) {
    cache.EnableNodeGroups(label_keys);
    for (const char* name : {"cpu-1", "cpu-2"}) {
      cache.AddNode(NodeBuilder(name).Capacity({{"cpu", "10"}}).Label("pool", "cpu").Ptr());
    }
    cache.AddNode(NodeBuilder("gpu-1")
                      .Capacity({{"cpu", "40"}})
                      .Label("pool", "gpu")
                      .Taint("nvidia.com/gpu", "present", TaintEffect::kNoSchedule)
                      .Ptr());
  }
  // Puts `cpu` cpus on `node` (replacing what Fill put there before).
  const framework::Snapshot& Fill(const std::string& node, const std::string& cpu) {
    const std::string key = "default/fill-" + node;
    if (cache.GetPod(key) != nullptr) REQUIRE(cache.RemovePod(key).ok());
    if (cpu != "0") {
      REQUIRE(cache
                  .AddPod(framework::MakePodInfo(
                      PodBuilder("fill-" + node).NodeName(node).Container({{"cpu", cpu}}).Ptr(), 0))
                  .ok());
    }
    cache.UpdateSnapshot(&snapshot);
    return snapshot;
  }

  util::FakeClock clock;
  cache::Cache cache{&clock};
  framework::Snapshot snapshot;
};

config::WatermarkPool Pool(const std::string& name, const std::string& value, double high,
                           double low) {
  return config::WatermarkPool{name, {{"pool", value}}, high, low};
}

TEST_CASE("a pod's ratio leaves out nodes with taints it does not tolerate",
          "[plugins][watermark]") {
  World world;
  world.Fill("cpu-1", "10");
  const auto& snapshot = world.Fill("cpu-2", "9.5");
  Watermark watermark({0.85, 0.80, {}}, kCpu);
  // A CPU pod sees 19.5 of 20 cpus: stack. Counting the empty GPU node it would be 19.5/60.
  const auto cpu = watermark.Observe(snapshot, {});
  CHECK(cpu.pool == "default");
  CHECK(cpu.allocated_ratio == Approx(19.5 / 20));
  CHECK(cpu.mode == Mode::kStack);
  // A pod tolerating the GPU taint may use every node, and keeps its own mode.
  const auto gpu = watermark.Observe(snapshot, GpuToleration());
  CHECK(gpu.allocated_ratio == Approx(19.5 / 60));
  CHECK(gpu.mode == Mode::kSpread);
  CHECK(watermark.Observe(snapshot, {}).mode == Mode::kStack);
}

TEST_CASE("a cordoned node is left out unless the pod tolerates the cordon",
          "[plugins][watermark]") {
  World world;
  world.Fill("cpu-1", "9");
  world.cache.UpdateNode(
      NodeBuilder("cpu-2").Capacity({{"cpu", "10"}}).Label("pool", "cpu").Unschedulable().Ptr());
  const auto& snapshot = world.Fill("cpu-2", "0");
  Watermark watermark({0.85, 0.80, {}}, kCpu);
  CHECK(watermark.Observe(snapshot, {}).allocated_ratio == Approx(0.9));
  const auto tolerates_cordon =
      PodBuilder("t")
          .Toleration(std::string(api::kUnschedulableTaintKey), "", TaintEffect::kNoSchedule,
                      api::TolerationOperator::kExists)
          .Build()
          .spec.tolerations;
  CHECK(watermark.Observe(snapshot, tolerates_cordon).allocated_ratio == Approx(9.0 / 20));
}

TEST_CASE("a pod that can use no node has ratio 0 and spreads", "[plugins][watermark]") {
  World world;
  world.cache.RemoveNode("cpu-1");
  world.cache.RemoveNode("cpu-2");
  const auto& snapshot = world.Fill("gpu-1", "40");
  Watermark watermark({0.85, 0.80, {}}, kCpu);
  const auto status = watermark.Observe(snapshot, {});
  CHECK(status.allocated_ratio == 0);
  CHECK(status.mode == Mode::kSpread);
}

TEST_CASE("explicit pools each keep their own ratio and hysteresis", "[plugins][watermark]") {
  World world;
  Watermark watermark({0.85, 0.80, {Pool("gpu", "gpu", 0.5, 0.4), Pool("cpu", "cpu", 0.85, 0.8)}},
                      kCpu);
  world.Fill("cpu-1", "9");
  world.Fill("cpu-2", "9");
  const auto& snapshot = world.Fill("gpu-1", "18");  // 0.45
  // CPU pods cannot use the GPU pool (tainted): theirs is the cpu pool.
  auto cpu = watermark.Observe(snapshot, {});
  CHECK(cpu.pool == "cpu");
  CHECK(cpu.allocated_ratio == Approx(0.9));
  CHECK(cpu.mode == Mode::kStack);
  // GPU pods could use both; the gpu pool comes first in the configuration.
  auto gpu = watermark.Observe(snapshot, GpuToleration());
  CHECK(gpu.pool == "gpu");
  CHECK(gpu.allocated_ratio == Approx(0.45));
  CHECK(gpu.mode == Mode::kSpread);

  // gpu to 0.6 (stack), back to 0.45 (between its low and high: still stack).
  CHECK(watermark.Observe(world.Fill("gpu-1", "24"), GpuToleration()).mode == Mode::kStack);
  CHECK(watermark.Observe(world.Fill("gpu-1", "18"), GpuToleration()).mode == Mode::kStack);
  // cpu down to 0.5: the cpu pool spreads, the gpu pool keeps stacking.
  world.Fill("cpu-1", "5");
  const auto& after = world.Fill("cpu-2", "5");
  CHECK(watermark.Observe(after, {}).mode == Mode::kSpread);
  CHECK(watermark.Observe(after, GpuToleration()).mode == Mode::kStack);

  const auto last = watermark.Last();
  REQUIRE(last.size() == 2);  // the default pool was never used
  CHECK(last[0].pool == "gpu");
  CHECK(last[0].mode == Mode::kStack);
  CHECK(last[1].pool == "cpu");
  CHECK(last[1].mode == Mode::kSpread);
  CHECK(last[1].allocated_ratio == Approx(0.5));
}

TEST_CASE("nodes in no pool form the default pool", "[plugins][watermark]") {
  World world;
  world.Fill("cpu-1", "10");
  const auto& snapshot = world.Fill("cpu-2", "10");
  Watermark watermark({0.85, 0.80, {Pool("gpu", "gpu", 0.5, 0.4)}}, kCpu);
  const auto status = watermark.Observe(snapshot, {});
  CHECK(status.pool == "default");
  CHECK(status.allocated_ratio == Approx(1.0));
  CHECK(watermark.LabelKeys() == std::vector<std::string>{"pool"});
}

TEST_CASE("without groups in the snapshot the ratio is the cluster's", "[plugins][watermark]") {
  World world(std::vector<std::string>{});
  world.Fill("cpu-1", "10");
  framework::Snapshot plain;  // no groups: as a snapshot built without the cache
  framework::SnapshotBuilder(&plain).SetClusterTotals(world.cache.Totals().allocatable,
                                                      world.cache.Totals().requested);
  Watermark watermark({0.85, 0.80, {}}, kCpu);
  CHECK(watermark.Observe(plain, {}).allocated_ratio == Approx(10.0 / 60));
}

}  // namespace
}  // namespace kubesched
