// Simulate's report of gangs, end to end: a dump with a PodGroup whose pods fit, an implicit group
// with room for only some of its members, a pod naming a PodGroup the dump lacks and a PodGroup
// with a bad spec goes through RunSimulation, and each group's row says what became of it, in the
// table and in the JSON.

#include <catch2/catch.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.h"
#include "rapidjson/document.h"
#include "scheduler/simulate/report_output.h"
#include "scheduler/simulate/simulation.h"
#include "tests/testing/temp_file.h"

namespace kubesched::scheduler {
namespace {

using testing::TempFile;

// train: 3 pods of 1 cpu pinned to a 4-cpu node. job: 4 pods of 2 cpu, minMember 4, pinned to
// three 2-cpu nodes. orphan names a PodGroup that is not there; broken-0 one with minMember 0.
constexpr char kCluster[] = R"(apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: train-node, labels: {pool: train}},
   status: {allocatable: {cpu: '4', memory: 16Gi, pods: '110'}}}
- {apiVersion: v1, kind: Node, metadata: {name: job-0, labels: {pool: job}},
   status: {allocatable: {cpu: '2', memory: 16Gi, pods: '110'}}}
- {apiVersion: v1, kind: Node, metadata: {name: job-1, labels: {pool: job}},
   status: {allocatable: {cpu: '2', memory: 16Gi, pods: '110'}}}
- {apiVersion: v1, kind: Node, metadata: {name: job-2, labels: {pool: job}},
   status: {allocatable: {cpu: '2', memory: 16Gi, pods: '110'}}}
- apiVersion: scheduling.x-k8s.io/v1alpha1
  kind: PodGroup
  metadata: {name: train, namespace: default}
  spec: {minMember: 3}
- apiVersion: scheduling.x-k8s.io/v1alpha1
  kind: PodGroup
  metadata: {name: broken, namespace: default}
  spec: {minMember: 0}
)";

std::string Pod(const std::string& name, const std::string& meta, const std::string& pool,
                const std::string& cpu) {
  return "- apiVersion: v1\n  kind: Pod\n  metadata: {name: " + name + ", namespace: default" +
         meta + "}\n  spec:\n    schedulerName: kubesched\n    nodeSelector: {pool: " + pool +
         "}\n    containers: [{name: c, resources: {requests: {cpu: '" + cpu + "'}}}]\n";
}

std::string Dump() {
  std::string dump = kCluster;
  for (int i = 0; i < 3; ++i) {
    dump += Pod("train-" + std::to_string(i), ", labels: {scheduling.x-k8s.io/pod-group: train}",
                "train", "1");
  }
  for (int i = 0; i < 4; ++i) {
    dump += Pod("job-" + std::to_string(i),
                ", annotations: {kubesched.io/pod-group: job, "
                "kubesched.io/pod-group-min-member: '4'}",
                "job", "2");
  }
  dump += Pod("orphan", ", labels: {scheduling.x-k8s.io/pod-group: ghost}", "train", "1");
  dump += Pod("broken-0", ", labels: {scheduling.x-k8s.io/pod-group: broken}", "train", "1");
  return dump;
}

SimulationReport Simulate() {
  TempFile cluster(Dump());
  SimulationInput input{cluster.path(), std::nullopt, 1, 1};
  auto report = RunSimulation(input, config::DefaultConfiguration());
  INFO(report.status().message());
  REQUIRE(report.ok());
  REQUIRE(report->problems.empty());
  return *std::move(report);
}

// The table's lines from the one starting with `first` to the end.
std::vector<std::string> LinesFrom(const std::string& table, const std::string& first) {
  std::vector<std::string> lines;
  std::istringstream in(table);
  bool found = false;
  for (std::string line; std::getline(in, line);) {
    found = found || line.rfind(first, 0) == 0;
    if (found) lines.push_back(line);
  }
  return lines;
}

std::vector<std::string> Words(const std::string& line, size_t count) {
  std::vector<std::string> words;
  std::istringstream in(line);
  for (std::string word; words.size() < count && in >> word;) words.push_back(word);
  return words;
}

