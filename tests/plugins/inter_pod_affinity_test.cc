// Focused behaviours of InterPodAffinity that the upstream vectors cover only in passing:
// symmetry weights, namespace selectors, missing topology keys, existing pods' anti-affinity,
// normalization and argument validation.

#include "plugins/inter_pod_affinity/inter_pod_affinity.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "scheduler/framework/snapshot.h"
#include "tests/testing/builders.h"

namespace kubesched {
namespace {

using framework::Code;
using framework::CycleState;
using framework::PodInfoPtr;
using framework::Snapshot;
using testing::NodeBuilder;
using testing::PodBuilder;

// --- Building affinity terms ---------------------------------------------------------------

api::LabelSelector MatchLabel(const std::string& key, const std::string& value) {
  api::Requirement requirement;
  requirement.key = api::Intern(key);
  requirement.op = api::SelectorOperator::kIn;
  requirement.values = {api::Intern(value)};
  return api::LabelSelector{{requirement}};
}

api::PodAffinityTerm Term(api::LabelSelector selector, const std::string& topology_key) {
  api::PodAffinityTerm term;
  term.label_selector = std::move(selector);
  term.topology_key = api::Intern(topology_key);
  return term;
}

api::PodAffinityTerm WithNamespaceSelector(api::PodAffinityTerm term, api::LabelSelector selector) {
  term.namespace_selector = std::move(selector);
  return term;
}

api::Affinity RequiredAffinity(api::PodAffinityTerm term) {
  api::Affinity affinity;
  affinity.pod_affinity.emplace().required.push_back(std::move(term));
  return affinity;
}

api::Affinity RequiredAntiAffinity(api::PodAffinityTerm term) {
  api::Affinity affinity;
  affinity.pod_anti_affinity.emplace().required.push_back(std::move(term));
  return affinity;
}

api::Affinity PreferredAntiAffinity(api::PodAffinityTerm term, int32_t weight) {
  api::Affinity affinity;
  affinity.pod_anti_affinity.emplace().preferred.push_back({weight, std::move(term)});
  return affinity;
}

PodInfoPtr Info(const PodBuilder& builder) { return framework::MakePodInfo(builder.Ptr(), 0); }

// --- A small cluster -----------------------------------------------------------------------

class Cluster {
 public:
  Cluster& Node(const NodeBuilder& node) {
    auto ptr = node.Ptr();
    builder_.Upsert(ptr->meta.name)->SetNode(ptr, ++generation_);
    return *this;
  }
  Cluster& Pod(const std::string& node, const PodBuilder& pod) {
    builder_.Upsert(node)->AddPod(Info(PodBuilder(pod).NodeName(node)), ++generation_);
    return *this;
  }
  Cluster& Namespace(const std::string& name, const std::string& key, const std::string& value) {
    builder_.SetNamespaceLabels(api::Intern(name), testing::Labels({{key, value}}));
    return *this;
  }
  const Snapshot& Build() {
    builder_.RebuildLists();
    return snapshot_;
  }

