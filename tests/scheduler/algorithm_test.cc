#include "scheduler/algorithm.h"

#include <catch2/catch.hpp>

namespace kubesched::scheduler {
namespace {

TEST_CASE("the number of feasible nodes to find follows upstream's adaptive rule", "[scheduler]") {
  struct Case {
    int percentage;
    int nodes;
    int expected;
  };
  const Case cases[] = {
      {0, 10, 10},        // below 100 nodes: all of them
      {0, 99, 99},        //
      {0, 100, 100},      // 50 - 0 = 50% of 100 = 50, but never fewer than 100
      {0, 500, 230},      // 46%
      {0, 5000, 500},     // 10%
      {0, 15000, 750},    // floored at 5%
      {30, 1000, 300},    // explicit percentage
      {100, 5000, 5000},  // everything
      {1, 1000, 100},     // at least 100
  };
  for (const auto& c : cases) {
    INFO("percentage " << c.percentage << ", nodes " << c.nodes);
    CHECK(NumFeasibleNodesToFind(c.percentage, c.nodes) == c.expected);
  }
}

}  // namespace
}  // namespace kubesched::scheduler
