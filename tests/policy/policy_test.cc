// Decoding per-pod policies: from the configuration file and from ConfigMap values.

#include "policy/policy.h"

#include <catch2/catch.hpp>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "plugins/names.h"
#include "policy/policy_set.h"
#include "tests/config/dump.h"
#include "tests/policy/policy_fixture.h"
#include "tests/testing/temp_file.h"

namespace kubesched::policy {
namespace {

namespace names = plugins::names;
// The configuration types and the fixture's builders read best unqualified in these tables.
using namespace kubesched::config;  // NOLINT(google-build-using-namespace)
using namespace testing;            // NOLINT(google-build-using-namespace)
using kubesched::testing::Dump;

TEST_CASE("a spread policy and a stack policy merge with the defaults into different profiles",
          "[policies]") {
  const Policy spread = MustParse("spread", R"(
pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: LeastAllocated}}
)");
  const Policy stack = MustParse("stack", R"(
plugins:
  multiPoint:
    enabled: [{name: NodeResourcesFit, weight: 5}]
pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
percentageOfNodesToScore: 50
)");
  CHECK(spread.name == "spread");
  CHECK(spread.profile.scheduler_name == "spread");
  CHECK(spread.node_affinity == nullptr);
  CHECK(spread.hole_names.empty());

  // Merged as a file profile is: the defaults, with the policy's entry replacing the default one
  // in place.
  CHECK(Dump(spread.profile.plugins.multi_point) == Dump(DefaultPlugins().multi_point));
  CHECK(MultiPointWeight(spread.profile, names::kNodeResourcesFit) == 1);
  CHECK(MultiPointWeight(stack.profile, names::kNodeResourcesFit) == 5);
  CHECK(stack.profile.plugins.multi_point.enabled.size() ==
        DefaultPlugins().multi_point.enabled.size());
  CHECK(MultiPointWeight(stack.profile, names::kTaintToleration) == 3);

  const PluginArgs* spread_args = ArgsOf(spread.profile, names::kNodeResourcesFit);
  const PluginArgs* stack_args = ArgsOf(stack.profile, names::kNodeResourcesFit);
  REQUIRE(spread_args != nullptr);
  REQUIRE(stack_args != nullptr);
  CHECK(std::get<NodeResourcesFitArgs>(*spread_args).scoring_strategy.type ==
        ScoringStrategyType::kLeastAllocated);
  CHECK(std::get<NodeResourcesFitArgs>(*stack_args).scoring_strategy.type ==
        ScoringStrategyType::kMostAllocated);

  CHECK_FALSE(spread.profile.percentage_of_nodes_to_score.has_value());
  CHECK(stack.profile.percentage_of_nodes_to_score == 50);
}

TEST_CASE("a policy is read from JSON as well as YAML", "[policies]") {
  const Policy policy = MustParse("stack", R"({"pluginConfig": [{"name": "NodeResourcesFit",
                   "args": {"scoringStrategy": {"type": "MostAllocated"}}}]})");
  const PluginArgs* args = ArgsOf(policy.profile, names::kNodeResourcesFit);
  REQUIRE(args != nullptr);
  CHECK(std::get<NodeResourcesFitArgs>(*args).scoring_strategy.type ==
        ScoringStrategyType::kMostAllocated);
}

TEST_CASE("an empty policy is the default profile under the policy's name", "[policies]") {
  const Policy policy = MustParse("plain", "");
  CHECK(Dump(policy.profile.plugins.multi_point) == Dump(DefaultPlugins().multi_point));
  CHECK(policy.profile.plugin_config.empty());
  CHECK(policy.node_affinity == nullptr);
}

TEST_CASE("a policy may repeat its own name", "[policies]") {
  CHECK(MustParse("spread", "name: spread").name == "spread");
  CHECK(ErrorOf(ParsePolicy("spread", "name: stack")) ==
        "policy \"spread\": name: must be \"spread\" (the policy's name), got \"stack\"");
}

TEST_CASE("a policy of one stray comma is rejected naming the policy", "[policies]") {
  CHECK(absl::StartsWith(ErrorOf(ParsePolicy("gpu-pack", ",")),
                         "policy \"gpu-pack\": line 1, column 1: "));
}

