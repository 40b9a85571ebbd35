#include "config/config.h"

#include <catch2/catch.hpp>
#include <string>
#include <variant>
#include <vector>

#include "absl/strings/match.h"
#include "tests/config/dump.h"
#include "tests/testing/temp_file.h"

namespace kubesched::config {
namespace {

using testing::Dump;
using testing::TempFile;

constexpr char kHeader[] =
    "apiVersion: kubescheduler.config.k8s.io/v1\n"
    "kind: KubeSchedulerConfiguration\n";

// A document made of the header and `body`.
std::string Doc(const std::string& body) { return kHeader + body; }

std::string ErrorOf(const std::string& text) {
  const absl::StatusOr<Configuration> config = ParseConfiguration(text);
  if (config.ok()) return "(parsed)";
  return std::string(config.status().message());
}

std::string ExamplePath(const std::string& name) {
  return testing::SourcePath("config/examples/" + name);
}

// ---------------------------------------------------------------------------------------------
// Defaults

TEST_CASE("a document with only apiVersion and kind gets one default profile named kubesched",
          "[config]") {
  const absl::StatusOr<Configuration> config = ParseConfiguration(kHeader);
  REQUIRE(config.ok());
  REQUIRE(config->profiles.size() == 1);
  CHECK(config->profiles[0].scheduler_name == "kubesched");
  CHECK(Dump(config->profiles[0].plugins.multi_point) == Dump(DefaultPlugins().multi_point));
}

TEST_CASE("the top-level defaults are upstream's", "[config]") {
  const absl::StatusOr<Configuration> config = ParseConfiguration(kHeader);
  REQUIRE(config.ok());
  CHECK(config->percentage_of_nodes_to_score == 0);
  CHECK(config->pod_initial_backoff_seconds == 1);
  CHECK(config->pod_max_backoff_seconds == 10);
  CHECK(config->parallelism == 16);
}

TEST_CASE("DefaultConfiguration equals parsing a document with only apiVersion and kind",
          "[config]") {
  const absl::StatusOr<Configuration> config = ParseConfiguration(kHeader);
  REQUIRE(config.ok());
  CHECK(Dump(*config) == Dump(DefaultConfiguration()));
}

TEST_CASE("a profile without a schedulerName is named kubesched", "[config]") {
  for (const std::string body : {"profiles: [{}]\n", "profiles: [{schedulerName: ''}]\n"}) {
    CAPTURE(body);
    const absl::StatusOr<Configuration> config = ParseConfiguration(Doc(body));
    REQUIRE(config.ok());
    CHECK(config->profiles[0].scheduler_name == "kubesched");
  }
}

TEST_CASE("an empty profiles list gets the default profile", "[config]") {
  const absl::StatusOr<Configuration> config = ParseConfiguration(Doc("profiles: []\n"));
  REQUIRE(config.ok());
  CHECK(Dump(*config) == Dump(DefaultConfiguration()));
}

TEST_CASE("every profile gets the default plugins merged with its own lists", "[config]") {
  const absl::StatusOr<Configuration> config =
      ParseConfiguration(Doc("profiles:\n"
                             "- schedulerName: a\n"
                             "- schedulerName: b\n"
                             "  plugins: {multiPoint: {disabled: [{name: NodePorts}]}}\n"));
  REQUIRE(config.ok());
  REQUIRE(config->profiles.size() == 2);
  CHECK(Dump(config->profiles[0].plugins.multi_point) == Dump(DefaultPlugins().multi_point));
  CHECK(Dump(config->profiles[1].plugins.multi_point) ==
        "SchedulingGates, "
        "PrioritySort, QueueQuota, NodeUnschedulable, NodeName, TaintToleration:3, NodeAffinity:2, "
        "NodeResourcesFit:1, VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone, "
        "PodTopologySpread:2, InterPodAffinity:2, DynamicResources, "
        "DefaultPreemption, Coscheduling, "
        "NodeResourcesBalancedAllocation:1, ImageLocality:1, DefaultBinder, -NodePorts");
}

// ---------------------------------------------------------------------------------------------
// Fields read

TEST_CASE("the top-level settings are read", "[config]") {
  const absl::StatusOr<Configuration> config =
      ParseConfiguration(Doc("percentageOfNodesToScore: 30\npodInitialBackoffSeconds: 2\n"
                             "podMaxBackoffSeconds: 20\nparallelism: 4\n"));
  REQUIRE(config.ok());
  CHECK(config->percentage_of_nodes_to_score == 30);
  CHECK(config->pod_initial_backoff_seconds == 2);
  CHECK(config->pod_max_backoff_seconds == 20);
  CHECK(config->parallelism == 4);
}

TEST_CASE("a profile's percentageOfNodesToScore is kept apart from the top-level one", "[config]") {
  const absl::StatusOr<Configuration> config =
      ParseConfiguration(Doc("profiles: [{percentageOfNodesToScore: 50}]\n"));
  REQUIRE(config.ok());
  CHECK(config->profiles[0].percentage_of_nodes_to_score == 50);
  CHECK(config->percentage_of_nodes_to_score == 0);
}

TEST_CASE("apiVersion v1beta3 is read like v1", "[config]") {
  const absl::StatusOr<Configuration> config = ParseConfiguration(
      "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n");
  REQUIRE(config.ok());
  CHECK(Dump(*config) == Dump(DefaultConfiguration()));
}

TEST_CASE("upstream's other top-level fields are accepted and ignored", "[config]") {
  const absl::StatusOr<Configuration> config =
      ParseConfiguration(Doc("healthzBindAddress: 0.0.0.0:10251\n"
                             "metricsBindAddress: 0.0.0.0:10251\n"
                             "enableProfiling: true\n"
                             "enableContentionProfiling: false\n"
                             "extenders: []\n"
                             "delayCacheUntilActive: false\n"
                             "featureGates: {SchedulerQueueingHints: true}\n"));
  REQUIRE(config.ok());
  CHECK(Dump(*config) == Dump(DefaultConfiguration()));
}

TEST_CASE("clientConnection and leaderElection default to upstream's values", "[config]") {
  const Configuration config = DefaultConfiguration();
  CHECK(config.client_connection.qps == 50);
  CHECK(config.client_connection.burst == 100);
  CHECK(config.client_connection.kubeconfig.empty());
  CHECK(config.leader_election.leader_elect);
  CHECK(config.leader_election.lease_duration == absl::Seconds(15));
  CHECK(config.leader_election.renew_deadline == absl::Seconds(10));
  CHECK(config.leader_election.retry_period == absl::Seconds(2));
  CHECK(config.leader_election.resource_lock == "leases");
  CHECK(config.leader_election.resource_name == "kubesched");
  CHECK(config.leader_election.resource_namespace == "kube-system");
}

TEST_CASE("clientConnection and leaderElection are read", "[config]") {
  const absl::StatusOr<Configuration> config = ParseConfiguration(
      Doc("clientConnection: {kubeconfig: /etc/kubernetes/scheduler.conf, qps: 2.5e3, burst: 5000,"
          " contentType: application/json}\n"
          "leaderElection: {leaderElect: false, leaseDuration: 1m, renewDeadline: 45s,"
          " retryPeriod: 500ms, resourceName: ks, resourceNamespace: sched}\n"));
  REQUIRE(config.ok());
  CHECK(config->client_connection.kubeconfig == "/etc/kubernetes/scheduler.conf");
  CHECK(config->client_connection.qps == 2500);
  CHECK(config->client_connection.burst == 5000);
  CHECK(config->client_connection.content_type == "application/json");
  CHECK_FALSE(config->leader_election.leader_elect);
  CHECK(config->leader_election.lease_duration == absl::Minutes(1));
  CHECK(config->leader_election.renew_deadline == absl::Seconds(45));
  CHECK(config->leader_election.retry_period == absl::Milliseconds(500));
  CHECK(config->leader_election.resource_name == "ks");
  CHECK(config->leader_election.resource_namespace == "sched");
}

TEST_CASE("a null field reads like a missing one", "[config]") {
  const absl::StatusOr<Configuration> config =
      ParseConfiguration(Doc("parallelism: null\nprofiles: ~\n"));
  REQUIRE(config.ok());
  CHECK(Dump(*config) == Dump(DefaultConfiguration()));
}

TEST_CASE("a re-enabled default plugin keeps its place with the new weight", "[config]") {
  const absl::StatusOr<Configuration> config =
      ParseConfiguration(Doc("profiles:\n"
                             "- plugins:\n"
                             "    multiPoint:\n"
                             "      enabled: [{name: NodeResourcesFit, weight: 5}]\n"));
  REQUIRE(config.ok());
  CHECK(Dump(config->profiles[0].plugins.multi_point) ==
        "SchedulingGates, "
        "PrioritySort, QueueQuota, NodeUnschedulable, NodeName, TaintToleration:3, NodeAffinity:2, "
        "NodePorts, "
        "NodeResourcesFit:5, VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone, "
        "PodTopologySpread:2, InterPodAffinity:2, DynamicResources, "
        "DefaultPreemption, Coscheduling, "
        "NodeResourcesBalancedAllocation:1, ImageLocality:1, DefaultBinder");
}

TEST_CASE("a plugin disabled at filter but enabled at multiPoint is representable", "[config]") {
  // NodeAffinity as a scorer only: the framework expands multiPoint and skips the filter.
  const absl::StatusOr<Configuration> config =
      ParseConfiguration(Doc("profiles:\n"
                             "- plugins:\n"
                             "    filter: {disabled: [{name: NodeAffinity}]}\n"
                             "    score: {enabled: [{name: NodeAffinity, weight: 4}]}\n"));
  REQUIRE(config.ok());
  const Plugins& plugins = config->profiles[0].plugins;
  CHECK(absl::StrContains(Dump(plugins.multi_point), "NodeAffinity:2"));
  CHECK(Dump(plugins.filter) == "-NodeAffinity");
  CHECK(Dump(plugins.score) == "NodeAffinity:4");
}

TEST_CASE("disabling '*' at multiPoint leaves only the plugins the profile enables", "[config]") {
  const absl::StatusOr<Configuration> config = ParseConfiguration(
      Doc("profiles:\n"
          "- plugins:\n"
          "    multiPoint:\n"
          "      disabled: [{name: '*'}]\n"
          "      enabled: [{name: PrioritySort}, {name: NodeName}, {name: DefaultBinder}]\n"));
  REQUIRE(config.ok());
  CHECK(Dump(config->profiles[0].plugins.multi_point) ==
        "PrioritySort, NodeName, DefaultBinder, -*");
}

TEST_CASE("an upstream plugin kubesched lacks may be disabled", "[config]") {
  const absl::StatusOr<Configuration> config = ParseConfiguration(
      Doc("profiles:\n"
          "- plugins:\n"
          "    multiPoint: {disabled: [{name: GCEPDLimits}, {name: EBSLimits}]}\n"
          "    preEnqueue: {disabled: [{name: GCEPDLimits}]}\n"));
  REQUIRE(config.ok());
  CHECK(Dump(config->profiles[0].plugins.multi_point) ==
        Dump(DefaultPlugins().multi_point) + ", -GCEPDLimits, -EBSLimits");
}

TEST_CASE("pluginConfig args are parsed into the plugin's struct", "[config]") {
  const absl::StatusOr<Configuration> config =
      ParseConfiguration(Doc("profiles:\n"
                             "- pluginConfig:\n"
                             "  - name: InterPodAffinity\n"
                             "    args: {hardPodAffinityWeight: 7}\n"
                             "  - name: NodeName\n"
                             "    args: {}\n"));
  REQUIRE(config.ok());
  const std::vector<PluginConfig>& configs = config->profiles[0].plugin_config;
  REQUIRE(configs.size() == 2);
  CHECK(configs[0].name == "InterPodAffinity");
  CHECK(Dump(configs[0].args) == "interpod hard=7 ignore_preferred=false");
  CHECK(std::holds_alternative<std::monostate>(configs[1].args));
}

// ---------------------------------------------------------------------------------------------
// JSON and YAML

TEST_CASE("JSON and YAML spellings give the same configuration", "[config]") {
  const std::string yaml =
      "apiVersion: kubescheduler.config.k8s.io/v1\n"
      "kind: KubeSchedulerConfiguration\n"
      "percentageOfNodesToScore: 40\n"
      "parallelism: 8\n"
      "profiles:\n"
      "- schedulerName: gpu\n"
      "  percentageOfNodesToScore: 100\n"
      "  plugins:\n"
      "    multiPoint:\n"
      "      enabled:\n"
      "      - name: NodeResourcesFit\n"
      "        weight: 3\n"
      "      disabled:\n"
      "      - name: NodePorts\n"
      "    score:\n"
      "      disabled:\n"
      "      - name: TaintToleration\n"
      "  pluginConfig:\n"
      "  - name: NodeResourcesFit\n"
      "    args:\n"
      "      ignoredResourceGroups: [example.com]\n"
      "      scoringStrategy:\n"
      "        type: RequestedToCapacityRatio\n"
      "        resources:\n"
      "        - name: nvidia.com/gpu\n"
      "          weight: 5\n"
      "        requestedToCapacityRatio:\n"
      "          shape:\n"
      "          - {utilization: 0, score: 0}\n"
      "          - {utilization: 100, score: 10}\n"
      "  - name: InterPodAffinity\n"
      "    args:\n"
      "      ignorePreferredTermsOfExistingPods: true\n"
      "- schedulerName: other\n";
  const std::string json = R"({
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "percentageOfNodesToScore": 40,
    "parallelism": 8,
    "profiles": [
      {
        "schedulerName": "gpu",
        "percentageOfNodesToScore": 100,
        "plugins": {
          "multiPoint": {
            "enabled": [{"name": "NodeResourcesFit", "weight": 3}],
            "disabled": [{"name": "NodePorts"}]
          },
          "score": {"disabled": [{"name": "TaintToleration"}]}
        },
        "pluginConfig": [
          {
            "name": "NodeResourcesFit",
            "args": {
              "ignoredResourceGroups": ["example.com"],
              "scoringStrategy": {
                "type": "RequestedToCapacityRatio",
                "resources": [{"name": "nvidia.com/gpu", "weight": 5}],
                "requestedToCapacityRatio": {
                  "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
                }
              }
            }
          },
          {"name": "InterPodAffinity", "args": {"ignorePreferredTermsOfExistingPods": true}}
        ]
      },
      {"schedulerName": "other"}
    ]
  })";
  const absl::StatusOr<Configuration> from_yaml = ParseConfiguration(yaml);
  const absl::StatusOr<Configuration> from_json = ParseConfiguration(json);
  REQUIRE(from_yaml.ok());
  REQUIRE(from_json.ok());
  CHECK(Dump(*from_yaml) == Dump(*from_json));
  CHECK(Dump(*from_yaml) != Dump(DefaultConfiguration()));
}

