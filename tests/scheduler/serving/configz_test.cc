#include "scheduler/serving/configz.h"

#include <catch2/catch.hpp>
#include <string>

#include "rapidjson/document.h"

namespace kubesched::serving {
namespace {

TEST_CASE("durations are printed as Go prints them", "[serving][configz]") {
  CHECK(GoDuration(absl::ZeroDuration()) == "0s");
  CHECK(GoDuration(absl::Seconds(15)) == "15s");
  CHECK(GoDuration(absl::Milliseconds(1500)) == "1.5s");
  CHECK(GoDuration(absl::Seconds(90)) == "1m30s");
  CHECK(GoDuration(absl::Hours(1)) == "1h0m0s");
  CHECK(GoDuration(absl::Milliseconds(500)) == "500ms");
  CHECK(GoDuration(-absl::Seconds(2)) == "-2s");
}

TEST_CASE("/configz renders the effective configuration in kube-scheduler's shape",
          "[serving][configz]") {
  config::Configuration config = config::DefaultConfiguration();
  config.leader_election.lease_duration = absl::Seconds(30);
  config.client_connection.qps = 20;
  rapidjson::Document json;
  const std::string text = ConfigzJson(config);
  json.Parse(text.data(), text.size());
  INFO(text);
  REQUIRE(json.IsObject());
  REQUIRE(json.HasMember("componentconfig"));
  const rapidjson::Value& component = json["componentconfig"];
  CHECK(component["Parallelism"].GetInt() == 16);
  CHECK(std::string(component["LeaderElection"]["LeaseDuration"].GetString()) == "30s");
  CHECK(std::string(component["LeaderElection"]["ResourceName"].GetString()) == "kubesched");
  CHECK(component["ClientConnection"]["QPS"].GetInt() == 20);
  CHECK(component["PodMaxBackoffSeconds"].GetInt() == 10);
  REQUIRE(component["Profiles"].Size() == 1);
  const rapidjson::Value& profile = component["Profiles"][0];
  CHECK(std::string(profile["SchedulerName"].GetString()) == "kubesched");
  CHECK(profile["PercentageOfNodesToScore"].IsNull());
  const rapidjson::Value& multi_point = profile["Plugins"]["MultiPoint"]["Enabled"];
  REQUIRE(multi_point.IsArray());
  REQUIRE(multi_point.Size() > 0);
  CHECK(multi_point[0].HasMember("Name"));
  CHECK(multi_point[0].HasMember("Weight"));
}

}  // namespace
}  // namespace kubesched::serving

namespace kubesched::serving {
namespace {

TEST_CASE("/configz renders plugin args under upstream's field names", "[serving][configz]") {
  auto config = config::ParseConfiguration(R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: kubesched
  pluginConfig:
  - name: DefaultPreemption
    args: {minCandidateNodesPercentage: 20, minCandidateNodesAbsolute: 50}
  - name: NodeResourcesFit
    args:
      scoringStrategy:
        type: MostAllocated
        resources: [{name: cpu, weight: 2}]
  - name: DynamicResources
    args: {filterTimeout: 5s}
)");
  REQUIRE(config.ok());
  const std::string text = ConfigzJson(*config);
  rapidjson::Document json;
  json.Parse(text.data(), text.size());
  INFO(text);
  REQUIRE(json.IsObject());
  const rapidjson::Value& plugin_config = json["componentconfig"]["Profiles"][0]["PluginConfig"];
  REQUIRE(plugin_config.IsArray());
  bool preemption = false;
  bool fit = false;
  bool dra = false;
  for (const auto& entry : plugin_config.GetArray()) {
    const std::string name = entry["Name"].GetString();
    const rapidjson::Value& args = entry["Args"];
    if (name == "DefaultPreemption") {
      preemption = true;
      CHECK(args["MinCandidateNodesPercentage"].GetInt() == 20);
      CHECK(args["MinCandidateNodesAbsolute"].GetInt() == 50);
    } else if (name == "NodeResourcesFit") {
      fit = true;
      CHECK(std::string(args["ScoringStrategy"]["Type"].GetString()) == "MostAllocated");
      CHECK(args["ScoringStrategy"]["Resources"][0]["Weight"].GetInt() == 2);
      CHECK(args["ScoringStrategy"]["RequestedToCapacityRatio"].IsNull());
    } else if (name == "DynamicResources") {
      dra = true;
      CHECK(std::string(args["FilterTimeout"].GetString()) == "5s");
      CHECK(args["BindingTimeout"].IsNull());
    }
  }
  CHECK(preemption);
  CHECK(fit);
  CHECK(dra);
}

}  // namespace
}  // namespace kubesched::serving
