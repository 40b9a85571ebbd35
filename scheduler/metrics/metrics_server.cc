#include "scheduler/metrics/metrics_server.h"

#include <arpa/inet.h>

#include <exception>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "prometheus/exposer.h"
#include "prometheus/metric_family.h"
#include "prometheus/text_serializer.h"
#include "scheduler/util/strings.h"

namespace kubesched::metrics {
namespace {

struct HostPort {
  std::string host;  // an IP address, without brackets
  bool ipv6 = false;
  int port = 0;
};

absl::StatusOr<HostPort> ParseAddress(std::string_view address) {
  const auto invalid = [address](std::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("metrics address \"", util::Absl(address), "\": ", util::Absl(why)));
  };
  const size_t colon = address.rfind(':');
  HostPort out;
  if (colon == std::string_view::npos ||
      !absl::SimpleAtoi(util::Absl(address.substr(colon + 1)), &out.port) || out.port < 0 ||
      out.port > 65535) {
    return invalid("want host:port");
  }
  out.host = std::string(address.substr(0, colon));
  if (out.host.size() >= 2 && out.host.front() == '[' && out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
  }
  if (out.host.empty()) out.host = "0.0.0.0";
  unsigned char buffer[sizeof(in6_addr)];
  if (inet_pton(AF_INET, out.host.c_str(), buffer) == 1) return out;
  if (inet_pton(AF_INET6, out.host.c_str(), buffer) == 1) {
    out.ipv6 = true;
    return out;
  }
  return invalid(absl::StrCat("\"", out.host, "\" is not an IP address"));
}

}  // namespace

absl::Status ValidateMetricsAddress(std::string_view address) {
  return ParseAddress(address).status();
}

absl::StatusOr<std::unique_ptr<MetricsServer>> MetricsServer::Start(
    std::string_view address, std::vector<std::shared_ptr<prometheus::Collectable>> collectables) {
  absl::StatusOr<HostPort> parsed = ParseAddress(address);
  if (!parsed.ok()) return parsed.status();
  // civetweb's listening_ports syntax: "1.2.3.4:80", "[::1]:80".
  const std::string listen = parsed->ipv6 ? absl::StrCat("[", parsed->host, "]:", parsed->port)
                                          : absl::StrCat(parsed->host, ":", parsed->port);
  std::unique_ptr<MetricsServer> server(new MetricsServer());
  server->collectables_ = std::move(collectables);
  try {
    server->exposer_ = std::make_unique<prometheus::Exposer>(listen, /*num_threads=*/2);
    for (const auto& collectable : server->collectables_) {
      server->exposer_->RegisterCollectable(collectable, "/metrics");
    }
    const std::vector<int> ports = server->exposer_->GetListeningPorts();
    if (ports.empty()) throw std::runtime_error("no listening port");
    server->port_ = ports.front();
  } catch (const std::exception& e) {
    return absl::UnavailableError(
        absl::StrCat("metrics server: cannot listen on ", listen, ": ", e.what()));
  }
  return server;
}

MetricsServer::~MetricsServer() = default;

std::string ScrapeText(const std::vector<std::shared_ptr<prometheus::Collectable>>& collectables) {
  std::vector<prometheus::MetricFamily> families;
  for (const auto& collectable : collectables) {
    std::vector<prometheus::MetricFamily> collected = collectable->Collect();
    families.insert(families.end(), std::make_move_iterator(collected.begin()),
                    std::make_move_iterator(collected.end()));
  }
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

}  // namespace kubesched::metrics
