#include "scheduler/client/rest_client.h"

// <utility> before Asio: Boost 1.74's asio headers use std::exchange without including it.
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <sys/socket.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <functional>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "tests/testing/test_certs.h"

namespace kubesched::client {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

// ---- a small scripted HTTP/1.1 server (thread per connection, blocking I/O) ----

struct ServerRequest {
  std::string method;
  std::string target;
  std::string authorization;
  std::string accept;
  std::string user_agent;
  std::string body;
  int connection_id = 0;
  int request_on_connection = 0;  // 1 = first request on its connection
  std::string client_common_name;
};

struct ServerReply {
  int status = 200;
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  bool close_without_response = false;  // read the request, then hang up
  bool close_after_response = false;    // hang up right after (keep-alive not announced off)
  std::vector<std::string> chunks;      // non-empty: chunked streaming response
  std::chrono::milliseconds chunk_delay{0};
  bool hold_open = false;  // after the chunks, keep the stream open until the client leaves
  std::chrono::milliseconds delay{0};  // before answering
};

class MiniServer {
 public:
  using Handler = std::function<ServerReply(const ServerRequest&)>;
  struct Options {
    const testing::TestCertificates* certs = nullptr;  // null = plain TCP
    bool require_client_cert = false;
  };

  MiniServer(Options options, Handler handler)
      : handler_(std::move(handler)),
        acceptor_(ioc_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)) {
    if (options.certs != nullptr) {
      tls_.emplace(ssl::context::tls_server);
      tls_->use_certificate_chain(asio::buffer(options.certs->server_cert_pem));
      tls_->use_private_key(asio::buffer(options.certs->server_key_pem), ssl::context::pem);
      if (options.require_client_cert) {
        tls_->add_certificate_authority(asio::buffer(options.certs->ca_cert_pem));
        tls_->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
      }
    }
    port_ = acceptor_.local_endpoint().port();
    accept_thread_ = std::thread([this] { AcceptLoop(); });
  }

  ~MiniServer() {
    stopping_ = true;
    {  // wake the blocking accept()
      tcp::socket waker(ioc_);
      beast::error_code ec;
      waker.connect(tcp::endpoint(asio::ip::make_address("127.0.0.1"), port_), ec);
    }
    accept_thread_.join();
    {
      absl::MutexLock lock(&mu_);
      for (int fd : open_fds_) ::shutdown(fd, SHUT_RDWR);
    }
    for (std::thread& thread : connection_threads_) thread.join();
  }

  std::string url() const { return absl::StrCat(tls_ ? "https" : "http", "://127.0.0.1:", port_); }
  int connections() const { return connections_.load(); }
  int requests() const { return requests_.load(); }
  std::vector<ServerRequest> seen() const {
    absl::MutexLock lock(&mu_);
    return seen_;
  }

 private:
  void AcceptLoop() {
    while (true) {
      tcp::socket socket(ioc_);
      beast::error_code ec;
      acceptor_.accept(socket, ec);
      if (stopping_ || ec) return;
      const int id = ++connections_;
      absl::MutexLock lock(&mu_);
      open_fds_.insert(socket.native_handle());
      connection_threads_.emplace_back(
          [this, id, s = std::move(socket)]() mutable { ServeConnection(std::move(s), id); });
    }
  }

  void ServeConnection(tcp::socket socket, int id) {
    const int fd = socket.native_handle();
    if (tls_) {
      ssl::stream<tcp::socket> stream(std::move(socket), *tls_);
      beast::error_code ec;
      stream.handshake(ssl::stream_base::server, ec);
      if (!ec) Serve(stream, id, PeerCommonName(stream.native_handle()));
      Forget(fd);
      stream.lowest_layer().close(ec);
    } else {
      Serve(socket, id, "");
      Forget(fd);
      beast::error_code ec;
      socket.close(ec);
    }
  }

  void Forget(int fd) {
    absl::MutexLock lock(&mu_);
    open_fds_.erase(fd);
  }

