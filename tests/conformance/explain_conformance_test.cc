// Upstream kube-scheduler's own plugin test vectors (tests/conformance/vectors/), run through
// explain: each case's plugin is the only plugin at the extension point under test, its args come
// from the case, and the plugin's filter verdict or final score on every node must match.
// PreEnqueue cases run through simulate instead, which reports what keeps a pod out of the queue.

#include <algorithm>
#include <catch2/catch.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "config/config.h"
#include "plugins/registry/registry.h"
#include "rapidjson/document.h"
#include "scheduler/api/decode.h"
#include "scheduler/simulate/simulation.h"
#include "tests/conformance/vectors.h"
#include "tests/testing/temp_file.h"

namespace kubesched {
namespace {

using rapidjson::Value;
using testing::ToJson;

// Every vector file explain runs; each must be there.
constexpr const char* kVectorFiles[] = {
    "balanced_allocation.json",
    "fit.json",
    "interpod_affinity_filter.json",
    "interpod_affinity_score.json",
    "least_allocated.json",
    "most_allocated.json",
    "node_affinity.json",
    "requested_to_capacity_ratio.json",
    "taint_toleration.json",
    "more/image_locality.json",
    "more/node_name.json",
    "more/node_ports.json",
    "more/node_unschedulable.json",
    "more/pod_topology_spread_filter.json",
    "more/pod_topology_spread_score.json",
    "more/scheduling_gates.json",
    "more/volume_binding.json",
    "more/volume_zone.json",
    "more/volume_restrictions.json",
    "more/node_volume_limits_csi.json",
};

std::vector<api::Object> DecodeAll(const Value& array, const std::string& source) {
  std::vector<api::Object> objects;
  if (!array.IsArray()) return objects;
  for (const auto& item : array.GetArray()) {
    auto decoded = api::DecodeObjects(ToJson(item), source);
    REQUIRE(decoded.ok());
    INFO(source);
    REQUIRE(decoded->problems.empty());
    for (auto& object : decoded->objects) objects.push_back(std::move(object));
  }
  return objects;
}

// Stands for the Filter phase of a score case with `candidateNodes`: only those nodes passed it,
// while every node is in the cluster (upstream scores the filtered nodes over all nodes' counts).
class CandidateNodes final : public framework::FilterPlugin {
 public:
  static constexpr std::string_view kName = "ConformanceCandidateNodes";
  explicit CandidateNodes(absl::flat_hash_set<std::string> names) : names_(std::move(names)) {}
  std::string_view Name() const override { return kName; }
  framework::Status Filter(const framework::CycleState&, const framework::PodInfo&,
                           const framework::NodeInfo& node) const override {
    return names_.contains(node.name()) ? framework::Status::Success()
                                        : framework::Status::Unresolvable("not a candidate");
  }

