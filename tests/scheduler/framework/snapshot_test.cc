// Snapshot read side and its SnapshotBuilder.

#include "scheduler/framework/snapshot.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/testing/builders.h"

namespace kubesched {
namespace {

using framework::MakePodInfo;
using framework::NodeInfo;
using framework::Snapshot;
using framework::SnapshotBuilder;
using testing::Labels;
using testing::NodeBuilder;
using testing::PodBuilder;

void AddNode(SnapshotBuilder& builder, const std::string& name) {
  builder.Upsert(name)->SetNode(NodeBuilder(name).Ptr(), 1);
}

std::vector<std::string> Names(const std::vector<const NodeInfo*>& nodes) {
  std::vector<std::string> names;
  for (const NodeInfo* node : nodes) names.push_back(node->name());
  return names;
}

api::Affinity RequiredAntiAffinity() {
  api::PodAffinityTerm term;
  term.label_selector = api::LabelSelector{};
  term.topology_key = api::Intern("kubernetes.io/hostname");
  api::Affinity affinity;
  affinity.pod_anti_affinity.emplace().required.push_back(term);
  return affinity;
}

TEST_CASE("Get finds nodes by name and null for unknown names", "[core]") {
  Snapshot snapshot;
  SnapshotBuilder builder(&snapshot);
  AddNode(builder, "a");
  REQUIRE(snapshot.Get("a") != nullptr);
  CHECK(snapshot.Get("a")->name() == "a");
  CHECK(snapshot.Get("b") == nullptr);
}

// Per-node side tables (nominated pods) are indexed by snapshot position: every listed node knows
// its index, through removals, and neither a copy of a node nor a node without an object has one.
TEST_CASE("each listed node knows its position in nodes()", "[core]") {
  Snapshot snapshot;
  SnapshotBuilder builder(&snapshot);
  for (const std::string name : {"a", "b", "c", "d"}) AddNode(builder, name);
  builder.Upsert("ghost")->AddPod(MakePodInfo(PodBuilder("p").NodeName("ghost").Ptr(), 0), 1);
  builder.RebuildLists();
  const auto positions_match = [&] {
    for (size_t i = 0; i < snapshot.nodes().size(); ++i) {
      if (snapshot.nodes()[i]->snapshot_position() != i) return false;
    }
    return true;
  };
  CHECK(positions_match());
  CHECK(builder.Find("ghost")->snapshot_position() == framework::SnapshotPosition::kNone);
  builder.Remove("b");
  builder.RebuildLists();
  CHECK(Names(snapshot.nodes()) == std::vector<std::string>{"a", "c", "d"});
  CHECK(positions_match());
  // The cache refreshes a node by assigning it: the slot keeps its position.
  NodeInfo fresh;
  fresh.SetNode(NodeBuilder("d").Label("k", "v").Ptr(), 2);
  *builder.Find("d") = fresh;
  CHECK(snapshot.Get("d")->snapshot_position() == 2);
  const NodeInfo copy = *snapshot.Get("c");
  CHECK(copy.snapshot_position() == framework::SnapshotPosition::kNone);
}

TEST_CASE("nodes lists only NodeInfos with a node object, in insertion order", "[core]") {
  Snapshot snapshot;
  SnapshotBuilder builder(&snapshot);
  AddNode(builder, "b");
  builder.Upsert("ghost")->AddPod(MakePodInfo(PodBuilder("p").NodeName("ghost").Ptr(), 0), 1);
  AddNode(builder, "a");
  builder.RebuildLists();
  CHECK(Names(snapshot.nodes()) == std::vector<std::string>{"b", "a"});
  CHECK(snapshot.Get("ghost") == nullptr);
}

TEST_CASE("Upsert returns the existing NodeInfo for a known name", "[core]") {
  Snapshot snapshot;
  SnapshotBuilder builder(&snapshot);
  NodeInfo* first = builder.Upsert("a");
  CHECK(builder.Upsert("a") == first);
  CHECK(builder.size() == 1);
}

TEST_CASE("removing a node keeps the lookups of the others right", "[core]") {
  Snapshot snapshot;
  SnapshotBuilder builder(&snapshot);
  for (const char* name : {"a", "b", "c"}) AddNode(builder, name);
  const NodeInfo* c = snapshot.Get("c");
  builder.Remove("a");
  builder.Remove("missing");
  builder.RebuildLists();
  CHECK(snapshot.Get("a") == nullptr);
  CHECK(snapshot.Get("b")->name() == "b");
  CHECK(snapshot.Get("c") == c);  // NodeInfos do not move in memory
  CHECK(Names(snapshot.nodes()) == std::vector<std::string>{"b", "c"});
  AddNode(builder, "d");
  CHECK(snapshot.Get("d")->name() == "d");
}

TEST_CASE("RemoveIf drops every matching node in one pass", "[core]") {
  Snapshot snapshot;
  SnapshotBuilder builder(&snapshot);
  for (const char* name : {"a", "b", "c", "d"}) AddNode(builder, name);
  builder.RemoveIf([](const NodeInfo& node) { return node.name() == "a" || node.name() == "c"; });
  builder.RebuildLists();
  CHECK(Names(snapshot.nodes()) == std::vector<std::string>{"b", "d"});
  CHECK(snapshot.Get("d")->name() == "d");
  CHECK(builder.Find("c") == nullptr);
}

TEST_CASE("the affinity lists hold only nodes with such pods", "[core]") {
  Snapshot snapshot;
  SnapshotBuilder builder(&snapshot);
  AddNode(builder, "plain");
  AddNode(builder, "anti");
  builder.Upsert("plain")->AddPod(MakePodInfo(PodBuilder("p").NodeName("plain").Ptr(), 0), 2);
  builder.Upsert("anti")->AddPod(
      MakePodInfo(PodBuilder("q").NodeName("anti").Affinity(RequiredAntiAffinity()).Ptr(), 0), 2);
  builder.RebuildLists();
  CHECK(Names(snapshot.nodes_with_affinity_pods()) == std::vector<std::string>{"anti"});
  CHECK(Names(snapshot.nodes_with_required_anti_affinity_pods()) ==
        std::vector<std::string>{"anti"});
}

TEST_CASE("namespace labels are found by namespace symbol until removed", "[core]") {
  Snapshot snapshot;
  SnapshotBuilder builder(&snapshot);
  const api::Symbol ns = api::Intern("team-a");
  builder.SetNamespaceLabels(ns, Labels({{"team", "a"}}));
  REQUIRE(snapshot.NamespaceLabels(ns) != nullptr);
  CHECK(*snapshot.NamespaceLabels(ns) == Labels({{"team", "a"}}));
  CHECK(snapshot.NamespaceLabels(api::Intern("team-b")) == nullptr);
  builder.RemoveNamespace(ns);
  CHECK(snapshot.NamespaceLabels(ns) == nullptr);
}

TEST_CASE("the snapshot's rows are the nodes' rows in node order, and row() reads them", "[core]") {
  Snapshot snapshot;
  SnapshotBuilder builder(&snapshot);
  AddNode(builder, "a");
  builder.Upsert("ghost")->AddPod(MakePodInfo(PodBuilder("p").NodeName("ghost").Ptr(), 0), 1);
  AddNode(builder, "b");
  builder.RebuildLists();
  REQUIRE(snapshot.rows().size() == 2);
  for (size_t i = 0; i < 2; ++i) {
    CHECK(&snapshot.nodes()[i]->row() == &snapshot.rows()[i]);
    CHECK(snapshot.rows()[i].has_node);
  }
  CHECK(&builder.Find("ghost")->row() == &builder.Find("ghost")->own_row());
}

TEST_CASE("a snapshot node changed in place reads its own row until the snapshot rewrites it",
          "[core]") {
  Snapshot snapshot;
  SnapshotBuilder builder(&snapshot);
  AddNode(builder, "a");
  builder.RebuildLists();
  NodeInfo* node = builder.Find("a");
  node->AddPod(MakePodInfo(PodBuilder("p").NodeName("a").Container({{"cpu", "1"}}).Ptr(), 0), 2);
  CHECK(node->row().pod_count == 1);  // not the table's stale row
  CHECK(snapshot.rows()[0].pod_count == 0);
  builder.RefreshRow(node);
  CHECK(&node->row() == &snapshot.rows()[0]);
  CHECK(snapshot.rows()[0].pod_count == 1);
  CHECK(snapshot.rows()[0].requested_cpu == 1000);
  NodeInfo copy = *node;  // a what-if copy has no table row
  CHECK(&copy.row() == &copy.own_row());
  CHECK(copy.row().pod_count == 1);
}

}  // namespace
}  // namespace kubesched
