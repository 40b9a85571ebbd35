#include "scheduler/cmd/serving_flags.h"

#include <arpa/inet.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "scheduler/serving/delegated_auth.h"

namespace kubesched::scheduler {

bool ParseServingFlags(const std::function<std::optional<std::string>(const std::string&)>& get,
                       SecureServingOptions* options, std::ostream& err) {
  if (const auto port = get("secure-port"); port.has_value()) {
    if (!absl::SimpleAtoi(*port, &options->secure_port) || options->secure_port < 0 ||
        options->secure_port > 65535) {
      err << "error: --secure-port must be a port number in 0..65535 (0: no secure port), got \""
          << *port << "\"\n";
      return false;
    }
  }
  if (const auto address = get("bind-address"); address.has_value()) {
    unsigned char buffer[sizeof(in6_addr)];
    if (inet_pton(AF_INET, address->c_str(), buffer) != 1 &&
        inet_pton(AF_INET6, address->c_str(), buffer) != 1) {
      err << "error: --bind-address must be an IP address such as 0.0.0.0 or ::, got \"" << *address
          << "\"\n";
      return false;
    }
    options->bind_address = *address;
  }
  options->tls_cert_file = get("tls-cert-file").value_or("");
  options->tls_private_key_file = get("tls-private-key-file").value_or("");
  if (options->tls_cert_file.empty() != options->tls_private_key_file.empty()) {
    err << "error: --tls-cert-file and --tls-private-key-file go together (neither: a "
           "self-signed certificate)\n";
    return false;
  }
  options->authentication_kubeconfig = get("authentication-kubeconfig").value_or("");
  options->authorization_kubeconfig = get("authorization-kubeconfig").value_or("");
  if (const auto paths = get("authorization-always-allow-paths"); paths.has_value()) {
    options->always_allow_paths.clear();
    for (absl::string_view path : absl::StrSplit(*paths, ',', absl::SkipWhitespace())) {
      options->always_allow_paths.emplace_back(absl::StripAsciiWhitespace(path));
    }
    if (auto parsed = serving::PathAllowList::Parse(options->always_allow_paths); !parsed.ok()) {
      err << "error: --authorization-always-allow-paths: " << parsed.status().message() << "\n";
      return false;
    }
  }
  return true;
}

}  // namespace kubesched::scheduler
