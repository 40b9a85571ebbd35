// KubeSchedulerConfiguration: strict decoding (as upstream's), validation
// (pkg/scheduler/apis/config/validation) and v1 defaulting (see merge.h).

#include "config/config.h"

#include <array>
#include <exception>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "config/decode_internal.h"
#include "config/merge.h"
#include "config/profile_body.h"
#include "config/yaml_reader.h"
#include "scheduler/api/yaml_guard.h"
#include "scheduler/util/file.h"
#include "scheduler/util/strings.h"

namespace kubesched::config {
namespace {

using util::Absl;
using yaml::Field;
using yaml::Get;
using yaml::HasValue;
using yaml::Index;
using yaml::Reader;

constexpr std::string_view kKind = "KubeSchedulerConfiguration";

// The fields kubesched reads, then upstream's others: accepted so that kube-scheduler configs
// load unchanged. Anything else is an error, as upstream's strict decoding makes it.
constexpr std::array<std::string_view, 20> kTopLevelFields = {
    "apiVersion",
    "kind",
    "profiles",
    "percentageOfNodesToScore",
    "podInitialBackoffSeconds",
    "podMaxBackoffSeconds",
    "parallelism",
    "leaderElection",
    "clientConnection",
    "queues",           // kubesched's own
    "policies",         // kubesched's own
    "policyBindings",   // kubesched's own
    "policyConfigMap",  // kubesched's own
    "extenders",        // read only to refuse a non-empty list: kubesched calls no extenders
    // Upstream's other fields, accepted and ignored here.
    "healthzBindAddress",
    "metricsBindAddress",
    "enableProfiling",
    "enableContentionProfiling",
    "delayCacheUntilActive",
    "featureGates",
};

constexpr std::array<std::string_view, 4> kProfileFields = {
    "schedulerName", "plugins", "pluginConfig", "percentageOfNodesToScore"};

// The fields of profiles[i].plugins: one per extension point.
constexpr auto kPluginsFields = [] {
  std::array<std::string_view, kExtensionPointFields.size()> names{};
  for (size_t i = 0; i < names.size(); ++i) names[i] = kExtensionPointFields[i].name;
  return names;
}();

std::string Quote(std::string_view text) { return absl::StrCat("\"", Absl(text), "\""); }

// Reads the name of one plugin list entry ({name, weight}); false (error recorded) when missing.
bool ReadPluginName(Reader& r, const YAML::Node& item, std::string_view path, std::string* name) {
  if (!r.Map(item, path, {"name", "weight"})) return false;
  r.String(Get(item, "name"), Field(path, "name"), name);
  if (r.ok() && name->empty()) r.Fail(Field(path, "name"), "required");
  return r.ok();
}

// profiles[i].plugins.<point>.enabled
void DecodeEnabled(Reader& r, const YAML::Node& node, std::string_view path,
                   std::vector<PluginRef>* out) {
  if (!r.List(node, path) || !HasValue(node)) return;
  for (const YAML::Node& item : node) {
    const std::string item_path = Index(path, out->size());
    PluginRef plugin;
    if (!ReadPluginName(r, item, item_path, &plugin.name)) return;
    if (auto status = CheckPluginName(plugin.name); !status.ok()) {
      r.Fail(item_path, util::Std(status.message()));
      return;
    }
    const std::string weight_path = Field(item_path, "weight");
    r.Int32(Get(item, "weight"), weight_path, &plugin.weight);
    if (r.ok() && plugin.weight < 0) {
      r.Fail(weight_path, absl::StrCat("must not be negative, got ", plugin.weight));
    }
    for (size_t j = 0; r.ok() && j < out->size(); ++j) {
      // Upstream's framework refuses to start with a plugin registered twice at one point.
      if ((*out)[j].name != plugin.name) continue;
      r.Fail(item_path, absl::StrCat("plugin ", Quote(plugin.name), " is enabled twice (also ",
                                     Index("enabled", j), ")"));
    }
    if (!r.ok()) return;
    out->push_back(std::move(plugin));
  }
}

// profiles[i].plugins.<point>.disabled
void DecodeDisabled(Reader& r, const YAML::Node& node, std::string_view path,
                    std::vector<std::string>* out) {
  if (!r.List(node, path) || !HasValue(node)) return;
  for (const YAML::Node& item : node) {
    const std::string item_path = Index(path, out->size());
    std::string name;
    if (!ReadPluginName(r, item, item_path, &name)) return;
    if (!IsDisableableName(name)) {
      r.Fail(item_path, "unknown plugin " + Quote(name));
      return;
    }
    out->push_back(std::move(name));
  }
}

PluginSet DecodePluginSet(Reader& r, const YAML::Node& node, std::string_view path) {
  PluginSet set;
  if (!r.Map(node, path, {"enabled", "disabled"})) return set;
  DecodeEnabled(r, Get(node, "enabled"), Field(path, "enabled"), &set.enabled);
  DecodeDisabled(r, Get(node, "disabled"), Field(path, "disabled"), &set.disabled);
  return set;
}

// profiles[i].plugins, as the user wrote it (MergeDefaults runs later).
Plugins DecodePlugins(Reader& r, const YAML::Node& node, std::string_view path) {
  Plugins plugins;
  if (!r.Map(node, path, kPluginsFields)) return plugins;
  for (const ExtensionPointField& point : kExtensionPointFields) {
    plugins.*point.set = DecodePluginSet(r, Get(node, point.name), Field(path, point.name));
  }
  return plugins;
}

// profiles[i].pluginConfig: one entry per plugin, args decoded into the plugin's struct.
void DecodePluginConfig(Reader& r, const YAML::Node& node, std::string_view path,
                        std::vector<PluginConfig>* out) {
  if (!r.List(node, path) || !HasValue(node)) return;
  for (const YAML::Node& item : node) {
    const std::string item_path = Index(path, out->size());
    const std::string name_path = Field(item_path, "name");
    PluginConfig config;
    if (!r.Map(item, item_path, {"name", "args"})) return;
    r.String(Get(item, "name"), name_path, &config.name);
    if (r.ok() && config.name.empty()) r.Fail(name_path, "required");
    if (!r.ok()) return;
    if (auto status = CheckPluginName(config.name); !status.ok()) {
      r.Fail(name_path, util::Std(status.message()));
      return;
    }
    for (size_t j = 0; j < out->size(); ++j) {
      if ((*out)[j].name != config.name) continue;
      r.Fail(name_path, absl::StrCat("duplicate entry for plugin ", Quote(config.name), " (also ",
                                     Index("pluginConfig", j), ")"));
      return;
    }
    absl::StatusOr<PluginArgs> args =
        DecodePluginArgs(config.name, Get(item, "args"), Field(item_path, "args"));
    if (!args.ok()) {
      // The path gives the entry's index; the name saves counting entries to find the plugin.
      r.Merge(absl::InvalidArgumentError(
          absl::StrCat(args.status().message(), " (", config.name, " args)")));
      return;
    }
    config.args = *std::move(args);
    out->push_back(std::move(config));
  }
}

Profile DecodeProfile(Reader& r, const YAML::Node& node, std::string_view path) {
  Profile profile;
  if (!r.Map(node, path, kProfileFields)) return profile;
  r.String(Get(node, "schedulerName"), Field(path, "schedulerName"), &profile.scheduler_name);
  if (profile.scheduler_name.empty()) profile.scheduler_name = std::string(kDefaultSchedulerName);
  DecodeProfileBody(r, node, path, &profile);
  return profile;
}

void DecodeProfiles(Reader& r, const YAML::Node& node, std::vector<Profile>* out) {
  if (!r.List(node, "profiles") || !HasValue(node)) return;
  for (const YAML::Node& item : node) {
    const std::string path = Index("profiles", out->size());
    Profile profile = DecodeProfile(r, item, path);
    if (!r.ok()) return;
    for (size_t j = 0; j < out->size(); ++j) {
      if ((*out)[j].scheduler_name != profile.scheduler_name) continue;
      r.Fail(Field(path, "schedulerName"),
             absl::StrCat("duplicate scheduler name ", Quote(profile.scheduler_name), " (also ",
                          Index("profiles", j), ")"));
      return;
    }
    out->push_back(std::move(profile));
  }
}

// Top-level scalars, with upstream's validation.
void DecodeSettings(Reader& r, const YAML::Node& root, Configuration* config) {
  r.Int32(Get(root, "percentageOfNodesToScore"), "percentageOfNodesToScore",
          &config->percentage_of_nodes_to_score);
  r.InRange(config->percentage_of_nodes_to_score, "percentageOfNodesToScore", 0, 100);
  r.Int64(Get(root, "podInitialBackoffSeconds"), "podInitialBackoffSeconds",
          &config->pod_initial_backoff_seconds);
  if (r.ok() && config->pod_initial_backoff_seconds <= 0) {
    r.Fail("podInitialBackoffSeconds",
           absl::StrCat("must be greater than 0, got ", config->pod_initial_backoff_seconds));
  }
  r.Int64(Get(root, "podMaxBackoffSeconds"), "podMaxBackoffSeconds",
          &config->pod_max_backoff_seconds);
  if (r.ok() && config->pod_max_backoff_seconds < config->pod_initial_backoff_seconds) {
    r.Fail("podMaxBackoffSeconds", absl::StrCat("must be at least podInitialBackoffSeconds (",
                                                config->pod_initial_backoff_seconds, "), got ",
                                                config->pod_max_backoff_seconds));
  }
  r.Int32(Get(root, "parallelism"), "parallelism", &config->parallelism);
  if (r.ok() && config->parallelism <= 0) {
    r.Fail("parallelism", absl::StrCat("must be greater than 0, got ", config->parallelism));
  }
}

constexpr std::array<std::string_view, 5> kClientConnectionFields = {
    "kubeconfig", "qps", "burst", "contentType", "acceptContentTypes"};

void DecodeClientConnection(Reader& r, const YAML::Node& node, ClientConnection* out) {
  constexpr std::string_view kPath = "clientConnection";
  if (!r.Map(node, kPath, kClientConnectionFields) || !HasValue(node)) return;
  r.String(Get(node, "kubeconfig"), Field(kPath, "kubeconfig"), &out->kubeconfig);
  r.Double(Get(node, "qps"), Field(kPath, "qps"), &out->qps);
  if (r.ok() && out->qps < 0) {
    r.Fail(Field(kPath, "qps"), absl::StrCat("must not be negative, got ", out->qps));
  }
  r.Int32(Get(node, "burst"), Field(kPath, "burst"), &out->burst);
  if (r.ok() && out->qps > 0 && out->burst <= 0) {
    r.Fail(Field(kPath, "burst"), absl::StrCat("must be greater than 0, got ", out->burst));
  }
  r.String(Get(node, "contentType"), Field(kPath, "contentType"), &out->content_type);
  r.String(Get(node, "acceptContentTypes"), Field(kPath, "acceptContentTypes"),
           &out->accept_content_types);
}

constexpr std::array<std::string_view, 7> kLeaderElectionFields = {
    "leaderElect",  "leaseDuration", "renewDeadline",    "retryPeriod",
    "resourceLock", "resourceName",  "resourceNamespace"};

void DecodeLeaderElection(Reader& r, const YAML::Node& node, LeaderElection* out) {
  constexpr std::string_view kPath = "leaderElection";
  if (!r.Map(node, kPath, kLeaderElectionFields) || !HasValue(node)) return;
  r.Bool(Get(node, "leaderElect"), Field(kPath, "leaderElect"), &out->leader_elect);
  r.Duration(Get(node, "leaseDuration"), Field(kPath, "leaseDuration"), &out->lease_duration);
  r.Duration(Get(node, "renewDeadline"), Field(kPath, "renewDeadline"), &out->renew_deadline);
  r.Duration(Get(node, "retryPeriod"), Field(kPath, "retryPeriod"), &out->retry_period);
  r.String(Get(node, "resourceLock"), Field(kPath, "resourceLock"), &out->resource_lock);
  r.String(Get(node, "resourceName"), Field(kPath, "resourceName"), &out->resource_name);
  r.String(Get(node, "resourceNamespace"), Field(kPath, "resourceNamespace"),
           &out->resource_namespace);
  if (!r.ok()) return;
  if (std::optional<LeaderElectionProblem> problem = CheckLeaderElection(*out)) {
    r.Fail(Field(kPath, problem->field), problem->message);
  }
}

absl::StatusOr<Configuration> DecodeConfiguration(const YAML::Node& root) {
  if (!HasValue(root)) {
    return absl::InvalidArgumentError("empty document; want a KubeSchedulerConfiguration");
  }
  Reader r;
  Configuration config;
  if (!r.Map(root, "", kTopLevelFields)) return r.status();
  if (const YAML::Node extenders = Get(root, "extenders");
      HasValue(extenders) && !(extenders.IsSequence() && extenders.size() == 0)) {
    return absl::InvalidArgumentError(
        "extenders: kubesched does not call scheduler extenders, so their filters, scores and "
        "binds would not apply; remove them, or keep the pods that need them on kube-scheduler");
  }
  CheckTypeMeta(r, root, "", kKind, /*required=*/true);
  DecodeSettings(r, root, &config);
  DecodeClientConnection(r, Get(root, "clientConnection"), &config.client_connection);
  DecodeLeaderElection(r, Get(root, "leaderElection"), &config.leader_election);
  DecodeProfiles(r, Get(root, "profiles"), &config.profiles);
  DecodeQueuesSection(r, Get(root, "queues"), "queues", /*in_file=*/true, &config.queues);
  if (const YAML::Node policies = Get(root, "policies"); HasValue(policies)) {
    config.policies = std::make_shared<const YAML::Node>(policies);
  }
  if (const YAML::Node bindings = Get(root, "policyBindings"); HasValue(bindings)) {
    config.policy_bindings = std::make_shared<const YAML::Node>(bindings);
  }
  DecodePolicyConfigMap(r, Get(root, "policyConfigMap"), "policyConfigMap",
                        &config.policy_config_map);
  if (!r.ok()) return r.status();
  if (config.profiles.empty()) config.profiles.emplace_back();
  const Plugins defaults = DefaultPlugins();
  for (Profile& profile : config.profiles) {
    profile.plugins = MergeDefaults(defaults, profile.plugins);
  }
  return config;
}

}  // namespace

void DecodePolicyConfigMap(Reader& r, const YAML::Node& node, std::string_view path,
                           PolicyConfigMap* out) {
  if (!r.Map(node, path, {"namespace", "name"}) || !HasValue(node)) return;
  r.String(Get(node, "namespace"), Field(path, "namespace"), &out->namespace_name);
  r.String(Get(node, "name"), Field(path, "name"), &out->name);
  if (r.ok() && (out->name.empty() || out->namespace_name.empty())) {
    r.Fail(Field(path, out->name.empty() ? "name" : "namespace"), "required");
  }
}

void DecodeProfileBody(Reader& r, const YAML::Node& node, std::string_view path, Profile* out) {
  out->plugins = DecodePlugins(r, Get(node, "plugins"), Field(path, "plugins"));
  DecodePluginConfig(r, Get(node, "pluginConfig"), Field(path, "pluginConfig"),
                     &out->plugin_config);
  const YAML::Node percentage = Get(node, "percentageOfNodesToScore");
  if (HasValue(percentage)) {
    const std::string percentage_path = Field(path, "percentageOfNodesToScore");
    int32_t value = 0;
    r.Int32(percentage, percentage_path, &value);
    r.InRange(value, percentage_path, 0, 100);
    out->percentage_of_nodes_to_score = value;
  }
}

Configuration DefaultConfiguration() {
  Configuration config;
  Profile& profile = config.profiles.emplace_back();
  profile.plugins = DefaultPlugins();
  return config;
}

absl::StatusOr<Configuration> ParseConfiguration(std::string_view text) {
  try {
    absl::StatusOr<YAML::Node> root = yaml::ParseDocument(text);
    if (!root.ok()) return root.status();
    return DecodeConfiguration(*root);
  } catch (const std::exception& e) {
    // yaml-cpp throws on misuse; no exception may leave config/.
    return absl::InvalidArgumentError(absl::StrCat("cannot decode configuration: ", e.what()));
  }
}

absl::StatusOr<Configuration> LoadConfigurationFile(const std::string& path) {
  absl::StatusOr<std::string> text = util::ReadFileAtMost(path, api::kMaxConfigYamlBytes);
  if (!text.ok()) {
    return absl::Status(text.status().code(),
                        absl::StrCat(path, ": cannot read: ", text.status().message()));
  }
  absl::StatusOr<Configuration> config = ParseConfiguration(*text);
  if (!config.ok()) {
    return absl::Status(config.status().code(),
                        absl::StrCat(path, ": ", config.status().message()));
  }
  return config;
}

}  // namespace kubesched::config
