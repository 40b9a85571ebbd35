#include "scheduler/client/server_url.h"

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/match.h"

namespace kubesched::client {
namespace {

ServerUrl Parse(const std::string& url) {
  absl::StatusOr<ServerUrl> parsed = ParseServerUrl(url);
  INFO(url << ": " << parsed.status().message());
  REQUIRE(parsed.ok());
  return *parsed;
}

TEST_CASE("a server URL without a port gets the scheme's default", "[client]") {
  const ServerUrl https = Parse("https://api.example");
  CHECK(https.tls);
  CHECK(https.host == "api.example");
  CHECK(https.port == "443");
  CHECK(https.host_header == "api.example");
  CHECK(https.path_prefix.empty());
  const ServerUrl http = Parse("http://10.0.0.1");
  CHECK_FALSE(http.tls);
  CHECK(http.port == "80");
}

TEST_CASE("a server URL keeps its port and host header as written", "[client]") {
  const ServerUrl url = Parse("https://api.example:6443");
  CHECK(url.host == "api.example");
  CHECK(url.port == "6443");
  CHECK(url.host_header == "api.example:6443");
}

TEST_CASE("a bracketed IPv6 host loses its brackets, not its port", "[client]") {
  const ServerUrl with_port = Parse("https://[fd00::1]:6443");
  CHECK(with_port.host == "fd00::1");
  CHECK(with_port.port == "6443");
  CHECK(with_port.host_header == "[fd00::1]:6443");
  const ServerUrl without = Parse("https://[::1]");
  CHECK(without.host == "::1");
  CHECK(without.port == "443");
}

TEST_CASE("a server URL's path becomes the prefix, without trailing slashes", "[client]") {
  CHECK(Parse("https://lb.example/k8s").path_prefix == "/k8s");
  CHECK(Parse("https://lb.example/k8s/cluster-a//").path_prefix == "/k8s/cluster-a");
  CHECK(Parse("https://lb.example/").path_prefix.empty());
  CHECK(Parse("https://lb.example:8443/k8s").host_header == "lb.example:8443");
}

TEST_CASE("a server URL that cannot be used is refused, naming it", "[client]") {
  struct Case {
    std::string url;
    std::string why;
  };
  for (const Case& c :
       {Case{"ftp://example", "must start with https:// or http://"},
        Case{"example:6443", "must start with https:// or http://"}, Case{"https://", "no host"},
        Case{"https:///k8s", "no host"}, Case{"https://[fd00::1:6443", "unclosed '['"},
        Case{"https://example:0", "bad port"}, Case{"https://example:65536", "bad port"},
        Case{"https://example:https", "bad port"}}) {
    INFO(c.url);
    const absl::Status status = ParseServerUrl(c.url).status();
    CHECK(status.code() == absl::StatusCode::kInvalidArgument);
    CHECK(absl::StrContains(status.message(), "server URL \"" + c.url + "\""));
    CHECK(absl::StrContains(status.message(), c.why));
  }
}

TEST_CASE("IP addresses are told from host names", "[client]") {
  CHECK(IsIpAddress("10.0.0.1"));
  CHECK(IsIpAddress("fd00::1"));
  CHECK(IsIpAddress("::1"));
  CHECK_FALSE(IsIpAddress("api.example"));
  CHECK_FALSE(IsIpAddress("localhost"));
  CHECK_FALSE(IsIpAddress("10.0.0"));
  CHECK_FALSE(IsIpAddress(""));
}

}  // namespace
}  // namespace kubesched::client
