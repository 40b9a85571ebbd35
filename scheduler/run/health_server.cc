#include "scheduler/run/health_server.h"

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <thread>
#include <utility>  // before Asio: Boost 1.74's headers miss it under C++20

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace kubesched::scheduler {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

absl::StatusOr<tcp::endpoint> ParseAddress(std::string_view address) {
  const size_t colon = address.rfind(':');
  int port = -1;
  if (colon == std::string_view::npos ||
      !absl::SimpleAtoi(absl::string_view(address.data() + colon + 1, address.size() - colon - 1),
                        &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("health address \"", std::string(address), "\": want host:port"));
  }
  std::string host(address.substr(0, colon));
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host.empty()) host = "0.0.0.0";
  boost::system::error_code ec;
  const asio::ip::address ip = asio::ip::make_address(host, ec);
  if (ec) {
    return absl::InvalidArgumentError(absl::StrCat("health address \"", std::string(address),
                                                   "\": \"", host, "\" is not an IP address"));
  }
  return tcp::endpoint(ip, static_cast<unsigned short>(port));
}

// One connection: read a request, answer it, close. Probes are tiny and rare, so keep-alive
// would only add state.
class ProbeSession : public std::enable_shared_from_this<ProbeSession> {
 public:
  ProbeSession(tcp::socket socket, const HealthChecks* checks)
      : stream_(std::move(socket)), checks_(checks) {}

  void Start() {
    stream_.expires_after(std::chrono::seconds(10));
    http::async_read(stream_, buffer_, request_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       if (!ec) self->Respond();
                     });
  }

 private:
  void Respond() {
    const std::string_view target(request_.target().data(), request_.target().size());
    const std::string_view path = target.substr(0, target.find('?'));
    std::string problem;
    bool known = true;
    if (path == "/healthz" || path == "/livez") {
      problem = checks_->live ? checks_->live() : "";
    } else if (path == "/readyz") {
      problem = checks_->ready ? checks_->ready() : "";
    } else {
      known = false;
    }
    response_.version(request_.version());
    response_.keep_alive(false);
    response_.set(http::field::content_type, "text/plain; charset=utf-8");
    if (!known) {
      response_.result(http::status::not_found);
      response_.body() = "not found\n";
    } else if (problem.empty()) {
      response_.result(http::status::ok);
      response_.body() = "ok";
    } else {
      response_.result(http::status::service_unavailable);
      response_.body() = problem + "\n";
    }
    response_.prepare_payload();
    http::async_write(stream_, response_, [self = shared_from_this()](beast::error_code, size_t) {
      beast::error_code ignored;
      self->stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    });
  }

  beast::tcp_stream stream_;
  const HealthChecks* checks_;
  beast::flat_buffer buffer_;
  http::request<http::string_body> request_;
  http::response<http::string_body> response_;
};

class BeastHealthServer : public HealthServer {
 public:
  explicit BeastHealthServer(HealthChecks checks) : checks_(std::move(checks)) {}
  ~BeastHealthServer() override {
    io_.stop();
    if (thread_.joinable()) thread_.join();
  }

  absl::Status Listen(const tcp::endpoint& endpoint) {
    boost::system::error_code ec;
    acceptor_.open(endpoint.protocol(), ec);
    if (!ec) acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor_.bind(endpoint, ec);
    if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      return absl::UnavailableError(absl::StrCat("health server: cannot listen on ",
                                                 endpoint.address().to_string(), ":",
                                                 endpoint.port(), ": ", ec.message()));
    }
    port_ = acceptor_.local_endpoint().port();
    Accept();
    thread_ = std::thread([this] { io_.run(); });
    return absl::OkStatus();
  }

  int port() const override { return port_; }

 private:
  void Accept() {
    acceptor_.async_accept([this](beast::error_code ec, tcp::socket socket) {
      if (!ec) std::make_shared<ProbeSession>(std::move(socket), &checks_)->Start();
      if (acceptor_.is_open()) Accept();
    });
  }

  HealthChecks checks_;
  asio::io_context io_;
  tcp::acceptor acceptor_{io_};
  int port_ = 0;
  std::thread thread_;
};

}  // namespace

absl::Status ValidateBindAddress(std::string_view address) {
  return ParseAddress(address).status();
}

absl::StatusOr<std::unique_ptr<HealthServer>> HealthServer::Start(std::string_view address,
                                                                  HealthChecks checks) {
  absl::StatusOr<tcp::endpoint> endpoint = ParseAddress(address);
  if (!endpoint.ok()) return endpoint.status();
  auto server = std::make_unique<BeastHealthServer>(std::move(checks));
  if (absl::Status status = server->Listen(*endpoint); !status.ok()) return status;
  return server;
}

}  // namespace kubesched::scheduler