  static std::string PeerCommonName(SSL* ssl) {
    X509* peer = SSL_get1_peer_certificate(ssl);
    if (peer == nullptr) return "";
    char name[256] = {};
    X509_NAME_get_text_by_NID(X509_get_subject_name(peer), NID_commonName, name, sizeof(name));
    X509_free(peer);
    return name;
  }

  template <typename Stream>
  void Serve(Stream& stream, int id, const std::string& common_name) {
    beast::flat_buffer buffer;
    for (int count = 1;; ++count) {
      http::request<http::string_body> request;
      beast::error_code ec;
      http::read(stream, buffer, request, ec);
      if (ec) return;
      ++requests_;
      ServerRequest seen{std::string(request.method_string()),
                         std::string(request.target()),
                         std::string(request[http::field::authorization]),
                         std::string(request[http::field::accept]),
                         std::string(request[http::field::user_agent]),
                         request.body(),
                         id,
                         count,
                         common_name};
      {
        absl::MutexLock lock(&mu_);
        seen_.push_back(seen);
      }
      const ServerReply reply = handler_(seen);
      std::this_thread::sleep_for(reply.delay);
      if (reply.close_without_response) return;
      std::string head = absl::StrCat("HTTP/1.1 ", reply.status, " Scripted\r\n");
      for (const auto& [name, value] : reply.headers)
        absl::StrAppend(&head, name, ": ", value, "\r\n");
      if (reply.chunks.empty()) {
        absl::StrAppend(&head, "Content-Length: ", reply.body.size(), "\r\n\r\n", reply.body);
        if (!Write(stream, head) || reply.close_after_response) return;
        continue;
      }
      absl::StrAppend(&head, "Transfer-Encoding: chunked\r\n\r\n");
      if (!Write(stream, head)) return;
      for (const std::string& chunk : reply.chunks) {
        std::this_thread::sleep_for(reply.chunk_delay);
        char size[32];
        std::snprintf(size, sizeof(size), "%zx\r\n", chunk.size());
        if (!Write(stream, absl::StrCat(size, chunk, "\r\n"))) return;
      }
      if (reply.hold_open) continue;  // the next read blocks until the client hangs up
      if (!Write(stream, "0\r\n\r\n")) return;
    }
  }

  template <typename Stream>
  static bool Write(Stream& stream, const std::string& bytes) {
    beast::error_code ec;
    asio::write(stream, asio::buffer(bytes), ec);
    return !ec;
  }

  Handler handler_;
  asio::io_context ioc_;
  std::optional<ssl::context> tls_;
  tcp::acceptor acceptor_;
  unsigned short port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<int> connections_{0};
  std::atomic<int> requests_{0};
  std::thread accept_thread_;

  mutable absl::Mutex mu_;
  std::set<int> open_fds_ ABSL_GUARDED_BY(mu_);
  std::vector<ServerRequest> seen_ ABSL_GUARDED_BY(mu_);
  std::vector<std::thread> connection_threads_;  // only the accept thread adds, before join
};

const testing::TestCertificates& Certs() {
  static const testing::TestCertificates certs = [] {
    absl::StatusOr<testing::TestCertificates> generated = testing::GenerateTestCertificates();
    REQUIRE(generated.ok());
    return *generated;
  }();
  return certs;
}

RestConfig FastConfig(const std::string& server) {
  RestConfig config;
  config.server = server;
  config.qps = 0;  // unlimited: these tests are about the transport
  config.backoff.initial = absl::Milliseconds(1);
  config.backoff.max = absl::Milliseconds(5);
  config.backoff.max_retry_after = absl::Milliseconds(50);
  config.request_timeout = absl::Seconds(5);
  return config;
}

std::unique_ptr<RestClient> MakeClient(RestConfig config) {
  absl::StatusOr<std::unique_ptr<RestClient>> client = RestClient::Create(std::move(config));
  INFO(client.status().ToString());
  REQUIRE(client.ok());
  return *std::move(client);
}

HttpRequest Get(std::string target) {
  HttpRequest request;
  request.target = std::move(target);
  return request;
}