// ---------------------------------------------------------------------------------------------
// Errors

struct ErrorCase {
  std::string name;
  std::string text;
  std::string error;  // the whole message
};

TEST_CASE("every configuration error names its field", "[config]") {
  const std::string p = "profiles:\n- plugins:\n    ";  // then one extension point
  const std::vector<ErrorCase> cases = {
      {"unsupported apiVersion",
       "apiVersion: kubescheduler.config.k8s.io/v1beta2\nkind: KubeSchedulerConfiguration\n",
       "apiVersion: unsupported version \"kubescheduler.config.k8s.io/v1beta2\"; want "
       "kubescheduler.config.k8s.io/v1 (or v1beta3)"},
      {"missing apiVersion", "kind: KubeSchedulerConfiguration\n",
       "apiVersion: required: kubescheduler.config.k8s.io/v1"},
      {"wrong kind", "apiVersion: kubescheduler.config.k8s.io/v1\nkind: Pod\n",
       "kind: must be KubeSchedulerConfiguration, got \"Pod\""},
      {"missing kind", "apiVersion: kubescheduler.config.k8s.io/v1\n",
       "kind: required: KubeSchedulerConfiguration"},
      {"unknown top-level field", Doc("podMaxBackofSeconds: 5\n"),
       "unknown field \"podMaxBackofSeconds\""},
      {"unknown profile field", Doc("profiles: [{schedulerName: a, plugin: {}}]\n"),
       "profiles[0]: unknown field \"plugin\""},
      {"unknown extension point", Doc(p + "filters: {}\n"),
       "profiles[0].plugins: unknown field \"filters\""},
      {"unknown plugin set field", Doc(p + "score: {enable: []}\n"),
       "profiles[0].plugins.score: unknown field \"enable\""},
      {"field given twice", Doc("parallelism: 1\nparallelism: 2\n"),
       "field \"parallelism\" is given twice"},
      {"percentage above 100", Doc("percentageOfNodesToScore: 101\n"),
       "percentageOfNodesToScore: must be in 0..100, got 101"},
      {"negative profile percentage", Doc("profiles: [{percentageOfNodesToScore: -1}]\n"),
       "profiles[0].percentageOfNodesToScore: must be in 0..100, got -1"},
      {"zero initial backoff", Doc("podInitialBackoffSeconds: 0\n"),
       "podInitialBackoffSeconds: must be greater than 0, got 0"},
      {"max backoff below initial", Doc("podInitialBackoffSeconds: 5\npodMaxBackoffSeconds: 4\n"),
       "podMaxBackoffSeconds: must be at least podInitialBackoffSeconds (5), got 4"},
      {"zero parallelism", Doc("parallelism: 0\n"), "parallelism: must be greater than 0, got 0"},
      {"duplicate scheduler name", Doc("profiles: [{schedulerName: a}, {schedulerName: a}]\n"),
       "profiles[1].schedulerName: duplicate scheduler name \"a\" (also profiles[0])"},
      {"two unnamed profiles", Doc("profiles: [{}, {}]\n"),
       "profiles[1].schedulerName: duplicate scheduler name \"kubesched\" (also profiles[0])"},
      {"negative score weight", Doc(p + "score: {enabled: [{name: NodeAffinity, weight: -1}]}\n"),
       "profiles[0].plugins.score.enabled[0].weight: must not be negative, got -1"},
      {"plugin without a name", Doc(p + "score: {enabled: [{weight: 2}]}\n"),
       "profiles[0].plugins.score.enabled[0].name: required"},
      {"plugin enabled twice at one point",
       Doc(p + "score: {enabled: [{name: NodeAffinity}, {name: NodeAffinity}]}\n"),
       "profiles[0].plugins.score.enabled[1]: plugin \"NodeAffinity\" is enabled twice (also "
       "enabled[0])"},
      {"upstream-only plugin enabled",
       Doc(p + "filter: {enabled: [{name: NodeName}, {name: EBSLimits}]}\n"),
       "profiles[0].plugins.filter.enabled[1]: plugin \"EBSLimits\" is not supported by "
       "kubesched"},
      {"unknown plugin enabled", Doc(p + "multiPoint: {enabled: [{name: Foo}]}\n"),
       "profiles[0].plugins.multiPoint.enabled[0]: unknown plugin \"Foo\""},
      {"unknown plugin disabled", Doc(p + "filter: {disabled: [{name: Foo}]}\n"),
       "profiles[0].plugins.filter.disabled[0]: unknown plugin \"Foo\""},
      {"upstream-only plugin enabled at preEnqueue",
       Doc(p + "preEnqueue: {enabled: [{name: EBSLimits}]}\n"),
       "profiles[0].plugins.preEnqueue.enabled[0]: plugin \"EBSLimits\" is not supported "
       "by kubesched"},
      {"pluginConfig without a name", Doc("profiles: [{pluginConfig: [{args: {}}]}]\n"),
       "profiles[0].pluginConfig[0].name: required"},
      {"pluginConfig for an unknown plugin", Doc("profiles: [{pluginConfig: [{name: Foo}]}]\n"),
       "profiles[0].pluginConfig[0].name: unknown plugin \"Foo\""},
      {"pluginConfig for an upstream-only plugin",
       Doc("profiles: [{pluginConfig: [{name: EBSLimits}]}]\n"),
       "profiles[0].pluginConfig[0].name: plugin \"EBSLimits\" is not supported by "
       "kubesched"},
      {"pluginConfig given twice for a plugin",
       Doc("profiles: [{pluginConfig: [{name: InterPodAffinity}, {name: InterPodAffinity}]}]\n"),
       "profiles[0].pluginConfig[1].name: duplicate entry for plugin \"InterPodAffinity\" (also "
       "pluginConfig[0])"},
      {"bad args",
       Doc("profiles:\n"
           "- pluginConfig:\n"
           "  - {name: InterPodAffinity, args: {}}\n"
           "  - name: NodeResourcesFit\n"
           "    args: {scoringStrategy: {resources: [{name: cpu, weight: 0}]}}\n"),
       "profiles[0].pluginConfig[1].args.scoringStrategy.resources[0].weight: must be in 1..100, "
       "got 0 (NodeResourcesFit args)"},
      {"unknown args field",
       Doc("profiles: [{pluginConfig: [{name: InterPodAffinity, args: {hardWeight: 1}}]}]\n"),
       "profiles[0].pluginConfig[0].args: unknown field \"hardWeight\" (InterPodAffinity args)"},
      {"negative qps", Doc("clientConnection: {qps: -1}\n"),
       "clientConnection.qps: must not be negative, got -1"},
      {"qps not a number", Doc("clientConnection: {qps: fast}\n"),
       "clientConnection.qps: must be a number, got \"fast\""},
      {"zero burst", Doc("clientConnection: {burst: 0}\n"),
       "clientConnection.burst: must be greater than 0, got 0"},
      {"unknown clientConnection field", Doc("clientConnection: {qsp: 1}\n"),
       "clientConnection: unknown field \"qsp\""},
      {"duration without a unit", Doc("leaderElection: {leaseDuration: 15}\n"),
       "leaderElection.leaseDuration: must be a duration such as \"15s\" or \"1m30s\", got \"15\""},
      {"renew deadline not above the retry period",
       Doc("leaderElection: {renewDeadline: 2s, retryPeriod: 2s}\n"),
       "leaderElection.renewDeadline: must be greater than retryPeriod*1.2 (2.4s), got 2s"},
      {"lease not above the renew deadline", Doc("leaderElection: {leaseDuration: 10s}\n"),
       "leaderElection.leaseDuration: must be greater than renewDeadline (10s), got 10s"},
      {"unsupported lock", Doc("leaderElection: {resourceLock: endpoints}\n"),
       "leaderElection.resourceLock: only \"leases\" is supported, got \"endpoints\""},
      {"args for a plugin that takes none",
       Doc("profiles: [{pluginConfig: [{name: NodeName, args: {foo: 1}}]}]\n"),
       "profiles[0].pluginConfig[0].args: must be empty; the plugin takes no args (NodeName args)"},
  };
  for (const ErrorCase& c : cases) {
    DYNAMIC_SECTION(c.name) { CHECK(ErrorOf(c.text) == c.error); }
  }
}

