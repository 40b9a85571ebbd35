// The registry lists every plugin in the binary and builds each with default args.

#include "plugins/registry/registry.h"

#include <catch2/catch.hpp>
#include <string>

#include "plugins/names.h"

namespace kubesched {
namespace {

TEST_CASE("the registry builds every plugin name with default args", "[plugins][registry]") {
  const auto& registry = plugins::Registry();
  CHECK(registry.size() == plugins::names::kAll.size());
  for (const std::string_view name : plugins::names::kAll) {
    INFO(std::string(name));
    const auto it = registry.find(name);
    REQUIRE(it != registry.end());
    const auto plugin = it->second(std::monostate{}, plugins::PluginHandle{});
    REQUIRE(plugin.ok());
    CHECK((*plugin)->Name() == name);
  }
}

TEST_CASE("the registry knows no upstream-only plugin", "[plugins][registry]") {
  for (const std::string_view name : plugins::names::kUpstreamOnly) {
    CHECK_FALSE(plugins::Registry().contains(name));
  }
}

}  // namespace
}  // namespace kubesched
