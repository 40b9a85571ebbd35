// What a profile's plugins declare for the core, read through the framework: the core names no
// plugin, so these are the only places where a plugin's declarations meet the names.

#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <vector>

#include "config/config.h"
#include "scheduler/framework/cluster_event.h"
#include "scheduler/runtime/framework.h"
#include "tests/testing/builders.h"

namespace kubesched::runtime {
namespace {

using framework::ClusterEvent;
using framework::EventBit;

std::unique_ptr<Framework> Build(const config::Profile& profile) {
  auto fw = Framework::Create(profile, {});
  REQUIRE(fw.ok());
  return *std::move(fw);
}

config::Profile DefaultProfile() { return config::DefaultConfiguration().profiles.at(0); }

TEST_CASE("an assigned pod appearing helps only pods that pod affinity rejected", "[runtime]") {
  const auto fw = Build(DefaultProfile());
  const framework::ClusterEventSet affinity = fw->EventsHelping({"InterPodAffinity"});
  CHECK((affinity & EventBit(ClusterEvent::kAssignedPodAdded)) != 0);
  CHECK((affinity & framework::kDefaultEvents) == framework::kDefaultEvents);
  CHECK(fw->EventsHelping({"NodeResourcesFit"}) == framework::kDefaultEvents);
  CHECK(fw->EventsHelping({"NodeResourcesFit", "InterPodAffinity"}) == affinity);
}

TEST_CASE("a pod no plugin in particular rejected is helped by every event", "[runtime]") {
  const auto fw = Build(DefaultProfile());
  CHECK(fw->EventsHelping({}) == framework::kAllEvents);
  // A name the profile does not have (the policy choice, say) cannot narrow anything.
  CHECK(fw->EventsHelping({"PolicySelection"}) == framework::kAllEvents);
}

TEST_CASE("queue quota declares wait keys and a rejection preemption may lift", "[runtime]") {
  const auto fw = Build(DefaultProfile());
  CHECK(fw->WaitKeysPluginNamed("QueueQuota") != nullptr);
  CHECK(fw->WaitKeysPluginNamed("NodeResourcesFit") == nullptr);
  CHECK(fw->WaitKeysPluginNamed("Unknown") == nullptr);
  CHECK(fw->PreemptionMayLift("QueueQuota"));
  CHECK_FALSE(fw->PreemptionMayLift("NodeResourcesFit"));
  CHECK_FALSE(fw->PreemptionMayLift("NodeAffinity"));
}

TEST_CASE("the resource screen applies only while the resource filter runs", "[runtime]") {
  const auto fw = Build(DefaultProfile());
  CHECK(fw->ScreensBasicResources({}));
  runtime::FilterSkips skip(fw->filter_plugins().size());
  for (size_t i = 0; i < skip.size(); ++i) {
    if (fw->filter_plugins()[i]->Name() == "NodeResourcesFit") skip.Set(i, true);
  }
  CHECK_FALSE(fw->ScreensBasicResources(skip));

  auto profile = DefaultProfile();
  profile.plugins.filter.disabled = {"NodeResourcesFit"};
  CHECK_FALSE(Build(profile)->ScreensBasicResources({}));
}

TEST_CASE("only a profile scoring with the Watermark strategy reports a watermark", "[runtime]") {
  const auto plain = Build(DefaultProfile());
  REQUIRE(plain->watermark_reporter() != nullptr);                    // NodeResourcesFit scores...
  CHECK(plain->watermark_reporter()->LastWatermarkStates().empty());  // ...by LeastAllocated
  CHECK_FALSE(plain->watermark_reporter()->NodeGroupLabelKeys().has_value());

  auto profile = DefaultProfile();
  config::NodeResourcesFitArgs args;
  args.scoring_strategy.type = config::ScoringStrategyType::kWatermark;
  profile.plugin_config.push_back({"NodeResourcesFit", args});
  const auto watermark = Build(profile);
  REQUIRE(watermark->watermark_reporter() != nullptr);
  framework::Snapshot empty;
  const auto state = watermark->watermark_reporter()->ObserveWatermarkState(empty, nullptr);
  REQUIRE(state.has_value());
  CHECK(state->mode == "spread");
  CHECK(state->pool == "default");
  const auto last = watermark->watermark_reporter()->LastWatermarkStates();
  REQUIRE(last.size() == 1);
  CHECK(last[0].mode == "spread");
  CHECK(watermark->watermark_reporter()->NodeGroupLabelKeys().has_value());
}

TEST_CASE("node metrics are wanted only by a profile that scores with MostAvailable", "[runtime]") {
  CHECK_FALSE(Build(DefaultProfile())->NodeMetricsPollInterval().has_value());

  auto profile = DefaultProfile();
  profile.plugins.multi_point.enabled.push_back({"MostAvailable", 1});
  config::MostAvailableArgs args;
  args.metrics_poll_interval = absl::Seconds(7);
  profile.plugin_config.push_back({"MostAvailable", args});
  std::string_view consumer;
  const auto interval = Build(profile)->NodeMetricsPollInterval(&consumer);
  REQUIRE(interval.has_value());
  CHECK(*interval == absl::Seconds(7));
  CHECK(consumer == "MostAvailable");
}

}  // namespace
}  // namespace kubesched::runtime
