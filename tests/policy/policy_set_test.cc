#include "policy/policy_set.h"

#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "plugins/names.h"
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

std::vector<Policy> FilePolicies() {
  return {MustParse("spread", ""), MustParse("pool", kPoolPolicy)};
}

TEST_CASE("a policy set holds the file's policies and the ConfigMap's", "[policies]") {
  const auto set = BuildPolicySet(FilePolicies(),
                                  {{"stack.yaml", "percentageOfNodesToScore: 20"},
                                   {"gpu.json", R"({"percentageOfNodesToScore": 30})"},
                                   {"batch.yml", "percentageOfNodesToScore: 40"},
                                   {"plain", ""}},
                                  /*generation=*/7);
  INFO(ErrorOf(set));
  REQUIRE(set.ok());
  const PolicySet& policies = **set;
  CHECK(policies.names() ==
        std::vector<std::string>{"batch", "gpu", "plain", "pool", "spread", "stack"});
  CHECK(policies.size() == 6);
  CHECK(policies.generation() == 7);
  REQUIRE(policies.Find("pool") != nullptr);
  CHECK(policies.Find("pool")->hole_names.size() == 2);
  REQUIRE(policies.Find("stack") != nullptr);
  CHECK(policies.Find("stack")->profile.percentage_of_nodes_to_score == 20);
  CHECK(policies.Find("gpu")->profile.percentage_of_nodes_to_score == 30);
  CHECK(policies.Find("batch")->profile.percentage_of_nodes_to_score == 40);
  CHECK(policies.Find("spread") != nullptr);
  CHECK(policies.Find("stack.yaml") == nullptr);
  CHECK(policies.Find("missing") == nullptr);
  CHECK(policies.Describe() == "6 policies (generation 7): batch, gpu, plain, pool, spread, stack");

  // A rendered template from the set works as from the policy itself.
  const auto rendered =
      RenderNodeAffinity(*policies.Find("pool"), R"({"PreferredPool": "A", "DefaultPool": "B"})");
  REQUIRE(rendered.ok());
  CHECK(Describe(*rendered) ==
        "required: pool In (A, B); preferred: 3: pool In (A); 2: pool In (B)");
}

TEST_CASE("an empty policy set", "[policies]") {
  const auto set = BuildPolicySet({}, {});
  REQUIRE(set.ok());
  CHECK((*set)->empty());
  CHECK((*set)->Find("spread") == nullptr);
  CHECK((*set)->Describe() == "no policies (generation 0)");
  CHECK(PolicySet().names().empty());
}

TEST_CASE("any bad ConfigMap policy rejects the whole set", "[policies]") {
  const std::vector<Policy> file = FilePolicies();
  CHECK(ErrorOf(BuildPolicySet(file, {{"spread.yaml", ""}})) ==
        "policy \"spread\" is defined twice: in the configuration file (policies[0]) and in the "
        "ConfigMap (key \"spread.yaml\")");
  CHECK(ErrorOf(BuildPolicySet(file, {{"pool", ""}})) ==
        "policy \"pool\" is defined twice: in the configuration file (policies[1]) and in the "
        "ConfigMap (key \"pool\")");
  CHECK(ErrorOf(BuildPolicySet(file, {{"gpu.json", "{}"}, {"gpu.yaml", ""}})) ==
        "policy \"gpu\" is defined twice: in the ConfigMap (key \"gpu.json\") and in the "
        "ConfigMap (key \"gpu.yaml\")");
  CHECK(ErrorOf(BuildPolicySet({file[0], file[0]}, {})) ==
        "policy \"spread\" is defined twice: in the configuration file (policies[0]) and in "
        "the configuration file (policies[1])");
  CHECK(ErrorOf(BuildPolicySet(file, {{"GPU.yaml", ""}})) ==
        "ConfigMap key \"GPU.yaml\": invalid policy name \"GPU\" (lowercase letters, digits and "
        "'-', starting and ending with a letter or digit, at most 63 characters)");
  CHECK(ErrorOf(BuildPolicySet(file, {{".yaml", ""}})) ==
        "ConfigMap key \".yaml\": invalid policy name \".yaml\" (lowercase letters, digits and "
        "'-', starting and ending with a letter or digit, at most 63 characters)");
  CHECK(ErrorOf(BuildPolicySet(
            file, {{"good.yaml", "percentageOfNodesToScore: 5"},
                   {"gpu-pack.yaml", "plugins: {score: {enabled: [{name: Foo}]}}"}})) ==
        "policy \"gpu-pack\": plugins.score.enabled[0]: unknown plugin \"Foo\"");
  CHECK(ErrorOf(BuildPolicySet(file,
                               {{"pool2.yaml", RequiredTemplate("{key: pool, operator: In, values: "
                                                                "[\"{{.Pool\"]}")}})) ==
        absl::StrCat("policy \"pool2\": ", kExpression0,
                     ".values[0]: unterminated hole \"{{.Pool\""));
}

TEST_CASE("policies are shared, not copied, between sets", "[policies]") {
  const std::vector<Policy> file = FilePolicies();
  const auto first = BuildPolicySet(file, {}, 1);
  const auto second = BuildPolicySet(file, {{"stack", ""}}, 2);
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  // The template is immutable, so sets built from the same policies point at the same one.
  CHECK((*first)->Find("pool")->node_affinity == (*second)->Find("pool")->node_affinity);
  CHECK((*first)->Find("stack") == nullptr);
  CHECK((*second)->Find("stack") != nullptr);
}

}  // namespace
}  // namespace kubesched::policy
