// Node-affinity templates: compiled when a policy is parsed, rendered per pod from its args.

#include "policy/node_affinity_template.h"

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

TEST_CASE("the resource-pool template renders the source's example", "[policies]") {
  const Policy pool = MustParse("pool", kPoolPolicy);
  CHECK(pool.hole_names == std::set<std::string>{"DefaultPool", "PreferredPool"});
  REQUIRE(pool.node_affinity != nullptr);

  const absl::StatusOr<api::NodeAffinity> rendered =
      RenderNodeAffinity(pool, R"({"PreferredPool": "A", "DefaultPool": "B"})");
  INFO(ErrorOf(rendered));
  REQUIRE(rendered.ok());
  CHECK(Describe(*rendered) ==
        "required: pool In (A, B); preferred: 3: pool In (A); 2: pool In (B)");

  // And it selects nodes that way: pool A or B only, A scoring 3 and B 2.
  REQUIRE(rendered->required.has_value());
  CHECK(rendered->required->Matches(Labels("pool", "A"), "n1"));
  CHECK(rendered->required->Matches(Labels("pool", "B"), "n2"));
  CHECK_FALSE(rendered->required->Matches(Labels("pool", "C"), "n3"));
  CHECK_FALSE(rendered->required->Matches(api::LabelSet(), "n4"));
  REQUIRE(rendered->preferred.size() == 2);
  CHECK(rendered->preferred[0].preference.Matches(Labels("pool", "A"), "n1"));
  CHECK_FALSE(rendered->preferred[0].preference.Matches(Labels("pool", "B"), "n2"));
  CHECK(rendered->preferred[1].preference.Matches(Labels("pool", "B"), "n2"));
}

TEST_CASE("rendering with other args gives another affinity from the same policy", "[policies]") {
  const Policy pool = MustParse("pool", kPoolPolicy);
  const auto first = RenderNodeAffinity(pool, R"({"PreferredPool": "A", "DefaultPool": "B"})");
  const auto second = RenderNodeAffinity(pool, R"({"PreferredPool": "C", "DefaultPool": "A"})");
  REQUIRE(first.ok());
  REQUIRE(second.ok());
  CHECK(Describe(*second) == "required: pool In (A, C); preferred: 3: pool In (C); 2: pool In (A)");
  CHECK(Describe(*first) == "required: pool In (A, B); preferred: 3: pool In (A); 2: pool In (B)");
}

TEST_CASE("holes may have spaces inside the braces and sit inside longer text", "[policies]") {
  const Policy policy = MustParse("zone", R"(
nodeAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    nodeSelectorTerms:
      - matchExpressions:
          - {key: "{{ .Domain }}/zone", operator: In, values: ["zone-{{  .Zone}}", "{{.Zone }}-b"]}
          - {key: tier, operator: Exists}
          - {key: cores, operator: Gt, values: ["{{	.MinCores	}}"]}
        matchFields:
          - {key: metadata.name, operator: NotIn, values: ["{{.Avoid}}"]}
)");
  CHECK(policy.hole_names == std::set<std::string>{"Avoid", "Domain", "MinCores", "Zone"});
  const auto rendered = RenderNodeAffinity(
      policy,
      R"({"Domain": "example.com", "Zone": "a", "MinCores": "8", "Avoid": "node-1", "Extra": "x"})");
  INFO(ErrorOf(rendered));
  REQUIRE(rendered.ok());
  CHECK(Describe(*rendered) ==
        "required: example.com/zone In (a-b, zone-a) and tier Exists and cores Gt (8) and "
        "metadata.name field (node-1); preferred: none");
}

TEST_CASE("a closing brace pair without an opening one is literal text", "[policies]") {
  // Checked as the literal it is, not reported as a malformed hole.
  CHECK(ErrorOf(ParsePolicy("literal", R"(
nodeAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 100
      preference:
        matchExpressions: [{key: pool, operator: In, values: ["a}}"]}]
)")) == "policy \"literal\": nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
        "preference.matchExpressions[0].values[0]: \"a}}\" is not a valid label value");
  CHECK(ErrorOf(ParsePolicy(
            "literal", RequiredTemplate(R"({key: pool, operator: In, values: ["{{.Pool}}}"]})"))) ==
        absl::StrCat("policy \"literal\": ", kExpression0,
                     ".values[0]: \"{{.Pool}}}\" does not render to a valid label value (with "
                     "every hole set to \"0\": \"0}\")"));
}

