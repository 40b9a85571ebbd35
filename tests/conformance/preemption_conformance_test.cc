// Upstream DefaultPreemption's test vectors (vectors/more/default_preemption.json), run the way
// upstream's own tests run the plugin: a profile with only the case's `filterPlugins` and
// DefaultPreemption, PreFilter for the pod, then PostFilter with the case's
// `filteredNodeStatuses` as the statuses of the failed attempt (upstream's tests give them
// rather than compute them). The dry run itself runs the real filters on what-if nodes.

#include <algorithm>
#include <catch2/catch.hpp>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/config.h"
#include "rapidjson/document.h"
#include "scheduler/api/decode.h"
#include "scheduler/core/nominated_pods.h"
#include "scheduler/framework/snapshot.h"
#include "scheduler/runtime/framework.h"
#include "scheduler/util/parallel.h"
#include "tests/conformance/vectors.h"

namespace kubesched {
namespace {

using rapidjson::Value;
using testing::ToJson;

std::vector<api::Object> Decode(const Value& c, const char* key) {
  std::vector<api::Object> objects;
  if (!c.HasMember(key) || !c[key].IsArray()) return objects;
  int unnamed = 0;
  for (const auto& item : c[key].GetArray()) {
    std::string json = ToJson(item);
    // Upstream builds some objects without a name (names never affect the results).
    if (!item.HasMember("metadata") || !item["metadata"].HasMember("name")) {
      rapidjson::Document copy;
      copy.Parse(json.c_str());
      const std::string name = std::string("synth-") + key + "-" + std::to_string(unnamed++);
      copy["metadata"].AddMember("name", rapidjson::Value(name.c_str(), copy.GetAllocator()),
                                 copy.GetAllocator());
      json = ToJson(copy);
    }
    auto decoded = api::DecodeObjects(json, c["id"].GetString());
    REQUIRE(decoded.ok());
    INFO((decoded->problems.empty() ? "" : decoded->problems.front().ToString()));
    REQUIRE(decoded->problems.empty());
    for (auto& object : decoded->objects) objects.push_back(std::move(object));
  }
  return objects;
}

framework::PodInfoPtr Info(const api::Pod& pod) {
  return framework::MakePodInfo(std::make_shared<const api::Pod>(pod),
                                pod.spec.priority.value_or(0));
}

// The case's nodes, bound pods and PodDisruptionBudgets as a snapshot.
struct Cluster {
  framework::Snapshot snapshot;
  explicit Cluster(const Value& c) {
    framework::SnapshotBuilder builder(&snapshot);
    int64_t generation = 0;
    for (const api::Object& object : Decode(c, "nodes")) {
      const auto& node = std::get<api::Node>(object);
      builder.Upsert(node.meta.name)
          ->SetNode(std::make_shared<const api::Node>(node), ++generation);
    }
    for (const api::Object& object : Decode(c, "existingPods")) {
      const auto& pod = std::get<api::Pod>(object);
      // Pods naming a node that is not in the case are not in upstream's snapshot either.
      if (framework::NodeInfo* node = builder.Find(pod.spec.node_name); node != nullptr) {
        node->AddPod(Info(pod), ++generation);
      }
    }
    std::vector<std::shared_ptr<const api::PodDisruptionBudget>> pdbs;
    for (const api::Object& object : Decode(c, "podDisruptionBudgets")) {
      pdbs.push_back(std::make_shared<const api::PodDisruptionBudget>(
          std::get<api::PodDisruptionBudget>(object)));
    }
    builder.SetPdbs(std::move(pdbs));
    builder.RebuildLists();
    builder.RecomputeClusterTotals();
  }
};

std::unique_ptr<runtime::Framework> PreemptionFramework(const Value& filter_plugins) {
  config::Profile profile;
  profile.scheduler_name = "conformance";
  profile.plugins.queue_sort.enabled = {{"PrioritySort", 0}};
  profile.plugins.bind.enabled = {{"DefaultBinder", 0}};
  profile.plugins.post_filter.enabled = {{"DefaultPreemption", 0}};
  for (const auto& plugin : filter_plugins.GetArray()) {
    profile.plugins.pre_filter.enabled.push_back({plugin.GetString(), 0});
    profile.plugins.filter.enabled.push_back({plugin.GetString(), 0});
  }
  auto fw = runtime::Framework::Create(profile, {});
  INFO((fw.ok() ? "" : std::string(fw.status().message())));
  REQUIRE(fw.ok());
  return *std::move(fw);
}

// The statuses of the failed attempt: the case's, for the nodes `only` names (all when empty).
std::vector<framework::NodeStatus> Filtered(const Value& c, const framework::Snapshot& snapshot,
                                            const std::vector<std::string>& only) {
  std::vector<framework::NodeStatus> filtered;
  if (!c.HasMember("filteredNodeStatuses")) return filtered;
  for (const auto& entry : c["filteredNodeStatuses"].GetObject()) {
    const std::string name = entry.name.GetString();
    if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) continue;
    const framework::NodeInfo* node = snapshot.Get(name);
    REQUIRE(node != nullptr);
    const bool unschedulable = std::string(entry.value.GetString()) == "Unschedulable";
    filtered.push_back({node, unschedulable ? framework::Status::Unschedulable("given")
                                            : framework::Status::Unresolvable("given")});
  }
  return filtered;
}

// What PostFilter gave; the message is copied out of the cycle state that owns its text.
struct Preemption {
  bool succeeded = false;
  std::string node;
  std::vector<std::string> victims;
  std::string message;
};

Preemption Preempt(const Value& c, const std::vector<std::string>& only = {}) {
  Cluster cluster(c);
  auto fw = PreemptionFramework(c["filterPlugins"]);
  auto pods = api::DecodeObjects(ToJson(c["pod"]), c["id"].GetString());
  REQUIRE(pods.ok());
  const framework::PodInfoPtr pod = Info(std::get<api::Pod>(pods->objects.at(0)));
  framework::CycleState state;
  const runtime::PreFilterSummary pre = fw->RunPreFilter(state, *pod, cluster.snapshot);
  REQUIRE(pre.status.IsSuccess());
  scheduler::NominatedPods nominated;
  nominated.Reset({}, cluster.snapshot);
  util::WorkerPool pool(1);
  const scheduler::CycleFilterHost host(*fw, pre.skip_filter, nominated, &pool);
  const framework::PostFilterOutcome outcome =
      fw->RunPostFilter(state, *pod, cluster.snapshot, Filtered(c, cluster.snapshot, only), host);
  return {outcome.status.IsSuccess(), outcome.nominated_node, outcome.victims,
          outcome.status.Message()};
}

std::vector<std::string> Strings(const Value& array) {
  std::vector<std::string> out;
  for (const auto& item : array.GetArray()) out.emplace_back(item.GetString());
  return out;
}

std::vector<std::string> Sorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return names;
}

