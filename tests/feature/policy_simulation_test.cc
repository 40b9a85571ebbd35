// Per-pod policies through the real scheduler on the embedded cluster: pods under different
// policies in one run, the resource-pool template, reloads from the policy ConfigMap, and pods
// that wait for a policy that does not exist yet.

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "policy/policy.h"
#include "scheduler/cluster/embedded_cluster.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/simulate/simulation.h"
#include "scheduler/util/clock.h"
#include "tests/feature/policy_inputs.h"
#include "tests/testing/builders.h"
#include "tests/testing/scheduler_world.h"

namespace kubesched::scheduler {
namespace {

using policy_inputs::Config;
using policy_inputs::kSpreadAndStack;
using policy_inputs::PolicyConfigMap;
using testing::NodeBuilder;
using testing::PodBuilder;

class Observer : public SchedulingObserver {
 public:
  void OnAttempt(const framework::PodInfo& pod, double) override { ++attempts[pod.key]; }
  void OnUnschedulable(const framework::PodInfo& pod, const std::string& message, int) override {
    messages[pod.key] = message;
  }
  void OnBound(const framework::PodInfo& pod, const std::string& node, int) override {
    bound[pod.key] = node;
    messages.erase(pod.key);
  }
  void OnConfigWarning(const api::ObjectMeta& map, const std::string& reason,
                       const std::string& message) override {
    config_warnings.push_back(map.name + " " + reason + ": " + message);
  }
  std::map<std::string, int> attempts;
  std::map<std::string, std::string> messages, bound;
  std::vector<std::string> config_warnings;
};

// The source's resource-pool example: pool A preferred, pool B as the fallback, nothing else.
constexpr char kPoolPolicy[] = R"(
plugins:
  score:
    disabled: [{name: "*"}]
    enabled: [{name: NodeAffinity, weight: 1}]
nodeAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    nodeSelectorTerms:
      - matchExpressions:
          - {key: pool, operator: In, values: ["{{.PreferredPool}}", "{{.DefaultPool}}"]}
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 3
      preference:
        matchExpressions: [{key: pool, operator: In, values: ["{{.PreferredPool}}"]}]
    - weight: 2
      preference:
        matchExpressions: [{key: pool, operator: In, values: ["{{.DefaultPool}}"]}]
)";

struct World : testing::SchedulerWorld {
  Observer observer;