TEST_CASE("a template without holes renders without args", "[policies]") {
  const Policy policy = MustParse("gpu", R"(
nodeAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    nodeSelectorTerms: [{matchExpressions: [{key: gpu, operator: Exists}]}]
)");
  CHECK(policy.hole_names.empty());
  for (std::string_view args : {"", "not json at all", R"({"A": 1})"}) {
    CAPTURE(args);
    const auto rendered = RenderNodeAffinity(policy, args);
    REQUIRE(rendered.ok());
    CHECK(Describe(*rendered) == "required: gpu Exists; preferred: none");
  }
}

TEST_CASE("a policy without a template renders to an empty affinity and ignores args",
          "[policies]") {
  const Policy spread = MustParse("spread", "percentageOfNodesToScore: 10");
  for (std::string_view args : {"", "[1, 2]", R"({"PreferredPool": "A"})"}) {
    CAPTURE(args);
    const auto rendered = RenderNodeAffinity(spread, args);
    REQUIRE(rendered.ok());
    CHECK_FALSE(rendered->required.has_value());
    CHECK(rendered->preferred.empty());
  }
  // An empty nodeAffinity is no template.
  CHECK(MustParse("empty", "nodeAffinity: {}").node_affinity == nullptr);
}

TEST_CASE("bad templates are rejected at parse time naming the policy and the field",
          "[policies]") {
  const auto error = [](const std::string& requirement) {
    return ErrorOf(ParsePolicy("pool", RequiredTemplate(requirement)));
  };
  const std::string at = absl::StrCat("policy \"pool\": ", kExpression0);

  SECTION("unterminated hole") {
    CHECK(error(R"({key: pool, operator: In, values: ["{{.DefaultPool}}", "{{.Pool"]})") ==
          at + ".values[1]: unterminated hole \"{{.Pool\"");
    CHECK(error(R"({key: "pool{{", operator: Exists})") == at + ".key: unterminated hole \"{{\"");
  }
  SECTION("bad hole names") {
    const std::string want =
        ": want {{.Name}}, Name a letter or '_' followed by letters, digits or '_'";
    CHECK(error(R"({key: pool, operator: In, values: ["{{Pool}}"]})") ==
          at + ".values[0]: bad hole \"{{Pool}}\"" + want);
    CHECK(error(R"({key: pool, operator: In, values: ["{{.9Pool}}"]})") ==
          at + ".values[0]: bad hole \"{{.9Pool}}\"" + want);
    CHECK(error(R"({key: pool, operator: In, values: ["{{.Pool.Name}}"]})") ==
          at + ".values[0]: bad hole \"{{.Pool.Name}}\"" + want);
    CHECK(error(R"({key: pool, operator: In, values: ["{{ }}"]})") ==
          at + ".values[0]: bad hole \"{{ }}\"" + want);
    CHECK(error(R"({key: pool, operator: In, values: ["{{.A{{.B}}"]})") ==
          at + ".values[0]: bad hole \"{{.A{{.B}}\"" + want);
  }
  SECTION("bad operators") {
    CHECK(error(R"({key: pool, operator: Inn, values: ["{{.Pool}}"]})") ==
          at + ".operator: unknown operator \"Inn\"");
    CHECK(error(R"({key: pool, operator: "{{.Op}}", values: [a]})") ==
          at + ".operator: unknown operator \"{{.Op}}\"");
    CHECK(error(R"({key: pool, values: [a]})") == at + ".operator: required");
    CHECK(ErrorOf(ParsePolicy("pool", R"(
nodeAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: Gt, values: ["1"]}]}]
)")) == "policy \"pool\": nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
        "nodeSelectorTerms[0].matchFields[0].operator: unknown operator \"Gt\" for "
        "matchFields (In or NotIn)");
  }
  SECTION("values that do not suit the operator") {
    CHECK(error("{key: pool, operator: In}") == at + ".values: In needs at least one value");
    CHECK(error("{key: pool, operator: Exists, values: [a, b]}") ==
          at + ".values: Exists takes no values, got 2");
    CHECK(error("{key: cores, operator: Gt, values: [\"1\", \"2\"]}") ==
          at + ".values: Gt takes exactly one value, got 2");
  }
  SECTION("templates that render to an invalid affinity") {
    CHECK(error(R"({key: pool, operator: In, values: ["{{.Pool}}-"]})") ==
          at + ".values[0]: \"{{.Pool}}-\" does not render to a valid label value (with every "
               "hole set to \"0\": \"0-\")");
    CHECK(error(R"({key: "{{.Prefix}} pool", operator: Exists})") ==
          at + ".key: \"{{.Prefix}} pool\" does not render to a valid label key (with every "
               "hole set to \"0\": \"0 pool\")");
    CHECK(error(R"({key: cores, operator: Lt, values: ["{{.N}}x"]})") ==
          at + ".values[0]: \"{{.N}}x\" does not render to an integer (with every hole set to "
               "\"0\": \"0x\")");
    CHECK(error(R"({key: "a b", operator: Exists})") ==
          at + ".key: \"a b\" is not a valid label key");
    CHECK(error(R"({key: pool, operator: In, values: [ok, "not ok"]})") ==
          at + ".values[1]: \"not ok\" is not a valid label value");
    CHECK(ErrorOf(ParsePolicy("pool", R"(
nodeAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    nodeSelectorTerms: [{matchFields: [{key: "{{.Field}}", operator: In, values: [n1]}]}]
)")) == "policy \"pool\": nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
        "nodeSelectorTerms[0].matchFields[0].key: \"{{.Field}}\" does not render to "
        "metadata.name (the only field matchFields take) (with every hole set to \"0\": "
        "\"0\")");
  }
  SECTION("terms that match nothing") {
    CHECK(ErrorOf(ParsePolicy("pool", R"(
nodeAffinity:
  requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: []}
)")) == "policy \"pool\": nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
        "nodeSelectorTerms: must have at least one term: with none, no node matches");
    CHECK(ErrorOf(ParsePolicy("pool", R"(
nodeAffinity:
  preferredDuringSchedulingIgnoredDuringExecution: [{weight: 1, preference: {}}]
)")) == "policy \"pool\": nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]."
        "preference: must have a matchExpressions or matchFields entry: an empty term matches "
        "no node");
  }
  SECTION("misspelt fields") {
    CHECK(ErrorOf(ParsePolicy("pool", R"(
nodeAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    nodeSelectorTerm: [{matchExpressions: [{key: a, operator: Exists}]}]
)")) == "policy \"pool\": nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution: unknown "
        "field \"nodeSelectorTerm\"");
    CHECK(error("{key: pool, operator: In, value: [a]}") == at + ": unknown field \"value\"");
    CHECK(ErrorOf(ParsePolicy("pool", "nodeAffinity: {required: {}}")) ==
          "policy \"pool\": nodeAffinity: unknown field \"required\"");
  }
  SECTION("an unquoted hole reads as a YAML map") {
    CHECK(error("{key: pool, operator: In, values: [{{.Pool}}]}") ==
          at + ".values[0]: must be a string, got a map (quote values with holes: "
               "\"{{.Name}}\")");
  }
}

TEST_CASE("preferred weights must be in 1..100", "[policies]") {
  const auto error = [](const std::string& weight) {
    return ErrorOf(ParsePolicy("pool", absl::StrCat(R"(
nodeAffinity:
  preferredDuringSchedulingIgnoredDuringExecution:
    - {weight: 1, preference: {matchExpressions: [{key: pool, operator: Exists}]}}
    - )",
                                                    weight, R"(preference:
        matchExpressions: [{key: pool, operator: In, values: ["{{.Pool}}"]}]
)")));
  };
  const std::string at =
      "policy \"pool\": nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[1].weight: ";
  CHECK(error("weight: 0\n      ") == at + "must be in 1..100, got 0");
  CHECK(error("weight: 101\n      ") == at + "must be in 1..100, got 101");
  CHECK(error("") == at + "must be in 1..100, got 0");
  CHECK(error("weight: \"5\"\n      ") == at + "must be a 32-bit integer, got string \"5\"");
  CHECK(error("weight: 100\n      ") == "(ok)");
}

TEST_CASE("render errors name the policy and what is wrong with the args", "[policies]") {
  const Policy pool = MustParse("pool", kPoolPolicy);
  const auto error = [&](std::string_view args) { return ErrorOf(RenderNodeAffinity(pool, args)); };
  CHECK(error(R"({"PreferredPool": "A", )") ==
        "policy \"pool\": kubesched.io/policy-args: not valid JSON at offset 23: Missing a name "
        "for object member.");
  CHECK(error(R"({"PreferredPool": "A"} x)") ==
        "policy \"pool\": kubesched.io/policy-args: not valid JSON at offset 23: The document "
        "root must not be followed by other values.");
  CHECK(
      error(R"(["A", "B"])") ==
      "policy \"pool\": kubesched.io/policy-args: must be a JSON object of strings, got an array");
  CHECK(error(R"("A")") ==
        "policy \"pool\": kubesched.io/policy-args: must be a JSON object of strings, got a "
        "string");
  CHECK(error(R"({"PreferredPool": 1, "DefaultPool": "B"})") ==
        "policy \"pool\": kubesched.io/policy-args: \"PreferredPool\" must be a string, got a "
        "number");
  CHECK(error(R"({"PreferredPool": "A", "DefaultPool": "B", "Other": null})") ==
        "policy \"pool\": kubesched.io/policy-args: \"Other\" must be a string, got null");
  CHECK(error(R"({"DefaultPool": "B"})") ==
        "policy \"pool\": kubesched.io/policy-args has no value for PreferredPool");
  CHECK(error(R"({})") ==
        "policy \"pool\": kubesched.io/policy-args has no value for PreferredPool, DefaultPool");
  CHECK(error("") ==
        "policy \"pool\": kubesched.io/policy-args has no value for PreferredPool, DefaultPool");
  CHECK(error(R"({"PreferredPool": "A b", "DefaultPool": "B"})") ==
        absl::StrCat("policy \"pool\": ", kExpression0,
                     ".values[0]: \"A b\" is not a valid label value (rendered from "
                     "\"{{.PreferredPool}}\" with kubesched.io/policy-args)"));
  CHECK(error(R"({"PreferredPool": "A", "DefaultPool": "B", "X": "y"})") == "(ok)");
}

TEST_CASE("rendered keys, integers and node names are checked too", "[policies]") {
  const Policy policy = MustParse("checked", R"(
nodeAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    nodeSelectorTerms:
      - matchExpressions: [{key: "{{.Key}}", operator: Gt, values: ["{{.Min}}"]}]
      - matchFields: [{key: metadata.name, operator: In, values: ["{{.Node}}"]}]
)");
  const auto error = [&](std::string_view key, std::string_view min, std::string_view node) {
    return ErrorOf(RenderNodeAffinity(
        policy, absl::StrCat(R"({"Key": ")", util::Absl(key), R"(", "Min": ")", util::Absl(min),
                             R"(", "Node": ")", util::Absl(node), "\"}")));
  };
  const std::string terms =
      "policy \"checked\": "
      "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms";
  CHECK(error("cores", "8", "node-1.example") == "(ok)");
  CHECK(error("cores", "-8", "n") == "(ok)");
  CHECK(error("a/b/c", "8", "n") ==
        terms +
            "[0].matchExpressions[0].key: \"a/b/c\" is not a valid label key (rendered from "
            "\"{{.Key}}\" with kubesched.io/policy-args)");
  CHECK(error("cores", "eight", "n") ==
        terms +
            "[0].matchExpressions[0].values[0]: \"eight\" is not an integer (rendered from "
            "\"{{.Min}}\" with kubesched.io/policy-args)");
  CHECK(error("cores", "8", "Node_1") ==
        terms +
            "[1].matchFields[0].values[0]: \"Node_1\" is not a valid node name (rendered "
            "from \"{{.Node}}\" with kubesched.io/policy-args)");
}

}  // namespace
}  // namespace kubesched::policy
