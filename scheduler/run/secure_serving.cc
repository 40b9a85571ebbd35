#include "scheduler/run/secure_serving.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/client/kubeconfig.h"
#include "scheduler/run/api_reviews.h"

namespace kubesched::scheduler {
namespace {

// The delegated clients' own limits, kube-scheduler's: reviews must not queue behind the
// scheduler's own requests, nor count against its rate limit.
constexpr double kReviewQps = 200;
constexpr int kReviewBurst = 400;
constexpr absl::Duration kReviewTimeout = absl::Seconds(10);

absl::StatusOr<std::optional<client::RestConfig>> ReviewConnection(const std::string& flag,
                                                                   const std::string& path) {
  if (path.empty()) return std::optional<client::RestConfig>();
  absl::StatusOr<client::ResolvedConnection> connection = client::LoadKubeconfig(path, "");
  if (!connection.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("--", flag, ": ", connection.status().message()));
  }
  return std::optional<client::RestConfig>(std::move(connection->rest));
}

absl::StatusOr<std::unique_ptr<client::RestClient>> ReviewClientFor(client::RestConfig config) {
  config.qps = kReviewQps;
  config.burst = kReviewBurst;
  config.request_timeout = kReviewTimeout;
  return client::RestClient::Create(std::move(config));
}

std::map<std::string, serving::Handler> Handlers(ServingContent content) {
  auto probe = [](std::function<std::string()> check) -> serving::Handler {
    return [check = std::move(check)] {
      const std::string problem = check ? check() : std::string();
      if (problem.empty()) return serving::Response{200, "text/plain; charset=utf-8", "ok"};
      return serving::Response{503, "text/plain; charset=utf-8", problem + "\n"};
    };
  };
  std::map<std::string, serving::Handler> handlers;
  handlers["/healthz"] = probe(content.checks.live);
  handlers["/livez"] = probe(content.checks.live);
  handlers["/readyz"] = probe(content.checks.ready);
  handlers["/metrics"] = [metrics = std::move(content.metrics_text)] {
    return serving::Response{200, "text/plain; version=0.0.4; charset=utf-8", metrics()};
  };
  handlers["/configz"] = [configz = std::move(content.configz_json)] {
    return serving::Response{200, "application/json", configz};
  };
  return handlers;
}

}  // namespace

absl::StatusOr<PreparedServing> PrepareSecureServing(const SecureServingOptions& options) {
  PreparedServing prepared;
  if (options.tls_cert_file.empty() != options.tls_private_key_file.empty()) {
    return absl::InvalidArgumentError(
        "--tls-cert-file and --tls-private-key-file go together (neither: a self-signed "
        "certificate)");
  }
  if (!options.tls_cert_file.empty()) {
    absl::StatusOr<serving::ServingCertificate> loaded =
        serving::LoadCertificateFiles(options.tls_cert_file, options.tls_private_key_file);
    if (!loaded.ok()) return loaded.status();
    prepared.certificate = *std::move(loaded);
    prepared.certificate_source = options.tls_cert_file;
  } else {
    absl::StatusOr<serving::ServingCertificate> generated =
        serving::GenerateSelfSigned(serving::SelfSignedRequest{});
    if (!generated.ok()) return generated.status();
    prepared.certificate = *std::move(generated);
    prepared.certificate_source = "a self-signed certificate for localhost, 127.0.0.1";
  }
  absl::StatusOr<serving::PathAllowList> paths =
      serving::PathAllowList::Parse(options.always_allow_paths);
  if (!paths.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--authorization-always-allow-paths: ", paths.status().message()));
  }
  prepared.always_allow = *std::move(paths);
  auto authentication =
      ReviewConnection("authentication-kubeconfig", options.authentication_kubeconfig);
  if (!authentication.ok()) return authentication.status();
  auto authorization =
      ReviewConnection("authorization-kubeconfig", options.authorization_kubeconfig);
  if (!authorization.ok()) return authorization.status();
  prepared.authentication = *std::move(authentication);
  prepared.authorization = *std::move(authorization);
  return prepared;
}

absl::StatusOr<std::unique_ptr<SecureServing>> SecureServing::Start(
    const SecureServingOptions& options, PreparedServing prepared, const client::RestConfig& main,
    ServingContent content) {
  std::unique_ptr<SecureServing> serving(new SecureServing());
  auto authentication = ReviewClientFor(prepared.authentication.value_or(main));
  if (!authentication.ok()) return authentication.status();
  serving->authentication_ = *std::move(authentication);
  auto authorization = ReviewClientFor(prepared.authorization.value_or(main));
  if (!authorization.ok()) return authorization.status();
  serving->authorization_ = *std::move(authorization);
  serving->reviews_ = std::make_unique<ApiReviewClient>(
      serving->authentication_.get(), serving->authorization_.get(), kReviewTimeout);
  serving::DelegatedAuthOptions auth_options;
  auth_options.always_allow = std::move(prepared.always_allow);
  serving->auth_ = std::make_unique<serving::DelegatedAuth>(
      serving->reviews_.get(), &serving->clock_, std::move(auth_options));
  serving::SecureServerOptions server_options;
  server_options.bind_address = options.bind_address;
  server_options.port = options.secure_port;
  server_options.certificate = std::move(prepared.certificate);
  server_options.handlers = Handlers(std::move(content));
  auto server = serving::SecureServer::Start(std::move(server_options), serving->auth_.get());
  if (!server.ok()) return server.status();
  serving->server_ = *std::move(server);
  return serving;
}

SecureServing::~SecureServing() { server_.reset(); }

}  // namespace kubesched::scheduler
