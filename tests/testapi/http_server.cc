#include "tests/testapi/http_server.h"

// <utility> must precede the Asio headers: Boost 1.74's awaitable.hpp uses std::exchange
// without including it (see /work/shared/reference/deps.md).
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/redirect_error.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <cstdio>
#include <exception>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"

namespace kubesched::testapi {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

constexpr auto kIdleTimeout = std::chrono::seconds(300);
constexpr auto kWriteTimeout = std::chrono::seconds(60);
constexpr size_t kMaxBodyBytes = 256 * 1024 * 1024;

std::string ReasonPhrase(int status) {
  auto reason = http::obsolete_reason(static_cast<http::status>(status));
  return reason.empty() ? "Unknown" : std::string(reason.data(), reason.size());
}

std::string ToString(beast::string_view text) { return std::string(text.data(), text.size()); }

std::string HeaderBlock(const HttpResponse& response, bool keep_alive, bool chunked) {
  std::string head = absl::StrCat("HTTP/1.1 ", response.status, " ", ReasonPhrase(response.status),
                                  "\r\nContent-Type: ", response.content_type,
                                  "\r\nCache-Control: no-cache, private\r\n");
  for (const auto& [name, value] : response.headers)
    absl::StrAppend(&head, name, ": ", value, "\r\n");
  if (chunked) {
    head += "Transfer-Encoding: chunked\r\n";
  } else {
    absl::StrAppend(&head, "Content-Length: ", response.body.size(), "\r\n");
  }
  if (!keep_alive) head += "Connection: close\r\n";
  head += "\r\n";
  return head;
}

void AppendChunk(std::string_view data, std::string* out) {
  if (data.empty()) return;  // an empty chunk would end the body
  char size[32];
  int length = std::snprintf(size, sizeof(size), "%zx\r\n", data.size());
  out->append(size, static_cast<size_t>(length));
  out->append(data);
  out->append("\r\n");
}

HttpRequest ToRequest(const http::request<http::string_body>& message) {
  HttpRequest request;
  request.method = ToString(message.method_string());
  request.target = ToString(message.target());
  request.content_type = ToString(message[http::field::content_type]);
  request.accept = ToString(message[http::field::accept]);
  request.authorization = ToString(message[http::field::authorization]);
  request.body = message.body();
  return request;
}

// Wake-ups of one streaming response, shared with the stream's wake function (which may outlive
// the connection).
struct StreamSignal {
  explicit StreamSignal(asio::any_io_executor executor) : timer(executor) {}
  asio::steady_timer timer;
  bool woken = false;  // accessed on the connection's strand only
};

bool PeerCertificateVerified(SSL* ssl_handle) {
  X509* peer = SSL_get1_peer_certificate(ssl_handle);
  if (peer == nullptr) return false;
  X509_free(peer);
  return SSL_get_verify_result(ssl_handle) == X509_V_OK;
}

class AsioHttpServer : public HttpServer {
 public:
  AsioHttpServer(const HttpServerOptions& options, HttpHandler handler)
      : options_(options), handler_(std::move(handler)), acceptor_(io_context_) {}
  ~AsioHttpServer() override { Stop(); }

  absl::Status Listen();
  void Run();

  std::string url() const override {
    return absl::StrCat(tls_ ? "https://" : "http://", options_.listen_address, ":", port_);
  }
  int port() const override { return port_; }

  void Stop() override {
    {
      absl::MutexLock lock(&mu_);
      if (stopped_) return;
      stopped_ = true;
    }
    io_context_.stop();
    for (std::thread& thread : threads_) thread.join();
    threads_.clear();
  }

 private:
  asio::awaitable<void> Accept();
  template <typename Stream>
  asio::awaitable<void> Serve(Stream& stream, bool client_certificate_verified);
  template <typename Stream>
  asio::awaitable<bool> WriteStream(Stream& stream, const HttpResponse& response, bool keep_alive);
  asio::awaitable<void> ServePlain(tcp::socket socket);
  asio::awaitable<void> ServeTls(tcp::socket socket);

