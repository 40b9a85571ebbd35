#include "config/plugin_args.h"

#include <catch2/catch.hpp>
#include <string>
#include <variant>
#include <vector>

#include "config/config.h"
#include "plugins/names.h"
#include "tests/config/dump.h"

namespace kubesched::config {
namespace {

using testing::Dump;

constexpr std::string_view kFit = "NodeResourcesFit";
constexpr std::string_view kBalanced = "NodeResourcesBalancedAllocation";
constexpr std::string_view kNodeAffinity = "NodeAffinity";
constexpr std::string_view kInterPod = "InterPodAffinity";
constexpr std::string_view kPreemption = "DefaultPreemption";

// The dump of the parsed args, or the error message.
std::string Parse(std::string_view plugin, const std::string& text) {
  const absl::StatusOr<PluginArgs> args = ParsePluginArgs(plugin, text);
  if (!args.ok()) return std::string(args.status().message());
  return Dump(*args);
}

struct ArgsCase {
  std::string name;
  std::string_view plugin;
  std::string text;
  std::string want;  // Dump of the args, or the whole error message
};

// ---------------------------------------------------------------------------------------------
// Defaults

TEST_CASE("DefaultPluginArgs gives upstream's defaults for each plugin", "[config]") {
  const std::vector<std::pair<std::string_view, std::string>> cases = {
      {kFit, "fit ignored=[] groups=[] type=0 resources=[cpu:1, memory:1] shape=[]"},
      {kBalanced, "balanced resources=[cpu:1, memory:1]"},
      {kNodeAffinity, "affinity none"},
      {kInterPod, "interpod hard=1 ignore_preferred=false"},
      {"PodTopologySpread", "spread type=System defaults=[]"},
      {kPreemption, "preemption percentage=10 absolute=100 override=2000000000"},
      {"VolumeBinding", "volumebinding timeout=600"},
      {"DynamicResources", "dynamicresources filterTimeout=10s"},
      {"NodeName", "none"},
      {"PrioritySort", "none"},
  };
  for (const auto& [plugin, want] : cases) {
    CAPTURE(plugin);
    CHECK(Dump(DefaultPluginArgs(plugin)) == want);
  }
}

TEST_CASE("empty, null and {} args give the default args", "[config]") {
  for (std::string_view plugin : plugins::names::kAll) {
    for (const std::string text : {"", "  \n", "null", "~", "{}", "# nothing\n"}) {
      CAPTURE(plugin, text);
      CHECK(Parse(plugin, text) == Dump(DefaultPluginArgs(plugin)));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Args read

TEST_CASE("plugin args are read with upstream's v1 field names", "[config]") {
  const std::vector<ArgsCase> cases = {
      {"PodTopologySpread List defaults", "PodTopologySpread",
       "defaultingType: List\n"
       "defaultConstraints:\n"
       "- {maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: "
       "DoNotSchedule, minDomains: 2}\n"
       "- {maxSkew: 3, topologyKey: kubernetes.io/hostname, whenUnsatisfiable: ScheduleAnyway}\n",
       "spread type=List defaults=[topology.kubernetes.io/zone/1/DoNotSchedule min=2, "
       "kubernetes.io/hostname/3/ScheduleAnyway]"},
      {"PodTopologySpread System", "PodTopologySpread", R"({"defaultingType": "System"})",
       "spread type=System defaults=[]"},
      {"NodeResourcesFit MostAllocated (JSON, as the conformance vectors give it)", kFit,
       R"({"scoringStrategy": {"resources": [{"name": "cpu", "weight": 1},
           {"name": "memory", "weight": 2}], "type": "MostAllocated"}})",
       "fit ignored=[] groups=[] type=1 resources=[cpu:1, memory:2] shape=[]"},
      {"NodeResourcesFit RequestedToCapacityRatio with a shape", kFit,
       R"({"scoringStrategy": {"requestedToCapacityRatio": {"shape": [{"score": 10,
           "utilization": 0}, {"score": 0, "utilization": 100}]}, "resources": [{"name":
           "intel.com/foo", "weight": 3}], "type": "RequestedToCapacityRatio"}})",
       "fit ignored=[] groups=[] type=2 resources=[intel.com/foo:3] shape=[0->10, 100->0]"},
      {"NodeResourcesFit ignored resources and groups", kFit,
       "ignoredResources: [example.com/foo]\nignoredResourceGroups: [example.com]\n",
       "fit ignored=[example.com/foo] groups=[example.com] type=0 resources=[cpu:1, memory:1] "
       "shape=[]"},
      {"typed args with apiVersion and kind", kFit,
       "apiVersion: kubescheduler.config.k8s.io/v1\nkind: NodeResourcesFitArgs\n"
       "scoringStrategy: {type: MostAllocated}\n",
       "fit ignored=[] groups=[] type=1 resources=[cpu:1, memory:1] shape=[]"},
      {"a resource without a weight weighs 1", kFit,
       "scoringStrategy: {resources: [{name: nvidia.com/gpu}]}\n",
       "fit ignored=[] groups=[] type=0 resources=[nvidia.com/gpu:1] shape=[]"},
      {"an empty resources list keeps cpu and memory", kFit,
       "scoringStrategy: {type: MostAllocated, resources: []}\n",
       "fit ignored=[] groups=[] type=1 resources=[cpu:1, memory:1] shape=[]"},
      {"a strategy without a type is LeastAllocated", kFit,
       "scoringStrategy: {resources: [{name: cpu, weight: 2}]}\n",
       "fit ignored=[] groups=[] type=0 resources=[cpu:2] shape=[]"},
      {"BalancedAllocation with a weighted GPU", kBalanced,
       "resources:\n- {name: nvidia.com/gpu, weight: 3}\n- {name: cpu}\n- {name: memory}\n",
       "balanced resources=[nvidia.com/gpu:3, cpu:1, memory:1]"},
      {"InterPodAffinity with a zero hard weight", kInterPod, R"({"hardPodAffinityWeight": 0})",
       "interpod hard=0 ignore_preferred=false"},
      {"InterPodAffinity ignoring existing pods' preferred terms", kInterPod,
       R"({"hardPodAffinityWeight": 1, "ignorePreferredTermsOfExistingPods": true})",
       "interpod hard=1 ignore_preferred=true"},
      {"DefaultPreemption candidate counts", kPreemption,
       "minCandidateNodesPercentage: 20\nminCandidateNodesAbsolute: 0\n",
       "preemption percentage=20 absolute=0 override=2000000000"},
      {"DefaultPreemption typed, with the NonPreemptible override", kPreemption,
       R"({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "DefaultPreemptionArgs",
           "minCandidateNodesAbsolute": 5, "nonPreemptibleOverridePriority": 1000000})",
       "preemption percentage=10 absolute=5 override=1000000"},
      {"DefaultPreemption percentage 0 with an absolute count", kPreemption,
       "minCandidateNodesPercentage: 0",
       "preemption percentage=0 absolute=100 override=2000000000"},
      {"VolumeBinding bind timeout", "VolumeBinding",
       R"({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "VolumeBindingArgs",
           "bindTimeoutSeconds": 30})",
       "volumebinding timeout=30"},
      {"DynamicResources filter timeout", "DynamicResources",
       R"({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "DynamicResourcesArgs",
           "filterTimeout": "2.5s"})",
       "dynamicresources filterTimeout=2.5s"},
      {"DynamicResources without a filter timeout", "DynamicResources", "filterTimeout: 0s",
       "dynamicresources filterTimeout=0"},
      {"NodeAffinity with a required term", kNodeAffinity,
       R"({"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
           {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
           "values": ["node2"]}]}]}}})",
       "affinity required_terms=1 preferred_weights=[]"},
      {"NodeAffinity with a preferred term", kNodeAffinity,
       "addedAffinity:\n"
       "  preferredDuringSchedulingIgnoredDuringExecution:\n"
       "  - weight: 2\n"
       "    preference:\n"
       "      matchExpressions:\n"
       "      - {key: foo, operator: In, values: [bar, \"true\"]}\n",
       "affinity required_terms=0 preferred_weights=[2]"},
  };
  for (const ArgsCase& c : cases) {
    DYNAMIC_SECTION(c.name) { CHECK(Parse(c.plugin, c.text) == c.want); }
  }
}