TEST_CASE("bad profiles in a policy are rejected naming the policy and the field", "[policies]") {
  CHECK(ErrorOf(ParsePolicy("gpu-pack", "plugins: {score: {enabled: [{name: Foo}]}}")) ==
        "policy \"gpu-pack\": plugins.score.enabled[0]: unknown plugin \"Foo\"");
  CHECK(ErrorOf(ParsePolicy("gpu-pack", "plugins: {filter: {enabled: [{name: EBSLimits}]}}")) ==
        "policy \"gpu-pack\": plugins.filter.enabled[0]: plugin \"EBSLimits\" is not "
        "supported by kubesched");
  CHECK(ErrorOf(ParsePolicy("gpu-pack", R"(
pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: Fullest}}
)")) == "policy \"gpu-pack\": pluginConfig[0].args.scoringStrategy.type: unknown type "
        "\"Fullest\"; want LeastAllocated, MostAllocated, RequestedToCapacityRatio or Watermark "
        "(NodeResourcesFit args)");
  CHECK(ErrorOf(ParsePolicy("gpu-pack", R"(
pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {resources: [{name: cpu, weight: 0}]}}
)")) == "policy \"gpu-pack\": pluginConfig[0].args.scoringStrategy.resources[0].weight: must "
        "be in 1..100, got 0 (NodeResourcesFit args)");
  CHECK(ErrorOf(ParsePolicy("gpu-pack", "percentageOfNodesToScore: 101")) ==
        "policy \"gpu-pack\": percentageOfNodesToScore: must be in 0..100, got 101");
  CHECK(ErrorOf(ParsePolicy("gpu-pack", "schedulerName: x")) ==
        "policy \"gpu-pack\": unknown field \"schedulerName\"");
  CHECK(ErrorOf(ParsePolicy("gpu-pack", "[1, 2]")) ==
        "policy \"gpu-pack\": must be a map, got a list");
  CHECK(ErrorOf(ParsePolicy("gpu-pack", "plugins: [")).rfind("policy \"gpu-pack\": line ", 0) == 0);
}

TEST_CASE("bad policy names are rejected", "[policies]") {
  const std::string rule =
      " (lowercase letters, digits and '-', starting and ending with a letter or digit, at most "
      "63 characters)";
  for (const std::string& name : std::vector<std::string>{"", "Gpu", "gpu_pack", "-gpu", "gpu-",
                                                          "a.b", std::string(64, 'a')}) {
    CAPTURE(name);
    CHECK(ErrorOf(ParsePolicy(name, "")) == "policy \"" + name + "\": invalid name" + rule);
  }
  CHECK(ParsePolicy(std::string(63, 'a'), "").ok());
  CHECK(ParsePolicy("0-gpu-9", "").ok());
}

TEST_CASE("the configuration file's policies section", "[policies][config]") {
  const auto parse = [](const std::string& body) {
    return config::ParseConfiguration(std::string(kConfigHeader) + body);
  };
  // The file's policies as policy/ decodes them; a configuration that does not parse gives its
  // error.
  const auto parse_policies =
      [&parse](const std::string& body) -> absl::StatusOr<std::vector<Policy>> {
    const auto config = parse(body);
    if (!config.ok()) return config.status();
    return ParseFilePolicies(config->policies);
  };

  SECTION("two policies and a ConfigMap") {
    const auto config = parse(R"(
policies:
  - name: stack
    pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: MostAllocated}}}]
  - name: zone
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms: [{matchExpressions: [{key: zone, operator: In, values: ["{{.Zone}}"]}]}]
policyConfigMap: {namespace: kube-system, name: kubesched-policies}
)");
    INFO(ErrorOf(config));
    REQUIRE(config.ok());
    const auto policies = ParseFilePolicies(config->policies);
    INFO(ErrorOf(policies));
    REQUIRE(policies.ok());
    REQUIRE(policies->size() == 2);
    CHECK((*policies)[0].name == "stack");
    CHECK((*policies)[1].name == "zone");
    CHECK((*policies)[1].hole_names == std::set<std::string>{"Zone"});
    CHECK(config->policy_config_map.namespace_name == "kube-system");
    CHECK(config->policy_config_map.name == "kubesched-policies");
    // The profiles are untouched by the policies.
    REQUIRE(config->profiles.size() == 1);
    CHECK(config->profiles[0].plugin_config.empty());
  }
  SECTION("without the sections there are no policies and no ConfigMap") {
    const auto config = parse("");
    REQUIRE(config.ok());
    CHECK(config->policies == nullptr);
    const auto policies = ParseFilePolicies(config->policies);
    REQUIRE(policies.ok());
    CHECK(policies->empty());
    CHECK(config->policy_config_map.empty());
    CHECK(config::DefaultConfiguration().policies == nullptr);
  }
  SECTION("errors name the item and the policy") {
    CHECK(ErrorOf(parse_policies(R"(
policies:
  - name: spread
  - name: gpu-pack
    plugins: {score: {enabled: [{name: Foo}]}}
)")) == "policies[1]: policy \"gpu-pack\": plugins.score.enabled[0]: unknown plugin \"Foo\"");
    CHECK(ErrorOf(parse_policies(R"(
policies:
  - name: pool
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: Inn, values: [a]}]}]
)")) == absl::StrCat("policies[0]: policy \"pool\": ", kExpression0,
                     ".operator: unknown operator \"Inn\""));
    CHECK(ErrorOf(parse_policies("policies:\n  - name: a\n    extra: 1\n")) ==
          "policies[0]: policy \"a\": unknown field \"extra\"");
  }
  SECTION("names are required, valid and unique") {
    CHECK(ErrorOf(parse_policies("policies:\n  - name: spread\n  - name: spread\n")) ==
          "policies[1].name: duplicate policy name \"spread\" (also policies[0])");
    CHECK(ErrorOf(parse_policies("policies:\n  - plugins: {}\n")) == "policies[0].name: required");
    CHECK(ErrorOf(parse_policies("policies:\n  - name: Spread\n")) ==
          "policies[0].name: invalid policy name \"Spread\" (lowercase letters, digits and '-', "
          "starting and ending with a letter or digit, at most 63 characters)");
    CHECK(ErrorOf(parse_policies("policies:\n  - spread\n")) ==
          "policies[0]: must be a map with a name, got \"spread\"");
    CHECK(ErrorOf(parse_policies("policies: {spread: {}}\n")) ==
          "policies: must be a list, got a map");
  }
  SECTION("the ConfigMap needs a namespace and a name") {
    CHECK(ErrorOf(parse("policyConfigMap: {name: kubesched-policies}\n")) ==
          "policyConfigMap.namespace: required");
    CHECK(ErrorOf(parse("policyConfigMap: {namespace: kube-system}\n")) ==
          "policyConfigMap.name: required");
    CHECK(ErrorOf(parse("policyConfigMap: {namespace: a, name: b, key: c}\n")) ==
          "policyConfigMap: unknown field \"key\"");
    CHECK(ErrorOf(parse("policyConfigMap: kubesched-policies\n")) ==
          "policyConfigMap: must be a map, got \"kubesched-policies\"");
  }
}

