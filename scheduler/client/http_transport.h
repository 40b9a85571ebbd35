#pragma once

// The seam between the API client and everything that talks to the API server (reflectors,
// binder, status and event writers, leader election). RestClient implements it over HTTP/1.1;
// tests implement it with scripted fakes.

#include <functional>
#include <stop_token>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kubesched::client {

struct HttpRequest {
  std::string method = "GET";
  // Path and query, already escaped: "/api/v1/pods?limit=500&continue=abc".
  std::string target;
  std::string body;
  // Of the body: "application/json", "application/merge-patch+json",
  // "application/strategic-merge-patch+json". Empty when there is no body.
  std::string content_type;
  // Retries on 429, 5xx and connection failures; -1 means the transport's default. Watches are
  // never retried by the transport (the reflector decides).
  int max_retries = -1;
  // Whole-request deadline for Do(); zero means the transport's default.
  absl::Duration timeout = absl::ZeroDuration();
};

struct HttpResponse {
  int status = 0;    // HTTP status code
  std::string body;  // for errors, usually a v1 Status object
};

class HttpTransport {
 public:
  virtual ~HttpTransport() = default;

  // One request/response exchange, rate-limited and retried as configured. A response with any
  // HTTP status is a value; only failures to get a response (connect, TLS, timeout after the
  // retries) are errors: Unavailable or DeadlineExceeded, naming the server and the cause.
  virtual absl::StatusOr<HttpResponse> Do(const HttpRequest& request) = 0;

  // A streaming GET (a watch). While the server keeps the response open, calls `on_line` for each
  // complete newline-terminated line of the body (one JSON watch event per line). Returns when
  // the server ends the response (its `timeoutSeconds`), when `stop` is requested (promptly: well
  // under a second), or on a connection failure (an error). A non-2xx answer is returned as a
  // value with its body and `on_line` is never called.
  virtual absl::StatusOr<HttpResponse> Watch(const HttpRequest& request,
                                             const std::function<void(std::string_view)>& on_line,
                                             std::stop_token stop) = 0;
};

// "<what>: <reason from the Status body, else the HTTP status> (HTTP <code>)" as an absl::Status
// whose code follows the HTTP status (404 NotFound, 409 Aborted / AlreadyExists, 410
// FailedPrecondition, 401 Unauthenticated, 403 PermissionDenied, 429 ResourceExhausted, 5xx
// Unavailable, other 4xx InvalidArgument). OK for 2xx.
absl::Status StatusFromResponse(const HttpResponse& response, std::string_view what);

}  // namespace kubesched::client
