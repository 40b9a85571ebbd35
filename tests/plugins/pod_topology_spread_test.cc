// PodTopologySpread: filter (skew, minDomains, inclusion policies, matchLabelKeys, missing labels,
// namespaces, terminating pods, several constraints), score (upstream's formula and
// normalization, hostname and system-default special cases), args, and a simulation that spreads.
// Tables follow upstream's filtering_test.go / scoring_test.go; expected scores are worked out in
// the comments from upstream's formula.

#include "plugins/pod_topology_spread/pod_topology_spread.h"

#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/time/clock.h"
#include "config/config.h"
#include "scheduler/framework/snapshot.h"
#include "scheduler/simulate/simulation.h"
#include "scheduler/util/parallel.h"
#include "tests/plugins/plugin_fixture.h"
#include "tests/testing/builders.h"
#include "tests/testing/temp_file.h"

namespace kubesched {
namespace {

using api::NodeInclusionPolicy;
using api::TopologySpreadConstraint;
using framework::Code;
using framework::CycleState;
using plugin_testing::Unwrap;
using testing::NodeBuilder;
using testing::PodBuilder;
using Action = api::UnsatisfiableConstraintAction;
using Verdicts = std::map<std::string, std::string>;
using Scores = std::map<std::string, int64_t>;

constexpr char kZone[] = "zone";
constexpr char kHostname[] = "kubernetes.io/hostname";
constexpr char kPass[] = "pass";
const std::string kSkew(plugins::kReasonTopologySpreadConstraintsNotMatch);
const std::string kMissing(plugins::kReasonTopologySpreadMissingLabel);

// --- Building pods and constraints -----------------------------------------------------------

api::Requirement Req(const std::string& key, api::SelectorOperator op,
                     std::vector<std::string> values = {}) {
  api::Requirement r;
  r.key = api::Intern(key);
  r.op = op;
  for (const auto& v : values) r.values.push_back(api::Intern(v));
  std::sort(r.values.begin(), r.values.end());
  return r;
}

// Selects pods that carry `key` (upstream's tests: `Label("foo", "")` with `Exists`).
api::LabelSelector Has(const std::string& key) {
  return {{Req(key, api::SelectorOperator::kExists)}};
}

TopologySpreadConstraint Spread(int32_t max_skew, const std::string& key, Action action,
                                std::optional<api::LabelSelector> selector = Has("foo")) {
  TopologySpreadConstraint c;
  c.max_skew = max_skew;
  c.topology_key = api::Intern(key);
  c.when_unsatisfiable = action;
  c.label_selector = std::move(selector);
  return c;
}

TopologySpreadConstraint Hard(int32_t max_skew, const std::string& key) {
  return Spread(max_skew, key, Action::kDoNotSchedule);
}
TopologySpreadConstraint Soft(int32_t max_skew, const std::string& key) {
  return Spread(max_skew, key, Action::kScheduleAnyway);
}

class Pod {
 public:
  explicit Pod(std::string name, std::string ns = "default") : builder_(std::move(name), ns) {}
  Pod& Label(const std::string& key, const std::string& value = "") {
    builder_.Label(key, value);
    return *this;
  }
  Pod& NodeSelector(const std::string& key, const std::string& value) {
    builder_.NodeSelector(key, value);
    return *this;
  }
  Pod& Tolerate(const std::string& key, const std::string& value) {
    builder_.Toleration(key, value, api::TaintEffect::kNoSchedule);
    return *this;
  }
  Pod& Constraint(TopologySpreadConstraint c) {
    constraints_.push_back(std::move(c));
    return *this;
  }
  Pod& Terminating() {
    terminating_ = true;
    return *this;
  }
  Pod& Owner(const std::string& api_version, const std::string& kind) {
    owners_.push_back({api_version, kind, "owner", "owner-uid", true});
    return *this;
  }
  api::Pod Build(const std::string& node = "") const {
    api::Pod pod = PodBuilder(builder_).NodeName(node).Build();
    pod.spec.topology_spread_constraints = constraints_;
    pod.meta.owner_references = owners_;
    if (terminating_) pod.meta.deletion_timestamp = absl::Now();
    return pod;
  }
  framework::PodInfoPtr Info() const {
    return framework::MakePodInfo(std::make_shared<const api::Pod>(Build()), 0);
  }

 private:
  PodBuilder builder_;
  std::vector<TopologySpreadConstraint> constraints_;
  std::vector<api::OwnerReference> owners_;
  bool terminating_ = false;
};

NodeBuilder Node(const std::string& name, const std::string& zone = "") {
  NodeBuilder node(name);
  node.Label(kHostname, name);
  if (!zone.empty()) node.Label(kZone, zone);
  return node;
}

class Cluster {
 public:
  Cluster& Add(const NodeBuilder& node) {
    builder_.Upsert(node.Build().meta.name)->SetNode(node.Ptr(), ++generation_);
    return *this;
  }
  // `count` pods from `pod`, bound to `node`.
  Cluster& Place(const std::string& node, const Pod& pod, int count = 1) {
    for (int i = 0; i < count; ++i) {
      api::Pod bound = pod.Build(node);
      bound.meta.name += "-" + std::to_string(++pods_);
      builder_.Upsert(node)->AddPod(
          framework::MakePodInfo(std::make_shared<const api::Pod>(std::move(bound)), 0),
          ++generation_);
    }
    return *this;
  }
  const framework::Snapshot& Build() {
    builder_.RebuildLists();
    return snapshot_;
  }

