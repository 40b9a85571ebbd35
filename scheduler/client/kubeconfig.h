#pragma once

// Where the API server is and how to authenticate to it: a kubeconfig file (as kubectl reads
// it) or the in-cluster service account, resolved in kube-scheduler's order.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/client/rest_client.h"
#include "scheduler/client/token_source.h"

namespace kubesched::client {

struct ConnectionOptions {
  std::string kubeconfig_path;    // --kubeconfig flag
  std::string config_kubeconfig;  // configuration file clientConnection.kubeconfig
  std::string context;            // --context; empty = the kubeconfig's current-context
  // --master: the API server URL. With a kubeconfig given (--kubeconfig or
  // clientConnection.kubeconfig) it replaces that kubeconfig's server; without one, the
  // connection is this URL alone, without credentials (as kube-scheduler's --master).
  std::string master;
  double qps = 50;
  int burst = 100;
  std::string content_type = "application/json";
  // Environment lookup; null = ::getenv. Injectable so tests need not touch the real environment.
  std::function<std::optional<std::string>(std::string_view)> getenv;
  std::string service_account_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
  std::string home;  // "" = $HOME
};

struct ResolvedConnection {
  RestConfig rest;
  std::string description;     // "kubeconfig /path (context prod)" or "in-cluster"
  std::string namespace_name;  // in-cluster namespace file, the context's namespace, or "default"
  std::vector<std::string> warnings;  // e.g. insecure-skip-tls-verify; for the caller to log
};

// Resolution order: ConnectionOptions::kubeconfig_path, else config_kubeconfig (either must
// exist), else the first existing file of $KUBECONFIG (a colon-separated list), else in-cluster
// (KUBERNETES_SERVICE_HOST/PORT plus the service-account token), else ~/.kube/config. When none
// applies, the error lists everything tried. qps, burst and content_type are copied into `rest`.
absl::StatusOr<ResolvedConnection> ResolveConnection(const ConnectionOptions& options);

// One kubeconfig file; `context` empty = its current-context. Errors name the file and field:
// "kubeconfig /x: users[0].user.client-key: file not found". Relative paths (certificate
// files, tokenFile, an exec command containing '/') are relative to the file's directory.
absl::StatusOr<ResolvedConnection> LoadKubeconfig(const std::string& path,
                                                  const std::string& context);

}  // namespace kubesched::client
