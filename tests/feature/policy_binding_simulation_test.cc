// Policy bindings through the real scheduler on the embedded cluster: a binding from the policy
// ConfigMap places the pods of a namespace under its policy, a pod's own annotation wins, reloads
// change the bindings from then on (a bad one is refused), and explain names the binding.

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
#include "scheduler/simulate/report_output.h"
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
  void OnBound(const framework::PodInfo& pod, const std::string& node, int) override {
    bound[pod.key] = node;
  }
  std::map<std::string, std::string> bound;
};

api::Namespace Namespace(const std::string& name, const std::string& team) {
  api::Namespace ns;
  ns.meta.name = name;
  ns.meta.labels.Set(api::Intern("team"), api::Intern(team));
  return ns;
}

struct World : testing::SchedulerWorld {
  Observer observer;

  explicit World(const config::Configuration& config) {
    SchedulerDeps deps;
    deps.observer = &observer;
    deps.threads = 1;
    Start(config, deps);
    for (int i = 0; i < 4; ++i) {
      Add(NodeBuilder(absl::StrCat("n", i))
              .Capacity({{"cpu", "8"}, {"memory", "64Gi"}, {"pods", "110"}})
              .Build());
    }
    Add(Namespace("batch", "batch"));
    Add(Namespace("web", "web"));
  }
  // `count` pods named prefix-0.. in `ns`, run to the end; the nodes they landed on.
  std::set<std::string> Place(const std::string& prefix, const std::string& ns, int count,
                              const std::string& policy = "") {
    for (int i = 0; i < count; ++i) {
      PodBuilder pod(absl::StrCat(prefix, "-", i), ns);
      pod.Container({{"cpu", "1"}});
      if (!policy.empty()) pod.Annotation(policy::kPolicyAnnotation, policy);
      Add(pod.Build());
    }
    Run();
    std::set<std::string> nodes;
    for (int i = 0; i < count; ++i) {
      const auto it = observer.bound.find(absl::StrCat(ns, "/", prefix, "-", i));
      nodes.insert(it == observer.bound.end() ? "<pending>" : it->second);
    }
    return nodes;
  }
};

constexpr char kBatchStacks[] =
    "- {name: batch-namespaces, namespaceSelector: {matchLabels: {team: batch}}, policy: stack}\n";
constexpr char kBatchSpreads[] =
    "- {name: batch-namespaces, namespaceSelector: {matchLabels: {team: batch}}, policy: spread}\n";

TEST_CASE("a binding from the policy ConfigMap places a namespace's pods under its policy",
          "[policies][bindings][simulation]") {
  World world(Config(kSpreadAndStack));
  world.scheduler->OnConfigMap(PolicyConfigMap({{"policyBindings.yaml", kBatchStacks}}));
  REQUIRE(world.scheduler->policy_reloads().applied == 1);

  const std::set<std::string> stacked = world.Place("stacked", "batch", 4);
  CHECK(stacked.size() == 1);  // every pod on one node: the stack policy
  CHECK_FALSE(stacked.contains("<pending>"));
  // The pod's own annotation wins over the binding: spread over the three empty nodes.
  const std::set<std::string> annotated = world.Place("annotated", "batch", 3, "spread");
  CHECK(annotated.size() == 3);
  for (const auto& node : annotated) CHECK_FALSE(stacked.contains(node));

  // A reload swaps the binding's policy from the next cycle on.
  world.scheduler->OnConfigMap(PolicyConfigMap({{"policyBindings.yaml", kBatchSpreads}}));
  REQUIRE(world.scheduler->policy_reloads().applied == 2);
  CHECK(world.Place("spread", "batch", 4).size() > 1);

  // A binding naming a policy that does not exist is refused; the last good set stays.
  world.scheduler->OnConfigMap(
      PolicyConfigMap({{"policyBindings.yaml", "- {namespaceSelector: {}, policy: packed}\n"}}));
  CHECK(world.scheduler->policy_reloads().rejected == 1);
  CHECK(absl::StrContains(world.scheduler->policy_reloads().last_error,
                          "ConfigMap key \"policyBindings.yaml\": policyBindings[0].policy: no "
                          "policy \"packed\" (policies: spread, stack)"));
  REQUIRE(world.scheduler->policies()->set().bindings().size() == 1);
  CHECK(world.scheduler->policies()->set().bindings()[0].policy == "spread");

  // Deleting the ConfigMap leaves the file's bindings: none here.
  world.scheduler->OnConfigMap(PolicyConfigMap({}, client::EventType::kDeleted));
  CHECK(world.scheduler->policies()->set().bindings().empty());
}

TEST_CASE("bindings select by namespace and by pod labels, alone and together",
          "[policies][bindings][simulation]") {
  World world(Config(absl::StrCat(kSpreadAndStack, R"(
policyBindings:
  - name: web-trainers
    namespaceSelector: {matchLabels: {team: web}}
    selector: {matchLabels: {app: trainer}}
    policy: spread
  - name: trainers
    selector: {matchLabels: {app: trainer}}
    policy: stack
)")));
  world.cluster.DeliverEvents();  // the namespaces
  const auto choose = [&](const std::string& ns, bool trainer) {
    PodBuilder pod("p", ns);
    if (trainer) pod.Label("app", "trainer");
    const policy::PolicyChoice choice = world.scheduler->ChoosePolicy(pod.Build());
    return absl::StrCat(choice.name, " ", choice.binding);
  };
  CHECK(choose("web", true) == "spread binding 1 \"web-trainers\"");
  CHECK(choose("batch", true) == "stack binding 2 \"trainers\"");
  CHECK(choose("web", false) == " ");
  CHECK(choose("elsewhere", true) == "stack binding 2 \"trainers\"");  // no Namespace object
}

TEST_CASE("explain says which binding chose the policy", "[policies][bindings][simulation]") {
  const config::Configuration config = Config(absl::StrCat(kSpreadAndStack, R"(
policyBindings:
  - {name: web-only, namespaceSelector: {matchLabels: {team: web}}, policy: spread}
  - {name: batch-namespaces, namespaceSelector: {matchLabels: {team: batch}}, policy: stack}
)"));
  std::vector<api::Object> cluster;
  cluster.push_back(NodeBuilder("n0").Capacity({{"cpu", "8"}, {"pods", "110"}}).Build());
  cluster.push_back(Namespace("batch", "batch"));
  const api::Pod pod = PodBuilder("job", "batch").Container({{"cpu", "1"}}).Build();
  auto explained = ExplainObjects(cluster, pod, config, 1);
  INFO(explained.status().message());
  REQUIRE(explained.ok());
  CHECK(explained->policy == "stack");
  CHECK(explained->policy_binding == "binding 2 \"batch-namespaces\"");
  CHECK(explained->selected == "n0");
  CHECK(absl::StrContains(ExplainTable(*explained),
                          "policy: stack (binding 2 \"batch-namespaces\")\n"));
  CHECK(absl::StrContains(ExplainJson(*explained),
                          "\"policyBinding\": \"binding 2 \\\"batch-namespaces\\\"\""));

  // Annotated, the pod names its policy itself: no binding is mentioned.
  api::Pod annotated = pod;
  annotated.meta.annotations[policy::kPolicyAnnotation] = "spread";
  auto own = ExplainObjects(cluster, annotated, config, 1);
  REQUIRE(own.ok());
  CHECK(own->policy == "spread");
  CHECK_FALSE(own->policy_binding.has_value());
  CHECK(absl::StrContains(ExplainTable(*own), "policy: spread\n"));
}

}  // namespace
}  // namespace kubesched::scheduler