  const HttpServerOptions options_;
  const HttpHandler handler_;
  asio::io_context io_context_;
  std::unique_ptr<ssl::context> ssl_context_;
  tcp::acceptor acceptor_;
  bool tls_ = false;
  int port_ = 0;
  std::vector<std::thread> threads_;
  absl::Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

absl::Status AsioHttpServer::Listen() {
  beast::error_code ec;
  if (!options_.tls_cert_file.empty()) {
    tls_ = true;
    ssl_context_ = std::make_unique<ssl::context>(ssl::context::tls_server);
    ssl_context_->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                              ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                              ssl::context::no_tlsv1_1);
    ssl_context_->use_certificate_chain_file(options_.tls_cert_file, ec);
    if (ec)
      return absl::InvalidArgumentError(absl::StrCat(options_.tls_cert_file, ": ", ec.message()));
    ssl_context_->use_private_key_file(options_.tls_key_file, ssl::context::pem, ec);
    if (ec)
      return absl::InvalidArgumentError(absl::StrCat(options_.tls_key_file, ": ", ec.message()));
    if (!options_.client_ca_file.empty()) {
      ssl_context_->load_verify_file(options_.client_ca_file, ec);
      if (ec) {
        return absl::InvalidArgumentError(
            absl::StrCat(options_.client_ca_file, ": ", ec.message()));
      }
      // Certificates are optional (bearer tokens also authenticate) but verified when sent.
      ssl_context_->set_verify_mode(ssl::verify_peer, ec);
    }
  }
  auto address = asio::ip::make_address(options_.listen_address, ec);
  if (ec)
    return absl::InvalidArgumentError(absl::StrCat("bad listen address ", options_.listen_address));
  tcp::endpoint endpoint(address, static_cast<unsigned short>(options_.port));
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options_.listen_address, ":",
                                               options_.port, ": ", ec.message()));
  }
  port_ = acceptor_.local_endpoint().port();
  return absl::OkStatus();
}

void AsioHttpServer::Run() {
  asio::co_spawn(io_context_, Accept(), [](std::exception_ptr) {});
  int threads = std::max(1, options_.threads);
  for (int i = 0; i < threads; ++i) {
    threads_.emplace_back([this] { io_context_.run(); });
  }
}

asio::awaitable<void> AsioHttpServer::Accept() {
  while (true) {
    beast::error_code ec;
    tcp::socket socket = co_await acceptor_.async_accept(
        asio::make_strand(io_context_), asio::redirect_error(asio::use_awaitable, ec));
    if (ec == asio::error::operation_aborted) co_return;
    if (ec) continue;
    socket.set_option(tcp::no_delay(true), ec);
    auto executor = socket.get_executor();
    if (tls_) {
      asio::co_spawn(executor, ServeTls(std::move(socket)), [](std::exception_ptr) {});
    } else {
      asio::co_spawn(executor, ServePlain(std::move(socket)), [](std::exception_ptr) {});
    }
  }
}

asio::awaitable<void> AsioHttpServer::ServePlain(tcp::socket socket) {
  beast::tcp_stream stream(std::move(socket));
  co_await Serve(stream, false);
  beast::error_code ec;
  stream.socket().shutdown(tcp::socket::shutdown_send, ec);
}

asio::awaitable<void> AsioHttpServer::ServeTls(tcp::socket socket) {
  beast::ssl_stream<beast::tcp_stream> stream(beast::tcp_stream(std::move(socket)), *ssl_context_);
  beast::error_code ec;
  beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(10));
  co_await stream.async_handshake(ssl::stream_base::server,
                                  asio::redirect_error(asio::use_awaitable, ec));
  if (ec) co_return;
  co_await Serve(stream, PeerCertificateVerified(stream.native_handle()));
  beast::get_lowest_layer(stream).expires_after(std::chrono::seconds(2));
  co_await stream.async_shutdown(asio::redirect_error(asio::use_awaitable, ec));
}

