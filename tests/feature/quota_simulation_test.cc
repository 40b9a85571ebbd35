// Queue quota through the real scheduler on the embedded cluster: hierarchical limits, typed
// limits that send GPU pods to another model, pods that wait without busy retries, reloads, and
// a randomized check that no queue is ever over its max and no pod that fits is left pending.

#include <catch2/catch.hpp>
#include <map>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/simulate/report_output.h"
#include "scheduler/simulate/simulation.h"
#include "tests/testing/builders.h"
#include "tests/testing/scheduler_world.h"
#include "tests/testing/temp_file.h"

namespace kubesched::scheduler {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;

class Observer : public SchedulingObserver {
 public:
  void OnAttempt(const framework::PodInfo&, double) override { ++attempts; }
  void OnUnschedulable(const framework::PodInfo& pod, const std::string& message, int) override {
    messages[pod.key] = message;
  }
  void OnBound(const framework::PodInfo& pod, const std::string& node, int) override {
    bound[pod.key] = node;
    messages.erase(pod.key);
  }
  int64_t attempts = 0;
  std::map<std::string, std::string> messages, bound;
};

config::Configuration ConfigWithQueues(const std::string& queues_yaml) {
  auto parsed = config::ParseConfiguration(
      absl::StrCat("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
                   queues_yaml));
  INFO(parsed.status().message());
  REQUIRE(parsed.ok());
  return *parsed;
}

struct World : testing::SchedulerWorld {
  Observer observer;

