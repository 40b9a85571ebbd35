// QuotaTracker with DRA devices counted as `nvidia.com/gpu`: a typed limit counts the device
// plugin's GPUs on labelled nodes and DRA GPUs by their model attribute alike, budgets charge DRA
// GPUs, a bound pod's devices follow its claims, and no mix of the two ever goes over a typed max.

#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "scheduler/quota/quota_tracker.h"
#include "tests/testing/builders.h"

namespace kubesched::quota {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;

constexpr char kConfig[] = R"(
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
queues:
  modelLabels: {nvidia.com/gpu: nvidia.com/gpu.product}
  models:
    A100: [NVIDIA-A100-SXM4-80GB, NVIDIA-A100-PCIE-40GB]
    H100: [NVIDIA-H100-80GB-HBM3]
  devices:
  - {driver: gpu.nvidia.com, resource: nvidia.com/gpu, modelAttribute: productName}
  tree:
  - name: ml
    max: {nvidia.com/gpu: "6", nvidia.com/gpu.A100: "4"}
    budget: {nvidia.com/gpu: 10h}
)";

config::QueuesConfig Queues() {
  auto config = config::ParseConfiguration(kConfig);
  INFO(config.status().message());
  REQUIRE(config.ok());
  return config->queues;
}

const api::ResourceId kGpu = api::InternResource("nvidia.com/gpu");
const api::ResourceId kA100 = api::InternResource("nvidia.com/gpu.A100");

// A pod of queue root.ml asking `gpus` of the device plugin; with a claim when `claims`.
framework::PodInfoPtr Pod(const std::string& name, int gpus, bool claims,
                          const std::string& node = "") {
  PodBuilder builder(name, "default");
  builder.Label(std::string(kQueueLabel), "root.ml");
  builder.Container(gpus > 0
                        ? std::vector<std::pair<std::string, std::string>>{{"nvidia.com/gpu",
                                                                            std::to_string(gpus)}}
                        : std::vector<std::pair<std::string, std::string>>{{"cpu", "1"}});
  api::Pod pod = builder.Build();
  if (claims) pod.spec.resource_claims.push_back({"gpu", name + "-gpu", ""});
  pod.spec.node_name = node;
  return framework::MakePodInfo(std::make_shared<const api::Pod>(std::move(pod)), 0);
}

// `count` DRA GPUs whose productName reads `product` (as a driver writes it).
DeviceTally Gpus(const std::string& product, int64_t count) {
  DeviceTally tally;
  tally.Add(kGpu, api::Intern(NormalizeDeviceModel(product)), count);
  return tally;
}

api::ResourceList Used(QuotaTracker& tracker) {
  for (const QueueUsage& queue : tracker.Usage()) {
    if (queue.path == "root.ml") return queue.used;
  }
  FAIL("no queue root.ml");
  return {};
}

// Nodes: a100-node labelled as the device plugin's A100s, h100-node, and dra-node (no label).
QuotaTracker& WithNodes(QuotaTracker& tracker) {
  tracker.SetNode(
      NodeBuilder("a100-node").Label("nvidia.com/gpu.product", "NVIDIA-A100-SXM4-80GB").Build());
  tracker.SetNode(
      NodeBuilder("h100-node").Label("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3").Build());
  tracker.SetNode(NodeBuilder("dra-node").Build());
  return tracker;
}

TEST_CASE("a DRA model attribute reads as a node label value", "[quota][dra]") {
  CHECK(NormalizeDeviceModel("NVIDIA A100-SXM4-80GB") == "NVIDIA-A100-SXM4-80GB");
  CHECK(NormalizeDeviceModel("a/b c.d_e") == "a-b-c.d_e");
  const auto names = ModelNames::Build({{"A100", {"NVIDIA-A100-SXM4-80GB"}}, {"H", {"NVIDIA-H*"}}});
  CHECK(names->NamesDeviceModel("NVIDIA A100-SXM4-80GB", api::Intern("A100")));
  CHECK(names->NamesDeviceModel("NVIDIA H100 80GB", api::Intern("H")));
  CHECK_FALSE(names->NamesDeviceModel("NVIDIA H100 80GB", api::Intern("A100")));
  CHECK(names->NamesDeviceModel("L4", api::Intern("L4")));
  CHECK_FALSE(names->NamesDeviceModel("", api::Intern("L4")));
}

