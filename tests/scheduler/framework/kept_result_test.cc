// SnapshotMark (when a result kept across cycles can be brought up to date node by node) and
// KeptResults (the last few templates' results).

#include "scheduler/framework/kept_result.h"

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "scheduler/framework/snapshot.h"
#include "tests/testing/builders.h"

namespace kubesched {
namespace {

using framework::NodeInfo;
using framework::Snapshot;
using framework::SnapshotBuilder;
using framework::SnapshotMark;
using testing::NodeBuilder;

// A snapshot updated as the cache updates it: every update ends with RecordChanges.
struct Recorded {
  Recorded() {
    for (const char* name : {"a", "b", "c"}) {
      builder.Upsert(name)->SetNode(NodeBuilder(name).Ptr(), ++generation);
    }
    Update({});
  }
  void Update(const std::vector<NodeInfo*>& changed) {
    builder.RebuildLists();
    builder.set_generation(++generation);
    builder.RecordChanges(generation, changed);
  }
  NodeInfo* Touch(const std::string& name) {
    NodeInfo* info = builder.Find(name);
    info->SetNode(NodeBuilder(name).Label("touched", "yes").Ptr(), ++generation);
    return info;
  }

  Snapshot snapshot;
  SnapshotBuilder builder{&snapshot};
  int64_t generation = 0;
};

TEST_CASE("a mark catches up by the nodes changed since it was set", "[core]") {
  Recorded cluster;
  SnapshotMark mark;
  std::vector<uint32_t> changed;
  CHECK_FALSE(mark.CatchUp(cluster.snapshot, &changed));  // nothing computed yet
  CHECK(mark.CatchUp(cluster.snapshot, &changed));
  CHECK(changed.empty());
  cluster.Update({cluster.Touch("c")});
  cluster.Update({cluster.Touch("a")});
  CHECK(mark.CatchUp(cluster.snapshot, &changed));
  CHECK(changed == std::vector<uint32_t>{2, 0});
  CHECK(mark.CatchUp(cluster.snapshot, &changed));
  CHECK(changed.empty());
}

TEST_CASE("a mark starts afresh when nodes move, namespaces change or the snapshot differs",
          "[core]") {
  Recorded cluster;
  SnapshotMark mark;
  std::vector<uint32_t> changed;
  mark.CatchUp(cluster.snapshot, &changed);
  SECTION("a node removed") {
    cluster.builder.Remove("a");
    cluster.Update({});
    CHECK_FALSE(mark.CatchUp(cluster.snapshot, &changed));
    CHECK(mark.CatchUp(cluster.snapshot, &changed));  // from the new positions on
  }
  SECTION("a namespace relabelled") {
    cluster.builder.SetNamespaceLabels(api::Intern("team"), testing::Labels({{"a", "b"}}));
    cluster.Update({});
    CHECK_FALSE(mark.CatchUp(cluster.snapshot, &changed));
  }
  SECTION("another snapshot") {
    Recorded other;
    CHECK_FALSE(mark.CatchUp(other.snapshot, &changed));
  }
  SECTION("a snapshot whose writer records nothing") {
    Snapshot unrecorded;
    SnapshotBuilder(&unrecorded).Upsert("a")->SetNode(NodeBuilder("a").Ptr(), 1);
    SnapshotBuilder(&unrecorded).RebuildLists();
    SnapshotMark fresh;
    fresh.CatchUp(unrecorded, &changed);
    CHECK_FALSE(fresh.CatchUp(unrecorded, &changed));
  }
}

struct Entry {
  int key = 0;
  bool Serves(int wanted) const { return wanted == key; }
};

TEST_CASE("kept results drop the least recently used template", "[core]") {
  framework::KeptResults<Entry> kept(2);
  kept.Add(std::make_unique<Entry>(Entry{1}));
  kept.Add(std::make_unique<Entry>(Entry{2}));
  REQUIRE(kept.Find(1) != nullptr);  // 1 is now the most recent
  kept.Add(std::make_unique<Entry>(Entry{3}));
  CHECK(kept.size() == 2);
  CHECK(kept.Find(2) == nullptr);
  CHECK(kept.Find(1) != nullptr);
  CHECK(kept.Find(3) != nullptr);
}

}  // namespace
}  // namespace kubesched
