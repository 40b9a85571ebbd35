// NodeAffinity: nodeSelector and required terms, scheduler-enforced addedAffinity, the
// PreFilter node-name pins, preferred-term scoring and args validation.

#include "plugins/node_affinity/node_affinity.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "tests/plugins/plugin_fixture.h"

namespace kubesched {
namespace {

using framework::Code;
using framework::CycleState;
using plugin_testing::Cluster;
using plugin_testing::Info;
using plugin_testing::NodeBuilder;
using plugin_testing::PodBuilder;
using plugin_testing::Unwrap;
using plugin_testing::Verdict;
using plugins::NodeAffinity;

// --- Building selectors --------------------------------------------------------------------

api::Requirement Expr(const std::string& key, api::SelectorOperator op,
                      std::vector<std::string> values = {}) {
  api::Requirement r;
  r.key = api::Intern(key);
  r.op = op;
  for (const auto& v : values) r.values.push_back(api::Intern(v));
  std::sort(r.values.begin(), r.values.end());
  return r;
}

api::Requirement In(const std::string& key, const std::string& value) {
  return Expr(key, api::SelectorOperator::kIn, {value});
}

api::FieldRequirement NameIn(std::vector<std::string> names) {
  api::FieldRequirement r;
  r.field = "metadata.name";
  r.op = api::SelectorOperator::kIn;
  r.values = std::move(names);
  return r;
}

api::NodeSelectorTerm ExprTerm(std::vector<api::Requirement> expressions) {
  api::NodeSelectorTerm term;
  term.match_expressions = std::move(expressions);
  return term;
}

api::NodeSelectorTerm FieldTerm(std::vector<api::FieldRequirement> fields) {
  api::NodeSelectorTerm term;
  term.match_fields = std::move(fields);
  return term;
}

api::Affinity Required(std::vector<api::NodeSelectorTerm> terms) {
  api::Affinity affinity;
  affinity.node_affinity.emplace().required = api::NodeSelector{std::move(terms)};
  return affinity;
}

api::Affinity Preferred(std::vector<api::PreferredSchedulingTerm> terms) {
  api::Affinity affinity;
  affinity.node_affinity.emplace().preferred = std::move(terms);
  return affinity;
}

config::NodeAffinityArgs AddedRequired(std::vector<api::NodeSelectorTerm> terms) {
  config::NodeAffinityArgs args;
  args.added_affinity.emplace().required = api::NodeSelector{std::move(terms)};
  return args;
}

config::NodeAffinityArgs AddedPreferred(std::vector<api::PreferredSchedulingTerm> terms) {
  config::NodeAffinityArgs args;
  args.added_affinity.emplace().preferred = std::move(terms);
  return args;
}

std::unique_ptr<NodeAffinity> MakeAffinity(config::NodeAffinityArgs args = {}) {
  return Unwrap<NodeAffinity>(plugins::NewNodeAffinity(args, {}));
}

const std::string kPod(NodeAffinity::kReasonPod);
const std::string kEnforced(NodeAffinity::kReasonEnforced);

// --- Filter --------------------------------------------------------------------------------

TEST_CASE("node affinity filter matches nodeSelector and required terms",
          "[plugins][nodeaffinity]") {
  struct Case {
    std::string name;
    PodBuilder pod;
    std::string verdict;
    config::NodeAffinityArgs args = {};
  };
  const std::vector<Case> cases = {
      {"a matching nodeSelector passes", PodBuilder("p").NodeSelector("zone", "a"), "pass"},
      {"a nodeSelector label the node lacks fails", PodBuilder("p").NodeSelector("disk", "ssd"),
       kPod},
      {"a nodeSelector value that differs fails", PodBuilder("p").NodeSelector("zone", "b"), kPod},
      {"an In requirement that matches passes",
       PodBuilder("p").Affinity(Required({ExprTerm({In("zone", "a")})})), "pass"},
      {"a NotIn requirement on another value passes",
       PodBuilder("p").Affinity(
           Required({ExprTerm({Expr("zone", api::SelectorOperator::kNotIn, {"b"})})})),
       "pass"},
      {"requirements in one term are ANDed",
       PodBuilder("p").Affinity(Required({ExprTerm({In("zone", "a"), In("gpu", "yes")})})), kPod},
      {"terms are ORed",
       PodBuilder("p").Affinity(
           Required({FieldTerm({NameIn({"other"})}), ExprTerm({In("zone", "a")})})),
       "pass"},
      {"an invalid requirement matches nothing", PodBuilder("p").Affinity(Required({ExprTerm({[] {
         auto r = In("zone", "a");
         r.valid = false;
         return r;
       }()})})),
       kPod},
      {"required affinity with no terms matches nothing", PodBuilder("p").Affinity(Required({})),
       kPod},
      {"both nodeSelector and required terms must match",
       PodBuilder("p").NodeSelector("zone", "a").Affinity(Required({ExprTerm({In("zone", "b")})})),
       kPod},
      {"scheduler-enforced affinity is checked first", PodBuilder("p").NodeSelector("disk", "ssd"),
       kEnforced, AddedRequired({ExprTerm({In("zone", "b")})})},
      {"matching the enforced affinity still needs the pod's own",
       PodBuilder("p").NodeSelector("disk", "ssd"), kPod,
       AddedRequired({FieldTerm({NameIn({"node1"})})})},
      {"a pod without affinity passes", PodBuilder("p"), "pass"},
  };
  Cluster cluster;
  const auto& snapshot = cluster.Node(NodeBuilder("node1").Label("zone", "a")).Build();
  for (const auto& c : cases) {
    SECTION(c.name) {
      auto plugin = MakeAffinity(c.args);
      const auto pod = Info(c.pod);
      CycleState state;
      plugin->PreFilter(state, *pod, snapshot);
      const auto status = plugin->Filter(state, *pod, *snapshot.Get("node1"));
      CHECK(Verdict(status) == std::vector<std::string>{c.verdict});
      if (!status.IsSuccess()) CHECK(status.code() == Code::kUnschedulableAndUnresolvable);
    }
  }
}

// --- PreFilter -----------------------------------------------------------------------------

TEST_CASE("node affinity PreFilter skips, pins node names or rejects", "[plugins][nodeaffinity]") {
  using Names = std::vector<std::string>;
  struct Case {
    std::string name;
    PodBuilder pod;
    Code code;
    std::optional<Names> pinned;  // sorted
    config::NodeAffinityArgs args = {};
  };
  const std::vector<Case> cases = {
      {"nothing required skips",
       PodBuilder("p").Affinity(Preferred({{1, ExprTerm({In("a", "b")})}})), Code::kSkip,
       std::nullopt},
      {"a nodeSelector alone does not pin", PodBuilder("p").NodeSelector("zone", "a"),
       Code::kSuccess, std::nullopt},
      {"added affinity alone does not skip", PodBuilder("p"), Code::kSuccess, std::nullopt,
       AddedRequired({ExprTerm({In("zone", "a")})})},
      {"a metadata.name pin restricts the nodes",
       PodBuilder("p").Affinity(Required({FieldTerm({NameIn({"node1"})})})), Code::kSuccess,
       Names{"node1"}},
      {"pins of several terms are united",
       PodBuilder("p").Affinity(
           Required({FieldTerm({NameIn({"node1"})}), FieldTerm({NameIn({"node2"})})})),
       Code::kSuccess, Names{"node1", "node2"}},
      {"pins within one term are intersected",
       PodBuilder("p").Affinity(
           Required({FieldTerm({NameIn({"node1", "node2"}), NameIn({"node2", "node3"})})})),
       Code::kSuccess, Names{"node2"}},
      {"a term without a pin lets every node through",
       PodBuilder("p").Affinity(
           Required({FieldTerm({NameIn({"node1"})}), ExprTerm({In("zone", "a")})})),
       Code::kSuccess, std::nullopt},
      {"conflicting pins reject the pod",
       PodBuilder("p").Affinity(Required({FieldTerm({NameIn({"node1"}), NameIn({"node2"})})})),
       Code::kUnschedulableAndUnresolvable, std::nullopt},
  };
  Cluster cluster;
  const auto& snapshot = cluster.Node(NodeBuilder("node1")).Build();
  for (const auto& c : cases) {
    SECTION(c.name) {
      CycleState state;
      const auto outcome = MakeAffinity(c.args)->PreFilter(state, *Info(c.pod), snapshot);
      CHECK(outcome.status.code() == c.code);
      if (c.code == Code::kUnschedulableAndUnresolvable) {
        CHECK(Verdict(outcome.status) ==
              std::vector<std::string>{std::string(NodeAffinity::kReasonConflict)});
      }
      std::optional<Names> pinned;
      if (outcome.result.node_names.has_value()) {
        pinned.emplace(outcome.result.node_names->begin(), outcome.result.node_names->end());
        std::sort(pinned->begin(), pinned->end());
      }
      CHECK(pinned == c.pinned);
    }
  }
}

// --- Score ---------------------------------------------------------------------------------

using Scores = std::map<std::string, int64_t>;

TEST_CASE("node affinity scores the weights of matching preferred terms",
          "[plugins][nodeaffinity]") {
  SECTION("weights add up per node and normalize to the best (upstream: 18, 100, 36)") {
    Cluster cluster;
    cluster.Node(NodeBuilder("node1").Label("foo", "bar"))
        .Node(NodeBuilder("node5").Label("foo", "bar").Label("key", "value").Label("az", "az1"))
        .Node(NodeBuilder("node2").Label("key", "value"));
    const auto pod = PodBuilder("p").Affinity(Preferred({
        {2, ExprTerm({In("foo", "bar")})},
        {4, ExprTerm({In("key", "value")})},
        {5, ExprTerm({In("foo", "bar"), In("key", "value"), In("az", "az1")})},
    }));
    auto plugin = MakeAffinity();
    CHECK(plugin_testing::ScoreAll(*plugin, cluster.Build(), *Info(pod)) ==
          Scores{{"node1", 18}, {"node5", 100}, {"node2", 36}});
  }
  SECTION("added preferred terms add to the pod's (upstream: 40, 60, 100)") {
    Cluster cluster;
    cluster.Node(NodeBuilder("node1").Label("foo", "bar"))
        .Node(NodeBuilder("node2").Label("key", "value"))
        .Node(NodeBuilder("node3").Label("foo", "bar").Label("key", "value"));
    const auto pod = PodBuilder("p").Affinity(Preferred({{2, ExprTerm({In("foo", "bar")})}}));
    auto plugin = MakeAffinity(AddedPreferred({{3, ExprTerm({In("key", "value")})}}));
    CHECK(plugin_testing::ScoreAll(*plugin, cluster.Build(), *Info(pod)) ==
          Scores{{"node1", 40}, {"node2", 60}, {"node3", 100}});
  }
  SECTION("no matching node leaves every score 0") {
    Cluster cluster;
    cluster.Node(NodeBuilder("node1")).Node(NodeBuilder("node2"));
    const auto pod = PodBuilder("p").Affinity(Preferred({{2, ExprTerm({In("foo", "bar")})}}));
    CHECK(plugin_testing::ScoreAll(*MakeAffinity(), cluster.Build(), *Info(pod)) ==
          Scores{{"node1", 0}, {"node2", 0}});
  }
  SECTION("nothing preferred skips PreScore") {
    Cluster cluster;
    cluster.Node(NodeBuilder("node1"));
    CHECK_FALSE(plugin_testing::ScoreAll(*MakeAffinity(), cluster.Build(),
                                         *Info(PodBuilder("p").NodeSelector("a", "b")))
                    .has_value());
  }
}

// --- Args ----------------------------------------------------------------------------------

TEST_CASE("node affinity args are validated with the field named", "[plugins][nodeaffinity]") {
  SECTION("an invalid required requirement") {
    auto bad = In("zone", "a");
    bad.valid = false;
    const auto made = plugins::NewNodeAffinity(AddedRequired({ExprTerm({bad})}), {});
    REQUIRE_FALSE(made.ok());
    CHECK(std::string(made.status().message()) ==
          "NodeAffinity: addedAffinity.requiredDuringSchedulingIgnoredDuringExecution."
          "nodeSelectorTerms[0].matchExpressions[0]: invalid requirement");
  }
  SECTION("a preferred weight above 100") {
    const auto made =
        plugins::NewNodeAffinity(AddedPreferred({{101, ExprTerm({In("zone", "a")})}}), {});
    REQUIRE_FALSE(made.ok());
    CHECK(std::string(made.status().message()) ==
          "NodeAffinity: addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
          "must be in 0..100");
  }
  SECTION("args of another plugin") {
    const auto made = plugins::NewNodeAffinity(config::InterPodAffinityArgs{}, {});
    REQUIRE_FALSE(made.ok());
    CHECK(made.status().code() == absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace kubesched
