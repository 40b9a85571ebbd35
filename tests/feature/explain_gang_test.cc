// explain on a gang member, through ExplainObjects as `kubesched explain` runs it: the table and
// the JSON show the member's group, its need and the room for it on each queue of its path.

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config/config.h"
#include "rapidjson/document.h"
#include "scheduler/simulate/report_output.h"
#include "scheduler/simulate/simulation.h"
#include "tests/testing/builders.h"

namespace kubesched::scheduler {
namespace {

using testing::NodeBuilder;
using testing::PodBuilder;

// Queue root.ml may run four cpus; one runs there already.
config::Configuration Config() {
  auto parsed = config::ParseConfiguration(R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
queues:
  tree:
  - name: ml
    max: {cpu: "4"}
)");
  REQUIRE(parsed.ok());
  return *parsed;
}

api::Pod InQueue(PodBuilder builder) {
  return builder.Container({{"cpu", "1"}}).Label("kubesched.io/queue", "root.ml").Build();
}

api::Pod Member(const std::string& name) {
  return InQueue(std::move(PodBuilder(name)
                               .Annotation(framework::kPodGroupAnnotation, "job")
                               .Annotation(framework::kPodGroupMinMemberAnnotation, "3")));
}

std::vector<api::Object> Cluster() {
  return {NodeBuilder("n").Capacity({{"cpu", "8"}, {"pods", "110"}}).Build(),
          InQueue(std::move(PodBuilder("running").NodeName("n"))), Member("j0"), Member("j1"),
          Member("j2")};
}

rapidjson::Document Parse(const std::string& json) {
  rapidjson::Document document;
  document.Parse(json.c_str());
  REQUIRE_FALSE(document.HasParseError());
  return document;
}

TEST_CASE("explain's table shows a member's group, its need and the room on each queue",
          "[explain][gang]") {
  auto report = ExplainObjects(Cluster(), Member("j0"), Config());
  REQUIRE(report.ok());
  const std::string table = ExplainTable(*report);
  CHECK_THAT(table, Catch::Contains("pod group default/job (implicit, minMember 3): 3 member(s), "
                                    "0 placed, Pending\n"));
  CHECK_THAT(table, Catch::Contains("group needs cpu 3, pods 3 (the requests of its first 3 "
                                    "members)\n"));
  CHECK_THAT(table, Catch::Contains("group room in queue root.ml: cpu 1/4 (3 free, group needs "
                                    "3)\n"));
  CHECK_THAT(table,
             Catch::Contains("group room in queue root: no limit on what the group needs\n"));
}

TEST_CASE("explain's JSON gives a member's group, and null for a pod outside any",
          "[explain][gang]") {
  auto report = ExplainObjects(Cluster(), Member("j0"), Config());
  REQUIRE(report.ok());
  const rapidjson::Document document = Parse(ExplainJson(*report));
  REQUIRE(document["group"].IsObject());
  const auto& group = document["group"];
  CHECK(std::string(group["namespace"].GetString()) == "default");
  CHECK(std::string(group["name"].GetString()) == "job");
  CHECK(std::string(group["kind"].GetString()) == "implicit");
  CHECK(group["minMember"].GetInt() == 3);
  CHECK(group["members"].GetInt() == 3);
  CHECK(group["placed"].GetInt() == 0);
  CHECK(std::string(group["phase"].GetString()) == "Pending");
  CHECK(group["problem"].IsNull());
  CHECK(std::string(group["need"]["cpu"].GetString()) == "3");
  CHECK(std::string(group["need"]["pods"].GetString()) == "3");
  CHECK(std::string(group["needFrom"].GetString()) == "requests");
  REQUIRE(group["queuePath"].Size() == 2);
  const auto& leaf = group["queuePath"][0];
  CHECK(std::string(leaf["name"].GetString()) == "root.ml");
  CHECK(std::string(leaf["max"]["cpu"].GetString()) == "4");
  CHECK(std::string(leaf["used"]["cpu"].GetString()) == "1");
  CHECK(std::string(leaf["held"]["cpu"].GetString()) == "0");
  CHECK(std::string(leaf["free"]["cpu"].GetString()) == "3");

  auto plain = ExplainObjects(Cluster(), InQueue(PodBuilder("solo")), Config());
  REQUIRE(plain.ok());
  const rapidjson::Document none = Parse(ExplainJson(*plain));
  CHECK(none["group"].IsNull());
  CHECK(ExplainTable(*plain).find("pod group") == std::string::npos);
}

TEST_CASE("explain shows a PodGroup's minResources against its queue, and the refusal",
          "[explain][gang]") {
  std::vector<api::Object> cluster = Cluster();
  api::PodGroup train;
  train.meta.name = "train";
  train.meta.namespace_name = "default";
  train.meta.namespace_symbol = api::Intern("default");
  train.min_member = 2;
  train.min_resources.Set(api::kCpu, 6000);
  cluster.push_back(train);
  const api::Pod member =
      InQueue(std::move(PodBuilder("t0").Label(framework::kPodGroupLabel, "train")));
  cluster.push_back(member);
  cluster.push_back(InQueue(std::move(PodBuilder("t1").Label(framework::kPodGroupLabel, "train"))));
  auto report = ExplainObjects(cluster, member, Config());
  REQUIRE(report.ok());
  const std::string table = ExplainTable(*report);
  CHECK_THAT(table, Catch::Contains("pod group default/train (PodGroup, minMember 2): 2 member(s), "
                                    "0 placed, Pending\n"));
  CHECK_THAT(table, Catch::Contains("group needs cpu 6, pods 2 (spec.minResources)\n"));
  CHECK_THAT(table, Catch::Contains("group room in queue root.ml: cpu 1/4 (3 free, group needs "
                                    "6)\n"));
  CHECK_THAT(table, Catch::Contains("queue root.ml: insufficient quota for pod group "
                                    "default/train: cpu (used 1, max 4, group needs 6)"));
  CHECK(std::string(Parse(ExplainJson(*report))["group"]["needFrom"].GetString()) ==
        "minResources");
}

TEST_CASE("explain on a member naming a missing PodGroup says so in its group section",
          "[explain][gang]") {
  const api::Pod lost =
      InQueue(std::move(PodBuilder("lost").Label(framework::kPodGroupLabel, "ghost")));
  auto report = ExplainObjects(Cluster(), lost, Config());
  REQUIRE(report.ok());
  const std::string table = ExplainTable(*report);
  CHECK_THAT(table, Catch::Contains("pod group default/ghost (PodGroup, minMember -): 0 member(s), "
                                    "0 placed, Pending\n"));
  CHECK_THAT(table,
             Catch::Contains("group unusable: pod group \"default/ghost\" does not exist\n"));
  CHECK(table.find("group needs") == std::string::npos);
  const rapidjson::Document document = Parse(ExplainJson(*report));
  CHECK(document["group"]["minMember"].IsNull());
  CHECK(document["group"]["queuePath"].Size() == 0);
}

}  // namespace
}  // namespace kubesched::scheduler