TEST_CASE("a value of the wrong YAML type is an error naming the field", "[config]") {
  const std::vector<ErrorCase> cases = {
      {"a word for a number", Doc("parallelism: many\n"),
       "parallelism: must be a 32-bit integer, got \"many\""},
      {"a quoted number", Doc("parallelism: \"4\"\n"),
       "parallelism: must be a 32-bit integer, got string \"4\""},
      {"a fraction for an integer", Doc("profiles: [{percentageOfNodesToScore: 1.5}]\n"),
       "profiles[0].percentageOfNodesToScore: must be a 32-bit integer, got \"1.5\""},
      {"a number too large for int32", Doc("parallelism: 4294967296\n"),
       "parallelism: must be a 32-bit integer, got \"4294967296\""},
      {"a map for a list", Doc("profiles: {schedulerName: a}\n"),
       "profiles: must be a list, got a map"},
      {"a list for a map", Doc("profiles: [{plugins: [a]}]\n"),
       "profiles[0].plugins: must be a map, got a list"},
      {"a scalar for a map", Doc("profiles: [{plugins: {score: yes}}]\n"),
       "profiles[0].plugins.score: must be a map, got \"yes\""},
      {"a map for a string", Doc("profiles: [{schedulerName: {a: b}}]\n"),
       "profiles[0].schedulerName: must be a string, got a map"},
      {"a list for the document", "- a\n- b\n", "must be a map, got a list"},
  };
  for (const ErrorCase& c : cases) {
    DYNAMIC_SECTION(c.name) { CHECK(ErrorOf(c.text) == c.error); }
  }
}

