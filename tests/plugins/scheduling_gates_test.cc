// SchedulingGates: a pod with scheduling gates is kept out of activeQ with upstream's message.

#include "plugins/scheduling_gates/scheduling_gates.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/plugins/plugin_fixture.h"

namespace kubesched {
namespace {

using framework::Code;
using plugin_testing::Info;
using plugin_testing::PodBuilder;
using plugin_testing::Unwrap;
using plugin_testing::Verdict;
using plugins::SchedulingGates;

TEST_CASE("scheduling gates hold a pod with gates and pass one without",
          "[plugins][schedulinggates]") {
  struct Case {
    std::string name;
    std::vector<std::string> gates;
    std::string verdict;
  };
  const std::vector<Case> cases = {
      {"a pod without gates passes", {}, "pass"},
      {"one gate is named", {"example.com/foo"}, "waiting for scheduling gates: [example.com/foo]"},
      {"several gates are listed in spec order, space separated",
       {"foo", "bar", "kueue.x-k8s.io/admission"},
       "waiting for scheduling gates: [foo bar kueue.x-k8s.io/admission]"},
  };
  auto plugin = Unwrap<SchedulingGates>(plugins::NewSchedulingGates(std::monostate{}, {}));
  for (const auto& c : cases) {
    SECTION(c.name) {
      const auto status = plugin->PreEnqueue(*Info(PodBuilder("p").SchedulingGates(c.gates)));
      CHECK(Verdict(status) == std::vector<std::string>{c.verdict});
      if (!status.IsSuccess()) CHECK(status.code() == Code::kUnschedulableAndUnresolvable);
    }
  }
}

TEST_CASE("scheduling gates register no cluster event: only a pod update lifts a gate",
          "[plugins][schedulinggates]") {
  auto plugin = Unwrap<SchedulingGates>(plugins::NewSchedulingGates(std::monostate{}, {}));
  CHECK(plugin->EventsToRegister() == 0);
}

TEST_CASE("scheduling gates take no args", "[plugins][schedulinggates]") {
  CHECK(plugins::NewSchedulingGates(config::NodeAffinityArgs{}, {}).status().code() ==
        absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace kubesched
