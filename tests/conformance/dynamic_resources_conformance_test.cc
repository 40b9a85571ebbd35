// Upstream's DynamicResources plugin and structured allocator test cases as vectors
// (vectors/more/dynamic_resources.json, vectors/more/dra_allocator.json): explain gives the
// plugin's verdicts (PreFilter, Filter on every node), and the real scheduler on the embedded
// cluster, which plays the ResourceClaim controller as simulate does, gives what is written: the
// node the pod is bound to, and its claims' allocation and reservation. A case's kubeschedExpect,
// when present, is what kubesched gives instead of upstream's expect (a deliberate difference,
// explained in the case's note).

#include <algorithm>
#include <catch2/catch.hpp>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "config/config.h"
#include "rapidjson/document.h"
#include "scheduler/api/decode.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/simulate/simulation.h"
#include "tests/conformance/vectors.h"

namespace kubesched {
namespace {

using rapidjson::Value;
using testing::ToJson;

constexpr char kPlugin[] = "DynamicResources";

// What kubesched must give: the case's kubeschedExpect where it has one (a deliberate
// difference, explained in its note), else upstream's expect.
const Value& Expected(const Value& c) {
  return c.HasMember("kubeschedExpect") ? c["kubeschedExpect"] : c["expect"];
}

// The case's cluster: nodes and DRA objects, the claims last (they name classes and slices only
// by value, so the order does not matter for decoding).
std::vector<api::Object> ClusterObjects(const Value& c) {
  std::vector<api::Object> objects;
  for (const char* key : {"nodes", "deviceClasses", "resourceSlices", "resourceClaims"}) {
    if (!c.HasMember(key)) continue;
    for (const auto& item : c[key].GetArray()) {
      auto decoded = api::DecodeObjects(ToJson(item), key);
      REQUIRE(decoded.ok());
      INFO(key << ": " << (decoded->problems.empty() ? "" : decoded->problems[0].ToString()));
      REQUIRE(decoded->problems.empty());
      for (auto& object : decoded->objects) objects.push_back(std::move(object));
    }
  }
  return objects;
}

api::Pod DecodePod(const Value& c) {
  auto decoded = api::DecodeObjects(ToJson(c["pod"]), "pod");
  REQUIRE(decoded.ok());
  REQUIRE(decoded->objects.size() == 1);
  return std::get<api::Pod>(decoded->objects[0]);
}

// DynamicResources alone, at every extension point it has, under the pod's scheduler name.
config::Configuration DraOnly(const Value& c, const std::string& scheduler_name) {
  config::PluginArgs args = config::DefaultPluginArgs(kPlugin);
  if (c.HasMember("args")) {
    auto parsed = config::ParsePluginArgs(kPlugin, ToJson(c["args"]));
    REQUIRE(parsed.ok());
    args = *parsed;
  }
  config::Profile profile;
  profile.scheduler_name = scheduler_name;
  profile.plugins.queue_sort.enabled = {{"PrioritySort", 0}};
  profile.plugins.bind.enabled = {{"DefaultBinder", 0}};
  profile.plugins.multi_point.enabled = {{kPlugin, 1}};
  profile.plugin_config = {{kPlugin, args}};
  config::Configuration configuration;
  configuration.profiles = {profile};
  return configuration;
}

const scheduler::FilterResult* PluginVerdict(const scheduler::ExplainReport& report,
                                             const std::string& node_name) {
  for (const auto& node : report.nodes) {
    if (node.name != node_name) continue;
    for (const auto& filter : node.filters) {
      if (filter.plugin == kPlugin) return &filter;
    }
  }
  return nullptr;
}

void CheckFilter(const Value& expect, const scheduler::ExplainReport& report) {
  for (const auto& entry : expect["filter"].GetObject()) {
    const std::string node = entry.name.GetString();
    const std::string wanted = entry.value.GetString();
    INFO("node " << node);
    const scheduler::FilterResult* verdict = PluginVerdict(report, node);
    REQUIRE(verdict != nullptr);
    if (wanted == "pass") {
      CHECK(
          (verdict->code == framework::Code::kSuccess || verdict->code == framework::Code::kSkip));
      continue;
    }
    CHECK(verdict->reasons == std::vector<std::string>{wanted});
    if (expect.HasMember("filterCode") && expect["filterCode"].HasMember(node.c_str())) {
      CHECK(framework::CodeName(verdict->code) == expect["filterCode"][node.c_str()].GetString());
    }
  }
}

void CheckFilterContains(const Value& expect, const scheduler::ExplainReport& report) {
  for (const auto& entry : expect["filterContains"].GetObject()) {
    INFO("node " << entry.name.GetString());
    const scheduler::FilterResult* verdict = PluginVerdict(report, entry.name.GetString());
    REQUIRE(verdict != nullptr);
    REQUIRE(verdict->reasons.size() == 1);
    CHECK_THAT(verdict->reasons[0], Catch::Contains(entry.value.GetString()));
  }
}

// A PreFilter verdict stands on every node as the plugin's only one, and makes the message.
void CheckPreFilter(const Value& wanted, const scheduler::ExplainReport& report) {
  const std::string code = wanted["code"].GetString();
  for (const auto& node : report.nodes) {
    INFO("node " << node.name);
    const scheduler::FilterResult* verdict = PluginVerdict(report, node.name);
    REQUIRE(verdict != nullptr);
    CHECK(framework::CodeName(verdict->code) == code);
    if (code == "Skip") continue;
    CHECK(verdict->reasons == std::vector<std::string>{wanted["reason"].GetString()});
  }
}

bool AnyError(const scheduler::ExplainReport& report) {
  for (const auto& node : report.nodes) {
    const scheduler::FilterResult* verdict = PluginVerdict(report, node.name);
    if (verdict != nullptr && verdict->code == framework::Code::kError) return true;
  }
  return false;
}

// --- What the scheduler wrote ---------------------------------------------------------------

class Observer final : public scheduler::SchedulingObserver {
 public:
  void OnUnschedulable(const framework::PodInfo& pod, const std::string& message, int) override {
    messages[pod.key] = message;
  }
  void OnBound(const framework::PodInfo& pod, const std::string& node, int) override {
    bound[pod.key] = node;
  }
  std::map<std::string, std::string> messages;
  std::map<std::string, std::string> bound;
};

// The real scheduler with the case's profile on an embedded cluster holding the case's objects
// and pod, run until nothing moves, as simulate runs.
struct Simulated {
  cluster::EmbeddedCluster cluster;
  util::FakeClock clock{absl::FromUnixSeconds(1'700'000'000)};
  scheduler::DeferredBindExecutor binds;
  Observer observer;
  std::unique_ptr<scheduler::Scheduler> scheduler;

  Simulated(std::vector<api::Object> objects, const api::Pod& pod,
            const config::Configuration& configuration) {
    objects.emplace_back(pod);
    for (const api::Object& object : objects) REQUIRE(cluster.Create(object).ok());
    scheduler::SchedulerDeps deps;
    deps.clock = &clock;
    deps.binder = &cluster;
    deps.bind_executor = &binds;
    deps.observer = &observer;
    deps.threads = 1;
    deps.claim_writer = &cluster;
    auto created = scheduler::Scheduler::Create(configuration, deps);
    REQUIRE(created.ok());
    scheduler = *std::move(created);
    cluster.Watch(scheduler.get());
    scheduler::DriveToQuiescence(cluster, *scheduler, binds, clock);
  }
};

// A requirement as (key, operator, values in order); a term as its two sets of those.
using RequirementText = std::tuple<std::string, std::string, std::vector<std::string>>;
using TermText = std::pair<std::set<RequirementText>, std::set<RequirementText>>;

std::set<RequirementText> RequirementsOf(const Value& term, const char* key) {
  std::set<RequirementText> out;
  if (!term.HasMember(key)) return out;
  for (const auto& r : term[key].GetArray()) {
    std::vector<std::string> values;
    if (r.HasMember("values")) {
      for (const auto& v : r["values"].GetArray()) values.emplace_back(v.GetString());
    }
    std::sort(values.begin(), values.end());
    out.insert({r["key"].GetString(), r["operator"].GetString(), values});
  }
  return out;
}

std::vector<TermText> TermsOf(const Value& selector) {
  std::vector<TermText> terms;
  for (const auto& term : selector["nodeSelectorTerms"].GetArray()) {
    terms.emplace_back(RequirementsOf(term, "matchExpressions"),
                       RequirementsOf(term, "matchFields"));
  }
  return terms;
}

std::vector<TermText> TermsOf(const api::NodeSelector& selector) {
  std::vector<TermText> terms;
  for (const api::NodeSelectorTerm& term : selector.terms) {
    TermText text;
    for (const api::Requirement& r : term.match_expressions) {
      std::vector<std::string> values;
      for (api::Symbol v : r.values) values.emplace_back(api::SymbolText(v));
      std::sort(values.begin(), values.end());
      text.first.insert({std::string(api::SymbolText(r.key)),
                         std::string(api::SelectorOperatorName(r.op)), values});
    }
    for (const api::FieldRequirement& r : term.match_fields) {
      std::vector<std::string> values = r.values;
      std::sort(values.begin(), values.end());
      text.second.insert({r.field, std::string(api::SelectorOperatorName(r.op)), values});
    }
    terms.push_back(std::move(text));
  }
  return terms;
}

using ResultText = std::tuple<std::string, std::string, std::string, std::string, bool>;

std::multiset<ResultText> ResultsOf(const Value& allocation) {
  std::multiset<ResultText> out;
  for (const auto& r : allocation["devices"]["results"].GetArray()) {
    out.insert({r["request"].GetString(), r["driver"].GetString(), r["pool"].GetString(),
                r["device"].GetString(), r.HasMember("adminAccess") && r["adminAccess"].GetBool()});
  }
  return out;
}

std::multiset<ResultText> ResultsOf(const api::AllocationResult& allocation) {
  std::multiset<ResultText> out;
  for (const auto& r : allocation.devices) {
    out.insert({r.request, std::string(api::SymbolText(r.driver)),
                std::string(api::SymbolText(r.pool)), std::string(api::SymbolText(r.device)),
                r.admin_access});
  }
  return out;
}

void CheckConfig(const Value& allocation, const api::AllocationResult& written) {
  const bool has = allocation["devices"].HasMember("config");
  const size_t wanted = has ? allocation["devices"]["config"].Size() : 0;
  REQUIRE(written.config.size() == wanted);
  for (size_t i = 0; i < wanted; ++i) {
    const Value& config = allocation["devices"]["config"][static_cast<rapidjson::SizeType>(i)];
    const api::DeviceAllocationConfiguration& got = written.config[i];
    INFO("config #" << i);
    CHECK(got.from_class == (std::string(config["source"].GetString()) == "FromClass"));
    std::vector<std::string> requests;
    if (config.HasMember("requests")) {
      for (const auto& r : config["requests"].GetArray()) requests.emplace_back(r.GetString());
    }
    CHECK(got.requests == requests);
    CHECK(got.opaque.driver == config["opaque"]["driver"].GetString());
    rapidjson::Document parameters;
    parameters.Parse(got.opaque.parameters_json.c_str());
    CHECK(parameters == config["opaque"]["parameters"]);
  }
}

void CheckAllocation(const Value& wanted, const api::AllocationResult& written) {
  CHECK(ResultsOf(written) == ResultsOf(wanted));
  if (wanted.HasMember("nodeSelector")) {
    REQUIRE(written.node_selector.has_value());
    CHECK(TermsOf(*written.node_selector) == TermsOf(wanted["nodeSelector"]));
  } else {
    CHECK_FALSE(written.node_selector.has_value());
  }
  CheckConfig(wanted, written);
}

void CheckClaim(const Value& wanted, const api::ResourceClaim& claim) {
  if (wanted.HasMember("allocation") && wanted["allocation"].IsNull()) {
    CHECK_FALSE(claim.allocation.has_value());  // deallocated (PostFilter)
  } else if (wanted.HasMember("allocation")) {
    REQUIRE(claim.allocation.has_value());
    CheckAllocation(wanted["allocation"], *claim.allocation);
  }
  if (wanted.HasMember("reservedFor")) {
    std::vector<std::string> consumers;
    for (const auto& c : claim.reserved_for) {
      consumers.push_back(c.resource + "/" + c.name + "/" + c.uid);
    }
    std::vector<std::string> expected;
    for (const auto& c : wanted["reservedFor"].GetArray()) {
      expected.push_back(std::string(c["resource"].GetString()) + "/" + c["name"].GetString() +
                         "/" + c["uid"].GetString());
    }
    CHECK(consumers == expected);
  }
}

void CheckWritten(const Value& expect, Simulated& world, const api::Pod& pod) {
  const auto bound = world.observer.bound.find(pod.Key());
  if (expect["node"].IsNull()) {
    CHECK(bound == world.observer.bound.end());
  } else {
    REQUIRE(bound != world.observer.bound.end());
    CHECK(bound->second == expect["node"].GetString());
  }
  if (!expect.HasMember("claims")) return;
  for (const auto& entry : expect["claims"].GetObject()) {
    INFO("claim " << entry.name.GetString());
    const auto claim =
        world.cluster.GetResourceClaim(pod.meta.namespace_name + "/" + entry.name.GetString());
    REQUIRE(claim != nullptr);
    CheckClaim(entry.value, *claim);
  }
}

// --- One case ----------------------------------------------------------------------------------

// expect.preEnqueue, as simulate reports it: Success lets the pod be tried; a rejection keeps
// it out of the queue, never tried, with the reason as its message.
void CheckPreEnqueue(const Value& wanted, const Value& c, const api::Pod& pod,
                     const config::Configuration& configuration) {
  scheduler::SimulationInput input;
  input.cluster_objects = ClusterObjects(c);
  input.workload_objects = std::vector<api::Object>{pod};
  input.threads = 1;
  auto report = scheduler::RunSimulation(input, configuration);
  REQUIRE(report.ok());
  REQUIRE(report->pod_results.size() == 1);
  const scheduler::PodResult& result = report->pod_results[0];
  if (std::string(wanted["code"].GetString()) == "Success") {
    CHECK(result.attempts > 0);
    return;
  }
  CHECK_FALSE(result.node.has_value());
  CHECK(result.attempts == 0);
  CHECK(result.message == std::string(wanted["reason"].GetString()));
}

void RunCase(const Value& c) {
  const Value& expect = Expected(c);
  const api::Pod pod = DecodePod(c);
  const config::Configuration configuration = DraOnly(c, pod.spec.scheduler_name);
  if (expect.HasMember("preEnqueue")) {
    CheckPreEnqueue(expect["preEnqueue"], c, pod, configuration);
    if (std::string(expect["preEnqueue"]["code"].GetString()) != "Success") return;
  }
  auto report = scheduler::ExplainObjects(ClusterObjects(c), pod, configuration);
  REQUIRE(report.ok());
  if (expect.HasMember("preFilterStatus")) CheckPreFilter(expect["preFilterStatus"], *report);
  if (expect.HasMember("filter")) CheckFilter(expect, *report);
  if (expect.HasMember("filterContains")) CheckFilterContains(expect, *report);
  if (!expect.HasMember("node")) return;
  // An error on any node aborts the attempt (explain still shows every node's verdict and would
  // pick among the others) and retries the pod with backoff without end: the error is all there
  // is to check.
  if (AnyError(*report)) {
    CHECK(expect["node"].IsNull());
    return;
  }
  if (expect["node"].IsNull()) CHECK_FALSE(report->selected.has_value());
  Simulated world(ClusterObjects(c), pod, configuration);
  CheckWritten(expect, world, pod);
}

// Each file is parsed once: Catch runs the test case again for every section.
const rapidjson::Document& Vectors(const std::string& file) {
  static auto* const loaded = new std::map<std::string, std::unique_ptr<rapidjson::Document>>();
  auto& doc = (*loaded)[file];
  if (doc == nullptr) doc = testing::LoadConformanceVectors(file);
  return *doc;
}

void RunFile(const std::string& file) {
  const rapidjson::Document& doc = Vectors(file);
  REQUIRE(std::string(doc["plugin"].GetString()) == kPlugin);
  for (const auto& c : doc["cases"].GetArray()) {
    DYNAMIC_SECTION(c["id"].GetString()) { RunCase(c); }
  }
}

TEST_CASE("upstream's DynamicResources plugin cases pass through explain and simulate",
          "[conformance][dra]") {
  RunFile("more/dynamic_resources.json");
}

TEST_CASE("upstream's structured allocator cases pass through explain and simulate",
          "[conformance][dra]") {
  RunFile("more/dra_allocator.json");
}

}  // namespace
}  // namespace kubesched
