// Runs the upstream-derived conformance vectors
// (tests/conformance/vectors/interpod_affinity_*.json) through the InterPodAffinity plugin
// directly: PreFilter + Filter on every node, and PreScore + Score + NormalizeScore over all nodes,
// compared with each case's `expect`.

#include <rapidjson/document.h>

#include <catch2/catch.hpp>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "config/config.h"
#include "plugins/inter_pod_affinity/inter_pod_affinity.h"
#include "scheduler/api/decode.h"
#include "scheduler/framework/snapshot.h"
#include "tests/conformance/vectors.h"

namespace kubesched {
namespace {

using framework::Code;
using framework::CycleState;
using framework::PodInfo;
using framework::Snapshot;
using testing::ToJson;

// Decodes a JSON array of v1 objects (absent = none) as one `kind: List`.
std::vector<api::Object> DecodeArray(const rapidjson::Value& test_case, const char* field) {
  std::string text = R"({"apiVersion":"v1","kind":"List","items":[)";
  if (test_case.HasMember(field)) {
    bool first = true;
    for (const auto& item : test_case[field].GetArray()) {
      if (!first) text += ",";
      first = false;
      text += ToJson(item);
    }
  }
  text += "]}";
  auto decoded = api::DecodeObjects(text, field);
  REQUIRE(decoded.ok());
  for (const auto& problem : decoded->problems) FAIL(problem.ToString());
  return std::move(decoded->objects);
}

// The case's cluster: nodes, namespaces, and existing pods bound to known nodes (pods naming an
// unknown node are ignored, as in upstream's snapshot).
struct Cluster {
  Snapshot snapshot;
  std::vector<std::string> node_names;  // in input order
};

std::unique_ptr<Cluster> BuildCluster(const rapidjson::Value& test_case) {
  auto cluster = std::make_unique<Cluster>();
  framework::SnapshotBuilder builder(&cluster->snapshot);
  std::set<std::string> known;
  for (auto& object : DecodeArray(test_case, "nodes")) {
    auto node = std::make_shared<const api::Node>(std::get<api::Node>(std::move(object)));
    builder.Upsert(node->meta.name)->SetNode(node, 1);
    cluster->node_names.push_back(node->meta.name);
    known.insert(node->meta.name);
  }
  for (auto& object : DecodeArray(test_case, "namespaces")) {
    const auto& ns = std::get<api::Namespace>(object);
    builder.SetNamespaceLabels(api::Intern(ns.meta.name), ns.meta.labels);
  }
  for (auto& object : DecodeArray(test_case, "existingPods")) {
    auto pod = std::make_shared<const api::Pod>(std::get<api::Pod>(std::move(object)));
    if (!known.contains(pod->spec.node_name)) continue;
    builder.Upsert(pod->spec.node_name)->AddPod(framework::MakePodInfo(pod, 0), 2);
  }
  builder.RebuildLists();
  return cluster;
}

framework::PodInfoPtr IncomingPod(const rapidjson::Value& test_case) {
  const std::string text = ToJson(test_case["pod"]);
  auto pod = api::DecodePodJson(text);
  REQUIRE(pod.ok());
  return framework::MakePodInfo(std::make_shared<const api::Pod>(*std::move(pod)), 0);
}

std::unique_ptr<plugins::InterPodAffinity> MakePlugin(const rapidjson::Value& test_case) {
  const std::string args_text = test_case.HasMember("args") ? ToJson(test_case["args"]) : "";
  auto args = config::ParsePluginArgs("InterPodAffinity", args_text);
  REQUIRE(args.ok());
  auto plugin = plugins::NewInterPodAffinity(*args, plugins::PluginHandle{});
  REQUIRE(plugin.ok());
  // Plugin is a virtual base, so only dynamic_cast reaches the concrete type.
  auto* concrete = dynamic_cast<plugins::InterPodAffinity*>(plugin->get());
  REQUIRE(concrete != nullptr);
  plugin->release();
  return std::unique_ptr<plugins::InterPodAffinity>(concrete);
}

bool ExpectsSkip(const rapidjson::Value& expect, const char* field) {
  if (!expect.HasMember(field)) return false;
  const auto& status = expect[field];
  return status.HasMember("code") && std::string(status["code"].GetString()) == "Skip";
}

// "pass", or the reasons joined with ", ".
std::string ExpectedFilter(const rapidjson::Value& expect, const std::string& node) {
  const auto& value = expect["filter"][node.c_str()];
  if (value.IsString()) return value.GetString();
  std::string joined;
  for (const auto& reason : value.GetArray()) {
    if (!joined.empty()) joined += ", ";
    joined += reason.GetString();
  }
  return joined;
}

void CheckFilter(const rapidjson::Value& test_case) {
  const auto cluster = BuildCluster(test_case);
  const auto pod = IncomingPod(test_case);
  const auto plugin = MakePlugin(test_case);
  const auto& expect = test_case["expect"];

  CycleState state;
  const auto outcome = plugin->PreFilter(state, *pod, cluster->snapshot);
  const bool skip = ExpectsSkip(expect, "preFilterStatus");
  REQUIRE(outcome.status.code() == (skip ? Code::kSkip : Code::kSuccess));
  for (const std::string& name : cluster->node_names) {
    INFO("node " << name);
    const auto status = skip ? framework::Status::Success()
                             : plugin->Filter(state, *pod, *cluster->snapshot.Get(name));
    const std::string expected = ExpectedFilter(expect, name);
    CHECK((status.IsSuccess() ? std::string("pass") : status.Message()) == expected);
    if (expected != "pass") {
      CHECK(std::string(framework::CodeName(status.code())) ==
            expect["filterCode"][name.c_str()].GetString());
    }
  }
}

void CheckScore(const rapidjson::Value& test_case) {
  const auto cluster = BuildCluster(test_case);
  const auto pod = IncomingPod(test_case);
  const auto plugin = MakePlugin(test_case);
  const auto& expect = test_case["expect"];

  CycleState state;
  const auto& nodes = cluster->snapshot.nodes();
  const auto status = plugin->PreScore(state, *pod, cluster->snapshot, nodes);
  const bool skip = ExpectsSkip(expect, "preScoreStatus");
  REQUIRE(status.code() == (skip ? Code::kSkip : Code::kSuccess));
  if (skip) return;
  std::vector<int64_t> scores;
  for (const auto* node : nodes) scores.push_back(plugin->Score(state, *pod, *node));
  plugin->normalizer()->NormalizeScore(state, *pod, absl::MakeSpan(scores));
  for (size_t i = 0; i < nodes.size(); ++i) {
    INFO("node " << nodes[i]->name());
    CHECK(scores[i] == expect["scores"][nodes[i]->name().c_str()].GetInt64());
  }
}

template <typename Check>
void RunAll(const std::string& file, Check check) {
  const auto document = testing::LoadConformanceVectors(file);
  for (const auto& test_case : (*document)["cases"].GetArray()) {
    const std::string id = test_case["id"].GetString();
    DYNAMIC_SECTION(id) {
      INFO(test_case["name"].GetString());
      check(test_case);
    }
  }
}

TEST_CASE("InterPodAffinity filter matches upstream's conformance cases",
          "[plugins][interpodaffinity][conformance]") {
  RunAll("interpod_affinity_filter.json", CheckFilter);
}

TEST_CASE("InterPodAffinity scores match upstream's conformance cases",
          "[plugins][interpodaffinity][conformance]") {
  RunAll("interpod_affinity_score.json", CheckScore);
}

}  // namespace
}  // namespace kubesched