TEST_CASE("simulate reports every group: placed, pending, missing and invalid",
          "[gang][simulation]") {
  const SimulationReport report = Simulate();
  CHECK(report.scheduled == 3);  // train; no job pod, though three would fit
  REQUIRE(report.groups.size() == 4);

  const std::string table = SimulationTable(report);
  const std::vector<std::string> lines = LinesFrom(table, "GROUP");
  REQUIRE(lines.size() == 5);
  CHECK(Words(lines[0], 8) ==
        std::vector<std::string>{"GROUP", "KIND", "MIN", "MEMBERS", "PLACED", "STATE", "REASON"});
  CHECK(Words(lines[1], 6) ==
        std::vector<std::string>{"default/broken", "PodGroup", "0", "1", "0", "Invalid"});
  CHECK_THAT(lines[1],
             Catch::Contains("pod group default/broken: spec.minMember must be at least 1 (is 0)"));
  CHECK(Words(lines[2], 6) ==
        std::vector<std::string>{"default/ghost", "PodGroup", "-", "1", "0", "Missing"});
  CHECK_THAT(lines[2], Catch::Contains("pod group \"default/ghost\" does not exist"));
  CHECK(Words(lines[3], 6) ==
        std::vector<std::string>{"default/job", "implicit", "4", "4", "0", "Pending"});
  CHECK_THAT(lines[3], Catch::Contains("pod group default/job"));
  CHECK(Words(lines[4], 7) ==
        std::vector<std::string>{"default/train", "PodGroup", "3", "3", "3", "Scheduled"});
  // The groups come last, after a blank line.
  CHECK_THAT(table, Catch::Contains("\n\nGROUP "));
  CHECK_THAT(table, Catch::EndsWith(lines[4] + "\n"));

  rapidjson::Document json;
  json.Parse(SimulationJson(report).c_str());
  REQUIRE_FALSE(json.HasParseError());
  REQUIRE(json["groups"].IsArray());
  const auto& groups = json["groups"].GetArray();
  REQUIRE(groups.Size() == 4);
  CHECK(std::string(groups[0]["name"].GetString()) == "broken");
  CHECK(groups[0]["minMember"].GetInt() == 0);
  CHECK(std::string(groups[0]["state"].GetString()) == "Invalid");
  CHECK(std::string(groups[1]["namespace"].GetString()) == "default");
  CHECK(std::string(groups[1]["name"].GetString()) == "ghost");
  CHECK(groups[1]["minMember"].IsNull());
  CHECK(std::string(groups[1]["state"].GetString()) == "Missing");
  const auto& job = groups[2];
  CHECK(std::string(job["kind"].GetString()) == "implicit");
  CHECK(job["minMember"].GetInt() == 4);
  CHECK(job["members"].GetInt() == 4);
  CHECK(job["placed"].GetInt() == 0);
  CHECK(std::string(job["state"].GetString()) == "Pending");
  CHECK_THAT(job["reason"].GetString(), Catch::Contains("pod group default/job"));
  const auto& train = groups[3];
  CHECK(std::string(train["kind"].GetString()) == "PodGroup");
  CHECK(train["minMember"].GetInt() == 3);
  CHECK(train["members"].GetInt() == 3);
  CHECK(train["placed"].GetInt() == 3);
  CHECK(std::string(train["state"].GetString()) == "Scheduled");
  CHECK(std::string(train["reason"].GetString()).empty());
}

TEST_CASE("the reason of a pending group is its first pending member's message",
          "[gang][simulation]") {
  const SimulationReport report = Simulate();
  for (const auto& pod : report.pod_results) {
    if (pod.name == "job-0") {
      REQUIRE(pod.message.has_value());
      REQUIRE(report.groups.size() == 4);
      CHECK(report.groups[2].reason == *pod.message);
    }
  }
}

TEST_CASE("a simulation without groups reports none", "[simulation]") {
  TempFile cluster(
      std::string(kCluster).substr(0, std::string(kCluster).find("- apiVersion: sch")) +
      Pod("plain", "", "job", "1"));
  SimulationInput input{cluster.path(), std::nullopt, 1, 1};
  auto report = RunSimulation(input, config::DefaultConfiguration());
  REQUIRE(report.ok());
  CHECK(report->scheduled == 1);
  CHECK(report->groups.empty());
  CHECK_THAT(SimulationTable(*report), !Catch::Contains("GROUP"));
  CHECK_THAT(SimulationJson(*report), !Catch::Contains("\"groups\""));
}

}  // namespace
}  // namespace kubesched::scheduler