  explicit World(const config::Configuration& config) {
    SchedulerDeps deps;
    deps.observer = &observer;
    deps.threads = 1;
    Start(config, deps);
  }
  void Node(const std::string& name, const std::string& cpu, const std::string& pool = "") {
    NodeBuilder node(name);
    node.Capacity({{"cpu", cpu}, {"memory", "64Gi"}, {"pods", "110"}});
    if (!pool.empty()) node.Label("pool", pool);
    Add(node.Build());
  }
  void Pod(const std::string& name, const std::string& policy, const std::string& args = "") {
    PodBuilder pod(name);
    pod.Container({{"cpu", "1"}});
    if (!policy.empty()) pod.Annotation(policy::kPolicyAnnotation, policy);
    if (!args.empty()) pod.Annotation(policy::kPolicyArgsAnnotation, args);
    Add(pod.Build());
  }
  std::set<std::string> NodesOf(const std::string& prefix, int n) const {
    std::set<std::string> nodes;
    for (int i = 0; i < n; ++i) {
      auto it = observer.bound.find(absl::StrCat("default/", prefix, i));
      nodes.insert(it == observer.bound.end() ? "<pending>" : it->second);
    }
    return nodes;
  }
};

TEST_CASE("pods under a spread policy and a stack policy land differently in one run",
          "[policies][simulation]") {
  World world(Config(kSpreadAndStack));
  for (int i = 0; i < 4; ++i) world.Node(absl::StrCat("n", i), "8");
  for (int i = 0; i < 4; ++i) world.Pod(absl::StrCat("stack-", i), "stack");
  world.Run();
  for (int i = 0; i < 4; ++i) world.Pod(absl::StrCat("spread-", i), "spread");
  world.Run();
  const std::set<std::string> stacked = world.NodesOf("stack-", 4);
  const std::set<std::string> spread = world.NodesOf("spread-", 4);
  CHECK(stacked.size() == 1);  // every stack pod on one node
  CHECK_FALSE(stacked.contains("<pending>"));
  // Spread pods take the emptiest nodes: the three empty ones first, and never the stack node
  // (half full), which they see at once since every policy shares one cache.
  CHECK(spread.size() == 3);
  CHECK_FALSE(spread.contains("<pending>"));
  for (const auto& node : spread) CHECK_FALSE(stacked.contains(node));
}

TEST_CASE("the resource-pool template fills pool A, then pool B, and never another pool",
          "[policies][simulation]") {
  World world(Config(kSpreadAndStack));
  world.scheduler->OnConfigMap(PolicyConfigMap({{"pool.yaml", kPoolPolicy}}));
  for (const std::string pool : {"A", "B", "C"}) {
    world.Node(absl::StrCat("a-", pool, "1"), "2", pool);
    world.Node(absl::StrCat("a-", pool, "2"), "2", pool);
  }
  world.Node("unlabeled", "16");
  const std::string args = R"({"PreferredPool": "A", "DefaultPool": "B"})";
  for (int i = 0; i < 10; ++i) {
    world.Pod(absl::StrCat("p", i), "pool", args);
    world.Run();
  }
  std::map<std::string, int> per_pool;
  for (int i = 0; i < 10; ++i) {
    auto it = world.observer.bound.find(absl::StrCat("default/p", i));
    const std::string node = it == world.observer.bound.end() ? "<pending>" : it->second;
    INFO("p" << i << " on " << node);
    // In order: the first four fill pool A, the next four pool B.
    if (i < 4) CHECK(absl::StartsWith(node, "a-A"));
    if (i >= 4 && i < 8) CHECK(absl::StartsWith(node, "a-B"));
    if (i >= 8) CHECK(node == "<pending>");
  }
  CHECK(absl::StrContains(world.observer.messages.at("default/p9"),
                          "node(s) didn't match the node affinity of the pod's policy"));
}

TEST_CASE("a pod naming a missing policy waits, and schedules once the policy appears",
          "[policies][simulation]") {
  World world(Config(kSpreadAndStack));
  world.Node("n0", "8");
  world.Pod("early", "later");
  world.Run();
  CHECK_FALSE(world.observer.bound.contains("default/early"));
  CHECK(world.observer.messages.at("default/early") ==
        "0/1 nodes are available: policy \"later\" (annotation kubesched.io/policy) does not "
        "exist.");
  const int attempts = world.observer.attempts.at("default/early");
  // Other events do not wake it: it waits for the policy set to change.
  world.Node("n1", "8");
  world.Run();
  CHECK(world.observer.attempts.at("default/early") == attempts);

  // A bad update is rejected, the pod still waits, and nothing else changes.
  world.scheduler->OnConfigMap(
      PolicyConfigMap({{"later", "plugins: {score: {enabled: [{name: Nope}]}}"}}));
  CHECK(world.scheduler->policy_reloads().rejected == 1);
  CHECK(absl::StrContains(world.scheduler->policy_reloads().last_error, "policy \"later\""));
  // Users see why on the ConfigMap (run mode: a Warning Event).
  REQUIRE(world.observer.config_warnings.size() == 1);
  CHECK(absl::StrContains(world.observer.config_warnings[0], "PolicyConfigRejected: "));
  CHECK(absl::StrContains(world.observer.config_warnings[0], "policy \"later\""));
  world.Run();
  CHECK_FALSE(world.observer.bound.contains("default/early"));

  world.scheduler->OnConfigMap(PolicyConfigMap({{"later", "{}"}}));
  CHECK(world.scheduler->policy_reloads().applied == 1);
  world.Run();
  CHECK(world.observer.bound.contains("default/early"));
}

TEST_CASE("a policy ConfigMap value of one stray comma is rejected and the last good set stays",
          "[policies][simulation]") {
  World world(Config(kSpreadAndStack));
  world.scheduler->OnConfigMap(PolicyConfigMap({{"pool", kPoolPolicy}}));
  REQUIRE(world.scheduler->policy_reloads().applied == 1);
  // yaml-cpp 0.7 loops on "," and every replica reads the same ConfigMap: the guard must turn it
  // into a rejected reload.
  world.scheduler->OnConfigMap(PolicyConfigMap({{"pool", ","}}));
  CHECK(world.scheduler->policy_reloads().rejected == 1);
  CHECK(absl::StrContains(world.scheduler->policy_reloads().last_error,
                          "policy \"pool\": line 1, column 1: "));
  world.Node("n0", "8", "A");
  world.Pod("p", "pool", R"({"PreferredPool": "A", "DefaultPool": "A"})");
  world.Run();
  CHECK(world.observer.bound.contains("default/p"));
}

TEST_CASE("args that do not fill the template leave the pod pending with the reason",
          "[policies][simulation]") {
  World world(Config(kSpreadAndStack));
  world.scheduler->OnConfigMap(PolicyConfigMap({{"pool", kPoolPolicy}}));
  world.Node("n0", "8", "A");
  world.Pod("half", "pool", R"({"PreferredPool": "A"})");
  world.Run();
  CHECK_FALSE(world.observer.bound.contains("default/half"));
  CHECK(
      absl::StrContains(world.observer.messages.at("default/half"),
                        "policy \"pool\": kubesched.io/policy-args has no value for DefaultPool"));
}

TEST_CASE("a policy reload mid-simulation changes placements from then on",
          "[policies][simulation]") {
  World world(Config(kSpreadAndStack));
  const std::string stack = R"(
plugins: {score: {disabled: [{name: "*"}], enabled: [{name: NodeResourcesFit, weight: 1}]}}
pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: MostAllocated}}}]
)";
  const std::string spread = R"(