TEST_CASE("a document that is not one YAML object is an error", "[config]") {
  const std::vector<ErrorCase> cases = {
      {"empty text", "", "empty document; want a KubeSchedulerConfiguration"},
      {"only a comment", "# nothing\n", "empty document; want a KubeSchedulerConfiguration"},
      {"two documents", std::string(kHeader) + "---\n" + kHeader, "expected one document, found 2"},
      {"a syntax error", Doc("profiles: [\n"), "line 4, column 1: end of sequence flow not found"},
  };
  for (const ErrorCase& c : cases) {
    DYNAMIC_SECTION(c.name) { CHECK(ErrorOf(c.text) == c.error); }
  }
}

TEST_CASE("malformed documents are errors, never exceptions or crashes", "[config]") {
  const std::vector<std::string> texts = {
      "{",
      "[",
      "\"just a string\"",
      "42",
      "? [a, b]\n: c\n",
      Doc("profiles: 5\n"),
      Doc("profiles: [[1]]\n"),
      Doc("profiles: [{plugins: {score: {enabled: x}}}]\n"),
      Doc("profiles: [{plugins: {score: {enabled: [x]}}}]\n"),
      Doc("profiles: [{pluginConfig: [{name: [NodeName]}]}]\n"),
      Doc("profiles: [{pluginConfig: {name: NodeName}}]\n"),
      Doc("profiles: [{pluginConfig: [{name: NodeResourcesFit, args: [1]}]}]\n"),
      Doc("profiles: [{pluginConfig: [{name: NodeResourcesFit, args: 7}]}]\n"),
      Doc("x: &a [*a]\n"),
      Doc("profiles: &p [{schedulerName: *p}]\n"),
      Doc("profiles:\n\t- {}\n"),
      std::string("\xff\xfe\x00\x01", 4),
      Doc(std::string(5000, '[')),
  };
  for (size_t i = 0; i < texts.size(); ++i) {
    CAPTURE(i, texts[i]);
    absl::StatusOr<Configuration> config = absl::UnknownError("not run");
    CHECK_NOTHROW(config = ParseConfiguration(texts[i]));
    CHECK_FALSE(config.ok());
  }
}

