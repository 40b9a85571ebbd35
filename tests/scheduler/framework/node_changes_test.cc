// NodeChangeLog: which node positions changed after a generation, and when it cannot tell.

#include "scheduler/framework/node_changes.h"

#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

namespace kubesched {
namespace {

using framework::NodeChangeLog;

std::vector<uint32_t> ChangedSince(const NodeChangeLog& log, int64_t since) {
  std::vector<uint32_t> positions;
  REQUIRE(log.ChangedSince(since, &positions));
  return positions;
}

TEST_CASE("a change log tells nothing until its first record", "[core]") {
  NodeChangeLog log;
  std::vector<uint32_t> positions;
  CHECK_FALSE(log.ChangedSince(0, &positions));
  log.Record(5, {1, 2}, 100);
  CHECK_FALSE(log.ChangedSince(4, &positions));
  CHECK(ChangedSince(log, 5).empty());
}

TEST_CASE("a change log lists the positions changed after a generation", "[core]") {
  NodeChangeLog log;
  log.Record(1, {}, 100);
  log.Record(2, {4}, 100);
  log.Record(3, {0, 4}, 100);
  log.Record(4, {}, 100);
  CHECK(ChangedSince(log, 1) == std::vector<uint32_t>{4, 0, 4});
  CHECK(ChangedSince(log, 2) == std::vector<uint32_t>{0, 4});
  CHECK(ChangedSince(log, 4).empty());
}

TEST_CASE("an invalidated change log starts again at its next record", "[core]") {
  NodeChangeLog log;
  log.Record(1, {}, 100);
  log.Record(2, {3}, 100);
  log.Invalidate();
  std::vector<uint32_t> positions;
  CHECK_FALSE(log.ChangedSince(1, &positions));
  log.Record(3, {7}, 100);
  CHECK_FALSE(log.ChangedSince(2, &positions));
  CHECK(ChangedSince(log, 3).empty());
  log.Record(4, {7}, 100);
  CHECK(ChangedSince(log, 3) == std::vector<uint32_t>{7});
}

TEST_CASE("an invalidated change log names a new stretch of changes", "[core]") {
  NodeChangeLog log;
  NodeChangeLog other;
  CHECK(log.epoch() != other.epoch());
  const uint64_t before = log.epoch();
  log.Record(1, {}, 100);
  CHECK(log.epoch() == before);
  log.Invalidate();
  CHECK(log.epoch() != before);
}

TEST_CASE("a full change log forgets its oldest generations", "[core]") {
  NodeChangeLog log;
  log.Record(0, {}, 4);
  for (int64_t generation = 1; generation <= 6; ++generation) {
    log.Record(generation, {static_cast<uint32_t>(generation)}, 4);
  }
  std::vector<uint32_t> positions;
  CHECK_FALSE(log.ChangedSince(0, &positions));
  CHECK(ChangedSince(log, 4) == std::vector<uint32_t>{5, 6});
}

}  // namespace
}  // namespace kubesched
