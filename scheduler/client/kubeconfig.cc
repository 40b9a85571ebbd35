#include "scheduler/client/kubeconfig.h"

#include <yaml-cpp/yaml.h>

#include <cstdlib>
#include <exception>
#include <filesystem>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "scheduler/api/yaml_guard.h"
#include "scheduler/client/server_url.h"
#include "scheduler/util/file.h"
#include "scheduler/util/strings.h"

namespace kubesched::client {
namespace {

namespace fs = std::filesystem;

using Getenv = std::function<std::optional<std::string>(std::string_view)>;

Getenv EffectiveGetenv(const ConnectionOptions& options) {
  if (options.getenv) return options.getenv;
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = ::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

bool FileExists(const std::string& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

// Kubeconfigs, certificates and keys are a few KiB; the cap keeps a wrong path such as /dev/zero
// from exhausting memory.
absl::StatusOr<std::string> ReadFile(const std::string& path) {
  absl::StatusOr<std::string> contents = util::ReadFileAtMost(path, api::kMaxConfigYamlBytes);
  if (contents.ok() || contents.status().code() != absl::StatusCode::kNotFound) return contents;
  return absl::NotFoundError("file not found");
}

// Reads one kubeconfig with the file's path at hand for error messages and relative paths.
class KubeconfigReader {
 public:
  explicit KubeconfigReader(std::string path)
      : path_(std::move(path)), dir_(fs::path(path_).parent_path()) {}

  absl::StatusOr<ResolvedConnection> Read(const std::string& context_override) {
    absl::StatusOr<std::string> text = ReadFile(path_);
    if (!text.ok()) return Error("", text.status());
    // Only the first document counts, as with kubectl.
    absl::StatusOr<std::vector<YAML::Node>> documents = api::LoadYamlDocuments(*text);
    if (!documents.ok()) {
      return Error("", absl::InvalidArgumentError(
                           absl::StrCat("invalid YAML: ", documents.status().message())));
    }
    root_ = documents->empty() ? YAML::Node(YAML::NodeType::Null) : documents->front();
    try {
      return Resolve(context_override);
    } catch (const std::exception& e) {  // yaml-cpp conversions that slipped past the checks
      return Error("", absl::InvalidArgumentError(e.what()));
    }
  }

 private:
  absl::Status Error(const std::string& field, const absl::Status& cause) const {
    return absl::Status(cause.code(), absl::StrCat("kubeconfig ", path_, ": ", field,
                                                   field.empty() ? "" : ": ", cause.message()));
  }
  absl::Status Invalid(const std::string& field, std::string_view why) const {
    return Error(field, absl::InvalidArgumentError(util::Absl(why)));
  }

  std::string ResolvePath(const std::string& path) const {
    if (path.empty() || fs::path(path).is_absolute()) return path;
    return (dir_ / path).string();
  }

  // A string field; absent = "". Errors when present but not a scalar.
  absl::StatusOr<std::string> String(const YAML::Node& parent, const char* key,
                                     const std::string& field) const {
    const YAML::Node node = parent[key];
    if (!node.IsDefined() || node.IsNull()) return std::string();
    if (!node.IsScalar()) return Invalid(field + "." + key, "must be a string");
    return node.Scalar();
  }

  absl::StatusOr<bool> Bool(const YAML::Node& parent, const char* key,
                            const std::string& field) const {
    absl::StatusOr<std::string> text = String(parent, key, field);
    if (!text.ok()) return text.status();
    if (text->empty() || *text == "false") return false;
    if (*text == "true") return true;
    return Invalid(field + "." + key, "must be true or false");
  }

  // `name` from a list of {name, <kind>: {...}} entries, e.g. clusters[2].cluster.
  absl::StatusOr<std::pair<YAML::Node, std::string>> Named(const char* list, const char* kind,
                                                           const std::string& name) const {
    const YAML::Node entries = root_[list];
    if (entries.IsDefined() && !entries.IsNull() && !entries.IsSequence()) {
      return Invalid(list, "must be a list");
    }
    for (size_t i = 0; entries.IsSequence() && i < entries.size(); ++i) {
      const YAML::Node entry = entries[i];
      if (!entry.IsMap() || !entry["name"].IsScalar() || entry["name"].Scalar() != name) continue;
      const std::string field = absl::StrCat(list, "[", i, "].", kind);
      if (!entry[kind].IsMap()) return Invalid(field, "missing or not a map");
      return std::make_pair(entry[kind], field);
    }
    return Invalid(list, absl::StrCat("no entry named \"", name, "\""));
  }

  // PEM from `<key>-data` (base64) or the file `<key>`; "" when neither is set.
  absl::StatusOr<std::string> PemData(const YAML::Node& parent, const std::string& key,
                                      const std::string& field) const {
    const std::string data_key = key + "-data";
    absl::StatusOr<std::string> data = String(parent, data_key.c_str(), field);
    if (!data.ok()) return data.status();
    if (!data->empty()) {
      std::string decoded;
      if (!absl::Base64Unescape(*data, &decoded)) {
        return Invalid(field + "." + data_key, "not valid base64");
      }
      return decoded;
    }
    absl::StatusOr<std::string> file = String(parent, key.c_str(), field);
    if (!file.ok()) return file.status();
    if (file->empty()) return std::string();
    absl::StatusOr<std::string> contents = ReadFile(ResolvePath(*file));
    if (!contents.ok()) {
      return Error(field + "." + key, absl::Status(contents.status().code(),
                                                   absl::StrCat(contents.status().message(), " (",
                                                                ResolvePath(*file), ")")));
    }
    return contents;
  }

  absl::Status ReadCluster(const YAML::Node& cluster, const std::string& field,
                           ResolvedConnection& out) const {
    absl::StatusOr<std::string> server = String(cluster, "server", field);
    if (!server.ok()) return server.status();
    if (server->empty()) return Invalid(field + ".server", "missing");
    out.rest.server = *server;
    absl::StatusOr<bool> insecure = Bool(cluster, "insecure-skip-tls-verify", field);
    if (!insecure.ok()) return insecure.status();
    if (*insecure) {
      out.rest.insecure_skip_tls_verify = true;
      out.warnings.push_back(absl::StrCat("kubeconfig ", path_, ": ", field,
                                          ".insecure-skip-tls-verify is set: the API server's "
                                          "certificate will not be verified"));
      return absl::OkStatus();  // a CA alongside is ignored, as by kubectl
    }
    absl::StatusOr<std::string> ca = PemData(cluster, "certificate-authority", field);
    if (!ca.ok()) return ca.status();
    out.rest.ca_pem = *std::move(ca);
    absl::StatusOr<std::string> proxy = String(cluster, "proxy-url", field);
    if (proxy.ok() && !proxy->empty()) {
      out.warnings.push_back(absl::StrCat("kubeconfig ", path_, ": ", field,
                                          ".proxy-url is not supported and is ignored"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<std::shared_ptr<TokenSource>> ReadExec(const YAML::Node& exec,
                                                        const std::string& field) const {
    ExecConfig config;
    absl::StatusOr<std::string> api_version = String(exec, "apiVersion", field);
    if (!api_version.ok()) return api_version.status();
    if (*api_version != "client.authentication.k8s.io/v1" &&
        *api_version != "client.authentication.k8s.io/v1beta1") {
      return Invalid(field + ".apiVersion",
                     absl::StrCat("\"", *api_version,
                                  "\" is not supported (client.authentication.k8s.io/v1 or "
                                  "v1beta1)"));
    }
    config.api_version = *api_version;
    absl::StatusOr<std::string> command = String(exec, "command", field);
    if (!command.ok()) return command.status();
    if (command->empty()) return Invalid(field + ".command", "missing");
    // Like client-go: a command with a path separator is relative to the kubeconfig's directory;
    // a bare name is looked up in PATH.
    config.command = command->find('/') != std::string::npos ? ResolvePath(*command) : *command;
    const YAML::Node args = exec["args"];
    if (args.IsDefined() && !args.IsNull()) {
      if (!args.IsSequence()) return Invalid(field + ".args", "must be a list");
      for (size_t i = 0; i < args.size(); ++i) {
        if (!args[i].IsScalar())
          return Invalid(absl::StrCat(field, ".args[", i, "]"), "not a string");
        config.args.push_back(args[i].Scalar());
      }
    }
    const YAML::Node env = exec["env"];
    if (env.IsDefined() && !env.IsNull()) {
      if (!env.IsSequence()) return Invalid(field + ".env", "must be a list");
      for (size_t i = 0; i < env.size(); ++i) {
        const std::string entry_field = absl::StrCat(field, ".env[", i, "]");
        if (!env[i].IsMap() || !env[i]["name"].IsScalar())
          return Invalid(entry_field, "needs a name");
        absl::StatusOr<std::string> value = String(env[i], "value", entry_field);
        if (!value.ok()) return value.status();
        config.env.emplace_back(env[i]["name"].Scalar(), *value);
      }
    }
    absl::StatusOr<std::string> hint = String(exec, "installHint", field);
    if (hint.ok()) config.install_hint = *hint;
    return std::shared_ptr<TokenSource>(std::make_shared<ExecToken>(std::move(config)));
  }

  absl::Status ReadUser(const YAML::Node& user, const std::string& field,
                        ResolvedConnection& out) const {
    absl::StatusOr<std::string> cert = PemData(user, "client-certificate", field);
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = PemData(user, "client-key", field);
    if (!key.ok()) return key.status();
    if (cert->empty() != key->empty()) {
      return Invalid(field, "client-certificate and client-key must be given together");
    }
    out.rest.client_cert_pem = *std::move(cert);
    out.rest.client_key_pem = *std::move(key);

    if (user["auth-provider"].IsDefined()) {
      return Invalid(field + ".auth-provider",
                     "auth providers are not supported; use an exec plugin");
    }
    if (user["username"].IsDefined() || user["password"].IsDefined()) {
      out.warnings.push_back(absl::StrCat("kubeconfig ", path_, ": ", field,
                                          ": basic auth (username/password) is not supported "
                                          "and is ignored"));
    }
    // Precedence as in client-go: tokenFile over token; an explicit token over exec.
    absl::StatusOr<std::string> token_file = String(user, "tokenFile", field);
    if (!token_file.ok()) return token_file.status();
    if (!token_file->empty()) {
      const std::string resolved = ResolvePath(*token_file);
      if (!FileExists(resolved)) {
        return Error(field + ".tokenFile",
                     absl::NotFoundError(absl::StrCat("file not found (", resolved, ")")));
      }
      out.rest.token = std::make_shared<FileToken>(resolved);
      return absl::OkStatus();
    }
    absl::StatusOr<std::string> token = String(user, "token", field);
    if (!token.ok()) return token.status();
    if (!token->empty()) {
      out.rest.token = std::make_shared<StaticToken>(*token);
      return absl::OkStatus();
    }
    const YAML::Node exec = user["exec"];
    if (exec.IsDefined() && !exec.IsNull()) {
      if (!exec.IsMap()) return Invalid(field + ".exec", "must be a map");
      absl::StatusOr<std::shared_ptr<TokenSource>> source = ReadExec(exec, field + ".exec");
      if (!source.ok()) return source.status();
      out.rest.token = *std::move(source);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<ResolvedConnection> Resolve(const std::string& context_override) {
    if (!root_.IsMap()) return Invalid("", "not a kubeconfig (expected a YAML map)");
    std::string context_name = context_override;
    if (context_name.empty()) {
      absl::StatusOr<std::string> current = String(root_, "current-context", "");
      if (!current.ok()) return current.status();
      context_name = *current;
    }
    if (context_name.empty()) {
      return Invalid("current-context", "not set and no context was given");
    }
    auto context = Named("contexts", "context", context_name);
    if (!context.ok()) return context.status();
    const auto& [context_node, context_field] = *context;

    ResolvedConnection out;
    out.description = absl::StrCat("kubeconfig ", path_, " (context ", context_name, ")");
    absl::StatusOr<std::string> namespace_name = String(context_node, "namespace", context_field);
    if (!namespace_name.ok()) return namespace_name.status();
    out.namespace_name = namespace_name->empty() ? "default" : *namespace_name;

    absl::StatusOr<std::string> cluster_name = String(context_node, "cluster", context_field);
    if (!cluster_name.ok()) return cluster_name.status();
    if (cluster_name->empty()) return Invalid(context_field + ".cluster", "missing");
    auto cluster = Named("clusters", "cluster", *cluster_name);
    if (!cluster.ok()) return cluster.status();
    if (absl::Status status = ReadCluster(cluster->first, cluster->second, out); !status.ok()) {
      return status;
    }

    absl::StatusOr<std::string> user_name = String(context_node, "user", context_field);
    if (!user_name.ok()) return user_name.status();
    if (!user_name->empty()) {
      auto user = Named("users", "user", *user_name);
      if (!user.ok()) return user.status();
      if (absl::Status status = ReadUser(user->first, user->second, out); !status.ok()) {
        return status;
      }
    }
    return out;
  }

  const std::string path_;
  const fs::path dir_;
  YAML::Node root_;
};

// The service account the kubelet mounts into the pod, or nullopt when not running in a pod.
absl::StatusOr<std::optional<ResolvedConnection>> LoadInCluster(const ConnectionOptions& options,
                                                                const Getenv& getenv) {
  const std::optional<std::string> host = getenv("KUBERNETES_SERVICE_HOST");
  const std::optional<std::string> port = getenv("KUBERNETES_SERVICE_PORT");
  if (!host.has_value() || host->empty() || !port.has_value() || port->empty()) {
    return std::optional<ResolvedConnection>();
  }
  const fs::path dir(options.service_account_dir);
  const std::string token_path = (dir / "token").string();
  if (!FileExists(token_path)) {
    return absl::NotFoundError(
        absl::StrCat("in-cluster: KUBERNETES_SERVICE_HOST is set but the service-account token ",
                     token_path, " does not exist (is automountServiceAccountToken off?)"));
  }
  ResolvedConnection out;
  out.description = "in-cluster";
  const bool ipv6 = host->find(':') != std::string::npos;
  out.rest.server = absl::StrCat("https://", ipv6 ? "[" : "", *host, ipv6 ? "]" : "", ":", *port);
  absl::StatusOr<std::string> ca = ReadFile((dir / "ca.crt").string());
  if (!ca.ok()) {
    return absl::Status(ca.status().code(), absl::StrCat("in-cluster: ", (dir / "ca.crt").string(),
                                                         ": ", ca.status().message()));
  }
  out.rest.ca_pem = *std::move(ca);
  // Bound service-account tokens rotate (hourly by default): re-read the file as it changes.
  out.rest.token = std::make_shared<FileToken>(token_path);
  absl::StatusOr<std::string> namespace_name = ReadFile((dir / "namespace").string());
  out.namespace_name = namespace_name.ok()
                           ? std::string(absl::StripAsciiWhitespace(*namespace_name))
                           : std::string();
  if (out.namespace_name.empty()) out.namespace_name = "default";
  return std::optional<ResolvedConnection>(std::move(out));
}

void ApplyClientSettings(const ConnectionOptions& options, ResolvedConnection& connection) {
  connection.rest.qps = options.qps;
  connection.rest.burst = options.burst;
  connection.rest.content_type = options.content_type;
}

absl::StatusOr<ResolvedConnection> LoadExplicit(const std::string& path, const std::string& origin,
                                                const ConnectionOptions& options) {
  if (!FileExists(path)) {
    return absl::NotFoundError(
        absl::StrCat("kubeconfig ", path, " (", origin, "): file not found"));
  }
  return LoadKubeconfig(path, options.context);
}

}  // namespace

absl::StatusOr<ResolvedConnection> LoadKubeconfig(const std::string& path,
                                                  const std::string& context) {
  return KubeconfigReader(path).Read(context);
}

namespace {

// --master: over the kubeconfig's server, or alone.
absl::StatusOr<ResolvedConnection> ApplyMaster(const ConnectionOptions& options,
                                               absl::StatusOr<ResolvedConnection> resolved) {
  if (options.master.empty()) return resolved;
  if (absl::StatusOr<ServerUrl> url = ParseServerUrl(options.master); !url.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--master: ", url.status().message()));
  }
  if (!resolved.ok()) return resolved;
  resolved->rest.server = options.master;
  resolved->description = absl::StrCat(resolved->description, ", server from --master");
  return resolved;
}

}  // namespace

absl::StatusOr<ResolvedConnection> ResolveConnection(const ConnectionOptions& options) {
  const Getenv getenv = EffectiveGetenv(options);
  absl::StatusOr<ResolvedConnection> resolved = absl::NotFoundError("");
  std::vector<std::string> tried;
  if (!options.master.empty() && options.kubeconfig_path.empty() &&
      options.config_kubeconfig.empty()) {
    ResolvedConnection alone;
    alone.description = "no kubeconfig, so no credentials";
    alone.namespace_name = "default";
    resolved = std::move(alone);
  } else if (!options.kubeconfig_path.empty()) {
    resolved = LoadExplicit(options.kubeconfig_path, "--kubeconfig", options);
  } else if (!options.config_kubeconfig.empty()) {
    resolved = LoadExplicit(options.config_kubeconfig, "clientConnection.kubeconfig", options);
  } else {
    std::optional<std::string> from_env;
    if (std::optional<std::string> list = getenv("KUBECONFIG"); list && !list->empty()) {
      for (absl::string_view entry : absl::StrSplit(*list, ':', absl::SkipEmpty())) {
        if (FileExists(std::string(entry))) {
          from_env = std::string(entry);
          break;
        }
      }
      tried.push_back(absl::StrCat("$KUBECONFIG (", *list, ": no existing file)"));
    } else {
      tried.push_back("$KUBECONFIG (unset)");
    }
    if (from_env.has_value()) {
      resolved = LoadKubeconfig(*from_env, options.context);
    } else {
      absl::StatusOr<std::optional<ResolvedConnection>> in_cluster = LoadInCluster(options, getenv);
      if (!in_cluster.ok()) return in_cluster.status();
      if (in_cluster->has_value()) {
        resolved = **std::move(in_cluster);
      } else {
        tried.push_back("in-cluster (KUBERNETES_SERVICE_HOST/PORT unset)");
        std::string home = options.home;
        if (home.empty()) home = getenv("HOME").value_or("");
        const std::string default_path = home.empty() ? "" : home + "/.kube/config";
        if (!default_path.empty() && FileExists(default_path)) {
          resolved = LoadKubeconfig(default_path, options.context);
        } else {
          tried.push_back(default_path.empty() ? "~/.kube/config ($HOME unset)"
                                               : absl::StrCat(default_path, " (not found)"));
          return absl::NotFoundError(
              absl::StrCat("no API server connection configured; tried --kubeconfig (not given), "
                           "clientConnection.kubeconfig (not set), ",
                           absl::StrJoin(tried, ", ")));
        }
      }
    }
  }
  if (!options.master.empty()) resolved = ApplyMaster(options, std::move(resolved));
  if (!resolved.ok()) return resolved.status();
  ApplyClientSettings(options, *resolved);
  return resolved;
}

}  // namespace kubesched::client