// ---------------------------------------------------------------------------------------------
// Files

TEST_CASE("loading a missing file is an error naming the path", "[config]") {
  const absl::StatusOr<Configuration> config = LoadConfigurationFile("/nonexistent/kubesched.yaml");
  REQUIRE_FALSE(config.ok());
  CHECK(config.status().message() ==
        "/nonexistent/kubesched.yaml: cannot read: No such file or directory");
}

TEST_CASE("loading a directory is an error naming the path", "[config]") {
  const absl::StatusOr<Configuration> config = LoadConfigurationFile(KUBESCHED_SOURCE_DIR);
  REQUIRE_FALSE(config.ok());
  CHECK(config.status().message() ==
        std::string(KUBESCHED_SOURCE_DIR) + ": cannot read: is a directory");
}

TEST_CASE("a parse error in a file is prefixed with the path", "[config]") {
  const TempFile file(Doc("parallelism: 0\n"));
  const absl::StatusOr<Configuration> config = LoadConfigurationFile(file.path());
  REQUIRE_FALSE(config.ok());
  CHECK(config.status().message() == file.path() + ": parallelism: must be greater than 0, got 0");
}

TEST_CASE("an endless file ends in an error at the size limit, not in exhausted memory",
          "[config]") {
  const absl::StatusOr<Configuration> config = LoadConfigurationFile("/dev/zero");
  REQUIRE_FALSE(config.ok());
  CHECK(config.status().message() ==
        "/dev/zero: cannot read: larger than the limit of 4194304 bytes");
}

