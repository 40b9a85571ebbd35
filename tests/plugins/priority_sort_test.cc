// PrioritySort: higher priority first, then earlier arrival.

#include "plugins/priority_sort/priority_sort.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/plugins/plugin_fixture.h"

namespace kubesched {
namespace {

using plugin_testing::Info;
using plugin_testing::PodBuilder;
using plugin_testing::Unwrap;

TEST_CASE("priority sort orders by priority, then by arrival", "[plugins][prioritysort]") {
  struct Case {
    std::string name;
    int32_t a_priority;
    int64_t a_enqueued;
    int32_t b_priority;
    int64_t b_enqueued;
    bool a_first;
  };
  const std::vector<Case> cases = {
      {"higher priority goes first although it arrived later", 10, 200, 5, 100, true},
      {"lower priority goes later although it arrived first", 5, 100, 10, 200, false},
      {"equal priority: earlier arrival goes first", 7, 100, 7, 200, true},
      {"equal priority and arrival: neither is less", 7, 100, 7, 100, false},
      {"negative priorities order too", -1, 100, -5, 50, true},
  };
  auto plugin = Unwrap<plugins::PrioritySort>(plugins::NewPrioritySort(std::monostate{}, {}));
  for (const auto& c : cases) {
    SECTION(c.name) {
      const auto a = Info(PodBuilder("a"), c.a_priority);
      const auto b = Info(PodBuilder("b"), c.b_priority);
      CHECK(plugin->Less(*a, c.a_enqueued, *b, c.b_enqueued) == c.a_first);
    }
  }
}

}  // namespace
}  // namespace kubesched
