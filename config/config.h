#pragma once

// The configuration file: a kubescheduler.config.k8s.io/v1 KubeSchedulerConfiguration, read
// unchanged (YAML or JSON), with upstream's defaults.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "config/plugin_args.h"
#include "config/queues.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace kubesched::config {

inline constexpr std::string_view kDefaultSchedulerName = "kubesched";

struct PluginRef {
  std::string name;
  int32_t weight = 0;  // score weight; 0 means "not given" (1 once expanded)
};

// One extension point's list in a profile: enabled in order, disabled names ('*' = all defaults).
struct PluginSet {
  std::vector<PluginRef> enabled;
  std::vector<std::string> disabled;
};

// profiles[].plugins, per extension point.
struct Plugins {
  PluginSet multi_point;
  PluginSet pre_enqueue;
  PluginSet queue_sort;
  PluginSet pre_filter;
  PluginSet filter;
  PluginSet post_filter;
  PluginSet pre_score;
  PluginSet score;
  PluginSet reserve;
  PluginSet permit;
  PluginSet pre_bind;
  PluginSet bind;
  PluginSet post_bind;
};

struct PluginConfig {
  std::string name;
  PluginArgs args;
};

struct Profile {
  std::string scheduler_name = std::string(kDefaultSchedulerName);
  // After loading, upstream's default set merged with the user's lists (see MergeDefaults).
  Plugins plugins;
  // One entry per plugin that was given args; plugins without an entry use default args.
  std::vector<PluginConfig> plugin_config;
  std::optional<int32_t> percentage_of_nodes_to_score;  // overrides the top-level value
};

// clientConnection: how `run` talks to the API server.
struct ClientConnection {
  std::string kubeconfig;  // used when --kubeconfig is not given
  double qps = 50;         // upstream's defaults for the scheduler
  int32_t burst = 100;
  // Upstream defaults to protobuf; kubesched speaks JSON only, so its default says what it does
  // and a configured protobuf type gets a warning at start-up.
  std::string content_type = "application/json";
  std::string accept_content_types;
};

// leaderElection: a coordination.k8s.io/v1 Lease, with upstream's defaults except the name.
struct LeaderElection {
  bool leader_elect = true;
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(2);
  std::string resource_lock = "leases";  // the only lock kubesched supports
  std::string resource_name = "kubesched";
  std::string resource_namespace = "kube-system";
};

// What upstream's validation finds wrong with a leaderElection block (nothing when leaderElect is
// off): the field ("renewDeadline") and why.
struct LeaderElectionProblem {
  std::string_view field;
  std::string message;
};
std::optional<LeaderElectionProblem> CheckLeaderElection(const LeaderElection& election);

// The --leader-elect* flags: each one given replaces its field of the file's leaderElection, as
// kube-scheduler lets these flags override --config.
struct LeaderElectionOverrides {
  std::optional<bool> leader_elect;
  std::optional<absl::Duration> lease_duration;
  std::optional<absl::Duration> renew_deadline;
  std::optional<absl::Duration> retry_period;
  std::optional<std::string> resource_lock;
  std::optional<std::string> resource_name;
  std::optional<std::string> resource_namespace;
};

// Applies the overrides, then upstream's validation; an InvalidArgument error names the flag when
// one was given for the field at fault ("--leader-elect-renew-deadline: must be greater than
// ..."), else the field, saying the flags were applied.
absl::Status ApplyLeaderElectionOverrides(const LeaderElectionOverrides& overrides,
                                          LeaderElection* election);

// Where the watched ConfigMap of policies lives (policyConfigMap); empty: no ConfigMap.
using PolicyConfigMap = ObjectRef;

struct Configuration {
  std::vector<Profile> profiles;
  ClientConnection client_connection;
  LeaderElection leader_election;
  int32_t percentage_of_nodes_to_score = 0;  // 0 = adaptive
  int64_t pod_initial_backoff_seconds = 1;
  int64_t pod_max_backoff_seconds = 10;
  int32_t parallelism = 16;
  // kubesched's own section: hierarchical queue quota. Absent: every pod goes to
  // root.<namespace>, limited only by namespace annotations.
  QueuesConfig queues;
  // kubesched's own sections: per-pod policies (DESIGN.md "Policies (per-pod)"). The `policies:`
  // list is kept as written (null when absent) for policy/ to decode with the decoder that also
  // reads the ConfigMap's policies (policy::ParseFilePolicies); the ConfigMap's data keys add more.
  std::shared_ptr<const YAML::Node> policies;
  // `policyBindings:` kept as written likewise (policy::ParseFileBindings).
  std::shared_ptr<const YAML::Node> policy_bindings;
  PolicyConfigMap policy_config_map;
};

// Upstream's default plugin set (the plugins kubesched has), as a multiPoint list with weights.
Plugins DefaultPlugins();

// The configuration used when no file is given: one profile named "kubesched" with defaults.
Configuration DefaultConfiguration();

// Parses and validates a configuration document. Errors are InvalidArgument and name the field
// ("profiles[0].pluginConfig[1].args.scoringStrategy.resources[0].weight: must be in 1..100") or
// the plugin ("profiles[0].plugins.score.enabled[2]: unknown plugin \"Foo\"").
absl::StatusOr<Configuration> ParseConfiguration(std::string_view text);
absl::StatusOr<Configuration> LoadConfigurationFile(const std::string& path);

// Parses one plugin's args (JSON or YAML object text) into its struct; the conformance vectors
// and tests use it directly. An empty text means defaults.
absl::StatusOr<PluginArgs> ParsePluginArgs(std::string_view plugin_name, std::string_view text);

// The args a plugin gets when the profile has no pluginConfig entry for it.
PluginArgs DefaultPluginArgs(std::string_view plugin_name);

}  // namespace kubesched::config