TEST_CASE("a stray comma is a YAML error naming its position", "[config]") {
  // yaml-cpp 0.7 loops on it; the guard turns that into an error.
  const TempFile file(",");
  const absl::StatusOr<Configuration> config = LoadConfigurationFile(file.path());
  REQUIRE_FALSE(config.ok());
  CHECK(absl::StartsWith(config.status().message(), file.path() + ": line 1, column 1: "));
}

TEST_CASE("a valid file loads", "[config]") {
  const TempFile file(Doc("parallelism: 3\n"));
  const absl::StatusOr<Configuration> config = LoadConfigurationFile(file.path());
  REQUIRE(config.ok());
  CHECK(config->parallelism == 3);
}

TEST_CASE("the default example is equivalent to the defaults", "[config]") {
  const absl::StatusOr<Configuration> config = LoadConfigurationFile(ExamplePath("default.yaml"));
  REQUIRE(config.ok());
  Configuration without_args = *config;
  for (const PluginConfig& entry : config->profiles[0].plugin_config) {
    CAPTURE(entry.name);
    CHECK(Dump(entry.args) == Dump(DefaultPluginArgs(entry.name)));
  }
  without_args.profiles[0].plugin_config.clear();
  CHECK(Dump(without_args) == Dump(DefaultConfiguration()));
}

