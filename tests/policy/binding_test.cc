// Policy bindings: the decoder (the file's list and the ConfigMap's value), their checks against
// the policies in force, which pods they select, and how they rank below a pod's own annotation.

#include "policy/binding.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "config/config.h"
#include "plugins/registry/registry.h"
#include "policy/policy_runtime.h"
#include "policy/policy_set.h"
#include "scheduler/framework/snapshot.h"
#include "tests/policy/policy_fixture.h"
#include "tests/testing/builders.h"

namespace kubesched::policy {
namespace {

using testing::ErrorOf;
using testing::kConfigHeader;
using testing::kPoolPolicy;
using testing::MustParse;

absl::StatusOr<std::vector<PolicyBinding>> FileBindings(const std::string& body) {
  const auto config = config::ParseConfiguration(std::string(kConfigHeader) + body);
  if (!config.ok()) return config.status();
  return ParseFileBindings(config->policy_bindings);
}

std::vector<Policy> FilePolicies() {
  return {MustParse("spread", ""), MustParse("pool", kPoolPolicy)};
}

api::LabelSet Labels(const std::map<std::string, std::string>& labels) {
  std::vector<std::pair<api::Symbol, api::Symbol>> pairs;
  for (const auto& [key, value] : labels) pairs.emplace_back(api::Intern(key), api::Intern(value));
  return api::LabelSet::FromPairs(std::move(pairs));
}

TEST_CASE("the configuration file's policyBindings list", "[policies][bindings]") {
  const auto bindings = FileBindings(R"(
policyBindings:
  - name: batch-namespaces
    namespaceSelector:
      matchLabels: {team: batch}
      matchExpressions: [{key: tier, operator: NotIn, values: [dev, test]}]
    policy: pool
    args: {PreferredPool: A, DefaultPool: B}
  - selector: {matchExpressions: [{key: app, operator: Exists}]}
    policy: spread
)");
  INFO(ErrorOf(bindings));
  REQUIRE(bindings.ok());
  REQUIRE(bindings->size() == 2);
  const PolicyBinding& first = (*bindings)[0];
  CHECK(first.name == "batch-namespaces");
  CHECK(first.policy == "pool");
  CHECK(first.args ==
        std::map<std::string, std::string>{{"DefaultPool", "B"}, {"PreferredPool", "A"}});
  REQUIRE(first.namespace_selector.has_value());
  CHECK_FALSE(first.pod_selector.has_value());
  REQUIRE(first.namespace_selector->requirements.size() == 2);
  CHECK(testing::Describe(first.namespace_selector->requirements[0]) == "team In (batch)");
  CHECK(testing::Describe(first.namespace_selector->requirements[1]) == "tier NotIn (dev, test)");
  const PolicyBinding& second = (*bindings)[1];
  CHECK(second.name.empty());
  CHECK_FALSE(second.namespace_selector.has_value());
  REQUIRE(second.pod_selector.has_value());
  CHECK(testing::Describe(second.pod_selector->requirements.at(0)) == "app Exists");
  CHECK(DescribeBinding(0, first) == "binding 1 \"batch-namespaces\"");
  CHECK(DescribeBinding(1, second) == "binding 2");

  // The ConfigMap's value decodes the same list the same way.
  const auto from_map = ParseBindings(R"([{selector: {}, policy: spread}])");
  REQUIRE(from_map.ok());
  REQUIRE(from_map->size() == 1);
  CHECK((*from_map)[0].pod_selector->empty());
  CHECK(FileBindings("")->empty());
}

TEST_CASE("a bad binding is refused with its field's path", "[policies][bindings]") {
  const auto error = [](const std::string& item) {
    return ErrorOf(FileBindings("policyBindings:\n  - " + item + "\n"));
  };
  CHECK(ErrorOf(FileBindings("policyBindings: {policy: x}\n")) ==
        "policyBindings: must be a list, got a map");
  CHECK(error("spread") ==
        "policyBindings[0]: must be a map with a policy and a selector, got \"spread\"");
  CHECK(error("{policy: spread, selector: {}, weight: 3}") ==
        "policyBindings[0]: unknown field \"weight\"");
  CHECK(error("{selector: {}}") == "policyBindings[0].policy: required");
  CHECK(error("{policy: spread}") ==
        "policyBindings[0]: needs a namespaceSelector, a selector or both");
  CHECK(error("{name: Batch, policy: spread, selector: {}}") ==
        "policyBindings[0].name: invalid binding name \"Batch\" (lowercase letters, digits and "
        "'-', at most 63)");
  CHECK(ErrorOf(FileBindings(R"(
policyBindings:
  - {name: a, policy: spread, selector: {}}
  - {name: a, policy: pool, selector: {}}
)")) == "policyBindings[1].name: duplicate binding name \"a\" (also policyBindings[0])");
  CHECK(error("{policy: spread, selector: {matchLabel: {a: b}}}") ==
        "policyBindings[0].selector: unknown field \"matchLabel\"");
  CHECK(error("{policy: spread, selector: {matchLabels: [a]}}") ==
        "policyBindings[0].selector.matchLabels: must be a map of label keys to values, got a "
        "list");
  CHECK(error("{policy: spread, namespaceSelector: {matchLabels: {team: \"a b\"}}}") ==
        "policyBindings[0].namespaceSelector.matchLabels.team: \"a b\" is not a valid label "
        "value");
  CHECK(error("{policy: spread, selector: {matchLabels: {\"-x\": y}}}") ==
        "policyBindings[0].selector.matchLabels.-x: \"-x\" is not a valid label key");
  CHECK(error("{policy: spread, selector: {matchExpressions: [{key: a, operator: Gt, values: "
              "[\"1\"]}]}}") ==
        "policyBindings[0].selector.matchExpressions[0].operator: unknown operator \"Gt\" (In, "
        "NotIn, Exists or DoesNotExist)");
  CHECK(error("{policy: spread, selector: {matchExpressions: [{key: a, operator: In}]}}") ==
        "policyBindings[0].selector.matchExpressions[0].values: In needs at least one value");
  CHECK(error("{policy: spread, selector: {matchExpressions: [{key: a, operator: Exists, "
              "values: [b]}]}}") ==
        "policyBindings[0].selector.matchExpressions[0].values: Exists takes no values, got 1");
  CHECK(error("{policy: spread, selector: {matchExpressions: [{operator: Exists}]}}") ==
        "policyBindings[0].selector.matchExpressions[0].key: required");
  CHECK(error("{policy: spread, selector: {}, args: [a]}") ==
        "policyBindings[0].args: must be a map of hole names to strings, got a list");
  CHECK(error("{policy: spread, selector: {}, args: {Pool: [a]}}") ==
        "policyBindings[0].args.Pool: must be a string, got a list");
  CHECK(ErrorOf(ParseBindings(",")).starts_with("policyBindings: line 1, column 1: "));
}

TEST_CASE("a binding must name a policy in force and fill exactly its template's holes",
          "[policies][bindings]") {
  const std::vector<Policy> file = FilePolicies();
  const auto build = [&file](const std::string& bindings) {
    return BuildPolicySet(file, {{"policyBindings.yaml", bindings}});
  };
  CHECK(ErrorOf(build("[{selector: {}, policy: gpu}]")) ==
        "ConfigMap key \"policyBindings.yaml\": policyBindings[0].policy: no policy \"gpu\" "
        "(policies: pool, spread)");
  CHECK(ErrorOf(build("[{selector: {}, policy: spread}, {selector: {}, policy: pool, args: "
                      "{PreferredPool: A}}]")) ==
        "ConfigMap key \"policyBindings.yaml\": policyBindings[1].args: no value for DefaultPool "
        "(a hole of policy \"pool\")");
  CHECK(ErrorOf(build("[{selector: {}, policy: pool, args: {PreferredPool: A, DefaultPool: B, "
                      "Pol: C}}]")) ==
        "ConfigMap key \"policyBindings.yaml\": policyBindings[0].args.Pol: policy \"pool\" has "
        "no hole Pol (holes: DefaultPool, PreferredPool)");
  CHECK(ErrorOf(build("[{selector: {}, policy: spread, args: {Pool: A}}]")) ==
        "ConfigMap key \"policyBindings.yaml\": policyBindings[0].args.Pool: policy \"spread\" "
        "has no hole Pool (it has no nodeAffinity template)");
  CHECK(ErrorOf(build("[{selector: {}, policy: pool, args: {PreferredPool: \"a b\", "
                      "DefaultPool: B}}]"))
            .starts_with("ConfigMap key \"policyBindings.yaml\": policyBindings[0].args: policy "
                         "\"pool\": "));
  CHECK(ErrorOf(build("[{selector: {}, policy: spread, extra: 1}]")) ==
        "ConfigMap key \"policyBindings.yaml\": policyBindings[0]: unknown field \"extra\"");
  CHECK(ErrorOf(BuildPolicySet(file, {{"policyBindings", "[]"}, {"policyBindings.json", "[]"}})) ==
        "ConfigMap key \"policyBindings.json\": bindings are also given under key "
        "\"policyBindings\"");

  // A file binding is checked the same way, with its path in the file.
  std::vector<PolicyBinding> from_file = *ParseBindings("[{selector: {}, policy: stack}]");
  CHECK(ErrorOf(BuildPolicySet(file, {}, 0, from_file)) ==
        "policyBindings[0].policy: no policy \"stack\" (policies: pool, spread)");
  // ... and may name a policy of the ConfigMap while the ConfigMap has it.
  const auto with_stack =
      BuildPolicySet(file, {{"stack", ""}, {"policyBindings", "[]"}}, 0, from_file);
  INFO(ErrorOf(with_stack));
  REQUIRE(with_stack.ok());
  CHECK((*with_stack)->Describe() == "3 policies (generation 0): pool, spread, stack; 1 binding");
}

TEST_CASE("a binding selects by namespace labels, pod labels, or both", "[policies][bindings]") {
  const auto one = [](const std::string& text) { return ParseBindings(text)->at(0); };
  const api::LabelSet batch = Labels({{"team", "batch"}});
  const api::LabelSet web = Labels({{"team", "web"}});
  const api::LabelSet trainer = Labels({{"app", "trainer"}});
  const api::LabelSet none;

  const PolicyBinding by_namespace =
      one("[{namespaceSelector: {matchLabels: {team: batch}}, policy: p}]");
  CHECK(BindingMatches(by_namespace, none, &batch));
  CHECK(BindingMatches(by_namespace, trainer, &batch));
  CHECK_FALSE(BindingMatches(by_namespace, trainer, &web));
  CHECK_FALSE(BindingMatches(by_namespace, trainer, nullptr));  // namespace not known

  const PolicyBinding by_pod = one("[{selector: {matchLabels: {app: trainer}}, policy: p}]");
  CHECK(BindingMatches(by_pod, trainer, &web));
  CHECK(BindingMatches(by_pod, trainer, nullptr));
  CHECK_FALSE(BindingMatches(by_pod, none, &batch));

  const PolicyBinding both =
      one("[{namespaceSelector: {matchLabels: {team: batch}}, selector: {matchLabels: {app: "
          "trainer}}, policy: p}]");
  CHECK(BindingMatches(both, trainer, &batch));
  CHECK_FALSE(BindingMatches(both, trainer, &web));
  CHECK_FALSE(BindingMatches(both, none, &batch));

  const PolicyBinding not_dev = one(
      "[{namespaceSelector: {matchExpressions: [{key: stage, operator: DoesNotExist}]}, policy: "
      "p}]");
  CHECK(BindingMatches(not_dev, none, nullptr));  // an unknown namespace has no labels
  const api::LabelSet dev = Labels({{"stage", "dev"}});
  CHECK_FALSE(BindingMatches(not_dev, none, &dev));
}

TEST_CASE("the pod's annotation wins over the first matching binding, which wins over later ones",
          "[policies][bindings]") {
  const auto set = BuildPolicySet(FilePolicies(), {{"policyBindings", R"(
- name: trainers
  selector: {matchLabels: {app: trainer}}
  policy: pool
  args: {PreferredPool: A, DefaultPool: B}
- name: batch
  namespaceSelector: {matchLabels: {team: batch}}
  policy: spread
)"}});
  INFO(ErrorOf(set));
  REQUIRE(set.ok());
  auto runtime = PolicyRuntime::Build(*set, {}, plugins::Registry());
  REQUIRE(runtime.ok());
  framework::Snapshot snapshot;
  framework::SnapshotBuilder(&snapshot).SetNamespaceLabels(api::Intern("ml"),
                                                           Labels({{"team", "batch"}}));
  PolicyChooser chooser;
  const auto choose = [&](kubesched::testing::PodBuilder pod) {
    return chooser.Choose(pod.Build(), *runtime, snapshot);
  };

  // Both bindings select it: the first in list order.
  const PolicyChoice first =
      choose(kubesched::testing::PodBuilder("a", "ml").Label("app", "trainer"));
  CHECK(first.name == "pool");
  CHECK(first.binding == "binding 1 \"trainers\"");
  CHECK(first.error.ok());
  CHECK(first.framework == (*runtime)->FrameworkOf("pool"));
  REQUIRE(first.added_affinity != nullptr);
  CHECK(first.added_affinity == (*set)->binding_affinity(0));  // filled once, when built

  const PolicyChoice second = choose(kubesched::testing::PodBuilder("b", "ml"));
  CHECK(second.name == "spread");
  CHECK(second.binding == "binding 2 \"batch\"");
  CHECK(second.added_affinity == nullptr);

  // The pod's own annotation wins, and a policy it names that does not exist is its error: no
  // binding stands in.
  const PolicyChoice annotated = choose(kubesched::testing::PodBuilder("c", "ml")
                                            .Label("app", "trainer")
                                            .Annotation(kPolicyAnnotation, "spread"));
  CHECK(annotated.name == "spread");
  CHECK(annotated.binding.empty());
  const PolicyChoice missing =
      choose(kubesched::testing::PodBuilder("d", "ml").Annotation(kPolicyAnnotation, "gone"));
  CHECK(missing.name == "gone");
  CHECK_FALSE(missing.error.ok());
  CHECK(missing.binding.empty());

  // Selected by nothing: its profile.
  const PolicyChoice none = choose(kubesched::testing::PodBuilder("e", "default"));
  CHECK(none.name.empty());
  CHECK(none.binding.empty());
  CHECK(none.framework == nullptr);
}

}  // namespace
}  // namespace kubesched::policy