TEST_CASE("the policy annotations", "[policies]") {
  CHECK(std::string_view(kPolicyAnnotation) == "kubesched.io/policy");
  CHECK(std::string_view(kPolicyArgsAnnotation) == "kubesched.io/policy-args");
}

TEST_CASE("the policies example configuration loads and its template renders",
          "[policies][config]") {
  const absl::StatusOr<config::Configuration> config = config::LoadConfigurationFile(
      kubesched::testing::SourcePath("config/examples/policies.yaml"));
  INFO(ErrorOf(config));
  REQUIRE(config.ok());
  const auto parsed = ParseFilePolicies(config->policies);
  INFO(ErrorOf(parsed));
  REQUIRE(parsed.ok());
  const std::vector<Policy>& policies = *parsed;
  REQUIRE(policies.size() == 3);
  CHECK(policies[0].name == "spread");
  CHECK(policies[1].name == "stack");
  CHECK(policies[2].name == "pool");
  CHECK(config->policy_config_map.namespace_name == "kube-system");
  CHECK(config->policy_config_map.name == "kubesched-policies");
  CHECK(MultiPointWeight(policies[1].profile, names::kNodeResourcesFit) == 5);
  CHECK(MultiPointWeight(policies[0].profile, names::kNodeResourcesFit) == 1);
  const auto bindings = ParseFileBindings(config->policy_bindings);
  INFO(ErrorOf(bindings));
  REQUIRE(bindings.ok());
  const auto bound = BuildPolicySet(policies, {}, 0, *bindings);
  INFO(ErrorOf(bound));
  REQUIRE(bound.ok());
  CHECK((*bound)->bindings().size() == 2);
  REQUIRE((*bound)->binding_affinity(0) != nullptr);
  CHECK(Describe(*(*bound)->binding_affinity(0)) ==
        "required: pool In (A, B); preferred: 3: pool In (A); 2: pool In (B)");

  const auto rendered =
      RenderNodeAffinity(policies[2], R"({"PreferredPool": "A", "DefaultPool": "B"})");
  REQUIRE(rendered.ok());
  CHECK(Describe(*rendered) ==
        "required: pool In (A, B); preferred: 3: pool In (A); 2: pool In (B)");

  // The ConfigMap entry shown in the example's comment.
  const auto set = BuildPolicySet(policies, {{"gpu-pack.yaml", R"(
pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated, resources: [{name: nvidia.com/gpu, weight: 5}]}}
)"}});
  INFO(ErrorOf(set));
  REQUIRE(set.ok());
  CHECK((*set)->names() == std::vector<std::string>{"gpu-pack", "pool", "spread", "stack"});
}

TEST_CASE("the policy a pod asks for is its annotation, present or not", "[policies]") {
  api::Pod pod;
  CHECK(!RequestedPolicy(pod).has_value());
  CHECK(RequestedPolicyArgs(pod).empty());
  pod.meta.annotations[kPolicyAnnotation] = "pool";
  pod.meta.annotations[kPolicyArgsAnnotation] = R"({"PreferredPool": "A"})";
  CHECK(RequestedPolicy(pod) == std::optional<std::string_view>("pool"));
  CHECK(RequestedPolicyArgs(pod) == R"({"PreferredPool": "A"})");
  // An empty value still names a policy (one that cannot exist), so the pod waits with a reason
  // instead of silently using its profile.
  pod.meta.annotations[kPolicyAnnotation] = "";
  CHECK(RequestedPolicy(pod) == std::optional<std::string_view>(""));
}

}  // namespace
}  // namespace kubesched::policy
