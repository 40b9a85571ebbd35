// Per-node results kept by snapshot position (scheduler/framework/kept_by_position.h): voided
// where the snapshot says a node changed, dropped where it cannot tell.

#include "scheduler/framework/kept_by_position.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/testing/builders.h"

namespace kubesched::framework {
namespace {

struct Key {
  uint64_t era = 0;
};

// A snapshot that records its changes, as the cache writes it.
struct Cluster {
  Snapshot snapshot;
  SnapshotBuilder builder{&snapshot};
  int64_t generation = 0;

  void AddNode(int i) {
    const std::string name = absl::StrCat("n", i);
    builder.Upsert(name)->SetNode(testing::NodeBuilder(name).Ptr(), ++generation);
    builder.RebuildLists();
    Commit({});
  }
  void Touch(int i) {
    NodeInfo* node = builder.Find(absl::StrCat("n", i));
    node->SetNode(testing::NodeBuilder(node->name()).Label("touched", "yes").Ptr(), ++generation);
    Commit({node});
  }
  void Commit(const std::vector<NodeInfo*>& changed) {
    builder.set_generation(generation);
    builder.RecordChanges(generation, changed);
  }
};

std::vector<uint64_t> Eras(const std::vector<Key>& keys) {
  std::vector<uint64_t> eras;
  for (const Key& key : keys) eras.push_back(key.era);
  return eras;
}

TEST_CASE("slots kept by position are voided where a node changed and dropped when moved",
          "[framework]") {
  Cluster cluster;
  for (int i = 0; i < 3; ++i) cluster.AddNode(i);
  SnapshotMark mark;
  std::vector<uint32_t> changed;
  std::vector<Key> keys;
  std::vector<int> values;
  CatchUpByPosition(cluster.snapshot, mark, changed, keys, values);
  REQUIRE(keys.size() == 3);
  REQUIRE(values.size() == 3);
  for (Key& key : keys) key.era = 7;
  values = {1, 2, 3};

  CatchUpByPosition(cluster.snapshot, mark, changed, keys, values);
  CHECK(Eras(keys) == std::vector<uint64_t>{7, 7, 7});

  cluster.Touch(1);
  CatchUpByPosition(cluster.snapshot, mark, changed, keys, values);
  CHECK(Eras(keys) == std::vector<uint64_t>{7, 0, 7});
  CHECK(values == std::vector<int>{1, 2, 3});

  // A node added moves the positions: the snapshot cannot tell what changed.
  cluster.AddNode(3);
  CatchUpByPosition(cluster.snapshot, mark, changed, keys, values);
  CHECK(Eras(keys) == std::vector<uint64_t>{0, 0, 0, 0});
  CHECK(values == std::vector<int>{0, 0, 0, 0});

  SECTION("another snapshot drops every slot") {
    for (Key& key : keys) key.era = 7;
    Cluster other;
    other.AddNode(0);
    CatchUpByPosition(other.snapshot, mark, changed, keys, values);
    CHECK(Eras(keys) == std::vector<uint64_t>{0});
  }
}

}  // namespace
}  // namespace kubesched::framework
