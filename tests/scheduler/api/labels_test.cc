#include "scheduler/api/labels.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/testing/builders.h"

namespace kubesched::api {
namespace {

using testing::Labels;

Requirement Req(const std::string& key, SelectorOperator op, std::vector<std::string> values,
                int64_t number = 0, bool valid = true) {
  Requirement r;
  r.key = Intern(key);
  r.op = op;
  for (const auto& v : values) r.values.push_back(Intern(v));
  std::sort(r.values.begin(), r.values.end());
  r.number = number;
  r.valid = valid;
  return r;
}

TEST_CASE("a label set sorts its pairs and keeps the later of duplicate keys", "[api]") {
  const LabelSet set = LabelSet::FromPairs({{Intern("zone"), Intern("a")},
                                            {Intern("app"), Intern("web")},
                                            {Intern("zone"), Intern("b")}});
  REQUIRE(set.size() == 2);
  CHECK(set.Get(Intern("zone")) == Intern("b"));
  CHECK(set.Get(Intern("app")) == Intern("web"));
  CHECK(std::is_sorted(set.pairs().begin(), set.pairs().end()));
}

TEST_CASE("a label set returns nullopt for a missing key", "[api]") {
  const LabelSet set = Labels({{"app", "web"}});
  CHECK_FALSE(set.Get(Intern("missing-label-key")).has_value());
  CHECK_FALSE(set.Has(Intern("missing-label-key")));
  CHECK(LabelSet().empty());
}

TEST_CASE("setting a label inserts in order or replaces the value", "[api]") {
  LabelSet set;
  set.Set(Intern("b"), Intern("1"));
  set.Set(Intern("a"), Intern("2"));
  set.Set(Intern("b"), Intern("3"));
  CHECK(set == Labels({{"a", "2"}, {"b", "3"}}));
}

TEST_CASE("requirements match labels per operator", "[api]") {
  using Op = SelectorOperator;
  struct Case {
    std::string name;
    Requirement requirement;
    std::vector<std::pair<std::string, std::string>> labels;
    bool matches;
  };
  const std::vector<Case> cases = {
      {"In with a listed value", Req("app", Op::kIn, {"web", "db"}), {{"app", "db"}}, true},
      {"In with another value", Req("app", Op::kIn, {"web"}), {{"app", "db"}}, false},
      {"In without the key", Req("app", Op::kIn, {"web"}), {}, false},
      {"NotIn with another value", Req("app", Op::kNotIn, {"web"}), {{"app", "db"}}, true},
      {"NotIn with a listed value", Req("app", Op::kNotIn, {"web"}), {{"app", "web"}}, false},
      {"NotIn without the key", Req("app", Op::kNotIn, {"web"}), {}, true},
      {"Exists with the key", Req("app", Op::kExists, {}), {{"app", ""}}, true},
      {"Exists without the key", Req("app", Op::kExists, {}), {}, false},
      {"DoesNotExist without the key", Req("app", Op::kDoesNotExist, {}), {}, true},
      {"DoesNotExist with the key", Req("app", Op::kDoesNotExist, {}), {{"app", "x"}}, false},
      {"Gt with a larger number", Req("cores", Op::kGt, {"4"}, 4), {{"cores", "8"}}, true},
      {"Gt with an equal number", Req("cores", Op::kGt, {"4"}, 4), {{"cores", "4"}}, false},
      {"Gt with a negative number", Req("cores", Op::kGt, {"-5"}, -5), {{"cores", "-4"}}, true},
      {"Gt with a non-integer label", Req("cores", Op::kGt, {"4"}, 4), {{"cores", "8x"}}, false},
      {"Gt without the key", Req("cores", Op::kGt, {"4"}, 4), {}, false},
      {"Lt with a smaller number", Req("cores", Op::kLt, {"4"}, 4), {{"cores", "3"}}, true},
      {"Lt with a larger number", Req("cores", Op::kLt, {"4"}, 4), {{"cores", "5"}}, false},
      {"Lt with an overflowing label",
       Req("cores", Op::kLt, {"4"}, 4),
       {{"cores", "99999999999999999999"}},
       false},
      {"invalid In", Req("app", Op::kIn, {"web"}, 0, false), {{"app", "web"}}, false},
      {"invalid NotIn", Req("app", Op::kNotIn, {}, 0, false), {}, false},
      {"invalid DoesNotExist", Req("app", Op::kDoesNotExist, {"x"}, 0, false), {}, false},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    CHECK(c.requirement.Matches(Labels(c.labels)) == c.matches);
  }
}

TEST_CASE("each selector operator has the name the API spells it with", "[api]") {
  const std::vector<std::pair<SelectorOperator, std::string_view>> names = {
      {SelectorOperator::kIn, "In"},         {SelectorOperator::kNotIn, "NotIn"},
      {SelectorOperator::kExists, "Exists"}, {SelectorOperator::kDoesNotExist, "DoesNotExist"},
      {SelectorOperator::kGt, "Gt"},         {SelectorOperator::kLt, "Lt"}};
  for (const auto& [op, name] : names) CHECK(SelectorOperatorName(op) == name);
}

TEST_CASE("an empty label selector matches every label set", "[api]") {
  CHECK(LabelSelector{}.Matches(LabelSet()));
  CHECK(LabelSelector{}.Matches(Labels({{"app", "web"}})));
}

TEST_CASE("a label selector requires every requirement to match", "[api]") {
  LabelSelector selector;
  selector.requirements = {Req("app", SelectorOperator::kIn, {"web"}),
                           Req("tier", SelectorOperator::kExists, {})};
  CHECK(selector.Matches(Labels({{"app", "web"}, {"tier", "front"}})));
  CHECK_FALSE(selector.Matches(Labels({{"app", "web"}})));
}

TEST_CASE("field requirements compare the node name", "[api]") {
  FieldRequirement in{"metadata.name", SelectorOperator::kIn, {"node-1"}, true};
  FieldRequirement not_in{"metadata.name", SelectorOperator::kNotIn, {"node-1"}, true};
  FieldRequirement invalid{"metadata.uid", SelectorOperator::kIn, {"node-1"}, false};
  CHECK(in.Matches("node-1"));
  CHECK_FALSE(in.Matches("node-2"));
  CHECK(not_in.Matches("node-2"));
  CHECK_FALSE(not_in.Matches("node-1"));
  CHECK_FALSE(invalid.Matches("node-1"));
}

TEST_CASE("an empty node selector term matches no node", "[api]") {
  CHECK_FALSE(NodeSelectorTerm{}.Matches(Labels({{"zone", "a"}}), "node-1"));
}

TEST_CASE("a node selector term ANDs its expressions and fields", "[api]") {
  NodeSelectorTerm term;
  term.match_expressions = {Req("zone", SelectorOperator::kIn, {"a"})};
  term.match_fields = {{"metadata.name", SelectorOperator::kIn, {"node-1"}, true}};
  CHECK(term.Matches(Labels({{"zone", "a"}}), "node-1"));
  CHECK_FALSE(term.Matches(Labels({{"zone", "a"}}), "node-2"));
  CHECK_FALSE(term.Matches(Labels({{"zone", "b"}}), "node-1"));
}

TEST_CASE("a node selector ORs its terms and matches nothing without terms", "[api]") {
  NodeSelectorTerm zone_a;
  zone_a.match_expressions = {Req("zone", SelectorOperator::kIn, {"a"})};
  NodeSelectorTerm zone_b;
  zone_b.match_expressions = {Req("zone", SelectorOperator::kIn, {"b"})};
  const NodeSelector selector{{zone_a, zone_b}};
  CHECK(selector.Matches(Labels({{"zone", "b"}}), "n"));
  CHECK_FALSE(selector.Matches(Labels({{"zone", "c"}}), "n"));
  CHECK_FALSE(NodeSelector{}.Matches(Labels({{"zone", "a"}}), "n"));
}

TEST_CASE("label keys are validated as upstream qualified names", "[api]") {
  const std::pair<std::string, bool> cases[] = {
      {"app", true},
      {"app.kubernetes.io/name", true},
      {"a", true},
      {"A_b-c.d", true},
      {"example.com/Name_1", true},
      {std::string(63, 'a'), true},
      {std::string(64, 'a'), false},
      {std::string(253, 'a') + "/x", true},
      {std::string(254, 'a') + "/x", false},
      {"", false},
      {"/app", false},
      {"example.com/", false},
      {"-app", false},
      {"app-", false},
      {"a b", false},
      {"Example.com/app", false},
      {"example..com/app", false},
      {"-example.com/app", false},
      {"a/b/c", false},
  };
  for (const auto& [key, valid] : cases) {
    INFO(key);
    CHECK(IsValidLabelKey(key) == valid);
  }
}

TEST_CASE("label values are empty or up to 63 alphanumeric-bounded characters", "[api]") {
  const std::pair<std::string, bool> cases[] = {
      {"", true},
      {"web", true},
      {"v1.2_3-x", true},
      {std::string(63, 'z'), true},
      {std::string(64, 'z'), false},
      {"-web", false},
      {"web.", false},
      {"a/b", false},
      {"a b", false},
  };
  for (const auto& [value, valid] : cases) {
    INFO(value);
    CHECK(IsValidLabelValue(value) == valid);
  }
}

}  // namespace
}  // namespace kubesched::api