TEST_CASE("JSON and YAML args give the same struct", "[config]") {
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {R"({"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu",
          "weight": 4}]}, "ignoredResources": ["a.io/b"]})",
       "scoringStrategy:\n  type: MostAllocated\n  resources:\n  - name: cpu\n    weight: 4\n"
       "ignoredResources:\n- a.io/b\n"},
  };
  for (const auto& [json, yaml] : pairs) {
    CAPTURE(json, yaml);
    CHECK(Parse(kFit, json) == Parse(kFit, yaml));
  }
}

// ---------------------------------------------------------------------------------------------
// Errors

TEST_CASE("every bad plugin arg is an error naming the plugin and the field", "[config]") {
  const std::vector<ArgsCase> cases = {
      {"unknown scoring strategy type", kFit, "scoringStrategy: {type: Foo}",
       "NodeResourcesFit: scoringStrategy.type: unknown type \"Foo\"; want LeastAllocated, "
       "MostAllocated, RequestedToCapacityRatio or Watermark"},
      {"zero resource weight", kFit, "scoringStrategy: {resources: [{name: cpu, weight: 0}]}",
       "NodeResourcesFit: scoringStrategy.resources[0].weight: must be in 1..100, got 0"},
      {"resource weight above 100", kFit,
       "scoringStrategy: {resources: [{name: cpu, weight: 101}]}",
       "NodeResourcesFit: scoringStrategy.resources[0].weight: must be in 1..100, got 101"},
      {"negative resource weight", kFit, "scoringStrategy: {resources: [{name: cpu, weight: -1}]}",
       "NodeResourcesFit: scoringStrategy.resources[0].weight: must be in 1..100, got -1"},
      {"resource without a name", kFit, "scoringStrategy: {resources: [{weight: 1}]}",
       "NodeResourcesFit: scoringStrategy.resources[0].name: required"},
      {"resource named twice", kFit, "scoringStrategy: {resources: [{name: cpu}, {name: cpu}]}",
       "NodeResourcesFit: scoringStrategy.resources[1].name: duplicate resource \"cpu\""},
      {"malformed resource name", kFit, "scoringStrategy: {resources: [{name: 'a b'}]}",
       "NodeResourcesFit: scoringStrategy.resources[0].name: \"a b\" is not a valid resource "
       "name"},
      {"RequestedToCapacityRatio without its shape", kFit,
       "scoringStrategy: {type: RequestedToCapacityRatio}",
       "NodeResourcesFit: scoringStrategy.requestedToCapacityRatio: required when type is "
       "RequestedToCapacityRatio"},
      {"a shape for another type", kFit,
       "scoringStrategy: {type: MostAllocated, requestedToCapacityRatio: {shape: "
       "[{utilization: 0, score: 0}]}}",
       "NodeResourcesFit: scoringStrategy.requestedToCapacityRatio: must not be set unless type "
       "is RequestedToCapacityRatio"},
      {"an empty shape", kFit,
       "scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: []}}",
       "NodeResourcesFit: scoringStrategy.requestedToCapacityRatio.shape: at least one point is "
       "required"},
      {"utilization above 100", kFit,
       "scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: "
       "[{utilization: 0, score: 0}, {utilization: 101, score: 1}]}}",
       "NodeResourcesFit: scoringStrategy.requestedToCapacityRatio.shape[1].utilization: must be "
       "in 0..100, got 101"},
      {"shape score above 10", kFit,
       "scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: "
       "[{utilization: 0, score: 11}]}}",
       "NodeResourcesFit: scoringStrategy.requestedToCapacityRatio.shape[0].score: must be in "
       "0..10, got 11"},
      {"utilization not increasing", kFit,
       "scoringStrategy: {type: RequestedToCapacityRatio, requestedToCapacityRatio: {shape: "
       "[{utilization: 50, score: 1}, {utilization: 50, score: 2}]}}",
       "NodeResourcesFit: scoringStrategy.requestedToCapacityRatio.shape[1].utilization: must be "
       "greater than the previous point's (50), got 50"},
      {"resource group with a slash", kFit, "ignoredResourceGroups: [example.com/foo]",
       "NodeResourcesFit: ignoredResourceGroups[0]: a resource group name cannot contain '/', "
       "got \"example.com/foo\""},
      {"malformed ignored resource", kFit, "ignoredResources: ['not valid!']",
       "NodeResourcesFit: ignoredResources[0]: \"not valid!\" is not a valid resource name"},
      {"ignored resources not a list", kFit, "ignoredResources: cpu",
       "NodeResourcesFit: ignoredResources: must be a list, got \"cpu\""},
      {"unknown field in the strategy", kFit, "scoringStrategy: {typ: MostAllocated}",
       "NodeResourcesFit: scoringStrategy: unknown field \"typ\""},
      {"unknown top-level args field", kFit, R"({"scoringStrategy": {}, "foo": 1})",
       "NodeResourcesFit: unknown field \"foo\""},
      {"args of another kind", kFit, "kind: InterPodAffinityArgs",
       "NodeResourcesFit: kind: must be NodeResourcesFitArgs, got \"InterPodAffinityArgs\""},
      {"args of another apiVersion", kFit, "apiVersion: v1",
       "NodeResourcesFit: apiVersion: unsupported version \"v1\"; want "
       "kubescheduler.config.k8s.io/v1 (or v1beta3)"},
      {"args that are a list", kFit, "[1, 2]", "NodeResourcesFit: must be a map, got a list"},
      {"args that do not parse", kFit, "{",
       "NodeResourcesFit: line 1, column 1: end of map flow not found"},
      {"zero BalancedAllocation weight", kBalanced, "resources: [{name: cpu, weight: 0}]",
       "NodeResourcesBalancedAllocation: resources[0].weight: must be in 1..100, got 0"},
      {"BalancedAllocation resource named twice", kBalanced,
       "resources: [{name: nvidia.com/gpu}, {name: nvidia.com/gpu}]",
       "NodeResourcesBalancedAllocation: resources[1].name: duplicate resource "
       "\"nvidia.com/gpu\""},
      {"hardPodAffinityWeight above 100", kInterPod, "hardPodAffinityWeight: 101",
       "InterPodAffinity: hardPodAffinityWeight: must be in 0..100, got 101"},
      {"negative hardPodAffinityWeight", kInterPod, "hardPodAffinityWeight: -1",
       "InterPodAffinity: hardPodAffinityWeight: must be in 0..100, got -1"},
      {"hardPodAffinityWeight as a string", kInterPod, R"({"hardPodAffinityWeight": "1"})",
       "InterPodAffinity: hardPodAffinityWeight: must be a 32-bit integer, got string \"1\""},
      {"a boolean that is not one", kInterPod, "ignorePreferredTermsOfExistingPods: maybe",
       "InterPodAffinity: ignorePreferredTermsOfExistingPods: must be true or false, got "
       "\"maybe\""},
      {"unknown addedAffinity field", kNodeAffinity, "addedAffinity: {required: {}}",
       "NodeAffinity: addedAffinity: unknown field \"required\""},
      {"misspelt field inside addedAffinity", kNodeAffinity,
       "addedAffinity: {requiredDuringSchedulingIgnoredDuringExecution: {nodeSelectorTerm: []}}",
       "NodeAffinity: addedAffinity.requiredDuringSchedulingIgnoredDuringExecution: unknown field "
       "\"nodeSelectorTerm\""},
      {"misspelt requirement field", kNodeAffinity,
       "addedAffinity:\n"
       "  preferredDuringSchedulingIgnoredDuringExecution:\n"
       "  - weight: 1\n"
       "    preference: {matchExpressions: [{key: a, op: Exists}]}\n",
       "NodeAffinity: addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].preference."
       "matchExpressions[0]: unknown field \"op\""},
      {"preferred term of weight 0", kNodeAffinity,
       "addedAffinity:\n"
       "  preferredDuringSchedulingIgnoredDuringExecution:\n"
       "  - weight: 0\n"
       "    preference: {matchExpressions: [{key: a, operator: Exists}]}\n",
       "NodeAffinity: addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
       "must be in 1..100, got 0"},
      {"preferred term of weight 101", kNodeAffinity,
       "addedAffinity:\n"
       "  preferredDuringSchedulingIgnoredDuringExecution:\n"
       "  - weight: 101\n"
       "    preference: {matchExpressions: [{key: a, operator: Exists}]}\n",
       "NodeAffinity: addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: "
       "must be in 1..100, got 101"},
      {"minCandidateNodesPercentage above 100", kPreemption, "minCandidateNodesPercentage: 101",
       "DefaultPreemption: minCandidateNodesPercentage: Invalid value: 101: not in valid range "
       "[0, 100]"},
      {"negative minCandidateNodesPercentage", kPreemption, "minCandidateNodesPercentage: -1",
       "DefaultPreemption: minCandidateNodesPercentage: Invalid value: -1: not in valid range "
       "[0, 100]"},
      {"negative minCandidateNodesAbsolute", kPreemption, "minCandidateNodesAbsolute: -1",
       "DefaultPreemption: minCandidateNodesAbsolute: Invalid value: -1: not in valid range "
       "[0, inf)"},
      {"both candidate counts zero", kPreemption,
       "{minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0}",
       "DefaultPreemption: minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the "
       "same time as minCandidateNodesAbsolute"},
      {"negative nonPreemptibleOverridePriority", kPreemption, "nonPreemptibleOverridePriority: -5",
       "DefaultPreemption: nonPreemptibleOverridePriority: must not be negative, got -5"},
      {"override above int32", kPreemption, "nonPreemptibleOverridePriority: 3000000000",
       "DefaultPreemption: nonPreemptibleOverridePriority: must be a 32-bit integer, got "
       "\"3000000000\""},
      {"unknown DefaultPreemption field", kPreemption, "minCandidateNodes: 3",
       "DefaultPreemption: unknown field \"minCandidateNodes\""},
      {"args for a plugin that takes none", "NodeName", "foo: 1",
       "NodeName: must be empty; the plugin takes no args"},
      {"unknown plugin", "Foo", "{}", "unknown plugin \"Foo\""},
      {"negative bindTimeoutSeconds", "VolumeBinding", "bindTimeoutSeconds: -10",
       "VolumeBinding: bindTimeoutSeconds: Invalid value: -10: invalid BindTimeoutSeconds, should "
       "not be a negative value"},
      {"a VolumeBinding scoring shape", "VolumeBinding", "shape: [{utilization: 0, score: 0}]",
       "VolumeBinding: shape: unsupported when VolumeCapacityPriority feature is disabled"},
      {"negative filterTimeout", "DynamicResources", "filterTimeout: -1s",
       "DynamicResources: filterTimeout: Invalid value: \"-1s\": must be zero or positive"},
      {"a DynamicResources binding timeout", "DynamicResources", "bindingTimeout: 60s",
       "DynamicResources: bindingTimeout: disabled field, enable the DRADeviceBindingConditions "
       "feature gate"},
      {"upstream-only plugin", "EBSLimits", "{}",
       "plugin \"EBSLimits\" is not supported by kubesched"},
  };
  for (const ArgsCase& c : cases) {
    DYNAMIC_SECTION(c.name) { CHECK(Parse(c.plugin, c.text) == c.want); }
  }
}