ServerReply Ok(std::string body = "{}") {
  ServerReply reply;
  reply.body = std::move(body);
  return reply;
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Hands out "old" until invalidated, then "new".
class RotatingToken : public TokenSource {
 public:
  absl::StatusOr<std::string> Token() override { return invalidations.load() > 0 ? "new" : "old"; }
  void Invalidate() override { ++invalidations; }
  std::atomic<int> invalidations{0};
};

TEST_CASE("RestClient reuses one keep-alive connection and sends the standard headers",
          "[client]") {
  MiniServer server({}, [](const ServerRequest& request) { return Ok(request.target); });
  RestConfig config = FastConfig(server.url() + "/prefix/");
  config.user_agent = "kubesched-test/1";
  auto client = MakeClient(config);
  for (int i = 0; i < 5; ++i) {
    absl::StatusOr<HttpResponse> response = client->Do(Get(absl::StrCat("/api/v1/pods?i=", i)));
    REQUIRE(response.ok());
    CHECK(response->status == 200);
    CHECK(response->body == absl::StrCat("/prefix/api/v1/pods?i=", i));
  }
  CHECK(server.connections() == 1);
  CHECK(client->idle_connections() == 1);
  const ServerRequest first = server.seen().front();
  CHECK(first.accept == "application/json");
  CHECK(first.user_agent == "kubesched-test/1");
  CHECK(first.authorization.empty());
}

TEST_CASE("RestClient replaces pooled connections the server closed", "[client]") {
  SECTION("closed right after the response") {
    MiniServer server({}, [](const ServerRequest&) {
      ServerReply reply = Ok();
      reply.close_after_response = true;
      return reply;
    });
    RestConfig config = FastConfig(server.url());
    config.max_retries = 0;  // replacing a stale connection is not a retry
    auto client = MakeClient(config);
    for (int i = 0; i < 3; ++i) {
      absl::StatusOr<HttpResponse> response = client->Do(Get("/healthz"));
      REQUIRE(response.ok());
      CHECK(response->status == 200);
    }
    CHECK(server.requests() == 3);
  }
  SECTION("closed on receiving the next request (the keep-alive race)") {
    MiniServer server({}, [](const ServerRequest& request) {
      ServerReply reply = Ok();
      reply.close_without_response = request.request_on_connection > 1;
      return reply;
    });
    RestConfig config = FastConfig(server.url());
    config.max_retries = 0;
    auto client = MakeClient(config);
    HttpRequest post = Get("/api/v1/namespaces/default/pods/p/binding");
    post.method = "POST";
    post.body = "{}";
    post.content_type = "application/json";
    for (int i = 0; i < 3; ++i) {
      absl::StatusOr<HttpResponse> response = client->Do(post);
      INFO(response.status().ToString());
      REQUIRE(response.ok());
      CHECK(response->status == 200);
    }
    CHECK(server.connections() == 3);
  }
}

TEST_CASE("RestClient retries 429 honouring a capped Retry-After", "[client]") {
  std::atomic<int> calls{0};
  MiniServer server({}, [&](const ServerRequest&) {
    if (calls++ > 0) return Ok("done");
    ServerReply reply;
    reply.status = 429;
    // An hour: beyond the request's 5 s timeout, so a client that did not cap it would give up
    // and return this 429 instead of retrying.
    reply.headers = {{"Retry-After", "3600"}};
    return reply;
  });
  auto client = MakeClient(FastConfig(server.url()));  // max_retry_after 50 ms
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<HttpResponse> response = client->Do(Get("/api/v1/nodes"));
  REQUIRE(response.ok());
  CHECK(response->status == 200);
  CHECK(response->body == "done");
  CHECK(calls.load() == 2);
  CHECK(SecondsSince(start) >= 0.045);  // it did wait the capped 50 ms, not the 1 ms backoff
}

TEST_CASE("RestClient gives up after max_retries and returns the last 5xx", "[client]") {
  MiniServer server({}, [](const ServerRequest&) {
    ServerReply reply;
    reply.status = 500;
    reply.body = R"({"kind":"Status","message":"etcd is sad"})";
    return reply;
  });
  RestConfig config = FastConfig(server.url());
  config.max_retries = 2;
  auto client = MakeClient(config);
  absl::StatusOr<HttpResponse> response = client->Do(Get("/api/v1/pods"));
  REQUIRE(response.ok());
  CHECK(response->status == 500);
  CHECK(server.requests() == 3);

  HttpRequest once = Get("/api/v1/pods");
  once.max_retries = 0;
  REQUIRE(client->Do(once).ok());
  CHECK(server.requests() == 4);
}

TEST_CASE("RestClient does not retry other 4xx answers", "[client]") {
  MiniServer server({}, [](const ServerRequest&) {
    ServerReply reply;
    reply.status = 404;
    return reply;
  });
  auto client = MakeClient(FastConfig(server.url()));
  absl::StatusOr<HttpResponse> response = client->Do(Get("/api/v1/pods/x"));
  REQUIRE(response.ok());
  CHECK(response->status == 404);
  CHECK(server.requests() == 1);
}

TEST_CASE("RestClient sends the bearer token and refreshes it once on 401", "[client]") {
  MiniServer server({}, [](const ServerRequest& request) {
    if (request.authorization == "Bearer new" || request.authorization == "Bearer static") {
      return Ok();
    }
    ServerReply reply;
    reply.status = 401;
    return reply;
  });
  SECTION("static token") {
    RestConfig config = FastConfig(server.url());
    config.token = std::make_shared<StaticToken>("static");
    auto client = MakeClient(config);
    absl::StatusOr<HttpResponse> response = client->Do(Get("/api"));
    REQUIRE(response.ok());
    CHECK(response->status == 200);
    CHECK(server.seen().front().authorization == "Bearer static");
  }
  SECTION("rotated token") {
    auto token = std::make_shared<RotatingToken>();
    RestConfig config = FastConfig(server.url());
    config.token = token;
    auto client = MakeClient(config);
    absl::StatusOr<HttpResponse> response = client->Do(Get("/api"));
    REQUIRE(response.ok());
    CHECK(response->status == 200);
    CHECK(token->invalidations.load() == 1);
    CHECK(server.requests() == 2);
  }
  SECTION("a token that stays rejected is retried only once") {
    RestConfig config = FastConfig(server.url());
    config.token = std::make_shared<StaticToken>("revoked");
    auto client = MakeClient(config);
    absl::StatusOr<HttpResponse> response = client->Do(Get("/api"));
    REQUIRE(response.ok());
    CHECK(response->status == 401);
    CHECK(server.requests() == 2);
  }
}

TEST_CASE("RestClient reports an unreachable server as Unavailable naming it", "[client]") {
  unsigned short port = 0;
  {
    asio::io_context ioc;
    tcp::acceptor closed(ioc, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0));
    port = closed.local_endpoint().port();
  }
  RestConfig config = FastConfig(absl::StrCat("http://127.0.0.1:", port));
  config.max_retries = 1;
  auto client = MakeClient(config);
  absl::StatusOr<HttpResponse> response = client->Do(Get("/api/v1/pods"));
  REQUIRE_FALSE(response.ok());
  CHECK(response.status().code() == absl::StatusCode::kUnavailable);
  CHECK(absl::StrContains(response.status().message(), absl::StrCat("127.0.0.1:", port)));
  CHECK(absl::StrContains(response.status().message(), "connect"));
}

