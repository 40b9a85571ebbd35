// Interned taint sets: the ids that nodes' rows name and TaintToleration caches verdicts by.

#include "scheduler/framework/node_table.h"

#include <catch2/catch.hpp>
#include <vector>

namespace kubesched {
namespace {

using api::Taint;
using api::TaintEffect;
using framework::TaintSetId;
using framework::TaintSets;

TEST_CASE("equal taint lists share one taint set id and an empty list is id 0", "[core]") {
  const std::vector<Taint> gpu = {{"nvidia.com/gpu", "present", TaintEffect::kNoSchedule}};
  const TaintSetId id = TaintSets::Intern(gpu);
  CHECK(id != framework::kNoTaints);
  CHECK(TaintSets::Intern(std::vector<Taint>(gpu)) == id);
  CHECK(TaintSets::Intern({}) == framework::kNoTaints);
}

TEST_CASE("taint lists differing in key, value, effect or length get different ids", "[core]") {
  const Taint base{"table-test", "a", TaintEffect::kNoSchedule};
  const TaintSetId id = TaintSets::Intern({base});
  CHECK(TaintSets::Intern({{"table-test-2", "a", TaintEffect::kNoSchedule}}) != id);
  CHECK(TaintSets::Intern({{"table-test", "b", TaintEffect::kNoSchedule}}) != id);
  CHECK(TaintSets::Intern({{"table-test", "a", TaintEffect::kNoExecute}}) != id);
  CHECK(TaintSets::Intern({base, base}) != id);
}

TEST_CASE("taint sets are visited in id order with the taints they were interned from", "[core]") {
  const std::vector<Taint> taints = {{"visit", "1", TaintEffect::kPreferNoSchedule},
                                     {"visit", "2", TaintEffect::kNoExecute}};
  const TaintSetId id = TaintSets::Intern(taints);
  std::vector<TaintSetId> ids;
  bool found = false;
  const size_t count = TaintSets::ForEach([&](TaintSetId each, const std::vector<Taint>& set) {
    ids.push_back(each);
    if (each != id) return;
    REQUIRE(set.size() == 2);
    found = set[0].value == "1" && set[1].effect == TaintEffect::kNoExecute;
  });
  CHECK(found);
  CHECK(count == ids.size());
  CHECK(count == TaintSets::Count());
  for (size_t i = 0; i < ids.size(); ++i) CHECK(ids[i] == i);
  CHECK(ids.front() == framework::kNoTaints);
}

}  // namespace
}  // namespace kubesched
