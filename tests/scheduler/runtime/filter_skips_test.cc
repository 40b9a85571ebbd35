#include "scheduler/runtime/filter_skips.h"

#include <catch2/catch.hpp>
#include <vector>

namespace kubesched::runtime {
namespace {

std::vector<size_t> Running(const FilterSkips& skips) {
  std::vector<size_t> running;
  skips.ForEachRunning([&](size_t i) {
    running.push_back(i);
    return true;
  });
  return running;
}

TEST_CASE("filter skips visit the plugins that run, in profile order", "[runtime]") {
  FilterSkips skips(5);
  CHECK(skips.size() == 5);
  CHECK(Running(skips) == std::vector<size_t>{0, 1, 2, 3, 4});
  skips.Set(1, true);
  skips.Set(3, true);
  CHECK(skips[1]);
  CHECK_FALSE(skips[2]);
  CHECK(Running(skips) == std::vector<size_t>{0, 2, 4});
  skips.Set(3, false);
  CHECK(Running(skips) == std::vector<size_t>{0, 2, 3, 4});
  for (size_t i = 0; i < 5; ++i) skips.Set(i, true);
  CHECK(skips.NoneRuns());
  CHECK(Running(skips).empty());
}

TEST_CASE("filter skips stop at the first plugin that rejects", "[runtime]") {
  FilterSkips skips(4);
  std::vector<size_t> visited;
  const bool all = skips.ForEachRunning([&](size_t i) {
    visited.push_back(i);
    return i != 1;
  });
  CHECK_FALSE(all);
  CHECK(visited == std::vector<size_t>{0, 1});
}

TEST_CASE("filter skips hold the largest profile", "[runtime]") {
  FilterSkips skips(FilterSkips::kMaxFilters);
  CHECK(Running(skips).size() == FilterSkips::kMaxFilters);
  skips.Set(FilterSkips::kMaxFilters - 1, true);
  CHECK(Running(skips).back() == FilterSkips::kMaxFilters - 2);
  CHECK(FilterSkips().NoneRuns());
}

}  // namespace
}  // namespace kubesched::runtime