 private:
  framework::Snapshot snapshot_;
  framework::SnapshotBuilder builder_{&snapshot_};
  int64_t generation_ = 0;
  int pods_ = 0;
};

// Four nodes in two zones, as in most of upstream's tables.
Cluster TwoZones() {
  Cluster cluster;
  cluster.Add(Node("node-a", "zone1"))
      .Add(Node("node-b", "zone1"))
      .Add(Node("node-x", "zone2"))
      .Add(Node("node-y", "zone2"));
  return cluster;
}

std::unique_ptr<plugins::PodTopologySpread> Plugin(config::PodTopologySpreadArgs args = {}) {
  return Unwrap<plugins::PodTopologySpread>(plugins::NewPodTopologySpread(args, {}));
}

std::unique_ptr<plugins::PodTopologySpread> ListPlugin(std::vector<TopologySpreadConstraint> c) {
  config::PodTopologySpreadArgs args;
  args.defaulting_type = config::SpreadDefaultingType::kList;
  for (auto& constraint : c) constraint.label_selector.reset();
  args.default_constraints = std::move(c);
  return Plugin(args);
}

// PreFilter then Filter on every node: "pass", the reason, or "skip" for every node when
// PreFilter says Skip. Failing verdicts also check upstream's codes.
Verdicts FilterAll(plugins::PodTopologySpread& plugin, const framework::Snapshot& snapshot,
                   const Pod& pod) {
  const auto info = pod.Info();
  CycleState state;
  const auto pre = plugin.PreFilter(state, *info, snapshot);
  Verdicts verdicts;
  for (const auto* node : snapshot.nodes()) {
    if (pre.status.IsSkip()) {
      verdicts[node->name()] = "skip";
      continue;
    }
    REQUIRE(pre.status.IsSuccess());
    const framework::Status status = plugin.Filter(state, *info, *node);
    if (status.IsSuccess()) {
      verdicts[node->name()] = kPass;
      continue;
    }
    REQUIRE(status.reasons().size() == 1);
    const std::string reason(status.reasons()[0]);
    CHECK(status.code() ==
          (reason == kMissing ? Code::kUnschedulableAndUnresolvable : Code::kUnschedulable));
    verdicts[node->name()] = reason;
  }
  return verdicts;
}

std::optional<Scores> ScoreAll(plugins::PodTopologySpread& plugin,
                               const framework::Snapshot& snapshot, const Pod& pod) {
  return plugin_testing::ScoreAll(plugin, snapshot, *pod.Info());
}

Pod Incoming() { return Pod("incoming").Label("foo"); }
Pod Matching() { return Pod("p").Label("foo"); }

// --- Filter ----------------------------------------------------------------------------------

TEST_CASE("PodTopologySpread filter: skew across zones", "[pod_topology_spread]") {
  auto plugin = Plugin();
  SECTION("no existing pods: every node fits") {
    auto cluster = TwoZones();
    CHECK(FilterAll(*plugin, cluster.Build(), Incoming().Constraint(Hard(1, kZone))) ==
          Verdicts{{"node-a", kPass}, {"node-b", kPass}, {"node-x", kPass}, {"node-y", kPass}});
  }
  SECTION("3/3 across zones: every node fits") {
    auto cluster = TwoZones();
    cluster.Place("node-a", Matching(), 2).Place("node-b", Matching()).Place("node-x", Matching());
    cluster.Place("node-y", Matching(), 2);
    CHECK(FilterAll(*plugin, cluster.Build(), Incoming().Constraint(Hard(1, kZone))) ==
          Verdicts{{"node-a", kPass}, {"node-b", kPass}, {"node-x", kPass}, {"node-y", kPass}});
  }
  SECTION("3/1 across zones: only the emptier zone fits") {
    auto cluster = TwoZones();
    cluster.Place("node-a", Matching(), 2).Place("node-b", Matching()).Place("node-x", Matching());
    CHECK(FilterAll(*plugin, cluster.Build(), Incoming().Constraint(Hard(1, kZone))) ==
          Verdicts{{"node-a", kSkew}, {"node-b", kSkew}, {"node-x", kPass}, {"node-y", kPass}});
  }
  SECTION("3/1 with maxSkew 2: the fuller zone still exceeds the skew by one") {
    auto cluster = TwoZones();
    cluster.Place("node-a", Matching(), 2).Place("node-b", Matching()).Place("node-x", Matching());
    CHECK(FilterAll(*plugin, cluster.Build(), Incoming().Constraint(Hard(2, kZone))) ==
          Verdicts{{"node-a", kSkew}, {"node-b", kSkew}, {"node-x", kPass}, {"node-y", kPass}});
    CHECK(FilterAll(*plugin, cluster.Build(), Incoming().Constraint(Hard(3, kZone))) ==
          Verdicts{{"node-a", kPass}, {"node-b", kPass}, {"node-x", kPass}, {"node-y", kPass}});
  }
  SECTION("an incoming pod that does not match itself does not add to the skew") {
    auto cluster = TwoZones();
    cluster.Place("node-a", Matching(), 2).Place("node-x", Matching());
    CHECK(FilterAll(*plugin, cluster.Build(), Pod("incoming").Constraint(Hard(1, kZone))) ==
          Verdicts{{"node-a", kPass}, {"node-b", kPass}, {"node-x", kPass}, {"node-y", kPass}});
    CHECK(FilterAll(*plugin, cluster.Build(), Incoming().Constraint(Hard(1, kZone))) ==
          Verdicts{{"node-a", kSkew}, {"node-b", kSkew}, {"node-x", kPass}, {"node-y", kPass}});
  }
}

TEST_CASE("PodTopologySpread filter: nodes without the key", "[pod_topology_spread]") {
  auto plugin = Plugin();
  SECTION("a node without the zone is rejected and its pods form no domain") {
    // zone1 = {a: 1}, node-b has no zone (its pod is not counted), zone2 = {x: 1, y: 1}.
    Cluster cluster;
    cluster.Add(Node("node-a", "zone1"))
        .Add(Node("node-b"))
        .Add(Node("node-x", "zone2"))
        .Add(Node("node-y", "zone2"));
    cluster.Place("node-a", Matching()).Place("node-b", Matching());
    cluster.Place("node-x", Matching()).Place("node-y", Matching());
    CHECK(FilterAll(*plugin, cluster.Build(), Incoming().Constraint(Hard(1, kZone))) ==
          Verdicts{{"node-a", kPass}, {"node-b", kMissing}, {"node-x", kSkew}, {"node-y", kSkew}});
  }
  SECTION("no node has the key: all rejected as unresolvable") {
    auto cluster = TwoZones();
    CHECK(FilterAll(*plugin, cluster.Build(), Incoming().Constraint(Hard(1, "rack"))) ==
          Verdicts{{"node-a", kMissing},
                   {"node-b", kMissing},
                   {"node-x", kMissing},
                   {"node-y", kMissing}});
  }
}

TEST_CASE("PodTopologySpread filter: hostname spreading", "[pod_topology_spread]") {
  auto plugin = Plugin();
  // Per node 2/1/0/3.
  auto cluster = TwoZones();
  cluster.Place("node-a", Matching(), 2).Place("node-b", Matching()).Place("node-y", Matching(), 3);
  const auto& snapshot = cluster.Build();
  CHECK(FilterAll(*plugin, snapshot, Incoming().Constraint(Hard(1, kHostname))) ==
        Verdicts{{"node-a", kSkew}, {"node-b", kSkew}, {"node-x", kPass}, {"node-y", kSkew}});
  CHECK(FilterAll(*plugin, snapshot, Incoming().Constraint(Hard(2, kHostname))) ==
        Verdicts{{"node-a", kSkew}, {"node-b", kPass}, {"node-x", kPass}, {"node-y", kSkew}});
  CHECK(FilterAll(*plugin, snapshot, Pod("incoming").Constraint(Hard(1, kHostname))) ==
        Verdicts{{"node-a", kSkew}, {"node-b", kPass}, {"node-x", kPass}, {"node-y", kSkew}});
}

TEST_CASE("PodTopologySpread filter: only non-terminating pods of the namespace count",
          "[pod_topology_spread]") {
  auto plugin = Plugin();
  auto cluster = TwoZones();
  // zone1 holds only pods that must not count; zone2 holds one that does.
  cluster.Place("node-a", Pod("other", "other-ns").Label("foo"), 3);
  cluster.Place("node-b", Pod("leaving").Label("foo").Terminating(), 3);
  cluster.Place("node-a", Pod("unlabelled"), 3);
  cluster.Place("node-x", Matching());
  CHECK(FilterAll(*plugin, cluster.Build(), Incoming().Constraint(Hard(1, kZone))) ==
        Verdicts{{"node-a", kPass}, {"node-b", kPass}, {"node-x", kSkew}, {"node-y", kSkew}});
}

TEST_CASE("PodTopologySpread filter: minDomains", "[pod_topology_spread]") {
  auto plugin = Plugin();
  auto cluster = TwoZones();
  cluster.Place("node-a", Matching()).Place("node-x", Matching());
  const auto& snapshot = cluster.Build();
  // 1/1 over two domains: balanced, every node fits.
  auto constraint = Hard(1, kZone);
  CHECK(FilterAll(*plugin, snapshot, Incoming().Constraint(constraint)) ==
        Verdicts{{"node-a", kPass}, {"node-b", kPass}, {"node-x", kPass}, {"node-y", kPass}});
  // Two domains, fewer than minDomains 3: the global minimum is 0, so 1 + 1 - 0 > 1 everywhere.
  constraint.min_domains = 3;
  CHECK(FilterAll(*plugin, snapshot, Incoming().Constraint(constraint)) ==
        Verdicts{{"node-a", kSkew}, {"node-b", kSkew}, {"node-x", kSkew}, {"node-y", kSkew}});
  // minDomains 2 is met: back to the real minimum.
  constraint.min_domains = 2;
  CHECK(FilterAll(*plugin, snapshot, Incoming().Constraint(constraint)) ==
        Verdicts{{"node-a", kPass}, {"node-b", kPass}, {"node-x", kPass}, {"node-y", kPass}});
}

TEST_CASE("PodTopologySpread filter: nodeAffinityPolicy and nodeTaintsPolicy",
          "[pod_topology_spread]") {
  auto plugin = Plugin();
  // zone1 and zone2 hold one matching pod each; zone3 (node-z) is empty but the pod's
  // nodeSelector excludes it / it carries a NoSchedule taint.
  SECTION("nodeAffinityPolicy") {
    Cluster cluster;
    cluster.Add(Node("node-a", "zone1").Label("pool", "gpu"))
        .Add(Node("node-x", "zone2").Label("pool", "gpu"))
        .Add(Node("node-z", "zone3").Label("pool", "cpu"));
    cluster.Place("node-a", Matching()).Place("node-x", Matching());
    const auto& snapshot = cluster.Build();
    auto constraint = Hard(1, kZone);
    // Honor (default): zone3 is not a domain, the minimum is 1.
    CHECK(FilterAll(*plugin, snapshot,
                    Incoming().NodeSelector("pool", "gpu").Constraint(constraint)) ==
          Verdicts{{"node-a", kPass}, {"node-x", kPass}, {"node-z", kPass}});
    // Ignore: the empty zone3 counts, the minimum is 0.
    constraint.node_affinity_policy = NodeInclusionPolicy::kIgnore;
    CHECK(FilterAll(*plugin, snapshot,
                    Incoming().NodeSelector("pool", "gpu").Constraint(constraint)) ==
          Verdicts{{"node-a", kSkew}, {"node-x", kSkew}, {"node-z", kPass}});
  }
  SECTION("nodeTaintsPolicy") {
    Cluster cluster;
    cluster.Add(Node("node-a", "zone1"))
        .Add(Node("node-x", "zone2"))
        .Add(Node("node-z", "zone3").Taint("dedicated", "batch", api::TaintEffect::kNoSchedule));
    cluster.Place("node-a", Matching()).Place("node-x", Matching());
    const auto& snapshot = cluster.Build();
    auto constraint = Hard(1, kZone);
    // Ignore (default): the tainted zone3 counts, minimum 0.
    CHECK(FilterAll(*plugin, snapshot, Incoming().Constraint(constraint)) ==
          Verdicts{{"node-a", kSkew}, {"node-x", kSkew}, {"node-z", kPass}});
    // Honor: an untolerated taint takes zone3 out, minimum 1.
    constraint.node_taints_policy = NodeInclusionPolicy::kHonor;
    CHECK(FilterAll(*plugin, snapshot, Incoming().Constraint(constraint)) ==
          Verdicts{{"node-a", kPass}, {"node-x", kPass}, {"node-z", kPass}});
    // Honor with a toleration: zone3 is back.
    CHECK(FilterAll(*plugin, snapshot,
                    Incoming().Tolerate("dedicated", "batch").Constraint(constraint)) ==
          Verdicts{{"node-a", kSkew}, {"node-x", kSkew}, {"node-z", kPass}});
  }
}

TEST_CASE("PodTopologySpread filter: matchLabelKeys narrows the selector to the pod's values",
          "[pod_topology_spread]") {
  auto plugin = Plugin();
  auto cluster = TwoZones();
  cluster.Place("node-a", Pod("old").Label("foo").Label("version", "v1"), 2);
  const auto& snapshot = cluster.Build();
  const Pod incoming = Incoming().Label("version", "v2");
  auto constraint = Hard(1, kZone);
  CHECK(FilterAll(*plugin, snapshot, Pod(incoming).Constraint(constraint)) ==
        Verdicts{{"node-a", kSkew}, {"node-b", kSkew}, {"node-x", kPass}, {"node-y", kPass}});
  constraint.match_label_keys = {api::Intern("version")};
  CHECK(FilterAll(*plugin, snapshot, Pod(incoming).Constraint(constraint)) ==
        Verdicts{{"node-a", kPass}, {"node-b", kPass}, {"node-x", kPass}, {"node-y", kPass}});
  // A key the pod lacks is dropped: the selector is foo alone again.
  constraint.match_label_keys = {api::Intern("missing")};
  CHECK(FilterAll(*plugin, snapshot, Pod(incoming).Constraint(constraint)) ==
        Verdicts{{"node-a", kSkew}, {"node-b", kSkew}, {"node-x", kPass}, {"node-y", kPass}});
  // Without labelSelector, the matchLabelKeys labels are the whole selector.
  auto no_selector = Spread(1, kZone, Action::kDoNotSchedule, std::nullopt);
  CHECK(FilterAll(*plugin, snapshot, Pod("v1").Label("version", "v1").Constraint(no_selector)) ==
        Verdicts{{"node-a", kPass}, {"node-b", kPass}, {"node-x", kPass}, {"node-y", kPass}});
  no_selector.match_label_keys = {api::Intern("version")};
  CHECK(FilterAll(*plugin, snapshot, Pod("v1").Label("version", "v1").Constraint(no_selector)) ==
        Verdicts{{"node-a", kSkew}, {"node-b", kSkew}, {"node-x", kPass}, {"node-y", kPass}});
}

TEST_CASE("PodTopologySpread filter: several constraints", "[pod_topology_spread]") {
  auto plugin = Plugin();
  SECTION("zone 3/3 and hosts 2/1/0/3: only node-x satisfies both") {
    auto cluster = TwoZones();
    cluster.Place("node-a", Matching(), 2).Place("node-b", Matching());
    cluster.Place("node-y", Matching(), 3);
    CHECK(FilterAll(*plugin, cluster.Build(),
                    Incoming().Constraint(Hard(1, kZone)).Constraint(Hard(1, kHostname))) ==
          Verdicts{{"node-a", kSkew}, {"node-b", kSkew}, {"node-x", kPass}, {"node-y", kSkew}});
  }
  SECTION("the same key with different selectors is counted per constraint") {
    auto cluster = TwoZones();
    cluster.Place("node-a", Pod("f").Label("foo")).Place("node-x", Pod("b").Label("bar"));
    const Pod incoming = Pod("incoming")
                             .Label("foo")
                             .Label("bar")
                             .Constraint(Spread(1, kZone, Action::kDoNotSchedule, Has("foo")))
                             .Constraint(Spread(1, kZone, Action::kDoNotSchedule, Has("bar")));
    // foo wants zone2, bar wants zone1: nowhere satisfies both.
    CHECK(FilterAll(*plugin, cluster.Build(), incoming) ==
          Verdicts{{"node-a", kSkew}, {"node-b", kSkew}, {"node-x", kSkew}, {"node-y", kSkew}});
  }
  SECTION("a node must carry every constraint's key to be counted") {
    Cluster cluster;
    cluster.Add(Node("node-a", "zone1")).Add(Node("node-b", "zone1").Label("rack", "r1"));
    cluster.Add(Node("node-x", "zone2").Label("rack", "r2"));
    cluster.Place("node-a", Matching(), 5);
    CHECK(FilterAll(*plugin, cluster.Build(),
                    Incoming().Constraint(Hard(1, kZone)).Constraint(Hard(1, "rack"))) ==
          Verdicts{{"node-a", kMissing}, {"node-b", kPass}, {"node-x", kPass}});
  }
}

// PreFilter counts the domains in pieces of nodes on the scheduler's threads: the verdicts must
// be those of counting on one thread, whatever the number of threads and pieces.
TEST_CASE("PodTopologySpread counts the same domains on the scheduler's threads",
          "[pod_topology_spread]") {
  Cluster cluster;
  std::mt19937 random(11);
  // 1,500 nodes (several pieces of 256) in 7 zones; every 50th has no zone label.
  for (int i = 0; i < 1500; ++i) {
    const std::string name = "node-" + std::to_string(i);
    cluster.Add(Node(name, i % 50 == 0 ? "" : "zone" + std::to_string(random() % 7)));
    const int pods = static_cast<int>(random() % 4);
    if (pods > 0) cluster.Place(name, Matching(), pods);
    if (random() % 3 == 0) cluster.Place(name, Pod("other", "elsewhere").Label("foo"));
  }
  const framework::Snapshot& snapshot = cluster.Build();
  const std::vector<Pod> incoming = {
      Incoming().Constraint(Hard(1, kZone)),
      Incoming().Constraint(Hard(2, kZone)).Constraint(Hard(1, kHostname)),
      Incoming().Constraint(Hard(1, kHostname)),
  };
  const auto plugin_with = [](util::WorkerPool* pool) {
    plugins::PluginHandle handle;
    handle.pool = pool;
    return Unwrap<plugins::PodTopologySpread>(plugins::NewPodTopologySpread({}, handle));
  };
  for (const Pod& pod : incoming) {
    const auto inline_plugin = plugin_with(nullptr);
    const Verdicts expected = FilterAll(*inline_plugin, snapshot, pod);
    std::map<std::string, int> kinds;
    for (const auto& [node, verdict] : expected) ++kinds[verdict];
    CHECK(kinds[kPass] > 0);
    CHECK(kinds[kSkew] > 0);
    for (const int threads : {1, 2, 3}) {
      INFO(threads << " threads");
      util::WorkerPool pool(threads);
      const auto plugin = plugin_with(&pool);
      CHECK(FilterAll(*plugin, snapshot, pod) == expected);
    }
  }
}

TEST_CASE("PodTopologySpread PreFilter skips pods without hard constraints",
          "[pod_topology_spread]") {
  auto plugin = Plugin();
  auto cluster = TwoZones();
  const auto& snapshot = cluster.Build();
  CHECK(FilterAll(*plugin, snapshot, Incoming())["node-a"] == "skip");
  CHECK(FilterAll(*plugin, snapshot, Incoming().Constraint(Soft(1, kZone)))["node-a"] == "skip");
  // System defaults are ScheduleAnyway only: nothing to filter even for a ReplicaSet's pod.
  CHECK(FilterAll(*plugin, snapshot, Incoming().Owner("apps/v1", "ReplicaSet"))["node-a"] ==
        "skip");
}

TEST_CASE("PodTopologySpread filter: List default constraints apply to controlled pods",
          "[pod_topology_spread]") {
  auto plugin = ListPlugin({Hard(1, kZone)});
  auto cluster = TwoZones();
  cluster.Place("node-a", Pod("web").Label("app", "web").Owner("apps/v1", "ReplicaSet"), 2);
  const auto& snapshot = cluster.Build();
  const Verdicts spread{{"node-a", kSkew}, {"node-b", kSkew}, {"node-x", kPass}, {"node-y", kPass}};
  CHECK(FilterAll(*plugin, snapshot,
                  Pod("web-new").Label("app", "web").Owner("apps/v1", "ReplicaSet")) == spread);
  CHECK(FilterAll(*plugin, snapshot,
                  Pod("web-new").Label("app", "web").Owner("v1", "ReplicationController")) ==
        spread);
  // No controller kubesched can deduce a selector for: no default constraints.
  CHECK(FilterAll(*plugin, snapshot, Pod("web-new").Label("app", "web"))["node-a"] == "skip");
  CHECK(FilterAll(*plugin, snapshot,
                  Pod("web-new").Label("app", "web").Owner("batch/v1", "Job"))["node-a"] == "skip");
  // A pod with constraints of its own never gets the defaults.
  CHECK(FilterAll(*plugin, snapshot,
                  Pod("web-new")
                      .Label("app", "web")
                      .Owner("apps/v1", "ReplicaSet")
                      .Constraint(Soft(1, kZone)))["node-a"] == "skip");
}

TEST_CASE(
    "PodTopologySpread filter: StatefulSet per-pod labels are left out of the deduced "
    "selector",
    "[pod_topology_spread]") {
  auto plugin = ListPlugin({Hard(1, kZone)});
  auto cluster = TwoZones();
  const auto member = [](const std::string& index) {
    return Pod("db-" + index)
        .Label("app", "db")
        .Label("statefulset.kubernetes.io/pod-name", "db-" + index)
        .Label("apps.kubernetes.io/pod-index", index)
        .Label("controller-revision-hash", "db-" + index + "-rev")
        .Owner("apps/v1", "StatefulSet");
  };
  cluster.Place("node-a", member("0")).Place("node-b", member("1"));
  CHECK(FilterAll(*plugin, cluster.Build(), member("2")) ==
        Verdicts{{"node-a", kSkew}, {"node-b", kSkew}, {"node-x", kPass}, {"node-y", kPass}});
}

TEST_CASE("PodTopologySpread PreFilter state survives cloning", "[pod_topology_spread]") {
  auto plugin = Plugin();
  auto cluster = TwoZones();
  cluster.Place("node-a", Matching(), 2);
  const auto& snapshot = cluster.Build();
  const auto pod = Incoming().Constraint(Hard(1, kZone)).Info();
  CycleState state;
  REQUIRE(plugin->PreFilter(state, *pod, snapshot).status.IsSuccess());
  const auto copy = state.Clone();
  CHECK(plugin->Filter(*copy, *pod, *snapshot.nodes()[0]).code() == Code::kUnschedulable);
  CHECK(plugin->Filter(*copy, *pod, *snapshot.nodes()[2]).IsSuccess());
  CycleState empty;
  CHECK(plugin->Filter(empty, *pod, *snapshot.nodes()[0]).code() == Code::kError);
}

TEST_CASE("PodTopologySpread PreFilter fails on an invalid selector, as upstream",
          "[pod_topology_spread]") {
  auto plugin = Plugin();
  auto cluster = TwoZones();
  api::LabelSelector bad = Has("foo");
  bad.requirements[0].valid = false;
  const auto pod =
      Incoming().Constraint(Spread(1, kZone, Action::kDoNotSchedule, std::move(bad))).Info();
  CycleState state;
  CHECK(plugin->PreFilter(state, *pod, cluster.Build()).status.code() == Code::kError);
}

// --- Score -----------------------------------------------------------------------------------

TEST_CASE("PodTopologySpread score", "[pod_topology_spread]") {
  auto plugin = Plugin();
  SECTION("no existing pods: every node scores 100") {
    auto cluster = TwoZones();
    CHECK(ScoreAll(*plugin, cluster.Build(), Incoming().Constraint(Soft(1, kHostname))) ==
          Scores{{"node-a", 100}, {"node-b", 100}, {"node-x", 100}, {"node-y", 100}});
  }
  SECTION("zones 2/1") {
    // weight log(2 + 2) = 1.386: zone1 round(2.77) = 3, zone2 round(1.39) = 1;
    // normalized 100 * (3 + 1 - s) / 3: 33 and 100.
    auto cluster = TwoZones();
    cluster.Place("node-a", Matching()).Place("node-b", Matching()).Place("node-x", Matching());
    CHECK(ScoreAll(*plugin, cluster.Build(), Incoming().Constraint(Soft(1, kZone))) ==
          Scores{{"node-a", 33}, {"node-b", 33}, {"node-x", 100}, {"node-y", 100}});
  }
  SECTION("hosts 2/1/0/3") {
    // weight log(4 + 2) = 1.792: raw 4, 2, 0, 5; normalized 100 * (5 + 0 - s) / 5.
    auto cluster = TwoZones();
    cluster.Place("node-a", Matching(), 2).Place("node-b", Matching());
    cluster.Place("node-y", Matching(), 3);
    CHECK(ScoreAll(*plugin, cluster.Build(), Incoming().Constraint(Soft(1, kHostname))) ==
          Scores{{"node-a", 20}, {"node-b", 60}, {"node-x", 100}, {"node-y", 0}});
  }
  SECTION("maxSkew - 1 is added to every domain") {
    // Two nodes, weight log(4) = 1.386, maxSkew 3: raw round(1.386 + 2) = 3 and 2;
    // normalized 100 * (3 + 2 - s) / 3: 66 and 100.
    Cluster cluster;
    cluster.Add(Node("node-a")).Add(Node("node-b"));
    cluster.Place("node-a", Matching());
    CHECK(ScoreAll(*plugin, cluster.Build(), Incoming().Constraint(Soft(3, kHostname))) ==
          Scores{{"node-a", 66}, {"node-b", 100}});
  }
  SECTION("a node without the key scores 0 and is left out of the domain count") {
    // One domain: weight log(3) = 1.099, zone1 raw round(1.099) = 1 for a and b.
    Cluster cluster;
    cluster.Add(Node("node-a", "zone1")).Add(Node("node-b", "zone1")).Add(Node("node-c"));
    cluster.Place("node-a", Matching()).Place("node-c", Matching(), 4);
    CHECK(ScoreAll(*plugin, cluster.Build(), Incoming().Constraint(Soft(1, kZone))) ==
          Scores{{"node-a", 100}, {"node-b", 100}, {"node-c", 0}});
  }
  SECTION("other namespaces and terminating pods do not count") {
    auto cluster = TwoZones();
    cluster.Place("node-a", Pod("other", "other-ns").Label("foo"), 3);
    cluster.Place("node-b", Pod("leaving").Label("foo").Terminating(), 3);
    cluster.Place("node-x", Matching());
    // zone1 0, zone2 raw round(1.386) = 1: normalized 100 * (1 + 0 - s) / 1.
    CHECK(ScoreAll(*plugin, cluster.Build(), Incoming().Constraint(Soft(1, kZone))) ==
          Scores{{"node-a", 100}, {"node-b", 100}, {"node-x", 0}, {"node-y", 0}});
  }
  SECTION("zone and hostname constraints add up") {
    // zone weight log(4) = 1.386 (zone1 2, zone2 1), hostname weight log(5) = 1.609:
    // a 2*1.386 + 2*1.609 = 5.99 -> 6, b 2.77 -> 3, x 1.386 + 1.609 = 3.00 -> 3;
    // normalized 100 * (6 + 3 - s) / 6: 50, 100, 100.
    Cluster cluster;
    cluster.Add(Node("node-a", "zone1")).Add(Node("node-b", "zone1")).Add(Node("node-x", "zone2"));
    cluster.Place("node-a", Matching(), 2).Place("node-x", Matching());
    CHECK(ScoreAll(*plugin, cluster.Build(),
                   Incoming().Constraint(Soft(1, kZone)).Constraint(Soft(1, kHostname))) ==
          Scores{{"node-a", 50}, {"node-b", 100}, {"node-x", 100}});
  }
  SECTION("nodeAffinityPolicy Honor leaves pods on excluded nodes out of the counts") {
    // node-c (zone1) is excluded by the pod's nodeSelector: zone1 counts only node-a's pod.
    Cluster cluster;
    cluster.Add(Node("node-a", "zone1").Label("pool", "gpu"))
        .Add(Node("node-b", "zone2").Label("pool", "gpu"))
        .Add(Node("node-c", "zone1").Label("pool", "cpu"));
    cluster.Place("node-a", Matching()).Place("node-b", Matching()).Place("node-c", Matching(), 3);
    const auto& snapshot = cluster.Build();
    const auto feasible =
        std::vector<const framework::NodeInfo*>{snapshot.nodes()[0], snapshot.nodes()[1]};
    auto constraint = Soft(1, kZone);
    const auto score = [&](const Pod& pod) {
      const auto info = pod.Info();
      CycleState state;
      REQUIRE(plugin->PreScore(state, *info, snapshot, feasible).IsSuccess());
      std::vector<int64_t> scores;
      for (const auto* node : feasible) scores.push_back(plugin->Score(state, *info, *node));
      plugin->NormalizeScore(state, *info, absl::MakeSpan(scores));
      return scores;
    };
    CHECK(score(Incoming().NodeSelector("pool", "gpu").Constraint(constraint)) ==
          std::vector<int64_t>{100, 100});
    // Ignore: zone1 holds 4 -> raw round(4 * 1.386) = 6 vs 1; 100 * (6 + 1 - s) / 6.
    constraint.node_affinity_policy = NodeInclusionPolicy::kIgnore;
    CHECK(score(Incoming().NodeSelector("pool", "gpu").Constraint(constraint)) ==
          std::vector<int64_t>{16, 100});
  }
  SECTION("PreScore skips pods without soft constraints") {
    auto cluster = TwoZones();
    CHECK_FALSE(ScoreAll(*plugin, cluster.Build(), Incoming()).has_value());
    CHECK_FALSE(
        ScoreAll(*plugin, cluster.Build(), Incoming().Constraint(Hard(1, kZone))).has_value());
  }
}

TEST_CASE("PodTopologySpread score: system defaults spread controlled pods",
          "[pod_topology_spread]") {
  auto plugin = Plugin();  // System defaulting
  // node-a and node-b have no zone label: with system defaults they are still scored (hostname),
  // and their pods pool under the empty zone value, as upstream.
  Cluster cluster;
  cluster.Add(Node("node-a")).Add(Node("node-b"));
  cluster.Add(Node("node-c").Label("topology.kubernetes.io/zone", "zone1"));
  const Pod web = Pod("web").Label("app", "web").Owner("apps/v1", "ReplicaSet");
  cluster.Place("node-a", web, 2).Place("node-c", web);
  // hostname weight log(5) = 1.609, maxSkew 3; zone weight log(4) = 1.386 ("" and zone1),
  // maxSkew 5. a: 2*1.609 + 2 = 5.22 -> 5; b: 2; c: 1.609 + 2 + 1.386 + 4 = 9.00 -> 9.
  // Normalized 100 * (9 + 2 - s) / 9: 66, 100, 22.
  CHECK(ScoreAll(*plugin, cluster.Build(), web) ==
        Scores{{"node-a", 66}, {"node-b", 100}, {"node-c", 22}});
  // A pod without a controller gets no defaults.
  CHECK_FALSE(ScoreAll(*plugin, cluster.Build(), Pod("web").Label("app", "web")).has_value());
}

TEST_CASE("PodTopologySpread score: List defaults require every key", "[pod_topology_spread]") {
  auto plugin = ListPlugin({Soft(1, kHostname), Soft(1, kZone)});
  Cluster cluster;
  cluster.Add(Node("node-a")).Add(Node("node-b", "zone1"));
  const Pod web = Pod("web").Label("app", "web").Owner("apps/v1", "ReplicaSet");
  CHECK(ScoreAll(*plugin, cluster.Build(), web) == Scores{{"node-a", 0}, {"node-b", 100}});
}

// --- Args ------------------------------------------------------------------------------------

TEST_CASE("PodTopologySpread args", "[pod_topology_spread]") {
  const auto parse = [](const std::string& text) -> std::string {
    auto args = config::ParsePluginArgs("PodTopologySpread", text);
    return args.ok() ? "ok" : std::string(args.status().message());
  };
  CHECK(parse("{}") == "ok");
  CHECK(parse("defaultingType: System") == "ok");
  CHECK(parse("defaultingType: List") == "ok");
  CHECK(parse("defaultingType: List\n"
              "defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: "
              "DoNotSchedule, minDomains: 2, nodeAffinityPolicy: Ignore, nodeTaintsPolicy: Honor, "
              "matchLabelKeys: [version]}]") == "ok");

  const std::vector<std::pair<std::string, std::string>> errors = {
      {"defaultingType: Sometimes",
       "PodTopologySpread: defaultingType: unsupported value \"Sometimes\"; want System or List"},
      {"defaultConstraints: [{maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]",
       "PodTopologySpread: defaultingType: must be List when defaultConstraints are not empty"},
      {"defaultingType: List\n"
       "defaultConstraints: [{maxSkew: 0, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}]",
       "PodTopologySpread: defaultConstraints[0].maxSkew: must be greater than zero, got 0"},
      {"defaultingType: List\ndefaultConstraints: [{maxSkew: 1, whenUnsatisfiable: "
       "DoNotSchedule}]",
       "PodTopologySpread: defaultConstraints[0].topologyKey: required"},
      {"defaultingType: List\ndefaultConstraints: [{maxSkew: 1, topologyKey: 'a b', "
       "whenUnsatisfiable: DoNotSchedule}]",
       "PodTopologySpread: defaultConstraints[0].topologyKey: \"a b\" is not a valid label key"},
      {"defaultingType: List\ndefaultConstraints: [{maxSkew: 1, topologyKey: zone, "
       "whenUnsatisfiable: Sometimes}]",
       "PodTopologySpread: defaultConstraints[0].whenUnsatisfiable: unsupported value "
       "\"Sometimes\"; want DoNotSchedule or ScheduleAnyway"},
      {"defaultingType: List\ndefaultConstraints: [{maxSkew: 1, topologyKey: zone, "
       "whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {a: b}}}]",
       "PodTopologySpread: defaultConstraints[0].labelSelector: must not be set: the selector is "
       "deduced for each pod"},
      {"defaultingType: List\ndefaultConstraints: [{maxSkew: 1, topologyKey: zone, "
       "whenUnsatisfiable: DoNotSchedule, minDomains: 0}]",
       "PodTopologySpread: defaultConstraints[0].minDomains: must be greater than zero, got 0"},
      {"defaultingType: List\ndefaultConstraints: [{maxSkew: 1, topologyKey: zone, "
       "whenUnsatisfiable: DoNotSchedule, nodeTaintsPolicy: Maybe}]",
       "PodTopologySpread: defaultConstraints[0].nodeTaintsPolicy: unsupported value \"Maybe\"; "
       "want Honor or Ignore"},
      {"defaultingType: List\ndefaultConstraints:\n"
       "- {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}\n"
       "- {maxSkew: 2, topologyKey: zone, whenUnsatisfiable: DoNotSchedule}",
       "PodTopologySpread: defaultConstraints[1]: duplicate {topologyKey, whenUnsatisfiable} "
       "pair"},
      {"defaultingType: List\ndefaultConstraints: [{maxSkew: 1, topologyKey: zone, "
       "whenUnsatisfiable: DoNotSchedule, maxskew: 2}]",
       "PodTopologySpread: defaultConstraints[0]: unknown field \"maxskew\""},
  };
  for (const auto& [text, want] : errors) {
    CAPTURE(text);
    CHECK(parse(text) == want);
  }
}

TEST_CASE("PodTopologySpread factory validates args built in code", "[pod_topology_spread]") {
  config::PodTopologySpreadArgs args;
  args.default_constraints = {Soft(1, kZone)};
  args.default_constraints[0].label_selector.reset();
  auto made = plugins::NewPodTopologySpread(args, {});
  REQUIRE_FALSE(made.ok());
  CHECK(made.status().message() ==
        "PodTopologySpread: defaultingType: must be List when defaultConstraints are not empty");
  args.defaulting_type = config::SpreadDefaultingType::kList;
  args.default_constraints[0].max_skew = 0;
  made = plugins::NewPodTopologySpread(args, {});
  REQUIRE_FALSE(made.ok());
  CHECK(made.status().message() ==
        "PodTopologySpread: defaultConstraints[0].maxSkew: must be greater than zero");
  CHECK_FALSE(plugins::NewPodTopologySpread(config::InterPodAffinityArgs{}, {}).ok());
}

// --- Simulation ------------------------------------------------------------------------------

TEST_CASE("simulate spreads pods with a zone constraint evenly", "[pod_topology_spread]") {
  std::string yaml = "apiVersion: v1\nkind: List\nitems:\n";
  for (int i = 0; i < 6; ++i) {
    yaml += "- apiVersion: v1\n  kind: Node\n  metadata: {name: n" + std::to_string(i) +
            ", labels: {topology.kubernetes.io/zone: z" + std::to_string(i % 3) +
            ", kubernetes.io/hostname: n" + std::to_string(i) +
            "}}\n  status: {capacity: {cpu: '64', memory: 64Gi, pods: '110'}}\n";
  }
  for (int i = 0; i < 9; ++i) {
    // Bigger pods land where the resource scorers prefer; the hard constraint must still keep
    // the zones within one pod of each other.
    yaml += "- apiVersion: v1\n  kind: Pod\n  metadata: {name: web-" + std::to_string(i) +
            ", namespace: default, labels: {app: web}}\n  spec:\n    schedulerName: kubesched\n"
            "    containers: [{name: c, resources: {requests: {cpu: '1'}}}]\n"
            "    topologySpreadConstraints: [{maxSkew: 1, topologyKey: "
            "topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: "
            "{matchLabels: {app: web}}}]\n";
  }
  testing::TempFile cluster(yaml);
  scheduler::SimulationInput input{cluster.path(), std::nullopt, 7, 1};
  auto report = scheduler::RunSimulation(input, config::DefaultConfiguration());
  REQUIRE(report.ok());
  REQUIRE(report->pods == 9);
  std::map<char, int> per_zone;
  for (const auto& pod : report->pod_results) {
    REQUIRE(pod.node.has_value());
    const int index = pod.node->back() - '0';
    ++per_zone[static_cast<char>('0' + index % 3)];
  }
  CHECK(per_zone == std::map<char, int>{{'0', 3}, {'1', 3}, {'2', 3}});
}

}  // namespace
}  // namespace kubesched