TEST_CASE("the GPU bin-packing example parses", "[config]") {
  const absl::StatusOr<Configuration> config =
      LoadConfigurationFile(ExamplePath("gpu-binpack.yaml"));
  REQUIRE(config.ok());
  const std::vector<PluginConfig>& configs = config->profiles.at(0).plugin_config;
  REQUIRE(configs.size() == 2);
  CHECK(Dump(configs[0].args) ==
        "fit ignored=[] groups=[] type=1 resources=[nvidia.com/gpu:5, cpu:1, memory:1] shape=[]");
  CHECK(Dump(configs[1].args) == "balanced resources=[nvidia.com/gpu:3, cpu:1, memory:1]");
}

}  // namespace
}  // namespace kubesched::config

namespace kubesched::config {
namespace {

TEST_CASE("extenders are refused at start-up, never silently ignored", "[config]") {
  const auto refused = ParseConfiguration(
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
      "extenders:\n- urlPrefix: http://extender:8888\n  filterVerb: filter\n");
  REQUIRE_FALSE(refused.ok());
  CHECK(std::string(refused.status().message())
            .starts_with("extenders: kubesched does not call scheduler extenders"));
  CHECK(ParseConfiguration("apiVersion: kubescheduler.config.k8s.io/v1\n"
                           "kind: KubeSchedulerConfiguration\nextenders: []\n")
            .ok());
}

}  // namespace
}  // namespace kubesched::config