plugins: {score: {disabled: [{name: "*"}], enabled: [{name: NodeResourcesFit, weight: 1}]}}
pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: LeastAllocated}}}]
)";
  world.scheduler->OnConfigMap(PolicyConfigMap({{"team", stack}}));
  for (int i = 0; i < 4; ++i) world.Node(absl::StrCat("n", i), "8");
  for (int i = 0; i < 3; ++i) world.Pod(absl::StrCat("before-", i), "team");
  world.Run();
  CHECK(world.NodesOf("before-", 3).size() == 1);

  world.scheduler->OnConfigMap(PolicyConfigMap({{"team", spread}}));
  for (int i = 0; i < 3; ++i) world.Pod(absl::StrCat("after-", i), "team");
  world.Run();
  const std::set<std::string> after = world.NodesOf("after-", 3);
  CHECK(after.size() == 3);
  for (const auto& node : world.NodesOf("before-", 3)) CHECK_FALSE(after.contains(node));

  // Deleting the ConfigMap leaves the file's policies only: "team" is gone.
  world.scheduler->OnConfigMap(PolicyConfigMap({}, client::EventType::kDeleted));
  world.Pod("orphan", "team");
  world.Run();
  CHECK(absl::StrContains(world.observer.messages.at("default/orphan"),
                          "policy \"team\" (annotation kubesched.io/policy) does not exist"));
  CHECK(world.scheduler->policies()->set().Find("spread") != nullptr);
}

TEST_CASE("simulate and explain report the policy a pod used", "[policies][simulation]") {
  const config::Configuration config = Config(kSpreadAndStack);
  std::vector<api::Object> cluster;
  NodeBuilder node("n0");
  node.Capacity({{"cpu", "8"}, {"memory", "64Gi"}, {"pods", "110"}});
  cluster.push_back(node.Build());
  const api::Pod with_policy = PodBuilder("a")
                                   .Container({{"cpu", "1"}})
                                   .Annotation(policy::kPolicyAnnotation, "stack")
                                   .Build();
  auto explained = ExplainObjects(cluster, with_policy, config, 1);
  REQUIRE(explained.ok());
  CHECK(explained->policy == "stack");
  CHECK(explained->selected == "n0");

  const api::Pod unknown = PodBuilder("b")
                               .Container({{"cpu", "1"}})
                               .Annotation(policy::kPolicyAnnotation, "nope")
                               .Build();
  auto missing = ExplainObjects(cluster, unknown, config, 1);
  REQUIRE(missing.ok());
  CHECK_FALSE(missing->selected.has_value());
  CHECK(missing->message == "policy \"nope\" (annotation kubesched.io/policy) does not exist");
}

}  // namespace
}  // namespace kubesched::scheduler
