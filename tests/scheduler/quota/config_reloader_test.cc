// QueueConfigReloader: a refused update is reported on its ConfigMap; typed limits matching no
// node are reported once the nodes are known and after every reload from then on.

#include "scheduler/quota/config_reloader.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "tests/testing/builders.h"

namespace kubesched::quota {
namespace {

using testing::NodeBuilder;

struct Warning {
  std::string map;
  std::string reason;
  std::string message;
};

config::QueuesConfig FileQueues() {
  config::QueuesConfig queues;
  queues.config_map = {"queue-config", "kubesched-queues"};
  return queues;
}

api::ConfigMap Map(const std::string& yaml) {
  api::ConfigMap map;
  map.meta.namespace_name = "queue-config";
  map.meta.name = "kubesched-queues";
  map.meta.uid = "uid-1";
  map.data[config::kQueuesConfigMapKey] = yaml;
  return map;
}

struct Fixture {
  util::FakeClock clock;
  QuotaTracker tracker{&clock, FileQueues()};
  QueueConfigReloader reloader{&tracker, FileQueues()};
  std::vector<Warning> warnings;

  Fixture() {
    reloader.SetWarningHandler(
        [this](const api::ObjectMeta& map, const std::string& reason, const std::string& message) {
          warnings.push_back({map.namespace_name + "/" + map.name, reason, message});
        });
  }
};

constexpr char kTyped[] = "tree: [{name: r, max: {nvidia.com/gpu.H100: '2'}}]\n";

TEST_CASE("a refused queue ConfigMap update is reported on the ConfigMap with the reason",
          "[quota][config_reloader]") {
  Fixture f;
  f.reloader.Reload(Map("tree: [{name: team, max: {cpu: lots}}]\n"), false);
  REQUIRE(f.warnings.size() == 1);
  CHECK(f.warnings[0].map == "queue-config/kubesched-queues");
  CHECK(f.warnings[0].reason == "QueueConfigRejected");
  CHECK_THAT(f.warnings[0].message,
             Catch::Contains("queue configuration rejected, the last good one stays in force: "
                             "queues.tree[0] (root.team).max.cpu: \"lots\" is not a quantity"));
  CHECK(f.reloader.reloads().rejected == 1);
  // A good update is no warning.
  f.reloader.Reload(Map("tree: [{name: team, max: {cpu: '2'}}]\n"), false);
  CHECK(f.warnings.size() == 1);
  CHECK(f.reloader.reloads().applied == 1);
}

TEST_CASE("typed limits matching no node wait for the nodes, then are reported on every reload",
          "[quota][config_reloader]") {
  Fixture f;
  // Before the nodes are known (the informers' first lists) nothing is said.
  f.reloader.Reload(Map(kTyped), false);
  CHECK(f.warnings.empty());
  const auto unmatched = f.reloader.CheckTypedLimits();
  REQUIRE(unmatched.size() == 1);
  REQUIRE(f.warnings.size() == 1);
  CHECK(f.warnings[0].reason == "TypedLimitMatchesNoNode");
  CHECK_THAT(f.warnings[0].message,
             Catch::StartsWith("queue root.r: the max on nvidia.com/gpu.H100 matches no node"));
  // Every reload checks again.
  f.reloader.Reload(Map(kTyped), false);
  CHECK(f.warnings.size() == 2);
  // A node of the model joins: the next reload has nothing to say.
  f.tracker.SetNode(NodeBuilder("h").Label("nvidia.com/gpu.product", "H100").Build());
  f.reloader.Reload(Map(kTyped), false);
  CHECK(f.warnings.size() == 2);
  CHECK(f.reloader.CheckTypedLimits().empty());
}

TEST_CASE("typed limits of the file's tree are logged but have no ConfigMap to report on",
          "[quota][config_reloader]") {
  util::FakeClock clock;
  config::QueuesConfig file = *config::ParseQueuesDocument(kTyped);
  QuotaTracker tracker(&clock, file);
  QueueConfigReloader reloader(&tracker, file);
  int warnings = 0;
  reloader.SetWarningHandler(
      [&](const api::ObjectMeta&, const std::string&, const std::string&) { ++warnings; });
  CHECK(reloader.CheckTypedLimits().size() == 1);
  CHECK(warnings == 0);
}

}  // namespace
}  // namespace kubesched::quota
