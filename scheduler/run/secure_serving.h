#pragma once

// `kubesched run`'s secure port (kube-scheduler's --secure-port, default 10259): /healthz,
// /livez, /readyz, /metrics and /configz over HTTPS, with delegated authentication and
// authorization (serving/delegated_auth.h) made on connections of their own.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/client/rest_client.h"
#include "scheduler/run/health_server.h"
#include "scheduler/serving/certificate.h"
#include "scheduler/serving/delegated_auth.h"
#include "scheduler/serving/secure_server.h"
#include "scheduler/util/clock.h"

namespace kubesched::scheduler {

// The flags, as kube-scheduler names them.
struct SecureServingOptions {
  int secure_port = 10259;  // 0: no secure port
  std::string bind_address = "0.0.0.0";
  std::string tls_cert_file;              // with tls_private_key_file; neither: self-signed
  std::string tls_private_key_file;       //
  std::string authentication_kubeconfig;  // "" = the main connection
  std::string authorization_kubeconfig;   // "" = the main connection
  std::vector<std::string> always_allow_paths = {"/healthz", "/readyz", "/livez"};
};

// What the secure port prepared before connecting: its certificate, its allowed paths and the
// review connections' configuration. Made first, so that a bad certificate file is a usage error
// (exit code 2) before anything waits on the network.
struct PreparedServing {
  serving::ServingCertificate certificate;
  std::string certificate_source;  // for the log: the file, or "self-signed"
  serving::PathAllowList always_allow;
  std::optional<client::RestConfig> authentication;  // nullopt = the main connection
  std::optional<client::RestConfig> authorization;
};

// InvalidArgument for the certificate, key or path list (a usage error); FailedPrecondition for a
// review kubeconfig that cannot be loaded (a connection error).
absl::StatusOr<PreparedServing> PrepareSecureServing(const SecureServingOptions& options);

struct ServingContent {
  HealthChecks checks;
  std::function<std::string()> metrics_text;  // the Prometheus text of a scrape
  std::string configz_json;
};

class SecureServing {
 public:
  // `main` is the scheduler's own connection, used for the reviews a kubeconfig flag does not
  // redirect. InvalidArgument / Unavailable as SecureServer::Start.
  static absl::StatusOr<std::unique_ptr<SecureServing>> Start(const SecureServingOptions& options,
                                                              PreparedServing prepared,
                                                              const client::RestConfig& main,
                                                              ServingContent content);
  ~SecureServing();
  int port() const { return server_->port(); }

 private:
  SecureServing() = default;

  util::RealClock clock_;
  std::unique_ptr<client::RestClient> authentication_;
  std::unique_ptr<client::RestClient> authorization_;
  std::unique_ptr<serving::ReviewClient> reviews_;
  std::unique_ptr<serving::DelegatedAuth> auth_;
  // Last: stopped first, before what its requests use.
  std::unique_ptr<serving::SecureServer> server_;
};

}  // namespace kubesched::scheduler
