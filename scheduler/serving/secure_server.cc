#include "scheduler/serving/secure_server.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <optional>
#include <thread>
#include <utility>  // before Asio: Boost 1.74's headers miss it under C++20

#include "absl/strings/str_cat.h"

namespace kubesched::serving {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

constexpr auto kHandshakeTimeout = std::chrono::seconds(10);
// A keep-alive connection (Prometheus keeps one per target) may idle between scrapes this long.
constexpr auto kIdleTimeout = std::chrono::seconds(120);
constexpr size_t kMaxRequestBytes = 64 * 1024;

struct Shared {
  std::map<std::string, Handler> handlers;
  DelegatedAuth* auth = nullptr;
  asio::thread_pool* workers = nullptr;

  Response Serve(std::string_view path, std::string_view method) const {
    auto it = handlers.find(std::string(path));
    if (it == handlers.end())
      return Response{404, "text/plain; charset=utf-8", "404 page not found\n"};
    if (method != "GET" && method != "HEAD") {
      return Response{405, "text/plain; charset=utf-8", "405 method not allowed\n"};
    }
    return it->second();
  }
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, ssl::context& tls, const Shared* shared)
      : stream_(std::move(socket), tls), shared_(shared) {}

  void Start() {
    beast::get_lowest_layer(stream_).expires_after(kHandshakeTimeout);
    stream_.async_handshake(ssl::stream_base::server,
                            [self = shared_from_this()](beast::error_code ec) {
                              if (!ec) self->Read();
                            });
  }

 private:
  void Read() {
    parser_.emplace();
    parser_->body_limit(kMaxRequestBytes);
    parser_->header_limit(kMaxRequestBytes);
    beast::get_lowest_layer(stream_).expires_after(kIdleTimeout);
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       if (!ec) self->Dispatch();
                     });
  }

  void Dispatch() {
    request_ = parser_->release();
    const std::string_view target(request_.target().data(), request_.target().size());
    path_ = std::string(target.substr(0, target.find('?')));
    method_ = std::string(request_.method_string());
    beast::get_lowest_layer(stream_).expires_never();
    if (shared_->auth->AlwaysAllowed(path_)) {
      Write(shared_->Serve(path_, method_));
      return;
    }
    const auto authorization = request_[http::field::authorization];
    asio::post(*shared_->workers, [self = shared_from_this(),
                                   authorization =
                                       std::string(authorization.data(), authorization.size())] {
      const AuthDecision decision =
          self->shared_->auth->Check(authorization, self->path_, self->method_);
      Response response = decision.status == 200
                              ? self->shared_->Serve(self->path_, self->method_)
                              : Response{decision.status, decision.content_type, decision.body};
      asio::post(self->stream_.get_executor(), [self, response = std::move(response)]() mutable {
        self->Write(std::move(response));
      });
    });
  }

  void Write(Response response) {
    response_ = {};
    response_.version(request_.version());
    response_.keep_alive(request_.keep_alive());
    response_.result(static_cast<http::status>(response.status));
    response_.set(http::field::content_type, response.content_type);
    response_.set("X-Content-Type-Options", "nosniff");
    response_.body() = std::move(response.body);
    response_.prepare_payload();
    if (request_.method() == http::verb::head) {
      // The length a GET would get, and no body.
      const size_t length = response_.body().size();
      response_.body().clear();
      response_.content_length(length);
    }
    beast::get_lowest_layer(stream_).expires_after(kIdleTimeout);
    http::async_write(stream_, response_,
                      [self = shared_from_this()](beast::error_code ec, size_t) {
                        if (ec) return;
                        if (self->response_.keep_alive()) {
                          self->Read();
                        } else {
                          self->stream_.async_shutdown([self](beast::error_code) {});
                        }
                      });
  }

  beast::ssl_stream<beast::tcp_stream> stream_;
  const Shared* shared_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  http::request<http::string_body> request_;
  http::response<http::string_body> response_;
  std::string path_;
  std::string method_;
};

class BeastSecureServer : public SecureServer {
 public:
  BeastSecureServer(int worker_threads) : workers_(static_cast<size_t>(worker_threads)) {}

  ~BeastSecureServer() override {
    asio::post(io_, [this] {
      boost::system::error_code ec;
      acceptor_.close(ec);
    });
    // The workers first: what they answer is posted back to the I/O thread, still running.
    workers_.join();
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }

  absl::Status Configure(SecureServerOptions options, DelegatedAuth* auth) {
    shared_.handlers = std::move(options.handlers);
    shared_.auth = auth;
    shared_.workers = &workers_;
    tls_.set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                     ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1 |
                     ssl::context::single_dh_use);
    boost::system::error_code ec;
    tls_.use_certificate_chain(asio::buffer(options.certificate.chain_pem), ec);
    if (!ec) tls_.use_private_key(asio::buffer(options.certificate.key_pem), ssl::context::pem, ec);
    if (ec) {
      return absl::InvalidArgumentError(
          absl::StrCat("secure serving: the certificate and key are not usable: ", ec.message()));
    }
    return absl::OkStatus();
  }

  absl::Status Listen(const std::string& address, int port) {
    boost::system::error_code ec;
    const asio::ip::address ip = asio::ip::make_address(address, ec);
    if (ec || port < 0 || port > 65535) {
      return absl::InvalidArgumentError(
          absl::StrCat("secure serving: --bind-address \"", address, "\" is not an IP address"));
    }
    const tcp::endpoint endpoint(ip, static_cast<unsigned short>(port));
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      return absl::UnavailableError(absl::StrCat("secure serving: cannot listen on ",
                                                 endpoint.address().to_string(), ":", port, ": ",
                                                 ec.message()));
    }
    port_ = acceptor_.local_endpoint().port();
    Accept();
    thread_ = std::thread([this] { io_.run(); });
    return absl::OkStatus();
  }

  int port() const override { return port_; }

 private:
  void Accept() {
    acceptor_.async_accept(
        asio::make_strand(io_), [this](beast::error_code ec, tcp::socket socket) {
          if (!ec) std::make_shared<Session>(std::move(socket), tls_, &shared_)->Start();
          if (acceptor_.is_open()) Accept();
        });
  }

  asio::io_context io_;
  ssl::context tls_{ssl::context::tls_server};
  tcp::acceptor acceptor_{io_};
  asio::thread_pool workers_;
  Shared shared_;
  int port_ = 0;
  std::thread thread_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<SecureServer>> SecureServer::Start(SecureServerOptions options,
                                                                  DelegatedAuth* auth) {
  const std::string address = options.bind_address;
  const int port = options.port;
  auto server = std::make_unique<BeastSecureServer>(std::max(1, options.worker_threads));
  if (absl::Status status = server->Configure(std::move(options), auth); !status.ok()) {
    return status;
  }
  if (absl::Status status = server->Listen(address, port); !status.ok()) return status;
  return server;
}

}  // namespace kubesched::serving
