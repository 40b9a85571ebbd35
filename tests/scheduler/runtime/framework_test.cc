#include "scheduler/runtime/framework.h"

#include <catch2/catch.hpp>

#include "config/config.h"
#include "plugins/registry/registry.h"
#include "tests/testing/builders.h"

namespace kubesched::runtime {
namespace {

template <typename T>
std::vector<std::string> Names(const std::vector<T*>& plugins) {
  std::vector<std::string> names;
  for (auto* p : plugins) names.emplace_back(p->Name());
  return names;
}

std::vector<std::pair<std::string, int64_t>> ScoreNames(const Framework& fw) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (const auto& s : fw.score_plugins())
    out.emplace_back(std::string(s.plugin->Name()), s.weight);
  return out;
}

config::Profile DefaultProfile() { return config::DefaultConfiguration().profiles.at(0); }

TEST_CASE("the default profile runs QueueQuota, then upstream's plugins in upstream's order",
          "[runtime]") {
  auto fw = Framework::Create(DefaultProfile(), {});
  REQUIRE(fw.ok());
  CHECK((*fw)->profile_name() == "kubesched");
  CHECK(Names((*fw)->filter_plugins()) ==
        std::vector<std::string>{"QueueQuota", "NodeUnschedulable", "NodeName", "TaintToleration",
                                 "NodeAffinity", "NodePorts", "NodeResourcesFit",
                                 "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding",
                                 "VolumeZone", "PodTopologySpread", "InterPodAffinity",
                                 "DynamicResources"});
  CHECK(ScoreNames(**fw) ==
        std::vector<std::pair<std::string, int64_t>>{{"TaintToleration", 3},
                                                     {"NodeAffinity", 2},
                                                     {"NodeResourcesFit", 1},
                                                     {"PodTopologySpread", 2},
                                                     {"InterPodAffinity", 2},
                                                     {"NodeResourcesBalancedAllocation", 1},
                                                     {"ImageLocality", 1}});
  CHECK(Names((*fw)->post_filter_plugins()) ==
        std::vector<std::string>{"DynamicResources", "DefaultPreemption", "Coscheduling"});
  CHECK(Names((*fw)->permit_plugins()) == std::vector<std::string>{"Coscheduling"});
  CHECK(std::string((*fw)->queue_sort()->Name()) == "PrioritySort");
}

TEST_CASE("a plugin disabled at filter still scores when enabled at multiPoint", "[runtime]") {
  auto profile = DefaultProfile();
  profile.plugins.filter.disabled = {"NodeAffinity"};
  auto fw = Framework::Create(profile, {});
  REQUIRE(fw.ok());
  const auto filters = Names((*fw)->filter_plugins());
  CHECK(std::find(filters.begin(), filters.end(), "NodeAffinity") == filters.end());
  const auto scores = ScoreNames(**fw);
  CHECK(std::find(scores.begin(), scores.end(),
                  std::make_pair(std::string("NodeAffinity"), int64_t{2})) != scores.end());
}

TEST_CASE("an explicit score entry overrides the multiPoint weight", "[runtime]") {
  auto profile = DefaultProfile();
  profile.plugins.score.enabled = {{"NodeResourcesFit", 7}};
  auto fw = Framework::Create(profile, {});
  REQUIRE(fw.ok());
  const auto scores = ScoreNames(**fw);
  CHECK(std::find(scores.begin(), scores.end(),
                  std::make_pair(std::string("NodeResourcesFit"), int64_t{7})) != scores.end());
}

TEST_CASE("'*' disables every multiPoint plugin at that point", "[runtime]") {
  auto profile = DefaultProfile();
  profile.plugins.score.disabled = {"*"};
  auto fw = Framework::Create(profile, {});
  REQUIRE(fw.ok());
  CHECK((*fw)->score_plugins().empty());
  CHECK_FALSE((*fw)->filter_plugins().empty());
}

TEST_CASE("a plugin enabled at a point it does not implement is an error", "[runtime]") {
  auto profile = DefaultProfile();
  profile.plugins.filter.enabled = {{"PrioritySort", 0}};
  auto fw = Framework::Create(profile, {});
  REQUIRE_FALSE(fw.ok());
  CHECK(std::string(fw.status().message()).find("PrioritySort") != std::string::npos);
  CHECK(std::string(fw.status().message()).find("filter") != std::string::npos);
}

TEST_CASE("a profile without a queue sort or bind plugin is rejected", "[runtime]") {
  auto no_sort = DefaultProfile();
  no_sort.plugins.queue_sort.disabled = {"*"};
  auto fw = Framework::Create(no_sort, {});
  REQUIRE_FALSE(fw.ok());
  CHECK(std::string(fw.status().message()).find("queueSort") != std::string::npos);

  auto no_bind = DefaultProfile();
  no_bind.plugins.bind.disabled = {"*"};
  fw = Framework::Create(no_bind, {});
  REQUIRE_FALSE(fw.ok());
  CHECK(std::string(fw.status().message()).find("bind") != std::string::npos);
}

// A PreEnqueue plugin that admits every pod, or holds every pod with a reason naming it.
class FixedPreEnqueue final : public framework::PreEnqueuePlugin {
 public:
  FixedPreEnqueue(std::string_view name, bool admit) : name_(name), admit_(admit) {}
  std::string_view Name() const override { return name_; }
  framework::Status PreEnqueue(const framework::PodInfo&) const override {
    return admit_ ? framework::Status::Success() : framework::Status::Unschedulable("held");
  }