TEST_CASE("device plugin and DRA A100s count to the same typed key", "[quota][dra]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues());
  WithNodes(tracker);
  REQUIRE(tracker.Reserve(*Pod("plugin", 2, false), "a100-node").ok());
  REQUIRE(tracker.Reserve(*Pod("dra", 0, true), "dra-node", Gpus("NVIDIA A100-SXM4-80GB", 2)).ok());
  CHECK(Used(tracker).Get(kA100) == 4);
  CHECK(Used(tracker).Get(kGpu) == 4);

  const auto next = Pod("next", 0, true);
  const Admission admission = tracker.Admit(*next);
  CHECK(admission.verdict == Verdict::kFits);
  REQUIRE(admission.device_limits.size() == 2);  // nvidia.com/gpu and its A100 key
  const absl::Status over = tracker.Reserve(*next, "dra-node", Gpus("NVIDIA A100-PCIE-40GB", 1));
  CHECK(absl::IsResourceExhausted(over));
  CHECK(over.message() ==
        "queue root.ml: insufficient quota for nvidia.com/gpu.A100 (used 4, max 4, requested "
        "more by the pod's resource claims)");
  CHECK(tracker.Reserve(*next, "dra-node", Gpus("NVIDIA H100 80GB HBM3", 2)).ok());
  CHECK(Used(tracker).Get(kGpu) == 6);
  CHECK(Used(tracker).Get(api::InternResource("nvidia.com/gpu.H100")) == 2);

  tracker.Release(next->key, /*assumed_only=*/false);
  CHECK(Used(tracker).Get(kGpu) == 4);
}

TEST_CASE("pods without claims get no device limits", "[quota][dra]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues());
  CHECK(tracker.Admit(*Pod("plain", 1, false)).device_limits.empty());
}

TEST_CASE("a GPU-hour budget charges DRA GPUs and, spent, stops further ones", "[quota][dra]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues());
  WithNodes(tracker);
  const auto job = Pod("job", 0, true);
  REQUIRE(tracker.Reserve(*job, "dra-node", Gpus("NVIDIA H100 80GB HBM3", 5)).ok());
  clock.Advance(absl::Hours(2));
  const auto usage = tracker.Usage();
  double hours = -1;
  for (const QueueUsage& queue : usage) {
    if (queue.path == "root.ml") hours = queue.budgets.at(0).used_hours;
  }
  CHECK(hours == Approx(10));
  tracker.Release(job->key, /*assumed_only=*/false);

  const auto next = Pod("next", 0, true);
  const Admission admission = tracker.Admit(*next);
  REQUIRE(admission.device_limits.size() >= 1);
  CHECK(admission.device_limits[0].budget);
  const absl::Status refused = tracker.Reserve(*next, "dra-node", Gpus("L4", 1));
  CHECK(absl::IsResourceExhausted(refused));
  CHECK_THAT(std::string(refused.message()),
             Catch::StartsWith("queue root.ml: budget for nvidia.com/gpu used up (used 10h"));
  // Without devices on the node chosen, the pod takes nothing of the budget.
  CHECK(tracker.Reserve(*next, "dra-node").ok());
}

TEST_CASE("a bound pod's charge follows the devices its claims hold", "[quota][dra]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues());
  WithNodes(tracker);
  std::vector<std::string> woken;
  tracker.SetWakeHandler([&](const std::vector<std::string>& keys) { woken = keys; });
  const auto pod = Pod("p", 0, true, "dra-node");
  tracker.ChargeBound(*pod, PodDevices{{}, /*unresolved=*/true});
  CHECK(Used(tracker).Get(kGpu) == 0);
  CHECK(tracker.PodsWithUnresolvedDevices() == std::vector<std::string>{pod->key});

  CHECK(tracker.SetPodDevices(pod->key, {Gpus("NVIDIA A100-SXM4-80GB", 3), false}));
  CHECK(Used(tracker).Get(kA100) == 3);
  CHECK(tracker.PodsWithUnresolvedDevices().empty());
  CHECK_FALSE(tracker.SetPodDevices(pod->key, {Gpus("NVIDIA A100-SXM4-80GB", 3), false}));

  CHECK(tracker.SetPodDevices(pod->key, {Gpus("NVIDIA A100-SXM4-80GB", 1), false}));
  CHECK(Used(tracker).Get(kA100) == 1);
  CHECK(woken == std::vector<std::string>{"quota:root.ml", "quota:root"});
  CHECK_FALSE(tracker.SetPodDevices("default/unknown", {Gpus("L4", 1), false}));
}

