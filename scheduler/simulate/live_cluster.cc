#include "scheduler/simulate/live_cluster.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "policy/policy.h"
#include "scheduler/client/cluster_lister.h"
#include "scheduler/client/kubeconfig.h"
#include "scheduler/client/reflector.h"
#include "scheduler/client/rest_client.h"
#include "scheduler/util/strings.h"

namespace kubesched::scheduler {
namespace {

// The namespace whose ConfigMaps `run` watches under `config` (see run.cc): the queue
// ConfigMap's, else the policy ConfigMap's, else the lease's.
std::string WatchedConfigMapNamespace(const config::Configuration& config) {
  if (!config.queues.config_map.empty()) return config.queues.config_map.namespace_name;
  if (!config.policy_config_map.empty()) return config.policy_config_map.namespace_name;
  return config.leader_election.resource_namespace;
}

absl::StatusOr<std::string> ConfigMapKey(const api::ConfigMap& map, const std::string& key,
                                         std::string_view ref) {
  if (!key.empty()) {
    auto it = map.data.find(key);
    if (it == map.data.end()) {
      return absl::NotFoundError(absl::StrCat("ConfigMap ", util::Absl(ref), " has no key ", key));
    }
    return it->second;
  }
  if (auto it = map.data.find("config.yaml"); it != map.data.end()) return it->second;
  if (map.data.size() == 1) return map.data.begin()->second;
  return absl::InvalidArgumentError(
      absl::StrCat("ConfigMap ", util::Absl(ref), " has ", map.data.size(),
                   " keys and none is config.yaml: name one (NAMESPACE/NAME:KEY)"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<client::HttpTransport>> ConnectLive(
    const LiveClusterSource& source) {
  client::ConnectionOptions options;
  options.kubeconfig_path = source.kubeconfig;
  options.context = source.context;
  auto connection = client::ResolveConnection(options);
  if (!connection.ok()) return connection.status();
  auto rest = client::RestClient::Create(connection->rest);
  if (!rest.ok()) return rest.status();
  return std::unique_ptr<client::HttpTransport>(std::move(*rest));
}

absl::StatusOr<api::DecodedObjects> ListLive(client::HttpTransport* transport,
                                             const config::Configuration& config) {
  client::ClusterListOptions options;
  options.config_map_namespace = WatchedConfigMapNamespace(config);
  auto listed = client::ListCluster(transport, options);
  if (!listed.ok()) return listed.status();
  api::DecodedObjects decoded;
  decoded.objects = std::move(listed->objects);
  if (listed->decode_errors > 0) {
    decoded.problems.push_back({"cluster", absl::StrCat(listed->decode_errors, " object(s)"),
                                "did not decode (each is named in the log above)"});
  }
  return decoded;
}

absl::StatusOr<config::Configuration> ConfigFromConfigMap(client::HttpTransport* transport,
                                                          std::string_view ref) {
  std::string_view object = ref;
  std::string key;
  if (const size_t colon = object.find(':'); colon != std::string_view::npos) {
    key = std::string(object.substr(colon + 1));
    object = object.substr(0, colon);
  }
  const size_t slash = object.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == object.size() ||
      object.find('/', slash + 1) != std::string_view::npos ||
      (ref.find(':') != std::string_view::npos && key.empty())) {
    return absl::InvalidArgumentError(
        absl::StrCat("--config-map must be NAMESPACE/NAME or NAMESPACE/NAME:KEY, got \"",
                     util::Absl(ref), "\""));
  }
  client::HttpRequest request;
  request.target =
      absl::StrCat("/api/v1/namespaces/", client::UrlEncodeQueryValue(object.substr(0, slash)),
                   "/configmaps/", client::UrlEncodeQueryValue(object.substr(slash + 1)));
  auto response = transport->Do(request);
  if (!response.ok()) return response.status();
  if (response->status != 200) {
    return absl::Status(
        response->status == 404 ? absl::StatusCode::kNotFound : absl::StatusCode::kUnavailable,
        absl::StrCat("reading ConfigMap ", util::Absl(object), ": HTTP ", response->status));
  }
  auto decoded = api::DecodeObjects(response->body, "ConfigMap");
  if (!decoded.ok()) return decoded.status();
  const api::ConfigMap* map =
      decoded->objects.size() == 1 ? std::get_if<api::ConfigMap>(&decoded->objects[0]) : nullptr;
  if (map == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("ConfigMap ", util::Absl(object), " did not decode"));
  }
  auto text = ConfigMapKey(*map, key, ref);
  if (!text.ok()) return text.status();
  auto config = config::ParseConfiguration(*text);
  if (!config.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ConfigMap ", util::Absl(ref), ": ", config.status().message()));
  }
  return config;
}

absl::StatusOr<LivePod> ParseLivePod(std::string_view argument, std::string namespace_name) {
  std::string_view name = argument;
  for (std::string_view prefix : {"pod/", "pods/"}) {
    if (name.starts_with(prefix)) {
      name.remove_prefix(prefix.size());
      break;
    }
  }
  if (name.empty() || name.find('/') != std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a pod as NAME or pod/NAME, got \"", util::Absl(argument), "\""));
  }
  if (namespace_name.empty()) namespace_name = "default";
  return LivePod{std::move(namespace_name), std::string(name)};
}

absl::StatusOr<ExplainReport> ExplainListedPod(const api::DecodedObjects& objects,
                                               const LivePod& pod,
                                               const config::Configuration& config, uint64_t seed,
                                               const std::optional<std::string>& policy) {
  const api::Pod* found = nullptr;
  for (const auto& object : objects.objects) {
    const auto* candidate = std::get_if<api::Pod>(&object);
    if (candidate != nullptr && candidate->meta.namespace_name == pod.namespace_name &&
        candidate->meta.name == pod.name) {
      found = candidate;
      break;
    }
  }
  if (found == nullptr) {
    return absl::NotFoundError(absl::StrCat("pod ", pod.namespace_name, "/", pod.name,
                                            " not found (terminated pods are not listed)"));
  }
  api::Pod explained = *found;
  if (policy.has_value()) explained.meta.annotations[policy::kPolicyAnnotation] = *policy;
  auto report = ExplainObjects(objects.objects, explained, config, seed);
  if (!report.ok()) return report;
  for (const auto& problem : objects.problems) report->problems.push_back(problem);
  return report;
}

}  // namespace kubesched::scheduler
