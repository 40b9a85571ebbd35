#pragma once

// A small HTTP/1.1 server (plain TCP or TLS, optional client certificates, keep-alive) that hands
// each request to one handler function and writes its answer: a whole body, or a chunked body
// produced over time (watches). All Beast/Asio code of kubesched-testapi is in http_server.cc.
//
// Thread-safety: HttpServer's methods may be called from any thread. The handler is called
// concurrently from the server's threads and must be thread-safe. A ResponseStream is used by one
// connection at a time, except for the wake function, which may be called from any thread.

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace kubesched::testapi {

struct HttpRequest {
  std::string method{};  // "GET"
  std::string target{};  // path and query, as sent
  std::string content_type{};
  std::string accept{};
  std::string authorization{};
  std::string body{};
  // A client certificate was presented and verified against --client-ca-file.
  bool client_certificate_verified = false;
};

// A response body written as HTTP chunks while the stream produces them.
class ResponseStream {
 public:
  struct Output {
    std::vector<std::string> chunks{};                  // each written as one HTTP chunk
    bool finished = false;                              // end the body after these chunks
    absl::Time next_deadline = absl::InfiniteFuture();  // poll again then, at the latest
  };
  virtual ~ResponseStream() = default;
  // Called once, before the first Poll, with a function that any thread may call to have Poll
  // called again soon.
  virtual void Start(std::function<void()> wake) = 0;
  virtual Output Poll(absl::Time now) = 0;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::vector<std::pair<std::string, std::string>> headers{};
  std::string body{};
  // When set, the body is this stream instead, sent with Transfer-Encoding: chunked.
  std::shared_ptr<ResponseStream> stream{};
  // When set, the server waits `delay` and then sends what `deferred` returns instead (used to
  // inject latency without blocking a server thread).
  absl::Duration delay = absl::ZeroDuration();
  std::function<HttpResponse()> deferred;
  // Writes only the first half of the serialized response, then closes the connection.
  bool drop_connection_midway = false;
};

using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

struct HttpServerOptions {
  std::string listen_address = "127.0.0.1";
  int port = 0;                 // 0 picks a free port
  std::string tls_cert_file{};  // TLS when set, with tls_key_file
  std::string tls_key_file{};
  std::string client_ca_file{};  // when set, client certificates are requested and verified
  int threads = 2;
};

class HttpServer {
 public:
  // Binds, listens and starts serving on background threads.
  static absl::StatusOr<std::unique_ptr<HttpServer>> Start(const HttpServerOptions& options,
                                                           HttpHandler handler);
  virtual ~HttpServer() = default;

  // "https://127.0.0.1:PORT" or "http://...".
  virtual std::string url() const = 0;
  virtual int port() const = 0;
  // Stops accepting, drops every connection and joins the threads. Idempotent.
  virtual void Stop() = 0;
};

}  // namespace kubesched::testapi