 private:
  std::string_view name_;
  bool admit_;
};

plugins::RegistryMap RegistryWithPreEnqueue() {
  plugins::RegistryMap registry = plugins::Registry();
  for (const auto& [name, admit] :
       {std::pair<std::string_view, bool>{"Admit", true}, {"HoldA", false}, {"HoldB", false}}) {
    registry[name] =
        [name = name, admit = admit](
            const config::PluginArgs&,
            const plugins::PluginHandle&) -> absl::StatusOr<std::unique_ptr<framework::Plugin>> {
      return std::make_unique<FixedPreEnqueue>(name, admit);
    };
  }
  return registry;
}

framework::PodInfoPtr GatedPod() {
  return framework::MakePodInfo(testing::PodBuilder("p").SchedulingGates({"g"}).Ptr(), 0);
}

TEST_CASE("multiPoint puts SchedulingGates at PreEnqueue, where it holds gated pods", "[runtime]") {
  auto fw = Framework::Create(DefaultProfile(), {});
  REQUIRE(fw.ok());
  CHECK(Names((*fw)->pre_enqueue_plugins()) ==
        std::vector<std::string>{"SchedulingGates", "DynamicResources"});
  const framework::Status gated = (*fw)->RunPreEnqueue(*GatedPod());
  CHECK(gated.code() == framework::Code::kUnschedulableAndUnresolvable);
  CHECK(gated.plugin() == "SchedulingGates");
  CHECK(gated.Message() == "waiting for scheduling gates: [g]");
  const auto free = framework::MakePodInfo(testing::PodBuilder("q").Ptr(), 0);
  CHECK((*fw)->RunPreEnqueue(*free).IsSuccess());
}

TEST_CASE("PreEnqueue runs in order and stops at the first rejection, naming its plugin",
          "[runtime]") {
  const plugins::RegistryMap registry = RegistryWithPreEnqueue();
  auto profile = DefaultProfile();
  profile.plugins.multi_point.enabled.push_back({"Admit", 0});
  profile.plugins.multi_point.enabled.push_back({"HoldA", 0});
  profile.plugins.pre_enqueue.enabled = {{"HoldB", 0}};
  auto fw = Framework::Create(profile, {}, registry);
  REQUIRE(fw.ok());
  CHECK(Names((*fw)->pre_enqueue_plugins()) ==
        std::vector<std::string>{"SchedulingGates", "DynamicResources", "Admit", "HoldA", "HoldB"});
  const auto free = framework::MakePodInfo(testing::PodBuilder("q").Ptr(), 0);
  CHECK((*fw)->RunPreEnqueue(*free).plugin() == "HoldA");
  CHECK((*fw)->RunPreEnqueue(*GatedPod()).plugin() == "SchedulingGates");
}

TEST_CASE("a plugin disabled at preEnqueue holds no pod", "[runtime]") {
  auto profile = DefaultProfile();
  profile.plugins.pre_enqueue.disabled = {"SchedulingGates"};
  auto fw = Framework::Create(profile, {});
  REQUIRE(fw.ok());
  CHECK(Names((*fw)->pre_enqueue_plugins()) == std::vector<std::string>{"DynamicResources"});
  CHECK((*fw)->RunPreEnqueue(*GatedPod()).IsSuccess());
}

TEST_CASE("a plugin enabled at preEnqueue without implementing it is an error", "[runtime]") {
  auto profile = DefaultProfile();
  profile.plugins.pre_enqueue.enabled = {{"NodeName", 0}};
  auto fw = Framework::Create(profile, {});
  REQUIRE_FALSE(fw.ok());
  CHECK(std::string(fw.status().message()) ==
        "profile \"kubesched\": plugin \"NodeName\" does not implement preEnqueue");
}

}  // namespace
}  // namespace kubesched::runtime
