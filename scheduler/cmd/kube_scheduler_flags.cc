#include "scheduler/cmd/kube_scheduler_flags.h"

#include <algorithm>
#include <array>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "scheduler/client/server_url.h"
#include "scheduler/util/strings.h"

namespace kubesched::scheduler {
namespace {

using util::Absl;

// A kube-scheduler flag kubesched accepts and ignores, and why it may.
struct IgnoredFlag {
  std::string_view name;
  bool boolean;
  std::string_view reason;
};

constexpr std::string_view kLogStream = "kubesched writes every log line to stderr, unbuffered";
constexpr std::string_view kMetricsSet = "kubesched's metrics are a fixed set with bounded labels";
constexpr std::string_view kServing =
    "kubesched's secure port takes only what its own flags say (see kubesched run --help)";
constexpr std::string_view kRequestHeader =
    "kubesched authenticates bearer tokens only, not client certificates or request headers";

constexpr std::array<IgnoredFlag, 29> kIgnoredFlags = {{
    {"profiling", true, "kubesched serves no /debug/pprof"},
    {"contention-profiling", true, "kubesched serves no /debug/pprof"},
    {"kube-api-content-type", false, "kubesched speaks JSON to the API server"},
    {"log-flush-frequency", false, kLogStream},
    {"log-json-info-buffer-size", false, kLogStream},
    {"log-json-split-stream", true, kLogStream},
    {"log-text-info-buffer-size", false, kLogStream},
    {"log-text-split-stream", true, kLogStream},
    {"vmodule", false, "kubesched has one verbosity (-v) for every file"},
    {"allow-metric-labels", false, kMetricsSet},
    {"allow-metric-labels-manifest", false, kMetricsSet},
    {"disabled-metrics", false, kMetricsSet},
    {"show-hidden-metrics-for-version", false, kMetricsSet},
    {"emulated-version", false, "kubesched has one behaviour, not one per Kubernetes version"},
    {"cert-dir", false, kServing},
    {"tls-cipher-suites", false, kServing},
    {"tls-min-version", false, kServing},
    {"tls-sni-cert-key", false, kServing},
    {"http2-max-streams-per-connection", false, kServing},
    {"permit-address-sharing", true, kServing},
    {"permit-port-sharing", true, kServing},
    {"authentication-skip-lookup", true, kRequestHeader},
    {"authentication-token-webhook-cache-ttl", false, "kubesched caches TokenReviews its own way"},
    {"authentication-tolerate-lookup-failure", true, kRequestHeader},
    {"authorization-webhook-cache-authorized-ttl", false,
     "kubesched caches SubjectAccessReviews its own way"},
    {"authorization-webhook-cache-unauthorized-ttl", false,
     "kubesched caches SubjectAccessReviews its own way"},
    {"client-ca-file", false, kRequestHeader},
    {"requestheader-client-ca-file", false, kRequestHeader},
    {"requestheader-allowed-names", false, kRequestHeader},
}};

// The other --requestheader-* flags: the same reason.
constexpr std::array<std::string_view, 4> kRequestHeaderFlags = {
    "requestheader-extra-headers-prefix", "requestheader-group-headers",
    "requestheader-uid-headers", "requestheader-username-headers"};

// Flags whose kube-scheduler meaning kubesched does not have, and that it cannot ignore without
// misleading (--write-config-to writes the configuration and exits, instead of scheduling).
constexpr std::array<std::string_view, 1> kRefusedFlags = {"write-config-to"};

constexpr std::array<std::string_view, 8> kHonouredValueFlags = {"master",
                                                                 "leader-elect-lease-duration",
                                                                 "leader-elect-renew-deadline",
                                                                 "leader-elect-retry-period",
                                                                 "leader-elect-resource-lock",
                                                                 "leader-elect-resource-name",
                                                                 "leader-elect-resource-namespace",
                                                                 "logging-format"};

// Upstream's feature gates that concern scheduling, and how kubesched always behaves.
struct KnownGate {
  std::string_view name;
  bool kubesched_behaviour;
};

constexpr std::array<KnownGate, 14> kKnownGates = {{
    {"PodSchedulingReadiness", true},
    {"MatchLabelKeysInPodTopologySpread", true},
    {"MatchLabelKeysInPodAffinity", true},
    {"NodeInclusionPolicyInPodTopologySpread", true},
    {"MinDomainsInPodTopologySpread", true},
    {"SidecarContainers", true},
    {"PodDisruptionConditions", true},
    {"DynamicResourceAllocation", true},
    {"SchedulerQueueingHints", false},
    {"VolumeCapacityPriority", false},
    {"PodLevelResources", false},
    {"InPlacePodVerticalScaling", false},
    {"AllAlpha", false},
    {"AllBeta", false},
}};

std::optional<bool> KnownGateBehaviour(std::string_view name) {
  for (const KnownGate& gate : kKnownGates) {
    if (gate.name == name) return gate.kubesched_behaviour;
  }
  return std::nullopt;
}

bool ParseDurationFlag(const ParsedFlags& flags, const std::string& name,
                       std::optional<absl::Duration>* out, std::ostream& err) {
  const std::optional<std::string> text = Get(flags, name);
  if (!text.has_value()) return true;
  absl::Duration value;
  if (!absl::ParseDuration(*text, &value) || value == absl::InfiniteDuration() ||
      value == -absl::InfiniteDuration()) {
    err << "error: --" << name << " must be a duration such as 15s, got \"" << *text << "\"\n";
    return false;
  }
  *out = value;
  return true;
}

bool ReadLeaderElection(const ParsedFlags& flags, RunOptions* options, std::ostream& err) {
  config::LeaderElectionOverrides* out = &options->leader_election;
  if (!ParseBool(flags, "leader-elect", &options->leader_elect, err) ||
      !ParseDurationFlag(flags, "leader-elect-lease-duration", &out->lease_duration, err) ||
      !ParseDurationFlag(flags, "leader-elect-renew-deadline", &out->renew_deadline, err) ||
      !ParseDurationFlag(flags, "leader-elect-retry-period", &out->retry_period, err)) {
    return false;
  }
  out->resource_lock = Get(flags, "leader-elect-resource-lock");
  if (out->resource_lock.has_value() && *out->resource_lock != "leases") {
    err << "error: --leader-elect-resource-lock: only \"leases\" is supported (a "
           "coordination.k8s.io/v1 Lease), got \""
        << *out->resource_lock << "\"\n";
    return false;
  }
  out->resource_name = Get(flags, "leader-elect-resource-name");
  out->resource_namespace = Get(flags, "leader-elect-resource-namespace");
  return true;
}

bool ReadLogging(const ParsedFlags& flags, KubeSchedulerSettings* settings, std::ostream& err) {
  const std::string format = Get(flags, "logging-format").value_or("text");
  if (format == "json") {
    settings->log_format = util::LogFormat::kJson;
  } else if (format == "text") {
    settings->log_format = util::LogFormat::kText;
  } else {
    err << "error: --logging-format must be text or json, got \"" << format << "\"\n";
    return false;
  }
  return true;
}

void WarnIgnored(const ParsedFlags& flags, std::vector<std::string>* warnings) {
  for (const IgnoredFlag& flag : kIgnoredFlags) {
    const std::optional<std::string> value = Get(flags, std::string(flag.name));
    if (!value.has_value()) continue;
    // What kubesched does anyway is no reason for a warning.
    if (flag.boolean && ParseGoBool(*value) == false) continue;
    if (flag.name == "kube-api-content-type" && *value == "application/json") continue;
    warnings->push_back(absl::StrCat(
        "--", Absl(flag.name), "=", *value,
        " is accepted for kube-scheduler compatibility and ignored: ", Absl(flag.reason)));
  }
  for (std::string_view name : kRequestHeaderFlags) {
    if (Get(flags, std::string(name)).has_value()) {
      warnings->push_back(absl::StrCat(
          "--", Absl(name),
          " is accepted for kube-scheduler compatibility and ignored: ", Absl(kRequestHeader)));
    }
  }
}

}  // namespace

ExtraFlags KubeSchedulerFlags() {
  ExtraFlags flags;
  flags.values.assign(kHonouredValueFlags.begin(), kHonouredValueFlags.end());
  flags.values.push_back("feature-gates");
  flags.booleans.push_back("leader-elect");
  for (const IgnoredFlag& flag : kIgnoredFlags) {
    (flag.boolean ? flags.booleans : flags.values).emplace_back(flag.name);
  }
  flags.values.insert(flags.values.end(), kRequestHeaderFlags.begin(), kRequestHeaderFlags.end());
  flags.values.insert(flags.values.end(), kRefusedFlags.begin(), kRefusedFlags.end());
  return flags;
}

absl::Status ParseFeatureGates(std::string_view text, std::vector<std::string>* warnings) {
  absl::flat_hash_set<std::string> seen;
  for (absl::string_view entry : absl::StrSplit(Absl(text), ',')) {
    entry = absl::StripAsciiWhitespace(entry);
    if (entry.empty()) continue;
    const std::vector<absl::string_view> pair = absl::StrSplit(entry, absl::MaxSplits('=', 1));
    const std::optional<bool> value =
        pair.size() == 2 ? ParseGoBool(util::Std(absl::StripAsciiWhitespace(pair[1])))
                         : std::nullopt;
    if (!value.has_value() || absl::StripAsciiWhitespace(pair[0]).empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--feature-gates: \"", entry,
                       "\" is not Name=true or Name=false (a list: A=true,B=false)"));
    }
    const std::string name(absl::StripAsciiWhitespace(pair[0]));
    if (!seen.insert(name).second) continue;
    const std::optional<bool> behaviour = KnownGateBehaviour(name);
    if (!behaviour.has_value()) {
      warnings->push_back(
          absl::StrCat("--feature-gates: unknown feature gate \"", name, "\"; ignored"));
    } else if (*behaviour != *value) {
      warnings->push_back(absl::StrCat("--feature-gates: kubesched always behaves as with ", name,
                                       "=", *behaviour ? "true" : "false", "; ", name, "=",
                                       *value ? "true" : "false", " is ignored"));
    }
  }
  return absl::OkStatus();
}

bool ReadKubeSchedulerFlags(const ParsedFlags& flags, RunOptions* options,
                            KubeSchedulerSettings* settings, std::ostream& err) {
  for (std::string_view name : kRefusedFlags) {
    if (Get(flags, std::string(name)).has_value()) {
      err << "error: --" << name
          << " is not supported: kubesched does not write its configuration out; remove the flag\n";
      return false;
    }
  }
  if (!ReadLeaderElection(flags, options, err) || !ReadLogging(flags, settings, err)) {
    return false;
  }
  if (const std::optional<std::string> master = Get(flags, "master"); master.has_value()) {
    if (absl::StatusOr<client::ServerUrl> url = client::ParseServerUrl(*master); !url.ok()) {
      err << "error: --master: " << url.status().message() << "\n";
      return false;
    }
    options->master = *master;
  }
  if (const std::optional<std::string> gates = Get(flags, "feature-gates"); gates.has_value()) {
    if (absl::Status status = ParseFeatureGates(*gates, &settings->warnings); !status.ok()) {
      err << "error: " << status.message() << "\n";
      return false;
    }
  }
  WarnIgnored(flags, &settings->warnings);
  return true;
}

}  // namespace kubesched::scheduler