  explicit World(const config::Configuration& config) {
    SchedulerDeps deps;
    deps.observer = &observer;
    deps.threads = 1;
    deps.deleter = &cluster;
    Start(config, deps);
  }
  int BoundWithPrefix(const std::string& prefix) const {
    int n = 0;
    for (const auto& [key, node] : observer.bound) n += key.rfind(prefix, 0) == 0 ? 1 : 0;
    return n;
  }
  int64_t Used(const std::string& queue, const std::string& resource) {
    for (const auto& usage : scheduler->quota().Usage()) {
      if (usage.path == queue) return usage.used.Get(api::InternResource(resource));
    }
    return 0;
  }
};

api::Pod QueuedPod(const std::string& name, const std::string& queue,
                   std::vector<std::pair<std::string, std::string>> requests) {
  return PodBuilder(name).Container(requests).Label("kubesched.io/queue", queue).Build();
}

TEST_CASE("simulate keeps root.parent at 900 cpu and lets one child take all of it",
          "[quota][simulation]") {
  World world(ConfigWithQueues(R"(queues:
  tree:
  - name: parent
    max: {cpu: "900"}
    queues:
    - {name: child1}
    - {name: child2, max: {cpu: "750"}}
    - {name: child3, max: {cpu: "750"}}
)"));
  for (int i = 0; i < 3; ++i) {
    world.Add(
        NodeBuilder(absl::StrCat("n", i)).Capacity({{"cpu", "1000"}, {"pods", "200"}}).Build());
  }
  for (int i = 0; i < 12; ++i) {
    world.Add(QueuedPod(absl::StrCat("c1-", i), "root.parent.child1", {{"cpu", "100"}}));
  }
  world.Run();
  CHECK(world.BoundWithPrefix("default/c1-") == 9);
  CHECK(world.Used("root.parent", "cpu") == 900'000);
  CHECK_THAT(world.observer.messages["default/c1-9"],
             Catch::StartsWith("0/3 nodes are available: queue root.parent: insufficient quota for "
                               "cpu (used 900, max 900, requested 100)."));

  // child1 gives back 300; child2 and child3 compete for it, capped by the parent.
  for (int i = 0; i < 3; ++i) {
    REQUIRE(world.cluster.DeletePod("default", absl::StrCat("c1-", i)).ok());
  }
  for (int i = 0; i < 4; ++i) {
    world.Add(QueuedPod(absl::StrCat("c2-", i), "root.parent.child2", {{"cpu", "100"}}));
  }
  world.Run();
  CHECK(world.Used("root.parent", "cpu") == 900'000);
  CHECK(world.Used("root.parent.child2", "cpu") == 300'000);
}

TEST_CASE("a GPU pod with no model preference lands on V100 once the A100 quota is used",
          "[quota][simulation]") {
  World world(ConfigWithQueues(R"(queues:
  tree:
  - name: ml
    max: {nvidia.com/gpu: "12", nvidia.com/gpu.A100: "4"}
)"));
  // The A100 nodes are larger, so scoring alone would put every pod there.
  for (int i = 0; i < 2; ++i) {
    world.Add(NodeBuilder(absl::StrCat("a100-", i))
                  .Capacity({{"cpu", "64"}, {"nvidia.com/gpu", "8"}, {"pods", "100"}})
                  .Label("nvidia.com/gpu.product", "A100")
                  .Build());
    world.Add(NodeBuilder(absl::StrCat("v100-", i))
                  .Capacity({{"cpu", "16"}, {"nvidia.com/gpu", "4"}, {"pods", "100"}})
                  .Label("nvidia.com/gpu.product", "V100")
                  .Build());
  }
  for (int i = 0; i < 10; ++i) {
    world.Add(QueuedPod(absl::StrCat("train-", i), "root.ml", {{"nvidia.com/gpu", "1"}}));
  }
  world.Run();
  int on_a100 = 0;
  int on_v100 = 0;
  for (const auto& [key, node] : world.observer.bound) {
    (node.rfind("a100", 0) == 0 ? on_a100 : on_v100)++;
  }
  CHECK(on_a100 == 4);
  CHECK(on_v100 == 6);
  CHECK(world.Used("root.ml", "nvidia.com/gpu.A100") == 4);
  CHECK(world.Used("root.ml", "nvidia.com/gpu.V100") == 6);
  CHECK(world.Used("root.ml", "nvidia.com/gpu") == 10);

  // Two more fill the generic 12; the rest wait on the queue.
  for (int i = 10; i < 14; ++i) {
    world.Add(QueuedPod(absl::StrCat("train-", i), "root.ml", {{"nvidia.com/gpu", "1"}}));
  }
  world.Run();
  CHECK(world.observer.bound.size() == 12);
  CHECK_THAT(world.observer.messages["default/train-13"],
             Catch::Contains("queue root.ml: insufficient quota for nvidia.com/gpu (used 12, max "
                             "12, requested 1)"));
}

TEST_CASE("an A100 limit holds on nodes labelled as GPU feature discovery labels them",
          "[quota][simulation]") {
  World world(ConfigWithQueues(R"(queues:
  models:
    A100: [NVIDIA-A100-SXM4-80GB, NVIDIA-A100-PCIE-40GB]
  tree:
  - name: ml
    max: {nvidia.com/gpu.A100: "2"}
)"));
  const std::pair<const char*, const char*> nodes[] = {{"a100-sxm", "NVIDIA-A100-SXM4-80GB"},
                                                       {"a100-pcie", "NVIDIA-A100-PCIE-40GB"},
                                                       {"v100", "Tesla-V100-SXM2-16GB"}};
  for (const auto& [name, product] : nodes) {
    world.Add(NodeBuilder(name)
                  .Capacity({{"cpu", "64"}, {"nvidia.com/gpu", "8"}, {"pods", "100"}})
                  .Label("nvidia.com/gpu.product", product)
                  .Build());
  }
  for (int i = 0; i < 6; ++i) {
    world.Add(QueuedPod(absl::StrCat("train-", i), "root.ml", {{"nvidia.com/gpu", "1"}}));
  }
  world.Run();
  CHECK(world.observer.bound.size() == 6);
  CHECK(world.Used("root.ml", "nvidia.com/gpu.A100") == 2);
  CHECK(world.Used("root.ml", "nvidia.com/gpu.Tesla-V100-SXM2-16GB") == 4);
  int on_a100 = 0;
  for (const auto& [key, node] : world.observer.bound) on_a100 += node.rfind("a100", 0) == 0;
  CHECK(on_a100 == 2);
}

TEST_CASE("10,000 quota-blocked pods leave the scheduler idle until their queue frees room",
          "[quota][simulation]") {
  World world(ConfigWithQueues(R"(queues:
  tree:
  - {name: small, max: {cpu: "1"}}
  - {name: other}
)"));
  world.Add(NodeBuilder("n").Capacity({{"cpu", "100000"}, {"pods", "20000"}}).Build());
  world.Add(NodeBuilder("m").Capacity({{"cpu", "100000"}, {"pods", "20000"}}).Build());
  world.Add(QueuedPod("first", "root.small", {{"cpu", "1"}}));
  world.Add(QueuedPod("elsewhere", "root.other", {{"cpu", "1"}}));
  world.Run();
  REQUIRE(world.observer.bound.size() == 2);
  constexpr int kBlocked = 10'000;
  for (int i = 0; i < kBlocked; ++i) {
    world.Add(QueuedPod(absl::StrCat("wait-", i), "root.small", {{"cpu", "1"}}));
  }
  world.Run();
  CHECK(world.observer.attempts == 2 + kBlocked);  // each tried exactly once
  CHECK(world.scheduler->queue().QuotaWaitingCount() == kBlocked);
  CHECK(world.scheduler->queue().ActiveCount() == 0);
  CHECK(world.scheduler->queue().BackoffCount() == 0);

  // Cluster events that free no quota of root.small wake nobody, and a minute passes idle.
  const int64_t before = world.observer.attempts;
  world.Add(NodeBuilder("o").Capacity({{"cpu", "8"}}).Build());
  REQUIRE(world.cluster.DeletePod("default", "elsewhere").ok());
  world.Run();
  for (int s = 0; s < 60; ++s) {
    world.clock.Advance(absl::Seconds(1));
    world.scheduler->Housekeep();
    world.Run();
  }
  CHECK(world.observer.attempts == before);

  // Freeing root.small's one cpu lets exactly one waiting pod in.
  REQUIRE(world.cluster.DeletePod("default", "first").ok());
  world.Run();
  CHECK(world.observer.bound.size() == 3);
  CHECK(world.Used("root.small", "cpu") == 1000);
  CHECK(world.scheduler->queue().QuotaWaitingCount() == kBlocked - 1);
}

TEST_CASE("a queue ConfigMap update applies at once, a bad one keeps the last good tree",
          "[quota][simulation]") {
  World world(ConfigWithQueues(R"(queues:
  configMap: {namespace: kube-system, name: kubesched-queues}
  tree: [{name: team, max: {cpu: "1"}}]
)"));
  world.Add(NodeBuilder("n").Capacity({{"cpu", "64"}, {"pods", "100"}}).Build());
  for (int i = 0; i < 4; ++i)
    world.Add(QueuedPod(absl::StrCat("p", i), "root.team", {{"cpu", "1"}}));
  world.Run();
  CHECK(world.observer.bound.size() == 1);

  auto config_map = [](const std::string& text) {
    auto map = std::make_shared<api::ConfigMap>();
    map->meta.namespace_name = "kube-system";
    map->meta.name = "kubesched-queues";
    map->data["queues.yaml"] = text;
    return client::Event<api::ConfigMap>{client::EventType::kModified, nullptr, map};
  };
  world.scheduler->OnConfigMap(config_map("tree: [{name: team, max: {cpu: '3'}}]"));
  world.Run();
  CHECK(world.observer.bound.size() == 3);
  CHECK(world.scheduler->queue_config_reloads().applied == 1);

  world.scheduler->OnConfigMap(
      config_map("tree: [{name: team, max: {cpu: '2'}, queues: [{name: x, max: {cpu: '5'}}]}]"));
  const auto reloads = world.scheduler->queue_config_reloads();
  CHECK(reloads.rejected == 1);
  CHECK_THAT(reloads.last_error,
             Catch::Contains("queues.tree[0].queues[0] (root.team.x).max.cpu: 5 is above "
                             "root.team's max 2"));
  world.Run();
  CHECK(world.observer.bound.size() == 3);
  CHECK_THAT(world.observer.messages["default/p3"],
             Catch::Contains("(used 3, max 3, requested 1)"));

  // A value yaml-cpp 0.7 loops on is rejected the same way, and the last good tree stays.
  world.scheduler->OnConfigMap(config_map(","));
  CHECK(world.scheduler->queue_config_reloads().rejected == 2);
  CHECK_THAT(world.scheduler->queue_config_reloads().last_error,
             Catch::Contains("the last good one stays in force: line 1, column 1: "));
  world.Run();
  CHECK(world.observer.bound.size() == 3);

  // Deleting the ConfigMap restores the file's tree (max 1): nothing running is touched.
  auto deleted = config_map("");
  deleted.type = client::EventType::kDeleted;
  world.scheduler->OnConfigMap(deleted);
  world.Run();
  CHECK(world.observer.bound.size() == 3);
  CHECK(world.Used("root.team", "cpu") == 3000);
}

TEST_CASE("simulate reports each pod's queue and every queue's usage", "[quota][simulation]") {
  const testing::TempFile config_file(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
      "queues:\n  tree: [{name: research, max: {cpu: '2'}, budget: {nvidia.com/gpu: 10h}}]\n",
      "config.yaml");
  const testing::TempFile cluster(
      "apiVersion: v1\nkind: List\nitems:\n"
      "- {apiVersion: v1, kind: Namespace, metadata: {name: default}}\n"
      "- apiVersion: v1\n  kind: Node\n  metadata: {name: n}\n"
      "  status: {allocatable: {cpu: '8', memory: 8Gi, pods: '10'}}\n",
      "cluster.yaml");
  std::string workload;
  for (int i = 0; i < 3; ++i) {
    absl::StrAppend(&workload, "---\napiVersion: v1\nkind: Pod\nmetadata: {name: p", i,
                    ", namespace: default, labels: {kubesched.io/queue: root.research}}\n"
                    "spec:\n  schedulerName: kubesched\n  containers:\n  - name: c\n"
                    "    resources: {requests: {cpu: '1'}}\n");
  }
  absl::StrAppend(&workload,
                  "---\napiVersion: v1\nkind: Pod\nmetadata: {name: free, namespace: "
                  "default}\nspec:\n  schedulerName: kubesched\n  containers:\n  - name: c\n");
  const testing::TempFile workload_file(workload, "workload.yaml");
  auto config = config::LoadConfigurationFile(config_file.path());
  REQUIRE(config.ok());
  auto report = RunSimulation({cluster.path(), workload_file.path(), 1, 1}, *config);
  REQUIRE(report.ok());
  CHECK(report->scheduled == 3);
  CHECK(report->unschedulable == 1);
  REQUIRE(report->pod_results.size() == 4);
  CHECK(report->pod_results[0].queue == "root.research");
  CHECK(report->pod_results[3].queue == "root.default");
  const std::string json = SimulationJson(*report);
  CHECK_THAT(json, Catch::Contains("\"queue\": \"root.research\""));
  CHECK_THAT(json, Catch::Contains("\"name\": \"root.research\""));
  CHECK_THAT(json, Catch::Contains("\"budget\": \"10h\""));
  CHECK_THAT(SimulationTable(*report), Catch::Contains("root.research"));
}

TEST_CASE("a pod that terminates gives its quota to a waiting pod", "[quota][simulation]") {
  World world(ConfigWithQueues("queues:\n  tree: [{name: q, max: {cpu: '2'}}]\n"));
  world.Add(NodeBuilder("n").Capacity({{"cpu", "64"}, {"pods", "100"}}).Build());
  world.Add(QueuedPod("running", "root.q", {{"cpu", "2"}}));
  world.Run();
  world.Add(QueuedPod("waiting", "root.q", {{"cpu", "1"}}));
  world.Run();
  REQUIRE(world.observer.bound.size() == 1);
  CHECK(world.scheduler->queue().QuotaWaitingCount() == 1);
  api::Pod done = *world.cluster.GetPod("default/running");
  done.status.phase = api::PodPhase::kSucceeded;
  REQUIRE(world.cluster.UpdatePod(done).ok());
  world.Run();
  CHECK(world.observer.bound.contains("default/waiting"));
  CHECK(world.Used("root.q", "cpu") == 1000);
}

TEST_CASE("a pod waiting for its queue to exist schedules once its namespace names one",
          "[quota][simulation]") {
  World world(ConfigWithQueues("queues:\n  tree: [{name: teams, queues: [{name: a}]}]\n"));
  world.Add(NodeBuilder("n").Capacity({{"cpu", "64"}, {"pods", "100"}}).Build());
  api::Namespace ns;
  ns.meta.name = "ml";
  ns.meta.annotations["kubesched.io/parent-queue"] = "root.missing";
  world.Add(ns);
  world.Add(PodBuilder("p", "ml").Container({{"cpu", "1"}}).Build());
  world.Run();
  CHECK(world.observer.bound.empty());
  CHECK_THAT(world.observer.messages["ml/p"],
             Catch::StartsWith("0/1 nodes are available: queue root.missing (annotation "
                               "kubesched.io/parent-queue of namespace ml) does not exist."));
  CHECK(world.scheduler->queue().QuotaWaitingCount() == 1);

  ns.meta.annotations["kubesched.io/parent-queue"] = "root.teams";
  world.scheduler->OnNamespace(
      {client::EventType::kModified, nullptr, std::make_shared<const api::Namespace>(ns)});
  world.Run();
  CHECK(world.observer.bound.contains("ml/p"));
  CHECK(world.Used("root.teams.ml", "cpu") == 1000);
}

TEST_CASE("explain shows the pod's queue and its headroom up to root", "[quota][simulation]") {
  const auto config = ConfigWithQueues(
      "queues:\n  tree: [{name: prod, max: {cpu: '10'}, queues: [{name: search, max: {cpu: "
      "'4'}}]}]\n");
  std::vector<api::Object> cluster = {
      NodeBuilder("n").Capacity({{"cpu", "64"}, {"pods", "100"}}).Build(),
      PodBuilder("running", "default")
          .Container({{"cpu", "3"}})
          .Label("kubesched.io/queue", "root.prod.search")
          .NodeName("n")
          .Build()};
  const api::Pod pod = QueuedPod("next", "root.prod.search", {{"cpu", "2"}});
  auto report = ExplainObjects(cluster, pod, config);
  REQUIRE(report.ok());
  CHECK(report->queue == "root.prod.search");
  REQUIRE(report->queue_path.size() == 3);
  CHECK(report->queue_path[0].path == "root.prod.search");
  CHECK(report->queue_path[0].used.Get(api::kCpu) == 3000);
  CHECK(report->queue_path[2].path == "root");
  REQUIRE(report->message.has_value());
  CHECK_THAT(*report->message,
             Catch::StartsWith("0/1 nodes are available: queue root.prod.search: insufficient "
                               "quota for cpu (used 3, max 4, requested 2). preemption: "));
  const std::string table = ExplainTable(*report);
  CHECK_THAT(table, Catch::Contains("queue root.prod.search: cpu 3/4 (1 free)"));
  CHECK_THAT(table, Catch::Contains("queue root.prod: cpu 3/10 (7 free)"));
  CHECK_THAT(ExplainJson(*report), Catch::Contains("\"queuePath\""));
}

// Random trees, quotas, nodes and pods; pods come and go. After every simulation no queue is over
// any max it sets, and every pending pod either does not fit its queue or fits no node.
TEST_CASE("randomized: quotas are never exceeded and no pod that fits is left pending",
          "[quota][simulation]") {
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    CAPTURE(seed);
    std::mt19937 rng(seed);
    auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    // Tree: 2-3 top queues, each with 0-3 leaves; maxes only sometimes set, children <= parent.
    std::string tree = "queues:\n  tree:\n";
    std::vector<std::string> leaves;
    std::map<std::string, std::pair<int, int>> max;  // queue -> (cpu, gpu); -1 = unlimited
    const int tops = uniform(2, 3);
    for (int t = 0; t < tops; ++t) {
      const std::string top = absl::StrCat("t", t);
      const int top_cpu = uniform(0, 2) == 0 ? -1 : uniform(4, 40);
      const int top_gpu = uniform(0, 2) == 0 ? -1 : uniform(1, 8);
      max["root." + top] = {top_cpu, top_gpu};
      absl::StrAppend(&tree, "  - name: ", top, "\n    max: {");
      if (top_cpu >= 0) absl::StrAppend(&tree, "cpu: '", top_cpu, "', ");
      if (top_gpu >= 0) absl::StrAppend(&tree, "nvidia.com/gpu: '", top_gpu, "', ");
      absl::StrAppend(&tree, "}\n");
      const int children = uniform(0, 3);
      if (children == 0) {
        leaves.push_back("root." + top);
        continue;
      }
      absl::StrAppend(&tree, "    queues:\n");
      for (int c = 0; c < children; ++c) {
        const std::string leaf = absl::StrCat("root.", top, ".c", c);
        const int cpu = uniform(0, 1) == 0 ? -1 : uniform(1, top_cpu < 0 ? 40 : top_cpu);
        const int gpu = uniform(0, 1) == 0 ? -1 : uniform(0, top_gpu < 0 ? 8 : top_gpu);
        max[leaf] = {cpu, gpu};
        absl::StrAppend(&tree, "    - name: c", c, "\n      max: {");
        if (cpu >= 0) absl::StrAppend(&tree, "cpu: '", cpu, "', ");
        if (gpu >= 0) absl::StrAppend(&tree, "nvidia.com/gpu: '", gpu, "', ");
        absl::StrAppend(&tree, "}\n");
        leaves.push_back(leaf);
      }
    }
    INFO(tree);
    World world(ConfigWithQueues(tree));
    const int nodes = uniform(2, 6);
    for (int n = 0; n < nodes; ++n) {
      world.Add(NodeBuilder(absl::StrCat("n", n))
                    .Capacity({{"cpu", std::to_string(uniform(4, 16))},
                               {"nvidia.com/gpu", std::to_string(uniform(0, 4))},
                               {"pods", "50"}})
                    .Build());
    }
    std::vector<std::string> pods;
    for (int round = 0; round < 3; ++round) {
      for (int p = 0; p < uniform(10, 40); ++p) {
        const std::string name = absl::StrCat("r", round, "-", p);
        std::vector<std::pair<std::string, std::string>> requests = {
            {"cpu", std::to_string(uniform(1, 4))}};
        if (uniform(0, 2) == 0)
          requests.push_back({"nvidia.com/gpu", std::to_string(uniform(1, 2))});
        world.Add(
            QueuedPod(name, leaves[uniform(0, static_cast<int>(leaves.size()) - 1)], requests));
        pods.push_back(name);
      }
      world.Run();
      // Some running pods finish.
      for (const auto& name : pods) {
        if (world.observer.bound.contains("default/" + name) && uniform(0, 3) == 0) {
          REQUIRE(world.cluster.DeletePod("default", name).ok());
          world.observer.bound.erase("default/" + name);
        }
      }
      world.Run();

      // Usage by queue, recomputed from the pods that are bound.
      std::map<std::string, std::pair<int64_t, int64_t>> used;
      std::map<std::string, std::pair<int64_t, int64_t>> node_free;
      for (int n = 0; n < nodes; ++n) node_free[absl::StrCat("n", n)] = {0, 0};
      framework::Snapshot snapshot;
      world.scheduler->cache().UpdateSnapshot(&snapshot);
      const api::ResourceId gpu = api::InternResource("nvidia.com/gpu");
      for (const auto* node : snapshot.nodes()) {
        node_free[node->name()] = {
            node->allocatable().Get(api::kCpu) - node->requested().Get(api::kCpu),
            node->allocatable().Get(gpu) - node->requested().Get(gpu)};
        REQUIRE(node_free[node->name()].first >= 0);
        REQUIRE(node_free[node->name()].second >= 0);
      }
      for (const auto& [path, limit] : max) {
        const int64_t cpu_used = world.Used(path, "cpu");
        const int64_t gpu_used = world.Used(path, "nvidia.com/gpu");
        CAPTURE(path, cpu_used, gpu_used);
        if (limit.first >= 0) CHECK(cpu_used <= limit.first * 1000);
        if (limit.second >= 0) CHECK(gpu_used <= limit.second);
        used[path] = {cpu_used, gpu_used};
      }
      for (const auto& name : pods) {
        const std::string key = "default/" + name;
        auto pod = world.cluster.GetPod(key);
        if (pod == nullptr || !pod->spec.node_name.empty()) continue;
        const auto info = framework::MakePodInfo(pod, 0);
        const int64_t cpu = info->requests.Get(api::kCpu);
        const int64_t gpus = info->requests.Get(gpu);
        bool quota_fits = true;
        const auto label = pod->meta.labels.Get(api::Intern("kubesched.io/queue"));
        REQUIRE(label.has_value());
        std::string path(api::SymbolText(*label));
        while (path.find('.') != std::string::npos) {
          if (max.contains(path)) {
            const auto [cpu_max, gpu_max] = max[path];
            if (cpu_max >= 0 && used[path].first + cpu > cpu_max * 1000) quota_fits = false;
            if (gpus > 0 && gpu_max >= 0 && used[path].second + gpus > gpu_max) quota_fits = false;
          }
          path = path.substr(0, path.rfind('.'));
        }
        bool node_fits = false;
        for (const auto& [node, free] : node_free) {
          if (free.first >= cpu && free.second >= gpus) node_fits = true;
        }
        CAPTURE(key, world.observer.messages[key]);
        CHECK_FALSE((quota_fits && node_fits));
      }
    }
  }
}

}  // namespace
}  // namespace kubesched::scheduler

namespace kubesched::scheduler {
namespace {

api::Pod PriorityPod(const std::string& name, const std::string& queue, const std::string& cpu,
                     int32_t priority) {
  return PodBuilder(name)
      .Container({{"cpu", cpu}})
      .Label("kubesched.io/queue", queue)
      .Priority(priority)
      .Build();
}

TEST_CASE("a pod held back by quota preempts only lower-priority pods of the blocking subtree",
          "[quota][preemption][simulation]") {
  World world(ConfigWithQueues(R"(queues:
  tree:
  - name: org
    max: {cpu: "6"}
    queues:
    - {name: team, max: {cpu: "4"}}
    - {name: other}
  - name: elsewhere
)"));
  world.Add(NodeBuilder("n").Capacity({{"cpu", "16"}, {"pods", "100"}}).Build());
  for (int i = 0; i < 4; ++i)
    world.Add(PriorityPod(absl::StrCat("team-low-", i), "root.org.team", "1", 0));
  world.Add(PriorityPod("other-low", "root.org.other", "2", 0));
  world.Add(PriorityPod("elsewhere-low", "root.elsewhere", "8", 0));
  world.Run();
  REQUIRE(world.observer.bound.size() == 6);

  // root.org.team is full (4 of 4): an urgent team pod of 2 cpu preempts two team pods, not the
  // other queues' pods, although the node itself has room (16 - 14 = 2).
  world.Add(PriorityPod("team-urgent", "root.org.team", "2", 1000));
  world.Run();
  INFO(world.observer.messages["default/team-urgent"]);
  CHECK(world.observer.bound.contains("default/team-urgent"));
  CHECK(world.cluster.GetPod("default/other-low") != nullptr);
  CHECK(world.cluster.GetPod("default/elsewhere-low") != nullptr);
  int team_left = 0;
  for (int i = 0; i < 4; ++i) {
    if (world.cluster.GetPod(absl::StrCat("default/team-low-", i)) != nullptr) ++team_left;
  }
  CHECK(team_left == 2);
  CHECK(world.Used("root.org.team", "cpu") == 4000);
  CHECK(world.Used("root.org", "cpu") <= 6000);

  // Blocked at root.org (6 of 6): a pod of root.org.other may preempt a lower-priority pod
  // anywhere under root.org, never the 8 cpu of root.elsewhere, and org stays within its max.
  world.Add(PriorityPod("other-urgent", "root.org.other", "1", 1000));
  world.Run();
  CHECK(world.observer.bound.contains("default/other-urgent"));
  CHECK(world.cluster.GetPod("default/elsewhere-low") != nullptr);
  CHECK(world.cluster.GetPod("default/team-urgent") != nullptr);
  CHECK(world.Used("root.org", "cpu") <= 6000);

  // Nothing of lower priority is left in org but priority-0 pods; a pod of equal priority to
  // team-urgent cannot take team-urgent's quota.
  for (int i = 0; i < 4; ++i)
    (void)world.cluster.DeletePod("default", absl::StrCat("team-low-", i));
  (void)world.cluster.DeletePod("default", "other-low");
  world.Run();
  world.Add(PriorityPod("big-same", "root.org.team", "4", 1000));
  world.Run();
  CHECK_FALSE(world.observer.bound.contains("default/big-same"));
  CHECK(world.cluster.GetPod("default/team-urgent") != nullptr);
  CHECK_THAT(world.observer.messages["default/big-same"],
             Catch::Contains("queue root.org.team: insufficient quota for cpu"));
}

}  // namespace
}  // namespace kubesched::scheduler