TEST_CASE("a reload renames the models DRA GPUs are charged as", "[quota][dra]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues());
  REQUIRE(tracker.Reserve(*Pod("p", 0, true), "dra-node", Gpus("NVIDIA A100-SXM4-80GB", 2)).ok());
  config::QueuesConfig renamed = Queues();
  renamed.models = {{"ampere", {"NVIDIA-A100-SXM4-80GB"}}};
  tracker.SetConfig(renamed);
  CHECK(Used(tracker).Get(kA100) == 0);
  CHECK(Used(tracker).Get(api::InternResource("nvidia.com/gpu.ampere")) == 2);
}

TEST_CASE("a typed limit no node names is matched by a published DRA model", "[quota][dra]") {
  util::FakeClock clock;
  QuotaTracker tracker(&clock, Queues());
  auto unmatched = tracker.UnmatchedTypedLimits();
  REQUIRE(unmatched.size() == 1);
  CHECK(unmatched[0].Message() ==
        "queue root.ml: the max on nvidia.com/gpu.A100 matches no node: no node's model label "
        "names model A100 and no ResourceSlice publishes a device of it (check the queue "
        "configuration's models)");
  tracker.CountPublishedDevices(Gpus("NVIDIA A100-PCIE-40GB", 8), +1);
  CHECK(tracker.UnmatchedTypedLimits().empty());
  tracker.CountPublishedDevices(Gpus("NVIDIA A100-PCIE-40GB", 8), -1);
  CHECK(tracker.UnmatchedTypedLimits().size() == 1);
}

// Property: whatever mix of device plugin and DRA GPUs pods ask for, on whichever nodes, a
// Reserve that the tracker accepts never takes root.ml over its A100 or GPU max.
TEST_CASE("no mix of device plugin and DRA GPUs takes a queue over its typed max",
          "[quota][dra][property]") {
  const std::vector<std::string> nodes = {"a100-node", "h100-node", "dra-node"};
  const std::vector<std::string> products = {"NVIDIA A100-SXM4-80GB", "NVIDIA A100-PCIE-40GB",
                                             "NVIDIA H100 80GB HBM3", "L4"};
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    INFO("seed " << seed);
    std::mt19937 random(seed);
    util::FakeClock clock;
    QuotaTracker tracker(&clock, Queues());
    WithNodes(tracker);
    std::vector<std::string> charged;
    for (int step = 0; step < 40; ++step) {
      if (!charged.empty() && random() % 4 == 0) {
        const size_t victim = random() % charged.size();
        tracker.Release(charged[victim], /*assumed_only=*/false);
        charged.erase(charged.begin() + static_cast<std::ptrdiff_t>(victim));
        continue;
      }
      const std::string name = "p" + std::to_string(step);
      const int plugin_gpus = static_cast<int>(random() % 3);
      const bool claims = random() % 2 == 0;
      const auto pod = Pod(name, plugin_gpus, claims);
      DeviceTally devices;
      if (claims) {
        devices.Add(Gpus(products[random() % products.size()], 1 + random() % 3), +1);
        if (random() % 2 == 0) devices.Add(Gpus(products[random() % products.size()], 1), +1);
      }
      if (tracker.Admit(*pod).verdict != Verdict::kFits) continue;
      if (tracker.Reserve(*pod, nodes[random() % nodes.size()], devices).ok()) {
        charged.push_back(pod->key);
      }
      const api::ResourceList used = Used(tracker);
      REQUIRE(used.Get(kA100) <= 4);
      REQUIRE(used.Get(kGpu) <= 6);
    }
  }
}

}  // namespace
}  // namespace kubesched::quota
