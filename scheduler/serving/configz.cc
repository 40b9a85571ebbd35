#include "scheduler/serving/configz.h"

#include <cmath>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "scheduler/serving/configz_internal.h"

namespace kubesched::serving {
namespace {

using internal::Key;
using internal::String;
using internal::Writer;

void WritePluginSet(Writer& out, std::string_view key, const config::PluginSet& set) {
  Key(out, key);
  out.StartObject();
  Key(out, "Enabled");
  if (set.enabled.empty()) {
    out.Null();  // Go's nil slice
  } else {
    out.StartArray();
    for (const config::PluginRef& plugin : set.enabled) {
      out.StartObject();
      String(out, "Name", plugin.name);
      Key(out, "Weight");
      out.Int(plugin.weight);
      out.EndObject();
    }
    out.EndArray();
  }
  Key(out, "Disabled");
  if (set.disabled.empty()) {
    out.Null();
  } else {
    out.StartArray();
    for (const std::string& name : set.disabled) {
      out.StartObject();
      String(out, "Name", name);
      Key(out, "Weight");
      out.Int(0);
      out.EndObject();
    }
    out.EndArray();
  }
  out.EndObject();
}

void WritePlugins(Writer& out, const config::Plugins& plugins) {
  Key(out, "Plugins");
  out.StartObject();
  WritePluginSet(out, "PreEnqueue", plugins.pre_enqueue);
  WritePluginSet(out, "QueueSort", plugins.queue_sort);
  WritePluginSet(out, "PreFilter", plugins.pre_filter);
  WritePluginSet(out, "Filter", plugins.filter);
  WritePluginSet(out, "PostFilter", plugins.post_filter);
  WritePluginSet(out, "PreScore", plugins.pre_score);
  WritePluginSet(out, "Score", plugins.score);
  WritePluginSet(out, "Reserve", plugins.reserve);
  WritePluginSet(out, "Permit", plugins.permit);
  WritePluginSet(out, "PreBind", plugins.pre_bind);
  WritePluginSet(out, "Bind", plugins.bind);
  WritePluginSet(out, "PostBind", plugins.post_bind);
  WritePluginSet(out, "MultiPoint", plugins.multi_point);
  out.EndObject();
}

void WriteProfile(Writer& out, const config::Profile& profile) {
  out.StartObject();
  String(out, "SchedulerName", profile.scheduler_name);
  Key(out, "PercentageOfNodesToScore");
  if (profile.percentage_of_nodes_to_score.has_value()) {
    out.Int(*profile.percentage_of_nodes_to_score);
  } else {
    out.Null();
  }
  WritePlugins(out, profile.plugins);
  Key(out, "PluginConfig");
  if (profile.plugin_config.empty()) {
    out.Null();
  } else {
    out.StartArray();
    for (const config::PluginConfig& plugin : profile.plugin_config) {
      out.StartObject();
      String(out, "Name", plugin.name);
      Key(out, "Args");
      internal::WritePluginArgs(out, plugin.args);
      out.EndObject();
    }
    out.EndArray();
  }
  out.EndObject();
}

void WriteConnectionAndElection(Writer& out, const config::Configuration& config) {
  const config::LeaderElection& election = config.leader_election;
  Key(out, "LeaderElection");
  out.StartObject();
  Key(out, "LeaderElect");
  out.Bool(election.leader_elect);
  String(out, "LeaseDuration", GoDuration(election.lease_duration));
  String(out, "RenewDeadline", GoDuration(election.renew_deadline));
  String(out, "RetryPeriod", GoDuration(election.retry_period));
  String(out, "ResourceLock", election.resource_lock);
  String(out, "ResourceName", election.resource_name);
  String(out, "ResourceNamespace", election.resource_namespace);
  out.EndObject();
  const config::ClientConnection& connection = config.client_connection;
  Key(out, "ClientConnection");
  out.StartObject();
  String(out, "Kubeconfig", connection.kubeconfig);
  String(out, "AcceptContentTypes", connection.accept_content_types);
  String(out, "ContentType", connection.content_type);
  Key(out, "QPS");
  // Go writes a whole float32 without a fraction.
  if (connection.qps == std::floor(connection.qps) && std::abs(connection.qps) < 1e15) {
    out.Int64(static_cast<int64_t>(connection.qps));
  } else {
    out.Double(connection.qps);
  }
  Key(out, "Burst");
  out.Int(connection.burst);
  out.EndObject();
}

}  // namespace

std::string GoDuration(absl::Duration duration) {
  if (duration == absl::ZeroDuration()) return "0s";
  std::string sign = duration < absl::ZeroDuration() ? "-" : "";
  duration = absl::AbsDuration(duration);
  if (duration < absl::Seconds(1)) {
    if (duration >= absl::Milliseconds(1)) {
      return absl::StrCat(sign, absl::FDivDuration(duration, absl::Milliseconds(1)), "ms");
    }
    if (duration >= absl::Microseconds(1)) {
      return absl::StrCat(sign, absl::FDivDuration(duration, absl::Microseconds(1)), "µs");
    }
    return absl::StrCat(sign, absl::ToInt64Nanoseconds(duration), "ns");
  }
  const int64_t hours = absl::IDivDuration(duration, absl::Hours(1), &duration);
  const int64_t minutes = absl::IDivDuration(duration, absl::Minutes(1), &duration);
  const std::string seconds = absl::StrCat(absl::FDivDuration(duration, absl::Seconds(1)), "s");
  if (hours > 0) return absl::StrCat(sign, hours, "h", minutes, "m", seconds);
  if (minutes > 0) return absl::StrCat(sign, minutes, "m", seconds);
  return sign + seconds;
}

std::string ConfigzJson(const config::Configuration& config) {
  rapidjson::StringBuffer buffer;
  Writer out(buffer);
  out.StartObject();
  Key(out, "componentconfig");
  out.StartObject();
  Key(out, "Parallelism");
  out.Int(config.parallelism);
  WriteConnectionAndElection(out, config);
  Key(out, "EnableProfiling");
  out.Bool(false);
  Key(out, "EnableContentionProfiling");
  out.Bool(false);
  Key(out, "PercentageOfNodesToScore");
  out.Int(config.percentage_of_nodes_to_score);
  Key(out, "PodInitialBackoffSeconds");
  out.Int64(config.pod_initial_backoff_seconds);
  Key(out, "PodMaxBackoffSeconds");
  out.Int64(config.pod_max_backoff_seconds);
  Key(out, "Profiles");
  out.StartArray();
  for (const config::Profile& profile : config.profiles) WriteProfile(out, profile);
  out.EndArray();
  Key(out, "Extenders");
  out.Null();
  Key(out, "DelayCacheUntilActive");
  out.Bool(false);
  out.EndObject();
  out.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace kubesched::serving
