#pragma once

// The secure port: HTTPS (TLS 1.2 and later) serving a fixed set of paths, each request
// authenticated and authorized by DelegatedAuth unless its path is always allowed. One I/O
// thread does the TLS and HTTP work; the reviews and the handlers of the other paths run on a
// small pool of their own, so a slow API server or a large scrape never delays a probe, and
// nothing here waits for the scheduling loop.

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "scheduler/serving/certificate.h"
#include "scheduler/serving/delegated_auth.h"

namespace kubesched::serving {

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;
};

// Answers a GET of one path. Called on the server's threads, concurrently; must be thread-safe.
using Handler = std::function<Response()>;

struct SecureServerOptions {
  std::string bind_address = "0.0.0.0";  // an IP address
  int port = 10259;                      // 0 picks a free port
  ServingCertificate certificate;
  std::map<std::string, Handler> handlers;  // by exact path
  int worker_threads = 4;                   // reviews and the handlers of reviewed paths
};

class SecureServer {
 public:
  // `auth` must outlive the server. InvalidArgument for a bad address or a certificate and key
  // TLS refuses; Unavailable when it cannot listen.
  static absl::StatusOr<std::unique_ptr<SecureServer>> Start(SecureServerOptions options,
                                                             DelegatedAuth* auth);
  virtual ~SecureServer() = default;  // stops serving; waits for requests being answered
  virtual int port() const = 0;
};

}  // namespace kubesched::serving
