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