template <typename Stream>
asio::awaitable<void> AsioHttpServer::Serve(Stream& stream, bool client_certificate_verified) {
  beast::flat_buffer buffer;
  while (true) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(kMaxBodyBytes);
    beast::error_code ec;
    beast::get_lowest_layer(stream).expires_after(kIdleTimeout);
    co_await http::async_read(stream, buffer, parser,
                              asio::redirect_error(asio::use_awaitable, ec));
    if (ec) co_return;
    const auto& message = parser.get();
    bool keep_alive = message.keep_alive();
    HttpRequest request = ToRequest(message);
    request.client_certificate_verified = client_certificate_verified;
    HttpResponse response = handler_(request);
    while (response.deferred) {
      asio::steady_timer timer(co_await asio::this_coro::executor);
      timer.expires_after(std::chrono::microseconds(absl::ToInt64Microseconds(response.delay)));
      co_await timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
      HttpResponse next = response.deferred();
      response = std::move(next);
    }
    beast::get_lowest_layer(stream).expires_after(kWriteTimeout);
    if (response.stream) {
      if (!co_await WriteStream(stream, response, keep_alive) || !keep_alive) co_return;
      continue;
    }
    std::string raw = HeaderBlock(response, keep_alive, false) + response.body;
    size_t length = response.drop_connection_midway ? raw.size() / 2 : raw.size();
    co_await asio::async_write(stream, asio::buffer(raw.data(), length),
                               asio::redirect_error(asio::use_awaitable, ec));
    if (ec || response.drop_connection_midway) {
      beast::get_lowest_layer(stream).socket().close(ec);
      co_return;
    }
    if (!keep_alive) co_return;
  }
}

// Writes a streaming response; true when it ended cleanly and the connection can be reused.
template <typename Stream>
asio::awaitable<bool> AsioHttpServer::WriteStream(Stream& stream, const HttpResponse& response,
                                                  bool keep_alive) {
  auto signal = std::make_shared<StreamSignal>(co_await asio::this_coro::executor);
  std::weak_ptr<StreamSignal> weak_signal = signal;
  auto executor = co_await asio::this_coro::executor;
  response.stream->Start([weak_signal, executor] {
    asio::post(executor, [weak_signal] {
      if (auto target = weak_signal.lock()) {
        target->woken = true;
        target->timer.cancel();
      }
    });
  });
  std::string pending = HeaderBlock(response, keep_alive, true);
  beast::error_code ec;
  while (true) {
    signal->woken = false;
    ResponseStream::Output output = response.stream->Poll(absl::Now());
    for (const std::string& chunk : output.chunks) AppendChunk(chunk, &pending);
    if (output.finished) pending += "0\r\n\r\n";
    if (!pending.empty()) {
      beast::get_lowest_layer(stream).expires_after(kWriteTimeout);
      co_await asio::async_write(stream, asio::buffer(pending),
                                 asio::redirect_error(asio::use_awaitable, ec));
      pending.clear();
      if (ec) {
        beast::get_lowest_layer(stream).socket().close(ec);
        co_return false;
      }
    }
    if (output.finished) co_return true;
    if (signal->woken) continue;
    beast::get_lowest_layer(stream).expires_never();
    absl::Duration wait = output.next_deadline - absl::Now();
    if (wait < absl::ZeroDuration()) continue;
    signal->timer.expires_after(std::chrono::milliseconds(
        std::min<int64_t>(absl::ToInt64Milliseconds(wait) + 1, 3'600'000)));
    co_await signal->timer.async_wait(asio::redirect_error(asio::use_awaitable, ec));
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpServerOptions& options,
                                                              HttpHandler handler) {
  auto server = std::make_unique<AsioHttpServer>(options, std::move(handler));
  absl::Status status = server->Listen();
  if (!status.ok()) return status;
  server->Run();
  return server;
}

}  // namespace kubesched::testapi
