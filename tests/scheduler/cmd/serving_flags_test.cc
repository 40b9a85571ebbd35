#include "scheduler/cmd/serving_flags.h"

#include <catch2/catch.hpp>
#include <map>
#include <sstream>
#include <string>

#include "absl/strings/match.h"

namespace kubesched::scheduler {
namespace {

struct Parsed {
  bool ok = false;
  SecureServingOptions options;
  std::string err;
};

Parsed Parse(const std::map<std::string, std::string>& flags) {
  Parsed parsed;
  std::ostringstream err;
  parsed.ok = ParseServingFlags(
      [&](const std::string& name) -> std::optional<std::string> {
        auto it = flags.find(name);
        if (it == flags.end()) return std::nullopt;
        return it->second;
      },
      &parsed.options, err);
  parsed.err = err.str();
  return parsed;
}

TEST_CASE("the secure-port flags default as kube-scheduler's", "[cli][serving]") {
  const Parsed parsed = Parse({});
  REQUIRE(parsed.ok);
  CHECK(parsed.options.secure_port == 10259);
  CHECK(parsed.options.bind_address == "0.0.0.0");
  CHECK(parsed.options.tls_cert_file.empty());
  CHECK(parsed.options.always_allow_paths ==
        std::vector<std::string>{"/healthz", "/readyz", "/livez"});
}

TEST_CASE("the secure-port flags are read as given", "[cli][serving]") {
  const Parsed parsed = Parse({{"secure-port", "0"},
                               {"bind-address", "::"},
                               {"tls-cert-file", "/c.pem"},
                               {"tls-private-key-file", "/k.pem"},
                               {"authentication-kubeconfig", "/authn"},
                               {"authorization-kubeconfig", "/authz"},
                               {"authorization-always-allow-paths", "/healthz, /debug/*"}});
  REQUIRE(parsed.ok);
  CHECK(parsed.options.secure_port == 0);
  CHECK(parsed.options.bind_address == "::");
  CHECK(parsed.options.tls_private_key_file == "/k.pem");
  CHECK(parsed.options.authentication_kubeconfig == "/authn");
  CHECK(parsed.options.authorization_kubeconfig == "/authz");
  CHECK(parsed.options.always_allow_paths == std::vector<std::string>{"/healthz", "/debug/*"});
  CHECK(Parse({{"authorization-always-allow-paths", ""}}).options.always_allow_paths.empty());
}

TEST_CASE("bad secure-port flags are refused, naming the flag", "[cli][serving]") {
  const std::vector<std::pair<std::map<std::string, std::string>, std::string>> cases = {
      {{{"secure-port", "70000"}}, "--secure-port must be a port number"},
      {{{"secure-port", "https"}}, "--secure-port must be a port number"},
      {{{"bind-address", "localhost"}}, "--bind-address must be an IP address"},
      {{{"tls-cert-file", "/c.pem"}}, "--tls-cert-file and --tls-private-key-file go together"},
      {{{"tls-private-key-file", "/k.pem"}}, "go together"},
      {{{"authorization-always-allow-paths", "/a*b"}}, "only a trailing * is allowed"},
      {{{"authorization-always-allow-paths", "healthz"}}, "a path starts with /"},
  };
  for (const auto& [flags, message] : cases) {
    const Parsed parsed = Parse(flags);
    INFO(flags.begin()->first << "=" << flags.begin()->second << ": " << parsed.err);
    CHECK_FALSE(parsed.ok);
    CHECK(absl::StrContains(parsed.err, message));
  }
}

}  // namespace
}  // namespace kubesched::scheduler
