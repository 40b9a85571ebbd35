// PolicyChooser: a pod's policy annotations resolved against the policies in force, with the
// last template filling remembered only while policy, args and policy set stay the same.

#include "policy/policy_runtime.h"

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <string>

#include "plugins/registry/registry.h"
#include "tests/testing/builders.h"

namespace kubesched::policy {
namespace {

constexpr char kTemplate[] = R"(
nodeAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    nodeSelectorTerms:
      - matchExpressions: [{key: pool, operator: In, values: ["{{.Pool}}"]}]
)";

std::shared_ptr<const PolicyRuntime> Runtime(const std::string& text, int64_t generation) {
  auto set = BuildPolicySet({}, {{"pool", text}}, generation);
  REQUIRE(set.ok());
  auto runtime = PolicyRuntime::Build(*set, {}, plugins::Registry());
  REQUIRE(runtime.ok());
  return *runtime;
}

api::Pod PodWith(const std::string& policy, const std::string& args) {
  testing::PodBuilder pod("p");
  if (!policy.empty()) pod.Annotation(kPolicyAnnotation, policy);
  if (!args.empty()) pod.Annotation(kPolicyArgsAnnotation, args);
  return pod.Build();
}

// The single value the rendered required term allows.
std::string Allowed(const PolicyChoice& choice) {
  REQUIRE(choice.added_affinity != nullptr);
  REQUIRE(choice.added_affinity->required.has_value());
  const auto& requirement = choice.added_affinity->required->terms.at(0).match_expressions.at(0);
  REQUIRE(requirement.values.size() == 1);
  return std::string(api::SymbolText(requirement.values.front()));
}

TEST_CASE("PolicyChooser fills a template per policy and args, never from a stale rendering",
          "[policies]") {
  PolicyChooser chooser;
  const framework::Snapshot no_namespaces;  // no bindings here: the chooser never reads it
  const auto first = Runtime(kTemplate, 1);
  CHECK(Allowed(chooser.Choose(PodWith("pool", R"({"Pool": "A"})"), first, no_namespaces)) == "A");
  CHECK(Allowed(chooser.Choose(PodWith("pool", R"({"Pool": "A"})"), first, no_namespaces)) == "A");
  CHECK(Allowed(chooser.Choose(PodWith("pool", R"({"Pool": "B"})"), first, no_namespaces)) == "B");

  // A new policy set with another template under the same name: rendered afresh.
  const auto second = Runtime(
      "nodeAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerms: "
      "[{matchExpressions: [{key: pool, operator: In, values: [\"x-{{.Pool}}\"]}]}]}}",
      2);
  CHECK(Allowed(chooser.Choose(PodWith("pool", R"({"Pool": "B"})"), second, no_namespaces)) ==
        "x-B");

  const PolicyChoice none = chooser.Choose(PodWith("", ""), second, no_namespaces);
  CHECK(none.name.empty());
  CHECK(none.framework == nullptr);
  CHECK(none.error.ok());

  const PolicyChoice missing = chooser.Choose(PodWith("gone", ""), second, no_namespaces);
  CHECK(missing.error.message() ==
        "policy \"gone\" (annotation kubesched.io/policy) does not exist");
  const PolicyChoice unfilled = chooser.Choose(PodWith("pool", "{}"), second, no_namespaces);
  CHECK(unfilled.error.message() ==
        "policy \"pool\": kubesched.io/policy-args has no value for Pool");
  CHECK(PolicyWaitKey("pool") == "policy:pool");
}

}  // namespace
}  // namespace kubesched::policy