void CheckPreemption(const Value& expected, const Preemption& outcome) {
  if (expected.IsNull()) {
    CHECK_FALSE(outcome.succeeded);
    return;
  }
  REQUIRE(outcome.succeeded);
  if (expected.HasMember("node")) CHECK(outcome.node == expected["node"].GetString());
  if (expected.HasMember("nodeAnyOf")) {
    CHECK_THAT(Strings(expected["nodeAnyOf"]), Catch::VectorContains(outcome.node));
  }
  if (expected.HasMember("victims")) {
    CHECK(Sorted(outcome.victims) == Strings(expected["victims"]));
  }
}

// Each dry-run candidate, given alone as the failed attempt's only Unschedulable node, is chosen
// with exactly its victims; any other node, alone, gives no preemption.
void CheckCandidates(const Value& c) {
  for (const auto& entry : c["filteredNodeStatuses"].GetObject()) {
    const std::string node = entry.name.GetString();
    INFO("only " << node);
    const Preemption outcome = Preempt(c, {node});
    const Value* expected = nullptr;
    for (const auto& candidate : c["expect"]["dryRunCandidates"].GetArray()) {
      if (node == candidate["node"].GetString()) expected = &candidate;
    }
    if (expected == nullptr) {
      CHECK_FALSE(outcome.succeeded);
      continue;
    }
    REQUIRE(outcome.succeeded);
    CHECK(outcome.node == node);
    CHECK(Sorted(outcome.victims) == Strings((*expected)["victims"]));
  }
}

void RunCase(const Value& c) {
  const Value& expect = c["expect"];
  if (expect.HasMember("dryRunCandidates")) return CheckCandidates(c);
  const Preemption outcome = Preempt(c);
  CheckPreemption(expect["preemption"], outcome);
  if (expect.HasMember("postFilterStatus") && expect["postFilterStatus"].HasMember("reason")) {
    CHECK(outcome.message == expect["postFilterStatus"]["reason"].GetString());
  }
}

TEST_CASE("upstream DefaultPreemption vectors pass through the plugin", "[conformance]") {
  const auto doc = testing::LoadConformanceVectors("more/default_preemption.json");
  int cases = 0;
  for (const auto& c : (*doc)["cases"].GetArray()) {
    DYNAMIC_SECTION(c["id"].GetString() << " \"" << c["name"].GetString() << "\"") { RunCase(c); }
    ++cases;
  }
  CHECK(cases > 10);
}

}  // namespace
}  // namespace kubesched