TEST_CASE("an invalid requirement in addedAffinity is an error naming it", "[config]") {
  // Upstream's validation rejects what a pod's own affinity would only fail to match.
  const std::string text =
      "addedAffinity:\n"
      "  requiredDuringSchedulingIgnoredDuringExecution:\n"
      "    nodeSelectorTerms:\n"
      "    - matchExpressions:\n"
      "      - {key: zone, operator: In, values: []}\n";
  const absl::StatusOr<PluginArgs> args = ParsePluginArgs(kNodeAffinity, text);
  REQUIRE_FALSE(args.ok());
  CHECK_THAT(std::string(args.status().message()),
             Catch::StartsWith("NodeAffinity: addedAffinity.requiredDuringSchedulingIgnored"
                               "DuringExecution.nodeSelectorTerms[0].matchExpressions[0]"));
}

TEST_CASE("an alias cycle in args is an error, not a crash", "[config]") {
  const std::string text =
      "addedAffinity: &a\n"
      "  requiredDuringSchedulingIgnoredDuringExecution: *a\n";
  absl::StatusOr<PluginArgs> args = absl::UnknownError("not run");
  CHECK_NOTHROW(args = ParsePluginArgs(kNodeAffinity, text));
  CHECK_FALSE(args.ok());
}

}  // namespace
}  // namespace kubesched::config
