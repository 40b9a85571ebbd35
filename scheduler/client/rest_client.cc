#include "scheduler/client/rest_client.h"

// <utility> before Asio: Boost 1.74's asio headers use std::exchange without including it.
#include <openssl/ssl.h>
#include <openssl/x509_vfy.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <cstdint>
#include <exception>
#include <limits>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "scheduler/client/rate_limiter.h"
#include "scheduler/client/rest_connection.h"
#include "scheduler/client/server_url.h"
#include "scheduler/util/strings.h"

#ifndef KUBESCHED_VERSION
#define KUBESCHED_VERSION "dev"
#endif

namespace kubesched::client {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;
using SteadyClock = std::chrono::steady_clock;
using SteadyTime = SteadyClock::time_point;

constexpr uint64_t kUnlimitedBody = std::numeric_limits<uint64_t>::max();
constexpr uint64_t kMaxErrorBody = 1 << 20;
constexpr uint32_t kMaxHeader = 64 * 1024;
constexpr size_t kWatchReadChunk = 16 * 1024;
// A pooled connection idle longer than this is dropped rather than reused: servers close idle
// keep-alive connections after a while (Go's default is 90 s), and reusing one then is wasted work.
constexpr auto kMaxIdleAge = std::chrono::seconds(60);
// Slack over the watch's own timeoutSeconds before the client gives up on a silent connection.
constexpr absl::Duration kWatchIdleSlack = absl::Seconds(30);
constexpr absl::Duration kWatchIdleWithoutServerTimeout = absl::Hours(1);

SteadyClock::duration ToSteady(absl::Duration d) {
  return std::chrono::duration_cast<SteadyClock::duration>(absl::ToChronoNanoseconds(d));
}

absl::Duration Remaining(SteadyTime deadline) {
  return absl::FromChrono(std::max(deadline - SteadyClock::now(), SteadyClock::duration::zero()));
}

using rest_internal::Connection;

// Why an exchange failed, with whether trying again could help.
struct Failure {
  absl::Status status;
  bool retryable = true;
};

bool IsTimeout(const beast::error_code& ec) { return ec == beast::error::timeout; }

std::string TlsVerifyDetail(Connection& connection) {
  if (!connection.tls) return "";
  const long result = SSL_get_verify_result(connection.tls->native_handle());
  if (result == X509_V_OK) return "";
  return absl::StrCat(" (", X509_verify_cert_error_string(result), ")");
}

bool IsRetryableStatus(int status) {
  return status == 429 || (status >= 500 && status <= 599 && status != 501);
}

std::optional<absl::Duration> WatchIdleTimeout(absl::string_view target) {
  const size_t at = target.find("timeoutSeconds=");
  if (at == absl::string_view::npos || (at > 0 && target[at - 1] != '?' && target[at - 1] != '&')) {
    return std::nullopt;
  }
  absl::string_view value = target.substr(at + sizeof("timeoutSeconds=") - 1);
  value = value.substr(0, value.find('&'));
  int64_t seconds = 0;
  if (!absl::SimpleAtoi(value, &seconds) || seconds < 0) return std::nullopt;
  return absl::Seconds(seconds);
}

}  // namespace

struct RestClient::Impl {
  RestConfig config;
  ServerUrl url;
  std::string user_agent;
  std::vector<std::string> warnings;
  std::unique_ptr<ssl::context> tls_context;  // null for http://
  std::unique_ptr<RateLimiter> limiter;

  mutable absl::Mutex pool_mu;
  // Most recently used last: reusing the freshest connection makes staleness least likely.
  std::vector<std::unique_ptr<Connection>> idle ABSL_GUARDED_BY(pool_mu);

  // ---- setup ----

