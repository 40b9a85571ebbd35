#pragma once

// RestClient's HTTP connection. Private to rest_client.cc, the only file that includes it, so that
// Beast and Asio (very slow to compile) stay out of every other translation unit.

#include <poll.h>

#include <boost/asio/io_context.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/ssl.hpp>
#include <chrono>
#include <optional>
#include <utility>

namespace kubesched::client::rest_internal {

namespace asio = boost::asio;
namespace beast = boost::beast;

// One HTTP connection with its own io_context: the calling thread drives the I/O (async
// operations with beast::tcp_stream's timeouts, run to completion by ioc.run()), so a connection
// is only ever used by the one call that holds it. `ioc` is declared first so it outlives the
// streams bound to it.
struct Connection {
  asio::io_context ioc{1};
  std::optional<beast::tcp_stream> tcp;                     // plain http, or
  std::optional<beast::ssl_stream<beast::tcp_stream>> tls;  // https
  beast::flat_buffer buffer;
  std::chrono::steady_clock::time_point idle_since;

  beast::tcp_stream& lowest() { return tls ? beast::get_lowest_layer(*tls) : *tcp; }

  // Calls f(stream) with whichever stream this connection has.
  template <typename F>
  auto WithStream(F&& f) {
    if (tls) return f(*tls);
    return f(*tcp);
  }

  // Runs the async operation `start(handler)` to completion on this thread.
  template <typename Start>
  beast::error_code RunSync(Start&& start) {
    beast::error_code result = asio::error::would_block;
    start([&result](beast::error_code ec, auto&&...) { result = ec; });
    ioc.restart();
    ioc.run();
    return result;
  }

  // True when the idle connection has nothing to read and no hangup pending: a server that
  // closed it (keep-alive timeout) makes it readable (EOF), and so would unsolicited bytes.
  bool LooksReusable() {
    if (buffer.size() != 0) return false;
    pollfd descriptor{};
    descriptor.fd = lowest().socket().native_handle();
    descriptor.events = POLLIN;
    return ::poll(&descriptor, 1, 0) == 0;
  }
};

}  // namespace kubesched::client::rest_internal
