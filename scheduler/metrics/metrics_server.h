#pragma once

// Serving metrics: /metrics over HTTP for `kubesched run` (prometheus-cpp's Exposer), and the same
// text as a string for `kubesched simulate --metrics FILE`.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "prometheus/collectable.h"

namespace prometheus {
class Exposer;
}  // namespace prometheus

namespace kubesched::metrics {

// Checks that `address` is "host:port" with an IP host ("[::1]" for IPv6; empty = all
// interfaces) and a port in 0..65535 (0 = any free port), without binding it. InvalidArgument
// naming the address otherwise.
absl::Status ValidateMetricsAddress(std::string_view address);

// /metrics in the Prometheus text format, on a thread pool of its own, so a scrape never waits
// for the scheduling loop.
class MetricsServer {
 public:
  // Serves everything `collectables` hold (kept alive by the server). InvalidArgument for a
  // malformed address; Unavailable when it cannot listen there (the Exposer's exception is
  // caught here and never crosses this boundary).
  static absl::StatusOr<std::unique_ptr<MetricsServer>> Start(
      std::string_view address, std::vector<std::shared_ptr<prometheus::Collectable>> collectables);
  // Stops serving; civetweb may take up to two seconds to notice.
  ~MetricsServer();
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;

  // The port it listens on (the chosen one when the address asked for port 0).
  int port() const { return port_; }

 private:
  MetricsServer() = default;

  // Before the exposer: it is destroyed after it, so a scrape in flight never sees it gone.
  std::vector<std::shared_ptr<prometheus::Collectable>> collectables_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  int port_ = 0;
};

// Everything `collectables` hold now, in the Prometheus text format (what a scrape returns).
std::string ScrapeText(const std::vector<std::shared_ptr<prometheus::Collectable>>& collectables);

}  // namespace kubesched::metrics