  absl::Status InitTls() {
    boost::system::error_code ec;
    tls_context = std::make_unique<ssl::context>(ssl::context::tls_client);
    tls_context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                                 ssl::context::no_sslv3 | ssl::context::no_tlsv1 |
                                 ssl::context::no_tlsv1_1,
                             ec);
    if (config.insecure_skip_tls_verify) {
      tls_context->set_verify_mode(ssl::verify_none, ec);
    } else {
      tls_context->set_verify_mode(ssl::verify_peer, ec);
      if (!config.ca_pem.empty()) {
        tls_context->add_certificate_authority(asio::buffer(config.ca_pem), ec);
        if (ec) return absl::InvalidArgumentError(absl::StrCat("CA certificate: ", ec.message()));
      } else {
        tls_context->set_default_verify_paths(ec);
        if (ec) return absl::InternalError(absl::StrCat("system CA paths: ", ec.message()));
      }
    }
    if (config.client_cert_pem.empty() != config.client_key_pem.empty()) {
      return absl::InvalidArgumentError("client certificate and key must be given together");
    }
    if (!config.client_cert_pem.empty()) {
      tls_context->use_certificate_chain(asio::buffer(config.client_cert_pem), ec);
      if (ec) return absl::InvalidArgumentError(absl::StrCat("client certificate: ", ec.message()));
      tls_context->use_private_key(asio::buffer(config.client_key_pem), ssl::context::pem, ec);
      if (ec) return absl::InvalidArgumentError(absl::StrCat("client key: ", ec.message()));
    }
    return absl::OkStatus();
  }

  absl::Status Init() {
    absl::StatusOr<ServerUrl> parsed = ParseServerUrl(config.server);
    if (!parsed.ok()) return parsed.status();
    url = *std::move(parsed);
    user_agent =
        config.user_agent.empty() ? std::string("kubesched/" KUBESCHED_VERSION) : config.user_agent;
    if (absl::StrContains(config.content_type, "protobuf")) {
      warnings.push_back(absl::StrCat("content type ", config.content_type,
                                      " requested; kubesched speaks JSON only, using "
                                      "application/json"));
    }
    if (url.tls) {
      if (config.insecure_skip_tls_verify) {
        warnings.push_back(absl::StrCat("TLS verification of ", config.server,
                                        " is disabled (insecure-skip-tls-verify)"));
      }
      if (absl::Status status = InitTls(); !status.ok()) {
        return absl::Status(status.code(), absl::StrCat(config.server, ": ", status.message()));
      }
    } else if (!config.ca_pem.empty() || !config.client_cert_pem.empty()) {
      warnings.push_back(
          absl::StrCat("server ", config.server, " is plain http; TLS settings are ignored"));
    }
    limiter = std::make_unique<RateLimiter>(config.qps, config.burst);
    return absl::OkStatus();
  }

  // ---- messages ----

  std::string Describe(const HttpRequest& request) const {
    return absl::StrCat(request.method, " ", config.server, request.target);
  }

  Failure Fail(const HttpRequest& request, absl::string_view stage, const beast::error_code& ec,
               absl::string_view detail = "", bool retryable = true) const {
    const std::string message =
        absl::StrCat(Describe(request), ": ", stage, ": ", ec.message(), detail);
    if (IsTimeout(ec)) return {absl::DeadlineExceededError(message), false};
    return {absl::UnavailableError(message), retryable};
  }

  // ---- connections ----

  std::unique_ptr<Connection> TakeIdle() {
    std::vector<std::unique_ptr<Connection>> discarded;  // destroyed after the lock is released
    absl::MutexLock lock(&pool_mu);
    while (!idle.empty()) {
      std::unique_ptr<Connection> connection = std::move(idle.back());
      idle.pop_back();
      if (SteadyClock::now() - connection->idle_since < kMaxIdleAge &&
          connection->LooksReusable()) {
        return connection;
      }
      discarded.push_back(std::move(connection));
    }
    return nullptr;
  }

  void ReturnIdle(std::unique_ptr<Connection> connection) {
    connection->idle_since = SteadyClock::now();
    absl::MutexLock lock(&pool_mu);
    if (static_cast<int>(idle.size()) < config.max_idle_connections) {
      idle.push_back(std::move(connection));
      return;
    }
    // Over the limit: `connection` is closed when it goes out of scope.
  }

  // Opens a new connection (TCP connect, then the TLS handshake for https) by `deadline`.
  absl::StatusOr<std::unique_ptr<Connection>> Connect(const HttpRequest& request,
                                                      SteadyTime deadline, Failure* failure) {
    auto connection = std::make_unique<Connection>();
    if (url.tls) {
      connection->tls.emplace(connection->ioc, *tls_context);
    } else {
      connection->tcp.emplace(connection->ioc);
    }
    beast::error_code ec;
    tcp::resolver resolver(connection->ioc);
    // Synchronous resolution: instant for IP literals (the usual API server address); the async
    // resolver would start a thread per connection.
    tcp::resolver::results_type endpoints = resolver.resolve(url.host, url.port, ec);
    if (ec) {
      *failure = Fail(request, absl::StrCat("resolve ", url.host), ec);
      return failure->status;
    }
    connection->lowest().expires_at(deadline);
    ec = connection->RunSync(
        [&](auto handler) { connection->lowest().async_connect(endpoints, std::move(handler)); });
    if (ec) {
      *failure = Fail(request, "connect", ec);
      return failure->status;
    }
    connection->lowest().socket().set_option(tcp::no_delay(true), ec);
    if (connection->tls) {
      if (absl::Status status = PrepareTls(*connection, request); !status.ok()) {
        *failure = {status, false};
        return status;
      }
      ec = connection->RunSync([&](auto handler) {
        connection->tls->async_handshake(ssl::stream_base::client, std::move(handler));
      });
      if (ec) {
        const std::string detail = TlsVerifyDetail(*connection);
        // A certificate that doesn't verify won't start verifying on the next attempt.
        *failure = Fail(request, "TLS handshake", ec, detail, /*retryable=*/detail.empty());
        return failure->status;
      }
    }
    return connection;
  }

  // SNI and host name (or IP) verification, both in OpenSSL's own verification so that a
  // mismatch reports as "hostname mismatch" / "IP address mismatch".
  absl::Status PrepareTls(Connection& connection, const HttpRequest& request) {
    SSL* native = connection.tls->native_handle();
    const bool is_ip = IsIpAddress(url.host);
    if (!is_ip && SSL_set_tlsext_host_name(native, url.host.c_str()) != 1) {
      return absl::InternalError(absl::StrCat(Describe(request), ": cannot set TLS SNI"));
    }
    if (config.insecure_skip_tls_verify) return absl::OkStatus();
    const int ok = is_ip ? X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(native), url.host.c_str())
                         : SSL_set1_host(native, url.host.c_str());
    if (ok != 1) {
      return absl::InternalError(
          absl::StrCat(Describe(request), ": cannot set TLS host verification"));
    }
    return absl::OkStatus();
  }

  // ---- requests ----

  http::request<http::string_body> BuildRequest(const HttpRequest& request,
                                                const std::string& token) const {
    http::request<http::string_body> message;
    message.version(11);
    message.method_string(request.method);
    message.target(url.path_prefix + request.target);
    message.set(http::field::host, url.host_header);
    message.set(http::field::user_agent, user_agent);
    message.set(http::field::accept, "application/json");
    if (!token.empty()) message.set(http::field::authorization, "Bearer " + token);
    if (!request.content_type.empty()) message.set(http::field::content_type, request.content_type);
    message.body() = request.body;
    message.keep_alive(true);
    message.prepare_payload();
    return message;
  }

  absl::StatusOr<std::string> CurrentToken(const HttpRequest& request) {
    if (!config.token) return std::string();
    absl::StatusOr<std::string> token = config.token->Token();
    if (!token.ok()) {
      return absl::Status(
          token.status().code(),
          absl::StrCat(Describe(request), ": credentials: ", token.status().message()));
    }
    return token;
  }

  struct Exchange {
    beast::error_code ec;
    std::string stage;
    bool got_response_bytes = false;
    HttpResponse response;
    std::string retry_after;
    bool keep_alive = false;
  };

  Exchange RunExchange(Connection& connection, const http::request<http::string_body>& message,
                       bool is_head, SteadyTime deadline) {
    Exchange out;
    connection.lowest().expires_at(deadline);
    out.ec = connection.WithStream([&](auto& stream) {
      return connection.RunSync(
          [&](auto handler) { http::async_write(stream, message, std::move(handler)); });
    });
    if (out.ec) {
      out.stage = "send request";
      return out;
    }
    http::response_parser<http::string_body> parser;
    parser.body_limit(kUnlimitedBody);
    parser.header_limit(kMaxHeader);
    if (is_head) parser.skip(true);
    out.ec = connection.WithStream([&](auto& stream) {
      return connection.RunSync([&](auto handler) {
        http::async_read(stream, connection.buffer, parser, std::move(handler));
      });
    });
    out.got_response_bytes = parser.got_some();
    if (out.ec) {
      out.stage = "read response";
      return out;
    }
    out.response.status = static_cast<int>(parser.get().result_int());
    out.response.body = std::move(parser.get().body());
    out.retry_after = std::string(parser.get()[http::field::retry_after]);
    out.keep_alive = parser.get().keep_alive();
    return out;
  }

  struct Attempt {
    absl::StatusOr<HttpResponse> result;
    bool retryable = false;
    std::string retry_after;
  };

  // One request/response on a pooled or new connection. A pooled connection that fails before
  // any response byte arrived was closed by the server while idle (the keep-alive race): it is
  // dropped and the request goes out again on the next one, or a fresh connection.
  Attempt AttemptOnce(const HttpRequest& request, const std::string& token, SteadyTime deadline) {
    const http::request<http::string_body> message = BuildRequest(request, token);
    const bool is_head = request.method == "HEAD";
    while (true) {
      std::unique_ptr<Connection> connection = TakeIdle();
      const bool reused = connection != nullptr;
      if (!reused) {
        Failure failure;
        absl::StatusOr<std::unique_ptr<Connection>> opened = Connect(request, deadline, &failure);
        if (!opened.ok()) return {failure.status, failure.retryable, ""};
        connection = *std::move(opened);
      }
      Exchange exchange = RunExchange(*connection, message, is_head, deadline);
      if (exchange.ec) {
        if (reused && !exchange.got_response_bytes && !IsTimeout(exchange.ec)) continue;
        Failure failure = Fail(request, exchange.stage, exchange.ec);
        return {failure.status, failure.retryable, ""};
      }
      if (exchange.keep_alive) ReturnIdle(std::move(connection));
      return {std::move(exchange.response), false, std::move(exchange.retry_after)};
    }
  }

  // Tells config.on_request about one exchange; `start` is absent for watches (not timed).
  void Report(std::string_view method, const absl::StatusOr<HttpResponse>& result,
              std::optional<SteadyTime> start) const {
    if (!config.on_request) return;
    const double seconds =
        start.has_value() ? std::chrono::duration<double>(SteadyClock::now() - *start).count() : -1;
    config.on_request(method, result.ok() ? result->status : 0, seconds);
  }

  absl::StatusOr<HttpResponse> Do(const HttpRequest& request) {
    const absl::Duration timeout =
        request.timeout > absl::ZeroDuration() ? request.timeout : config.request_timeout;
    const SteadyTime deadline = SteadyClock::now() + ToSteady(timeout);
    const int max_retries = request.max_retries >= 0 ? request.max_retries : config.max_retries;
    bool token_refreshed = false;
    for (int retry = 0;;) {
      if (!limiter->AcquireWithin(Remaining(deadline))) {
        return absl::DeadlineExceededError(absl::StrCat(
            Describe(request), ": client-side rate limit (qps ", config.qps,
            ") would delay the request past its ", absl::FormatDuration(timeout), " timeout"));
      }
      absl::StatusOr<std::string> token = CurrentToken(request);
      if (!token.ok()) return token.status();
      const SteadyTime attempt_start = SteadyClock::now();
      Attempt attempt = AttemptOnce(request, *token, deadline);
      Report(request.method, attempt.result, attempt_start);
      std::optional<absl::Duration> retry_after;
      if (!attempt.result.ok()) {
        if (!attempt.retryable || retry >= max_retries) return attempt.result;
      } else {
        const int status = attempt.result->status;
        if (status == 401 && config.token && !token_refreshed) {
          config.token->Invalidate();  // e.g. a rotated service-account token: re-read it
          token_refreshed = true;
          continue;
        }
        if (!IsRetryableStatus(status) || retry >= max_retries) return attempt.result;
        retry_after = ParseRetryAfter(attempt.retry_after, absl::Now());
      }
      const absl::Duration delay = RetryDelay(config.backoff, retry, retry_after);
      if (delay >= Remaining(deadline)) return attempt.result;
      absl::SleepFor(delay);
      ++retry;
    }
  }

  // ---- watch ----

  // Reads the body of a watch response until it ends, stop is requested, or an error. For a
  // 2xx answer, complete lines go to `on_line`; otherwise the body is collected (bounded).
  absl::StatusOr<HttpResponse> StreamBody(Connection& connection,
                                          http::response_parser<http::buffer_body>& parser,
                                          const HttpRequest& request,
                                          const std::function<void(std::string_view)>& on_line,
                                          const std::stop_token& stop) {
    HttpResponse response;
    response.status = static_cast<int>(parser.get().result_int());
    const bool streaming = response.status >= 200 && response.status <= 299;
    const absl::Duration idle_timeout =
        streaming ? WatchIdleTimeout(util::Absl(request.target))
                            .value_or(kWatchIdleWithoutServerTimeout - kWatchIdleSlack) +
                        kWatchIdleSlack
                  : config.request_timeout;
    std::string pending;
    char chunk[kWatchReadChunk];
    while (!parser.is_done()) {
      if (stop.stop_requested()) return response;
      parser.get().body().data = chunk;
      parser.get().body().size = sizeof(chunk);
      connection.lowest().expires_after(ToSteady(idle_timeout));
      beast::error_code ec = connection.WithStream([&](auto& stream) {
        return connection.RunSync([&](auto handler) {
          http::async_read_some(stream, connection.buffer, parser, std::move(handler));
        });
      });
      if (ec == http::error::need_buffer) ec = {};
      if (stop.stop_requested()) return response;
      if (ec) return Fail(request, "watch stream", ec).status;
      const size_t received = sizeof(chunk) - parser.get().body().size;
      if (!streaming) {
        if (response.body.size() < kMaxErrorBody) response.body.append(chunk, received);
        continue;
      }
      pending.append(chunk, received);
      size_t start = 0;
      for (size_t newline; (newline = pending.find('\n', start)) != std::string::npos;
           start = newline + 1) {
        if (newline > start) on_line(std::string_view(pending).substr(start, newline - start));
      }
      pending.erase(0, start);
    }
    return response;
  }

  absl::StatusOr<HttpResponse> WatchOnce(const HttpRequest& request, const std::string& token,
                                         const std::function<void(std::string_view)>& on_line,
                                         const std::stop_token& stop) {
    const absl::Duration timeout =
        request.timeout > absl::ZeroDuration() ? request.timeout : config.request_timeout;
    const SteadyTime deadline = SteadyClock::now() + ToSteady(timeout);
    const absl::Status cancelled =
        absl::CancelledError(absl::StrCat(Describe(request), ": watch stopped"));
    Failure failure;
    absl::StatusOr<std::unique_ptr<Connection>> opened = Connect(request, deadline, &failure);
    if (stop.stop_requested()) return cancelled;
    if (!opened.ok()) return opened.status();
    std::unique_ptr<Connection> connection = *std::move(opened);
    Connection* const raw = connection.get();
    // Runs on the thread that requests stop: only posts; the cancel itself runs inside this
    // thread's ioc.run(), so the stream is never touched concurrently. Declared after
    // `connection`, so it is deregistered before the connection is destroyed.
    std::stop_callback cancel_on_stop(
        stop, [raw] { asio::post(raw->ioc, [raw] { raw->lowest().cancel(); }); });

    const http::request<http::string_body> message = BuildRequest(request, token);
    connection->lowest().expires_at(deadline);
    beast::error_code ec = connection->WithStream([&](auto& stream) {
      return connection->RunSync(
          [&](auto handler) { http::async_write(stream, message, std::move(handler)); });
    });
    if (stop.stop_requested()) return cancelled;
    if (ec) return Fail(request, "send request", ec).status;

    http::response_parser<http::buffer_body> parser;
    parser.body_limit(kUnlimitedBody);
    parser.header_limit(kMaxHeader);
    ec = connection->WithStream([&](auto& stream) {
      return connection->RunSync([&](auto handler) {
        http::async_read_header(stream, connection->buffer, parser, std::move(handler));
      });
    });
    if (stop.stop_requested()) return cancelled;
    if (ec) return Fail(request, "read response headers", ec).status;
    return StreamBody(*connection, parser, request, on_line, stop);
  }

  absl::StatusOr<HttpResponse> Watch(const HttpRequest& request,
                                     const std::function<void(std::string_view)>& on_line,
                                     const std::stop_token& stop) {
    for (bool token_refreshed = false;;) {
      if (stop.stop_requested()) {
        return absl::CancelledError(absl::StrCat(Describe(request), ": watch stopped"));
      }
      limiter->Acquire();
      absl::StatusOr<std::string> token = CurrentToken(request);
      if (!token.ok()) return token.status();
      absl::StatusOr<HttpResponse> result = WatchOnce(request, *token, on_line, stop);
      Report("WATCH", result, std::nullopt);
      // A 401 carries no events yet, so one retry with a fresh token is safe.
      if (result.ok() && result->status == 401 && config.token && !token_refreshed &&
          !stop.stop_requested()) {
        config.token->Invalidate();
        token_refreshed = true;
        continue;
      }
      return result;
    }
  }
};

