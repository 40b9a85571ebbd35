// KeptLabelColumns keeps the nodes' values of a few label keys by snapshot position from one
// cycle to the next. As nodes are relabelled, added and removed the way the cache changes a
// snapshot, its columns must read exactly as the nodes' labels.

#include "scheduler/framework/label_columns.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/framework/snapshot.h"
#include "tests/testing/builders.h"

namespace kubesched {
namespace {

using framework::KeptLabelColumns;
using framework::LabelColumns;
using framework::NodeInfo;
using testing::NodeBuilder;

const api::Symbol kZone = api::Intern("topology.kubernetes.io/zone");
const api::Symbol kRack = api::Intern("rack");
const api::Symbol kHost = api::Intern("kubernetes.io/hostname");

// A snapshot updated as the cache updates it: every update ends with RecordChanges.
struct Recorded {
  void Update(const std::vector<NodeInfo*>& changed) {
    builder.RebuildLists();
    builder.set_generation(++generation);
    builder.RecordChanges(generation, changed);
  }
  // Node `i` with a zone, and a rack on every other value of `variant` (absent otherwise).
  NodeInfo* Put(int i, int variant) {
    const std::string name = "node-" + std::to_string(i);
    NodeBuilder node(name);
    node.Label("kubernetes.io/hostname", name)
        .Label("topology.kubernetes.io/zone", "zone-" + std::to_string(variant % 3));
    if (variant % 2 == 0) node.Label("rack", "rack-" + std::to_string(variant % 5));
    NodeInfo* info = builder.Upsert(name);
    info->SetNode(node.Ptr(), ++generation);
    return info;
  }

  framework::Snapshot snapshot;
  framework::SnapshotBuilder builder{&snapshot};
  int64_t generation = 0;
};

// Every node's value of every key as the columns give it (with no labels to fall back on) and as
// its labels give it.
void RequireColumnsReadAsLabels(const LabelColumns& columns, const framework::Snapshot& snapshot) {
  const api::LabelSet none;
  for (const NodeInfo* node : snapshot.nodes()) {
    for (const api::Symbol key : {kZone, kRack}) {
      INFO(node->name() << " " << api::SymbolText(key));
      REQUIRE(columns.ValueOf(key, *node, none) == node->node()->meta.labels.Get(key));
    }
  }
}

TEST_CASE("kept label columns read as the nodes' labels while nodes change or come and go",
          "[framework]") {
  Recorded cluster;
  for (int i = 0; i < 6; ++i) cluster.Put(i, i);
  cluster.Update({});
  KeptLabelColumns kept;
  const std::vector<api::Symbol> keys = {kZone, kRack};
  kept.Update(cluster.snapshot, keys);
  int next = 6;
  for (int step = 0; step < 40; ++step) {
    const std::shared_ptr<const LabelColumns> held = kept.columns();  // a cycle still holds it
    const LabelColumns before = *held;
    const int action = step % 5;
    if (action == 3) {
      cluster.Put(next++, step);  // a new node: positions are rebuilt
      cluster.Update({});
    } else if (action == 4 && cluster.snapshot.nodes().size() > 3) {
      const std::string name(cluster.snapshot.nodes()[step % 3]->name());
      cluster.builder.Remove(name);
      cluster.Update({});
    } else {
      const std::string name =
          cluster.snapshot.nodes()[step % cluster.snapshot.nodes().size()]->name();
      cluster.Update({cluster.Put(std::stoi(name.substr(5)), step + 1)});
    }
    kept.Update(cluster.snapshot, keys);
    RequireColumnsReadAsLabels(*kept.columns(), cluster.snapshot);
    REQUIRE(held->keys == before.keys);
    REQUIRE(held->values == before.values);
  }
}

TEST_CASE("label columns read a key without a column and a node copy from the labels",
          "[framework]") {
  Recorded cluster;
  for (int i = 0; i < 3; ++i) cluster.Put(i, 2 * i);
  cluster.Update({});
  KeptLabelColumns kept;
  const std::vector<api::Symbol> keys = {kZone};
  kept.Update(cluster.snapshot, keys);
  const LabelColumns& columns = *kept.columns();
  const NodeInfo& node = *cluster.snapshot.nodes()[1];
  const api::LabelSet& labels = node.node()->meta.labels;
  CHECK(columns.ValueOf(kHost, node, labels) == api::Intern("node-1"));
  const NodeInfo copy = node;  // a what-if copy has no position
  const api::LabelSet other = testing::Labels({{"topology.kubernetes.io/zone", "elsewhere"}});
  CHECK(columns.ValueOf(kZone, copy, other) == api::Intern("elsewhere"));
  CHECK(columns.ValueOf(kZone, node, other) == api::Intern("zone-2"));
}

}  // namespace
}  // namespace kubesched
