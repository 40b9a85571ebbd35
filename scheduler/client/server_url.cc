#include "scheduler/client/server_url.h"

#include <boost/asio/ip/address.hpp>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"

namespace kubesched::client {

absl::StatusOr<ServerUrl> ParseServerUrl(const std::string& url) {
  ServerUrl out;
  absl::string_view rest(url);
  if (absl::ConsumePrefix(&rest, "https://")) {
    out.tls = true;
  } else if (!absl::ConsumePrefix(&rest, "http://")) {
    return absl::InvalidArgumentError(
        absl::StrCat("server URL \"", url, "\": must start with https:// or http://"));
  }
  const size_t slash = rest.find('/');
  absl::string_view authority = rest.substr(0, slash);
  if (slash != absl::string_view::npos) {
    absl::string_view path = rest.substr(slash);
    while (absl::ConsumeSuffix(&path, "/")) {
    }
    out.path_prefix = std::string(path);
  }
  if (authority.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("server URL \"", url, "\": no host"));
  }
  out.host_header = std::string(authority);
  absl::string_view port;
  if (absl::ConsumePrefix(&authority, "[")) {  // [IPv6]:port
    const size_t close = authority.find(']');
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("server URL \"", url, "\": unclosed '['"));
    }
    out.host = std::string(authority.substr(0, close));
    absl::string_view after = authority.substr(close + 1);
    if (absl::ConsumePrefix(&after, ":")) port = after;
  } else {
    const size_t colon = authority.rfind(':');
    out.host = std::string(authority.substr(0, colon));
    if (colon != absl::string_view::npos) port = authority.substr(colon + 1);
  }
  int port_number = 0;
  if (!port.empty() &&
      (!absl::SimpleAtoi(port, &port_number) || port_number <= 0 || port_number > 65535)) {
    return absl::InvalidArgumentError(absl::StrCat("server URL \"", url, "\": bad port"));
  }
  out.port = port.empty() ? (out.tls ? "443" : "80") : std::string(port);
  return out;
}

bool IsIpAddress(const std::string& host) {
  boost::system::error_code ec;
  boost::asio::ip::make_address(host, ec);
  return !ec;
}

}  // namespace kubesched::client
