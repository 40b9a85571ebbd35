#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace kubesched::scheduler {

// What the probes report. Each returns an empty string when healthy, else why not (shown in the
// 503 body). Called from the server's thread; must be thread-safe and quick.
struct HealthChecks {
  std::function<std::string()> live;
  std::function<std::string()> ready;
};

// Checks that `address` is "host:port" with an IP host (empty = all interfaces) and a port in
// 0..65535 (0 = any free port), without binding it.
absl::Status ValidateBindAddress(std::string_view address);

// /healthz and /livez (liveness) and /readyz (readiness) over plain HTTP, on one thread of its
// own, so a busy scheduling loop never delays a probe.
class HealthServer {
 public:
  // `address` is "host:port"; port 0 picks a free one. InvalidArgument for a malformed address,
  // Unavailable when it cannot listen there.
  static absl::StatusOr<std::unique_ptr<HealthServer>> Start(std::string_view address,
                                                             HealthChecks checks);
  virtual ~HealthServer() = default;  // stops serving
  virtual int port() const = 0;
};

}  // namespace kubesched::scheduler