absl::StatusOr<std::unique_ptr<RestClient>> RestClient::Create(RestConfig config) {
  try {
    auto impl = std::make_unique<Impl>();
    impl->config = std::move(config);
    if (absl::Status status = impl->Init(); !status.ok()) return status;
    return std::unique_ptr<RestClient>(new RestClient(std::move(impl)));
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat("creating the API client: ", e.what()));
  }
}

RestClient::RestClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
RestClient::~RestClient() = default;

absl::StatusOr<HttpResponse> RestClient::Do(const HttpRequest& request) {
  try {
    return impl_->Do(request);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(impl_->Describe(request), ": ", e.what()));
  }
}

absl::StatusOr<HttpResponse> RestClient::Watch(const HttpRequest& request,
                                               const std::function<void(std::string_view)>& on_line,
                                               std::stop_token stop) {
  try {
    return impl_->Watch(request, on_line, stop);
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(impl_->Describe(request), ": ", e.what()));
  }
}

const std::vector<std::string>& RestClient::warnings() const { return impl_->warnings; }
const std::string& RestClient::server() const { return impl_->config.server; }

int RestClient::idle_connections() const {
  absl::MutexLock lock(&impl_->pool_mu);
  return static_cast<int>(impl_->idle.size());
}

}  // namespace kubesched::client