 private:
  absl::flat_hash_set<std::string> names_;
};

// The binary's plugins plus CandidateNodes over `names`.
plugins::RegistryMap RegistryWithCandidates(const Value& names) {
  absl::flat_hash_set<std::string> set;
  for (const auto& name : names.GetArray()) set.insert(name.GetString());
  plugins::RegistryMap registry = plugins::Registry();
  registry[CandidateNodes::kName] =
      [set](const config::PluginArgs&,
            const plugins::PluginHandle&) -> absl::StatusOr<std::unique_ptr<framework::Plugin>> {
    return std::make_unique<CandidateNodes>(set);
  };
  return registry;
}

enum class Phase { kFilter, kScore };

// A profile with `plugin` enabled only at the extension points of `phase`.
config::Configuration SinglePluginConfig(const std::string& plugin, const config::PluginArgs& args,
                                         Phase phase) {
  config::Profile profile;
  profile.scheduler_name = "conformance";
  profile.plugins.queue_sort.enabled = {{"PrioritySort", 0}};
  profile.plugins.bind.enabled = {{"DefaultBinder", 0}};
  profile.plugins.multi_point.enabled = {{plugin, 1}};
  auto& off = phase == Phase::kFilter ? profile.plugins.score : profile.plugins.filter;
  auto& off_pre = phase == Phase::kFilter ? profile.plugins.pre_score : profile.plugins.pre_filter;
  off.disabled = {plugin};
  off_pre.disabled = {plugin};
  profile.plugins.reserve.disabled = {"*"};
  profile.plugin_config = {{plugin, args}};
  config::Configuration configuration;
  configuration.profiles = {profile};
  return configuration;
}

const scheduler::ExplainedNode* FindNode(const scheduler::ExplainReport& report,
                                         const std::string& name) {
  for (const auto& node : report.nodes) {
    if (node.name == name) return &node;
  }
  return nullptr;
}

const scheduler::FilterResult* FindFilter(const scheduler::ExplainedNode& node,
                                          const std::string& plugin) {
  for (const auto& filter : node.filters) {
    if (filter.plugin == plugin) return &filter;
  }
  return nullptr;
}

std::vector<std::string> ExpectedReasons(const Value& expected) {
  std::vector<std::string> reasons;
  if (expected.IsString()) {
    reasons.emplace_back(expected.GetString());
  } else {
    for (const auto& r : expected.GetArray()) reasons.emplace_back(r.GetString());
  }
  return reasons;
}

void CheckFilters(const Value& expect, const scheduler::ExplainReport& report,
                  const std::string& plugin) {
  const bool pre_filter_skip = expect.HasMember("preFilterStatus") &&
                               std::string(expect["preFilterStatus"]["code"].GetString()) == "Skip";
  for (const auto& entry : expect["filter"].GetObject()) {
    const std::string node_name = entry.name.GetString();
    INFO("node " << node_name);
    const auto* node = FindNode(report, node_name);
    REQUIRE(node != nullptr);
    const auto* filter = FindFilter(*node, plugin);
    REQUIRE(filter != nullptr);
    if (entry.value.IsString() && std::string(entry.value.GetString()) == "pass") {
      CHECK((filter->code == framework::Code::kSuccess || filter->code == framework::Code::kSkip));
      if (pre_filter_skip) CHECK(filter->code == framework::Code::kSkip);
      continue;
    }
    CHECK(filter->reasons == ExpectedReasons(entry.value));
    if (expect.HasMember("filterCode") && expect["filterCode"].HasMember(node_name.c_str())) {
      CHECK(framework::CodeName(filter->code) ==
            expect["filterCode"][node_name.c_str()].GetString());
    }
  }
  if (expect.HasMember("preFilterResult")) {
    std::vector<std::string> allowed;
    for (const auto& n : expect["preFilterResult"]["nodeNames"].GetArray()) {
      allowed.emplace_back(n.GetString());
    }
    for (const auto& node : report.nodes) {
      const bool in_set = std::find(allowed.begin(), allowed.end(), node.name) != allowed.end();
      if (!in_set) CHECK_FALSE(node.feasible);
    }
  }
}

// expect.preFilterStatus as explain shows it: a rejection stands on every node as the plugin's
// only verdict and makes the message; a Skip shows as the plugin's Skip on every node. Without
// nodes only the message tells, and then only the reason.
void CheckPreFilterStatus(const Value& expect, const scheduler::ExplainReport& report,
                          const std::string& plugin) {
  if (!expect.HasMember("preFilterStatus")) return;
  const std::string code = expect["preFilterStatus"]["code"].GetString();
  const std::string all = "0/" + std::to_string(report.nodes.size()) + " nodes are available: ";
  if (code == "Skip") {
    for (const auto& node : report.nodes) {
      const auto* filter = FindFilter(node, plugin);
      REQUIRE(filter != nullptr);
      CHECK(filter->code == framework::Code::kSkip);
    }
    if (report.nodes.empty()) CHECK(report.message.value_or("") == all + ".");
    return;
  }
  const std::string reason = expect["preFilterStatus"]["reason"].GetString();
  CHECK(report.message.value_or("") == all + reason + ".");
  for (const auto& node : report.nodes) {
    INFO("node " << node.name);
    REQUIRE(node.filters.size() == 1);
    CHECK(node.filters[0].plugin == plugin);
    CHECK(framework::CodeName(node.filters[0].code) == code);
    CHECK(node.filters[0].reasons == std::vector<std::string>{reason});
  }
}

void CheckScores(const Value& expect, const scheduler::ExplainReport& report,
                 const std::string& plugin) {
  const bool pre_score_skip = expect.HasMember("preScoreStatus") &&
                              std::string(expect["preScoreStatus"]["code"].GetString()) == "Skip";
  if (pre_score_skip) {
    for (const auto& node : report.nodes) {
      for (const auto& score : node.scores) CHECK(score.plugin != plugin);
    }
  }
  if (!expect.HasMember("scores")) return;
  for (const auto& entry : expect["scores"].GetObject()) {
    const std::string node_name = entry.name.GetString();
    INFO("node " << node_name);
    const auto* node = FindNode(report, node_name);
    REQUIRE(node != nullptr);
    REQUIRE(node->feasible);
    // Explain lists only plugins that scored; one whose PreScore said Skip contributes 0.
    int64_t actual = 0;
    for (const auto& score : node->scores) {
      if (score.plugin == plugin) actual = score.normalized;
    }
    CHECK(actual == entry.value.GetInt64());
  }
}

// A JSON List of the case's `nodes` and `existingPods`: simulate's cluster file.
std::string ClusterListJson(const Value& c) {
  std::string items;
  for (const char* key : {"nodes", "existingPods"}) {
    for (const auto& item : c[key].GetArray()) {
      items += (items.empty() ? "" : ",") + ToJson(item);
    }
  }
  return R"({"apiVersion":"v1","kind":"List","items":[)" + items + "]}";
}

// expect.preEnqueue: `plugin` the only PreEnqueue plugin of the pod's profile. Success: simulate
// tried the pod (no node need fit); a rejection: the pod is pending, never tried, for exactly the
// expected reason.
void CheckPreEnqueue(const Value& expected, const Value& c, const api::Pod& pod,
                     const std::string& plugin) {
  config::Profile profile;
  profile.scheduler_name = pod.spec.scheduler_name;
  profile.plugins.queue_sort.enabled = {{"PrioritySort", 0}};
  profile.plugins.bind.enabled = {{"DefaultBinder", 0}};
  profile.plugins.pre_enqueue.enabled = {{plugin, 0}};
  config::Configuration configuration;
  configuration.profiles = {profile};
  const testing::TempFile cluster(ClusterListJson(c), "cluster.json");
  const testing::TempFile workload(ToJson(c["pod"]), "pod.json");
  auto report = scheduler::RunSimulation({cluster.path(), workload.path()}, configuration);
  REQUIRE(report.ok());
  REQUIRE(report->problems.empty());
  REQUIRE(report->pod_results.size() == 1);
  const scheduler::PodResult& result = report->pod_results[0];
  if (std::string(expected["code"].GetString()) == "Success") {
    CHECK(result.attempts > 0);
    return;
  }
  CHECK(std::string(expected["code"].GetString()) == "UnschedulableAndUnresolvable");
  CHECK_FALSE(result.node.has_value());
  CHECK(result.attempts == 0);
  CHECK(result.message == std::string(expected["reason"].GetString()));
}

void RunCase(const std::string& plugin, const Value& c) {
  const std::string id = c["id"].GetString();
  std::vector<api::Object> objects = DecodeAll(c["nodes"], id);
  for (auto& object : DecodeAll(c["existingPods"], id)) objects.push_back(std::move(object));
  for (const char* key : {"namespaces", "persistentVolumeClaims", "persistentVolumes",
                          "storageClasses", "csiNodes", "volumeAttachments"}) {
    if (!c.HasMember(key)) continue;
    for (auto& object : DecodeAll(c[key], id)) objects.push_back(std::move(object));
  }
  auto pod_objects = api::DecodeObjects(ToJson(c["pod"]), id);
  REQUIRE(pod_objects.ok());
  REQUIRE(pod_objects->objects.size() == 1);
  const auto& pod = std::get<api::Pod>(pod_objects->objects[0]);

  config::PluginArgs args = config::DefaultPluginArgs(plugin);
  if (c.HasMember("args") && c["args"].IsObject() && c["args"].MemberCount() > 0) {
    auto parsed = config::ParsePluginArgs(plugin, ToJson(c["args"]));
    INFO("args: " << ToJson(c["args"]));
    REQUIRE(parsed.ok());
    args = *parsed;
  }
  const Value& expect = c["expect"];
  if (expect.HasMember("preEnqueue")) CheckPreEnqueue(expect["preEnqueue"], c, pod, plugin);
  if (expect.HasMember("filter") || expect.HasMember("preFilterStatus")) {
    auto report =
        scheduler::ExplainObjects(objects, pod, SinglePluginConfig(plugin, args, Phase::kFilter));
    REQUIRE(report.ok());
    if (expect.HasMember("filter")) CheckFilters(expect, *report, plugin);
    CheckPreFilterStatus(expect, *report, plugin);
  }
  if (expect.HasMember("scores") || expect.HasMember("preScoreStatus")) {
    config::Configuration score_config = SinglePluginConfig(plugin, args, Phase::kScore);
    std::optional<plugins::RegistryMap> registry;
    if (c.HasMember("candidateNodes")) {
      registry = RegistryWithCandidates(c["candidateNodes"]);
      score_config.profiles[0].plugins.filter.enabled.push_back(
          {std::string(CandidateNodes::kName), 0});
    }
    auto report = scheduler::ExplainObjects(objects, pod, score_config, /*seed=*/1,
                                            registry.has_value() ? &*registry : nullptr);
    REQUIRE(report.ok());
    CheckScores(expect, *report, plugin);
  }
}

TEST_CASE("upstream conformance vectors pass through explain", "[conformance]") {
  // All loaded before the first section, so a bad file fails the test once, not in every pass.
  std::vector<std::pair<std::string, std::unique_ptr<rapidjson::Document>>> docs;
  for (const char* file : kVectorFiles)
    docs.emplace_back(file, testing::LoadConformanceVectors(file));
  int cases = 0;
  for (const auto& [file, doc] : docs) {
    const std::string plugin = (*doc)["plugin"].GetString();
    for (const auto& c : (*doc)["cases"].GetArray()) {
      DYNAMIC_SECTION(file << " " << c["id"].GetString() << " \"" << c["name"].GetString()
                           << "\"") {
        RunCase(plugin, c);
      }
      ++cases;
    }
  }
  CHECK(cases > 100);
}

}  // namespace
}  // namespace kubesched