 private:
  Snapshot snapshot_;
  framework::SnapshotBuilder builder_{&snapshot_};
  int64_t generation_ = 0;
};

std::unique_ptr<plugins::InterPodAffinity> MakePlugin(config::InterPodAffinityArgs args = {}) {
  auto plugin = plugins::NewInterPodAffinity(args, plugins::PluginHandle{});
  REQUIRE(plugin.ok());
  // Plugin is a virtual base, so only dynamic_cast reaches the concrete type.
  auto* concrete = dynamic_cast<plugins::InterPodAffinity*>(plugin->get());
  REQUIRE(concrete != nullptr);
  plugin->release();
  return std::unique_ptr<plugins::InterPodAffinity>(concrete);
}

// PreFilter (must not skip) then Filter on each named node; "pass" or the status message.
std::vector<std::string> FilterAll(plugins::InterPodAffinity& plugin, const Snapshot& snapshot,
                                   const PodInfoPtr& pod, const std::vector<std::string>& nodes) {
  CycleState state;
  const auto outcome = plugin.PreFilter(state, *pod, snapshot);
  REQUIRE(outcome.status.IsSuccess());
  std::vector<std::string> results;
  for (const auto& name : nodes) {
    const auto status = plugin.Filter(state, *pod, *snapshot.Get(name));
    results.push_back(status.IsSuccess() ? "pass" : status.Message());
  }
  return results;
}

// PreScore over all nodes, then Score and NormalizeScore; empty when PreScore skips.
std::vector<int64_t> ScoreAll(plugins::InterPodAffinity& plugin, const Snapshot& snapshot,
                              const PodInfoPtr& pod) {
  CycleState state;
  const auto status = plugin.PreScore(state, *pod, snapshot, snapshot.nodes());
  if (status.IsSkip()) return {};
  REQUIRE(status.IsSuccess());
  std::vector<int64_t> scores;
  for (const auto* node : snapshot.nodes()) scores.push_back(plugin.Score(state, *pod, *node));
  plugin.NormalizeScore(state, *pod, absl::MakeSpan(scores));
  return scores;
}

const std::string kAffinityFail(plugins::kReasonAffinityRulesNotMatch);
const std::string kAntiFail(plugins::kReasonAntiAffinityRulesNotMatch);
const std::string kExistingFail(plugins::kReasonExistingAntiAffinityRulesNotMatch);

// --- Filtering -----------------------------------------------------------------------------

TEST_CASE("existing pods' required anti-affinity rejects their whole topology domain",
          "[plugins][interpodaffinity]") {
  Cluster cluster;
  const auto& snapshot = cluster.Node(NodeBuilder("a1").Label("zone", "a"))
                             .Node(NodeBuilder("a2").Label("zone", "a"))
                             .Node(NodeBuilder("b1").Label("zone", "b"))
                             .Pod("a1", PodBuilder("db").Affinity(RequiredAntiAffinity(
                                            Term(MatchLabel("app", "web"), "zone"))))
                             .Build();
  const auto web = Info(PodBuilder("web").Label("app", "web"));
  const auto plugin = MakePlugin();
  CHECK(FilterAll(*plugin, snapshot, web, {"a1", "a2", "b1"}) ==
        std::vector<std::string>{kExistingFail, kExistingFail, "pass"});

  CycleState state;
  CHECK(plugin->Filter(state, *web, *snapshot.Get("a1")).code() == Code::kError);
  CHECK(plugin->PreFilter(state, *web, snapshot).status.IsSuccess());
  CHECK(plugin->Filter(state, *web, *snapshot.Get("a2")).code() == Code::kUnschedulable);
}

TEST_CASE("existing pods' anti-affinity only applies in the namespaces its term names",
          "[plugins][interpodaffinity]") {
  Cluster cluster;
  const auto& snapshot =
      cluster.Node(NodeBuilder("a1").Label("zone", "a"))
          .Pod("a1", PodBuilder("db", "prod")
                         .Affinity(RequiredAntiAffinity(Term(MatchLabel("app", "web"), "zone"))))
          .Build();
  CycleState state;
  const auto other_namespace = Info(PodBuilder("web", "dev").Label("app", "web"));
  CHECK(MakePlugin()->PreFilter(state, *other_namespace, snapshot).status.IsSkip());
}

TEST_CASE("a missing topology key fails affinity but never anti-affinity",
          "[plugins][interpodaffinity]") {
  Cluster cluster;
  const auto& snapshot = cluster.Node(NodeBuilder("bare"))
                             .Node(NodeBuilder("zoned").Label("zone", "a"))
                             .Pod("bare", PodBuilder("db").Label("app", "db"))
                             .Pod("zoned", PodBuilder("db2").Label("app", "db"))
                             .Build();
  const auto plugin = MakePlugin();
  const auto wants_db =
      Info(PodBuilder("web").Affinity(RequiredAffinity(Term(MatchLabel("app", "db"), "zone"))));
  CHECK(FilterAll(*plugin, snapshot, wants_db, {"bare", "zoned"}) ==
        std::vector<std::string>{kAffinityFail, "pass"});
  const auto avoids_db =
      Info(PodBuilder("web").Affinity(RequiredAntiAffinity(Term(MatchLabel("app", "db"), "zone"))));
  CHECK(FilterAll(*plugin, snapshot, avoids_db, {"bare", "zoned"}) ==
        std::vector<std::string>{"pass", kAntiFail});
}

TEST_CASE("the first pod of a self-affine group is not blocked", "[plugins][interpodaffinity]") {
  Cluster cluster;
  const auto& snapshot =
      cluster.Node(NodeBuilder("a1").Label("zone", "a")).Node(NodeBuilder("bare")).Build();
  const auto plugin = MakePlugin();
  const auto first = Info(PodBuilder("w0")
                              .Label("app", "web")
                              .Affinity(RequiredAffinity(Term(MatchLabel("app", "web"), "zone"))));
  CHECK(FilterAll(*plugin, snapshot, first, {"a1", "bare"}) ==
        std::vector<std::string>{"pass", kAffinityFail});
  const auto stranger =
      Info(PodBuilder("x").Affinity(RequiredAffinity(Term(MatchLabel("app", "web"), "zone"))));
  CHECK(FilterAll(*plugin, snapshot, stranger, {"a1"}) == std::vector<std::string>{kAffinityFail});
}

TEST_CASE("affinity failure is reported before anti-affinity, as upstream",
          "[plugins][interpodaffinity]") {
  Cluster cluster;
  const auto& snapshot = cluster.Node(NodeBuilder("a1").Label("zone", "a"))
                             .Pod("a1", PodBuilder("db").Label("app", "db"))
                             .Build();
  api::Affinity affinity = RequiredAffinity(Term(MatchLabel("app", "cache"), "zone"));
  affinity.pod_anti_affinity =
      RequiredAntiAffinity(Term(MatchLabel("app", "db"), "zone")).pod_anti_affinity;
  const auto pod = Info(PodBuilder("web").Affinity(affinity));
  CycleState state;
  const auto plugin = MakePlugin();
  REQUIRE(plugin->PreFilter(state, *pod, snapshot).status.IsSuccess());
  const auto status = plugin->Filter(state, *pod, *snapshot.Get("a1"));
  CHECK(status.code() == Code::kUnschedulableAndUnresolvable);
  CHECK(status.Message() == kAffinityFail);
}

TEST_CASE("the incoming pod's namespaceSelector selects namespaces by their labels",
          "[plugins][interpodaffinity]") {
  Cluster cluster;
  const auto& snapshot = cluster.Namespace("team-a", "team", "a")
                             .Namespace("team-b", "team", "b")
                             .Node(NodeBuilder("n1").Label("zone", "1"))
                             .Node(NodeBuilder("n2").Label("zone", "2"))
                             .Node(NodeBuilder("n3").Label("zone", "3"))
                             .Pod("n1", PodBuilder("db", "team-a").Label("app", "db"))
                             .Pod("n2", PodBuilder("db", "team-b").Label("app", "db"))
                             .Pod("n3", PodBuilder("db", "no-such-ns").Label("app", "db"))
                             .Build();
  const auto plugin = MakePlugin();
  const auto in_team_a =
      Info(PodBuilder("web", "elsewhere")
               .Affinity(RequiredAffinity(WithNamespaceSelector(
                   Term(MatchLabel("app", "db"), "zone"), MatchLabel("team", "a")))));
  CHECK(FilterAll(*plugin, snapshot, in_team_a, {"n1", "n2", "n3"}) ==
        std::vector<std::string>{"pass", kAffinityFail, kAffinityFail});

  // A selector that an unlabelled namespace would satisfy still cannot select a namespace that
  // does not exist: upstream resolves the selector against the known namespaces.
  api::LabelSelector not_team_a = MatchLabel("team", "a");
  not_team_a.requirements[0].op = api::SelectorOperator::kNotIn;
  const auto not_in_team_a = Info(PodBuilder("web", "elsewhere")
                                      .Affinity(RequiredAntiAffinity(WithNamespaceSelector(
                                          Term(MatchLabel("app", "db"), "zone"), not_team_a))));
  CHECK(FilterAll(*plugin, snapshot, not_in_team_a, {"n1", "n2", "n3"}) ==
        std::vector<std::string>{"pass", kAntiFail, "pass"});

  const auto all_namespaces = Info(PodBuilder("web", "elsewhere")
                                       .Affinity(RequiredAntiAffinity(WithNamespaceSelector(
                                           Term(MatchLabel("app", "db"), "zone"), {}))));
  CHECK(FilterAll(*plugin, snapshot, all_namespaces, {"n1", "n2", "n3"}) ==
        std::vector<std::string>{kAntiFail, kAntiFail, kAntiFail});
}

// --- Scoring -------------------------------------------------------------------------------

TEST_CASE("existing pods' required affinity attracts with hardPodAffinityWeight",
          "[plugins][interpodaffinity]") {
  Cluster cluster;
  const auto& snapshot =
      cluster.Node(NodeBuilder("a1").Label("zone", "a"))
          .Node(NodeBuilder("a2").Label("zone", "a"))
          .Node(NodeBuilder("b1").Label("zone", "b"))
          .Pod("a1",
               PodBuilder("web").Affinity(RequiredAffinity(Term(MatchLabel("app", "db"), "zone"))))
          .Build();
  const auto db = Info(PodBuilder("db").Label("app", "db"));

  auto weighted = MakePlugin({.hard_pod_affinity_weight = 7});
  CHECK(ScoreAll(*weighted, snapshot, db) == std::vector<int64_t>{100, 100, 0});
  // Weight 0 turns symmetry off; nothing else contributes, so PreScore skips.
  auto off = MakePlugin({.hard_pod_affinity_weight = 0});
  CHECK(ScoreAll(*off, snapshot, db).empty());
  // Only pods the existing term selects are attracted.
  const auto other = Info(PodBuilder("other").Label("app", "cache"));
  CHECK(ScoreAll(*weighted, snapshot, other).empty());
}

TEST_CASE("preferred terms of existing pods count unless ignored", "[plugins][interpodaffinity]") {
  Cluster cluster;
  const auto& snapshot = cluster.Node(NodeBuilder("a1").Label("zone", "a"))
                             .Node(NodeBuilder("b1").Label("zone", "b"))
                             .Pod("a1", PodBuilder("web").Affinity(PreferredAntiAffinity(
                                            Term(MatchLabel("app", "db"), "zone"), 10)))
                             .Build();
  const auto db = Info(PodBuilder("db").Label("app", "db"));
  auto plugin = MakePlugin();
  CHECK(ScoreAll(*plugin, snapshot, db) == std::vector<int64_t>{0, 100});
  auto ignoring = MakePlugin({.ignore_preferred_terms_of_existing_pods = true});
  CHECK(ScoreAll(*ignoring, snapshot, db).empty());
}

TEST_CASE("pods on nodes without the topology key add no score", "[plugins][interpodaffinity]") {
  Cluster cluster;
  const auto& snapshot = cluster.Node(NodeBuilder("bare").Label("other", "x"))
                             .Node(NodeBuilder("a1").Label("zone", "a"))
                             .Pod("bare", PodBuilder("db").Label("app", "db"))
                             .Build();
  const auto web = Info(
      PodBuilder("web").Affinity(PreferredAntiAffinity(Term(MatchLabel("app", "db"), "zone"), 5)));
  auto plugin = MakePlugin();
  CHECK(ScoreAll(*plugin, snapshot, web).empty());
}

TEST_CASE("normalization scales negative and positive sums to 0..100, truncating",
          "[plugins][interpodaffinity]") {
  Cluster cluster;
  cluster.Node(NodeBuilder("a1").Label("zone", "a"));
  const auto pod = Info(PodBuilder("p"));
  auto plugin = MakePlugin({.hard_pod_affinity_weight = 1});
  // A PreScore that contributed is needed for the normalizer to act.
  const auto& snapshot =
      cluster.Pod("a1", PodBuilder("w").Affinity(RequiredAffinity(Term({}, "zone")))).Build();
  CycleState state;
  REQUIRE(plugin->PreScore(state, *pod, snapshot, snapshot.nodes()).IsSuccess());
  std::vector<int64_t> scores = {-3, 0, 1, -2};
  plugin->NormalizeScore(state, *pod, absl::MakeSpan(scores));
  CHECK(scores == std::vector<int64_t>{0, 75, 100, 25});
  std::vector<int64_t> equal = {4, 4};
  plugin->NormalizeScore(state, *pod, absl::MakeSpan(equal));
  CHECK(equal == std::vector<int64_t>{0, 0});
  std::vector<int64_t> thirds = {0, 1, 3};
  plugin->NormalizeScore(state, *pod, absl::MakeSpan(thirds));
  CHECK(thirds == std::vector<int64_t>{0, 33, 100});
}

// --- Construction --------------------------------------------------------------------------

TEST_CASE("the factory validates hardPodAffinityWeight", "[plugins][interpodaffinity]") {
  CHECK(plugins::NewInterPodAffinity(std::monostate{}, {}).ok());
  CHECK(plugins::NewInterPodAffinity(config::InterPodAffinityArgs{.hard_pod_affinity_weight = 100},
                                     {})
            .ok());
  const auto too_big = plugins::NewInterPodAffinity(
      config::InterPodAffinityArgs{.hard_pod_affinity_weight = 101}, {});
  REQUIRE_FALSE(too_big.ok());
  CHECK(too_big.status().code() == absl::StatusCode::kInvalidArgument);
  CHECK(std::string(too_big.status().message()) ==
        "InterPodAffinity: hardPodAffinityWeight: must be in 0..100");
  CHECK_FALSE(
      plugins::NewInterPodAffinity(config::InterPodAffinityArgs{.hard_pod_affinity_weight = -1}, {})
          .ok());
  CHECK_FALSE(plugins::NewInterPodAffinity(config::BalancedAllocationArgs{}, {}).ok());
}

}  // namespace
}  // namespace kubesched
