#pragma once

// The API server's URL (RestConfig::server) taken apart into what connections and requests need.

#include <string>

#include "absl/status/statusor.h"

namespace kubesched::client {

struct ServerUrl {
  bool tls = false;
  std::string host;  // without IPv6 brackets
  std::string port;
  std::string host_header;  // authority as written
  std::string path_prefix;  // "" or "/prefix" (no trailing slash)
};

// Parses "https://host[:port][/prefix]" or "http://..."; the host may be a bracketed IPv6 address
// and the port defaults to 443 or 80. InvalidArgument, naming the URL, for any other scheme, a
// missing host, an unclosed '[' or a port outside 1..65535.
absl::StatusOr<ServerUrl> ParseServerUrl(const std::string& url);

// Whether `host` is an IPv4 or IPv6 address rather than a DNS name (TLS then verifies the address
// and sends no SNI).
bool IsIpAddress(const std::string& host);

}  // namespace kubesched::client