TEST_CASE("RestClient enforces the request timeout", "[client]") {
  MiniServer server({}, [](const ServerRequest&) {
    ServerReply reply = Ok();
    reply.delay = std::chrono::milliseconds(250);
    return reply;
  });
  auto client = MakeClient(FastConfig(server.url()));
  HttpRequest request = Get("/slow");
  request.timeout = absl::Milliseconds(80);
  absl::StatusOr<HttpResponse> response = client->Do(request);
  // Within the client's 5 s timeout the 250 ms answer would have come: the request's own one cut
  // it short.
  REQUIRE_FALSE(response.ok());
  CHECK(response.status().code() == absl::StatusCode::kDeadlineExceeded);
}

TEST_CASE("RestClient is safe to share between threads", "[client]") {
  MiniServer server({}, [](const ServerRequest& request) { return Ok(request.target); });
  auto client = MakeClient(FastConfig(server.url()));
  std::atomic<int> good{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        const std::string target = absl::StrCat("/t", t, "/", i);
        absl::StatusOr<HttpResponse> response = client->Do(Get(target));
        if (response.ok() && response->status == 200 && response->body == target) ++good;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(good.load() == 60);
  CHECK(server.connections() <= 6);
}

TEST_CASE("RestClient speaks TLS and verifies the server", "[client]") {
  const testing::TestCertificates& certs = Certs();
  MiniServer server({.certs = &certs}, [](const ServerRequest&) { return Ok("secure"); });

  SECTION("right CA") {
    RestConfig config = FastConfig(server.url());
    config.ca_pem = certs.ca_cert_pem;
    auto client = MakeClient(config);
    for (int i = 0; i < 2; ++i) {
      absl::StatusOr<HttpResponse> response = client->Do(Get("/version"));
      INFO(response.status().ToString());
      REQUIRE(response.ok());
      CHECK(response->body == "secure");
    }
    CHECK(server.connections() == 1);
  }
  SECTION("wrong CA fails fast and clearly") {
    RestConfig config = FastConfig(server.url());
    config.ca_pem = certs.other_ca_cert_pem;
    auto client = MakeClient(config);
    absl::StatusOr<HttpResponse> response = client->Do(Get("/version"));
    REQUIRE_FALSE(response.ok());
    CHECK(response.status().code() == absl::StatusCode::kUnavailable);
    CHECK(absl::StrContains(response.status().message(), "certificate verify failed"));
    CHECK(absl::StrContains(response.status().message(), server.url()));
    CHECK(server.connections() == 1);  // not retried
  }
  SECTION("host name is checked") {
    RestConfig config = FastConfig(absl::StrReplaceAll(server.url(), {{"127.0.0.1", "localhost"}}));
    config.ca_pem = certs.ca_cert_pem;
    auto client = MakeClient(config);
    absl::StatusOr<HttpResponse> response = client->Do(Get("/version"));
    INFO(response.status().ToString());
    // localhost is in the SAN too, so this verifies (and exercises the DNS + SNI path).
    CHECK(response.ok());
  }
  SECTION("insecure skips verification and warns") {
    RestConfig config = FastConfig(server.url());
    config.insecure_skip_tls_verify = true;
    auto client = MakeClient(config);
    CHECK(client->Do(Get("/version")).ok());
    REQUIRE(client->warnings().size() == 1);
    CHECK(absl::StrContains(client->warnings()[0], "insecure"));
  }
}

TEST_CASE("RestClient presents a client certificate (mTLS)", "[client]") {
  const testing::TestCertificates& certs = Certs();
  MiniServer server({.certs = &certs, .require_client_cert = true},
                    [](const ServerRequest& request) { return Ok(request.client_common_name); });
  RestConfig config = FastConfig(server.url());
  config.ca_pem = certs.ca_cert_pem;
  config.max_retries = 0;
  SECTION("with a certificate") {
    config.client_cert_pem = certs.client_cert_pem;
    config.client_key_pem = certs.client_key_pem;
    auto client = MakeClient(config);
    absl::StatusOr<HttpResponse> response = client->Do(Get("/api"));
    INFO(response.status().ToString());
    REQUIRE(response.ok());
    CHECK(response->body == "kubesched-test-client");
  }
  SECTION("without one the server refuses") {
    auto client = MakeClient(config);
    CHECK_FALSE(client->Do(Get("/api")).ok());
  }
}

TEST_CASE("RestClient rejects bad configuration", "[client]") {
  RestConfig config;
  config.server = "ftp://example";
  CHECK(RestClient::Create(config).status().code() == absl::StatusCode::kInvalidArgument);
  config.server = "https://127.0.0.1:6443";
  config.ca_pem = "not a certificate";
  CHECK_FALSE(RestClient::Create(config).ok());
  config.ca_pem = "";
  config.client_cert_pem = "only a cert";
  CHECK_FALSE(RestClient::Create(config).ok());
  config.client_cert_pem = "";
  config.content_type = "application/vnd.kubernetes.protobuf";
  auto client = RestClient::Create(config);
  REQUIRE(client.ok());
  REQUIRE((*client)->warnings().size() == 1);
  CHECK(absl::StrContains((*client)->warnings()[0], "JSON"));
}

ServerReply WatchStream() {
  ServerReply reply;
  reply.headers = {{"Content-Type", "application/json"}};
  reply.chunks = {R"({"type":"ADDED",)", "\"n\":1}\n{\"type\"", ":\"MODIFIED\"}\n\n{\"c\":3}\n",
                  "{\"partial\""};
  reply.chunk_delay = std::chrono::milliseconds(10);
  return reply;
}

TEST_CASE("RestClient Watch delivers complete lines across chunk boundaries", "[client]") {
  const testing::TestCertificates& certs = Certs();
  for (bool tls : {false, true}) {
    INFO("tls " << tls);
    MiniServer server({.certs = tls ? &certs : nullptr},
                      [](const ServerRequest&) { return WatchStream(); });
    RestConfig config = FastConfig(server.url());
    config.ca_pem = certs.ca_cert_pem;
    auto client = MakeClient(config);
    std::vector<std::string> lines;
    absl::StatusOr<HttpResponse> response = client->Watch(
        Get("/api/v1/pods?watch=1&timeoutSeconds=5"),
        [&](std::string_view line) { lines.emplace_back(line); }, std::stop_token());
    INFO(response.status().ToString());
    REQUIRE(response.ok());
    CHECK(response->status == 200);
    CHECK(lines == std::vector<std::string>{R"({"type":"ADDED","n":1})", R"({"type":"MODIFIED"})",
                                            R"({"c":3})"});
  }
}

TEST_CASE("RestClient Watch returns promptly when stopped", "[client]") {
  MiniServer server({}, [](const ServerRequest&) {
    ServerReply reply;
    reply.chunks = {"{\"first\":1}\n"};
    reply.hold_open = true;
    return reply;
  });
  auto client = MakeClient(FastConfig(server.url()));
  std::stop_source stop;
  std::atomic<int> lines{0};
  std::chrono::steady_clock::time_point stopped_at;
  std::thread stopper([&] {
    while (lines.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    stopped_at = std::chrono::steady_clock::now();
    stop.request_stop();
  });
  absl::StatusOr<HttpResponse> response = client->Watch(
      Get("/api/v1/pods?watch=1"), [&](std::string_view) { ++lines; }, stop.get_token());
  stopper.join();
  CHECK(SecondsSince(stopped_at) < 0.2);
  REQUIRE(response.ok());
  CHECK(response->status == 200);
  CHECK(lines.load() == 1);

  SECTION("already stopped") {
    absl::StatusOr<HttpResponse> again = client->Watch(
        Get("/api/v1/pods?watch=1"), [](std::string_view) {}, stop.get_token());
    CHECK(again.status().code() == absl::StatusCode::kCancelled);
  }
}

TEST_CASE("RestClient Watch returns a non-2xx answer as a value", "[client]") {
  MiniServer server({}, [](const ServerRequest&) {
    ServerReply reply;
    reply.status = 410;
    reply.body = R"({"kind":"Status","reason":"Expired"})";
    return reply;
  });
  auto client = MakeClient(FastConfig(server.url()));
  bool called = false;
  absl::StatusOr<HttpResponse> response = client->Watch(
      Get("/api/v1/pods?watch=1"), [&](std::string_view) { called = true; }, std::stop_token());
  REQUIRE(response.ok());
  CHECK(response->status == 410);
  CHECK(absl::StrContains(response->body, "Expired"));
  CHECK_FALSE(called);
}

}  // namespace
}  // namespace kubesched::client
