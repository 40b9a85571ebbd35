#pragma once

// The real HttpTransport: HTTP/1.1 (Boost.Beast) over TCP or TLS to the API server, with a pool
// of keep-alive connections, a client-side token bucket, bearer tokens and retries. Beast and
// Asio stay inside rest_client.cc and rest_connection.h, which only it includes (they are very
// slow to compile); server_url.cc uses Asio's address parser alone.

#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "scheduler/client/http_transport.h"
#include "scheduler/client/retry.h"
#include "scheduler/client/token_source.h"

namespace kubesched::client {

struct RestConfig {
  // "https://host:port" or "http://host:port", optionally followed by a path prefix
  // ("https://lb.example/k8s") that is put in front of every request target.
  std::string server;
  // PEM CA bundle to verify the server with; empty = the system's default verify paths.
  std::string ca_pem;
  // Skips server certificate and host name verification. Only from explicit configuration.
  bool insecure_skip_tls_verify = false;
  // Client certificate (mTLS); both or neither.
  std::string client_cert_pem;
  std::string client_key_pem;
  // Bearer token source; null = no Authorization header.
  std::shared_ptr<TokenSource> token;
  // Client-side rate limit (token bucket); qps <= 0 = unlimited.
  double qps = 50;
  int burst = 100;
  // Requested wire format. Any protobuf type ("application/vnd.kubernetes.protobuf") is accepted
  // for configuration compatibility, but this client only speaks JSON: it always sends
  // `Accept: application/json` and Create() records a warning (see RestClient::warnings()).
  std::string content_type = "application/json";
  std::string user_agent;  // empty = "kubesched/<version>"
  absl::Duration request_timeout = absl::Seconds(30);
  int max_retries = 3;  // default for HttpRequest::max_retries == -1
  BackoffPolicy backoff;
  int max_idle_connections = 32;
  // Told about every HTTP exchange (each retry counts): the method, the status code (0 when no
  // response came) and how long it took; a watch is told when it ends, as method "WATCH" with a
  // negative duration. Called on the requesting thread; must be thread-safe and quick. Empty =
  // nobody (metrics set it).
  std::function<void(std::string_view method, int status, double seconds)> on_request;
};

// Thread-safe: Do() and Watch() may be called concurrently from any number of threads on one
// RestClient (reflectors, bind workers and writers share one). The idle-connection pool is guarded
// by one mutex; a connection in use belongs to exactly one call, which drives its I/O on its own
// thread, so no connection is ever touched by two threads at once.
//
// Do(): takes a pooled keep-alive connection (or opens one), rate-limited; on 401 it invalidates
// the token once and retries with a fresh one; retries 429/5xx (except 501) and connection
// failures with jittered exponential backoff, honouring Retry-After (capped by
// BackoffPolicy::max_retry_after); all within HttpRequest::timeout (default
// RestConfig::request_timeout). A pooled connection the server has closed is replaced
// transparently, without counting as a retry. TLS verification failures are not retried.
//
// Watch(): a dedicated connection, never pooled. A std::stop_callback posts a cancel of the
// pending socket operation onto that connection's own io_context, so a stop request ends the
// call within milliseconds (no polling). The read idle timeout is the request's
// `timeoutSeconds` + 30 s (1 h without one), so quiet watches aren't cut. When stop is requested
// after the response headers arrived, returns the response (its status, empty body); before,
// returns Cancelled. Blank lines are skipped; a trailing partial line at the end of the stream is
// dropped.
//
// Errors never escape as exceptions: failures are absl::Status (Unavailable, DeadlineExceeded,
// Cancelled, or the token source's error), with a message naming the method, server URL, target
// and cause.
class RestClient : public HttpTransport {
 public:
  static absl::StatusOr<std::unique_ptr<RestClient>> Create(RestConfig config);
  ~RestClient() override;

  RestClient(const RestClient&) = delete;
  RestClient& operator=(const RestClient&) = delete;

  absl::StatusOr<HttpResponse> Do(const HttpRequest& request) override;
  absl::StatusOr<HttpResponse> Watch(const HttpRequest& request,
                                     const std::function<void(std::string_view)>& on_line,
                                     std::stop_token stop) override;

  // Configuration caveats found by Create() (e.g. a protobuf content type that is served as
  // JSON, insecure TLS). For the caller to log once.
  const std::vector<std::string>& warnings() const;
  const std::string& server() const;
  // Idle keep-alive connections currently pooled (for tests and metrics).
  int idle_connections() const;

 private:
  struct Impl;
  explicit RestClient(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace kubesched::client
