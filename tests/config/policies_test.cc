// Per-pod policies: parsing (ConfigMap values and the file's `policies:`), validation, template
// rendering and the policy set.

#include "config/policies.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "config/config.h"
#include "plugins/names.h"
#include "scheduler/api/labels.h"
#include "scheduler/api/symbol.h"
#include "tests/config/dump.h"
#include "tests/testing/temp_file.h"

namespace kubesched::config {
namespace {

namespace names = plugins::names;
using testing::Dump;

template <typename T>
std::string ErrorOf(const absl::StatusOr<T>& parsed) {
  if (parsed.ok()) return "(ok)";
  return std::string(parsed.status().message());
}

Policy MustParse(std::string_view name, std::string_view text) {
  absl::StatusOr<Policy> policy = ParsePolicy(name, text);
  INFO(ErrorOf(policy));
  REQUIRE(policy.ok());
  return *std::move(policy);
}

const PluginArgs* ArgsOf(const Profile& profile, std::string_view plugin) {
  for (const PluginConfig& entry : profile.plugin_config) {
    if (entry.name == plugin) return &entry.args;
  }
  return nullptr;
}

int32_t MultiPointWeight(const Profile& profile, std::string_view plugin) {
  for (const PluginRef& ref : profile.plugins.multi_point.enabled) {
    if (ref.name == plugin) return ref.weight;
  }
  return -1;
}

// "pool In (A, B)"; values sorted by text.
std::string Describe(const api::Requirement& requirement) {
  static constexpr const char* kOperators[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
  std::vector<std::string> values;
  for (api::Symbol value : requirement.values) values.emplace_back(api::SymbolText(value));
  std::sort(values.begin(), values.end());
  std::string out = absl::StrCat(util::Absl(api::SymbolText(requirement.key)), " ",
                                 kOperators[static_cast<int>(requirement.op)]);
  if (!values.empty()) absl::StrAppend(&out, " (", absl::StrJoin(values, ", "), ")");
  if (!requirement.valid) out += " INVALID";
  return out;
}

std::string Describe(const api::NodeSelectorTerm& term) {
  std::vector<std::string> parts;
  for (const api::Requirement& r : term.match_expressions) parts.push_back(Describe(r));
  for (const api::FieldRequirement& r : term.match_fields) {
    parts.push_back(absl::StrCat(r.field, " field (", absl::StrJoin(r.values, ", "), ")",
                                 r.valid ? "" : " INVALID"));
  }
  return absl::StrJoin(parts, " and ");
}

// "required: <term> | <term>; preferred: 3: <term>; 2: <term>"
std::string Describe(const api::NodeAffinity& affinity) {
  std::vector<std::string> required;
  if (affinity.required.has_value()) {
    for (const api::NodeSelectorTerm& term : affinity.required->terms) {
      required.push_back(Describe(term));
    }
  }
  std::vector<std::string> preferred;
  for (const api::PreferredSchedulingTerm& term : affinity.preferred) {
    preferred.push_back(absl::StrCat(term.weight, ": ", Describe(term.preference)));
  }
  return absl::StrCat(
      "required: ", affinity.required.has_value() ? absl::StrJoin(required, " | ") : "none",
      "; preferred: ", preferred.empty() ? "none" : absl::StrJoin(preferred, "; "));
}

api::LabelSet Labels(std::string_view key, std::string_view value) {
  return api::LabelSet::FromPairs({{api::Intern(key), api::Intern(value)}});
}

// The source's resource-pool example.
constexpr char kPoolPolicy[] = R"(
nodeAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    nodeSelectorTerms:
      - matchExpressions:
          - key: pool
            operator: In
            values: ["{{.PreferredPool}}", "{{.DefaultPool}}"]
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 3
      preference:
        matchExpressions:
          - {key: pool, operator: In, values: ["{{.PreferredPool}}"]}
    - weight: 2
      preference:
        matchExpressions:
          - {key: pool, operator: In, values: ["{{.DefaultPool}}"]}
)";

constexpr char kConfigHeader[] =
    "apiVersion: kubescheduler.config.k8s.io/v1\n"
    "kind: KubeSchedulerConfiguration\n";

// ---------------------------------------------------------------------------------------------
// Profiles

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

// ---------------------------------------------------------------------------------------------
// Templates

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

// A template with one required term holding `requirement`.
std::string RequiredTemplate(const std::string& requirement) {
  return absl::StrCat(R"(
nodeAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    nodeSelectorTerms:
      - matchExpressions:
          - )",
                      requirement, "\n");
}

constexpr char kExpression0[] =
    "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
    "matchExpressions[0]";

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

// ---------------------------------------------------------------------------------------------
// Bad policies

TEST_CASE("bad profiles in a policy are rejected naming the policy and the field", "[policies]") {
  CHECK(ErrorOf(ParsePolicy("gpu-pack", "plugins: {score: {enabled: [{name: Foo}]}}")) ==
        "policy \"gpu-pack\": plugins.score.enabled[0]: unknown plugin \"Foo\"");
  CHECK(ErrorOf(ParsePolicy("gpu-pack", "plugins: {filter: {enabled: [{name: VolumeBinding}]}}")) ==
        "policy \"gpu-pack\": plugins.filter.enabled[0]: plugin \"VolumeBinding\" is not "
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

// ---------------------------------------------------------------------------------------------
// Render errors

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

// ---------------------------------------------------------------------------------------------
// The configuration file

TEST_CASE("the configuration file's policies section", "[policies][config]") {
  const auto parse = [](const std::string& body) {
    return ParseConfiguration(std::string(kConfigHeader) + body);
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
    REQUIRE(config->policies.size() == 2);
    CHECK(config->policies[0].name == "stack");
    CHECK(config->policies[1].name == "zone");
    CHECK(config->policies[1].hole_names == std::set<std::string>{"Zone"});
    CHECK(config->policy_config_map.namespace_name == "kube-system");
    CHECK(config->policy_config_map.name == "kubesched-policies");
    // The profiles are untouched by the policies.
    REQUIRE(config->profiles.size() == 1);
    CHECK(config->profiles[0].plugin_config.empty());
  }
  SECTION("without the sections there are no policies and no ConfigMap") {
    const auto config = parse("");
    REQUIRE(config.ok());
    CHECK(config->policies.empty());
    CHECK(config->policy_config_map.empty());
    CHECK(DefaultConfiguration().policies.empty());
  }
  SECTION("errors name the item and the policy") {
    CHECK(ErrorOf(parse(R"(
policies:
  - name: spread
  - name: gpu-pack
    plugins: {score: {enabled: [{name: Foo}]}}
)")) == "policies[1]: policy \"gpu-pack\": plugins.score.enabled[0]: unknown plugin \"Foo\"");
    CHECK(ErrorOf(parse(R"(
policies:
  - name: pool
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms: [{matchExpressions: [{key: pool, operator: Inn, values: [a]}]}]
)")) == absl::StrCat("policies[0]: policy \"pool\": ", kExpression0,
                     ".operator: unknown operator \"Inn\""));
    CHECK(ErrorOf(parse("policies:\n  - name: a\n    extra: 1\n")) ==
          "policies[0]: policy \"a\": unknown field \"extra\"");
  }
  SECTION("names are required, valid and unique") {
    CHECK(ErrorOf(parse("policies:\n  - name: spread\n  - name: spread\n")) ==
          "policies[1].name: duplicate policy name \"spread\" (also policies[0])");
    CHECK(ErrorOf(parse("policies:\n  - plugins: {}\n")) == "policies[0].name: required");
    CHECK(ErrorOf(parse("policies:\n  - name: Spread\n")) ==
          "policies[0].name: invalid policy name \"Spread\" (lowercase letters, digits and '-', "
          "starting and ending with a letter or digit, at most 63 characters)");
    CHECK(ErrorOf(parse("policies:\n  - spread\n")) ==
          "policies[0]: must be a map with a name, got \"spread\"");
    CHECK(ErrorOf(parse("policies: {spread: {}}\n")) == "policies: must be a list, got a map");
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

TEST_CASE("the policies example configuration loads and its template renders",
          "[policies][config]") {
  const absl::StatusOr<Configuration> config =
      LoadConfigurationFile(testing::SourcePath("config/examples/policies.yaml"));
  INFO(ErrorOf(config));
  REQUIRE(config.ok());
  REQUIRE(config->policies.size() == 3);
  CHECK(config->policies[0].name == "spread");
  CHECK(config->policies[1].name == "stack");
  CHECK(config->policies[2].name == "pool");
  CHECK(config->policy_config_map.namespace_name == "kube-system");
  CHECK(config->policy_config_map.name == "kubesched-policies");
  CHECK(MultiPointWeight(config->policies[1].profile, names::kNodeResourcesFit) == 5);
  CHECK(MultiPointWeight(config->policies[0].profile, names::kNodeResourcesFit) == 1);

  const auto rendered =
      RenderNodeAffinity(config->policies[2], R"({"PreferredPool": "A", "DefaultPool": "B"})");
  REQUIRE(rendered.ok());
  CHECK(Describe(*rendered) ==
        "required: pool In (A, B); preferred: 3: pool In (A); 2: pool In (B)");

  // The ConfigMap entry shown in the example's comment.
  const auto set = BuildPolicySet(config->policies, {{"gpu-pack.yaml", R"(
pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated, resources: [{name: nvidia.com/gpu, weight: 5}]}}
)"}});
  INFO(ErrorOf(set));
  REQUIRE(set.ok());
  CHECK((*set)->names() == std::vector<std::string>{"gpu-pack", "pool", "spread", "stack"});
}

// ---------------------------------------------------------------------------------------------
// Policy sets

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

TEST_CASE("the policy annotations", "[policies]") {
  CHECK(std::string_view(kPolicyAnnotation) == "kubesched.io/policy");
  CHECK(std::string_view(kPolicyArgsAnnotation) == "kubesched.io/policy-args");
}

}  // namespace
}  // namespace kubesched::config
