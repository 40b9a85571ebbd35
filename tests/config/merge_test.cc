#include "config/merge.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config/config.h"
#include "tests/config/dump.h"

namespace kubesched::config {
namespace {

using testing::Dump;

PluginSet Set(std::vector<PluginRef> enabled, std::vector<std::string> disabled = {}) {
  return PluginSet{std::move(enabled), std::move(disabled)};
}

TEST_CASE("the default plugins are upstream's multiPoint list restricted to kubesched's plugins",
          "[config]") {
  const Plugins plugins = DefaultPlugins();
  CHECK(Dump(plugins.multi_point) ==
        "SchedulingGates, "
        "PrioritySort, QueueQuota, NodeUnschedulable, NodeName, TaintToleration:3, NodeAffinity:2, "
        "NodePorts, "
        "NodeResourcesFit:1, VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone, "
        "PodTopologySpread:2, InterPodAffinity:2, DynamicResources, "
        "DefaultPreemption, Coscheduling, "
        "NodeResourcesBalancedAllocation:1, ImageLocality:1, DefaultBinder");
}

TEST_CASE("the default plugins are all given through multiPoint", "[config]") {
  const Plugins plugins = DefaultPlugins();
  for (const ExtensionPointField& point : kExtensionPointFields) {
    if (point.name == "multiPoint") continue;
    CAPTURE(point.name);
    CHECK(Dump(plugins.*point.set).empty());
  }
}

TEST_CASE("merging one extension point follows upstream's mergePluginSet", "[config]") {
  const PluginSet defaults = Set({{"A", 0}, {"B", 3}, {"C", 1}});
  struct Case {
    std::string name;
    PluginSet custom;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"an empty custom set keeps the defaults", Set({}), "A, B:3, C:1"},
      {"disabling one default removes only it and keeps the order", Set({}, {"B"}), "A, C:1, -B"},
      {"disabling '*' removes every default but keeps the custom plugins", Set({{"X", 2}}, {"*"}),
       "X:2, -*"},
      {"re-enabling a default with another weight replaces it in place", Set({{"B", 7}}),
       "A, B:7, C:1"},
      {"re-enabling a default without a weight replaces it with an unset weight", Set({{"C", 0}}),
       "A, B:3, C"},
      {"custom plugins that are not defaults follow the defaults in their order",
       Set({{"Y", 0}, {"X", 4}}), "A, B:3, C:1, Y, X:4"},
      {"a default both disabled and enabled moves to the end", Set({{"A", 5}}, {"A"}),
       "B:3, C:1, A:5, -A"},
      {"disabling a plugin that is not a default changes nothing else", Set({}, {"Z"}),
       "A, B:3, C:1, -Z"},
  };
  for (const Case& c : cases) {
    DYNAMIC_SECTION(c.name) { CHECK(Dump(MergePluginSet(defaults, c.custom)) == c.want); }
  }
}

TEST_CASE("the custom disabled names come before the default disabled names", "[config]") {
  const PluginSet defaults = Set({{"A", 0}, {"B", 0}}, {"D"});
  CHECK(Dump(MergePluginSet(defaults, Set({}, {"A"}))) == "B, -A, -D");
}

TEST_CASE("a plugin disabled at one extension point stays enabled at multiPoint", "[config]") {
  // NodeAffinity as a filter only: the framework must see it enabled through multiPoint and
  // disabled at score.
  Plugins custom;
  custom.score.disabled = {"NodeAffinity"};
  const Plugins merged = MergeDefaults(DefaultPlugins(), custom);
  CHECK(Dump(merged.multi_point) == Dump(DefaultPlugins().multi_point));
  CHECK(Dump(merged.score) == "-NodeAffinity");
  CHECK(Dump(merged.filter).empty());
}

TEST_CASE("every extension point is merged, not only multiPoint", "[config]") {
  Plugins defaults;
  Plugins custom;
  for (const ExtensionPointField& point : kExtensionPointFields) {
    defaults.*point.set = Set({{"D", 0}});
    custom.*point.set = Set({{"C", 0}});
  }
  const Plugins merged = MergeDefaults(defaults, custom);
  for (const ExtensionPointField& point : kExtensionPointFields) {
    CAPTURE(point.name);
    CHECK(Dump(merged.*point.set) == "D, C");
  }
}

}  // namespace
}  // namespace kubesched::config
