#include "scheduler/run/health_server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <string>

namespace kubesched::scheduler {
namespace {

// A plain HTTP/1.1 GET over a POSIX socket: the raw response text, or "" if it fails.
std::string Get(int port, const std::string& path) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string response;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    const std::string request = "GET " + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n";
    if (::write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buffer[4096];
      ssize_t n;
      while ((n = ::read(fd, buffer, sizeof(buffer))) > 0) {
        response.append(buffer, static_cast<size_t>(n));
      }
    }
  }
  ::close(fd);
  return response;
}

std::string StatusLine(const std::string& response) {
  return response.substr(0, response.find("\r\n"));
}

std::string Body(const std::string& response) {
  const size_t end = response.find("\r\n\r\n");
  return end == std::string::npos ? "" : response.substr(end + 4);
}

TEST_CASE("liveness and readiness answer 200 when healthy and 503 with the reason when not",
          "[health]") {
  std::atomic<bool> synced{false};
  HealthChecks checks;
  checks.live = [] { return std::string(); };
  checks.ready = [&synced] { return synced ? std::string() : std::string("informers not synced"); };
  auto server = HealthServer::Start("127.0.0.1:0", checks);
  REQUIRE(server.ok());
  const int port = (*server)->port();
  REQUIRE(port > 0);

  CHECK(StatusLine(Get(port, "/healthz")) == "HTTP/1.1 200 OK");
  CHECK(Body(Get(port, "/livez")) == "ok");
  const std::string not_ready = Get(port, "/readyz");
  CHECK(StatusLine(not_ready) == "HTTP/1.1 503 Service Unavailable");
  CHECK(Body(not_ready) == "informers not synced\n");
  synced = true;
  CHECK(StatusLine(Get(port, "/readyz?verbose")) == "HTTP/1.1 200 OK");
  CHECK(StatusLine(Get(port, "/metrics")) == "HTTP/1.1 404 Not Found");
}

TEST_CASE("a bad health address is a clear error", "[health]") {
  auto no_port = HealthServer::Start("127.0.0.1", {});
  REQUIRE_FALSE(no_port.ok());
  CHECK(std::string(no_port.status().message()) == "health address \"127.0.0.1\": want host:port");
  auto bad_host = HealthServer::Start("example.com:80", {});
  REQUIRE_FALSE(bad_host.ok());
  CHECK(std::string(bad_host.status().message()) ==
        "health address \"example.com:80\": \"example.com\" is not an IP address");
}

TEST_CASE("a port already in use is reported, not ignored", "[health]") {
  auto first = HealthServer::Start("127.0.0.1:0", {});
  REQUIRE(first.ok());
  const std::string address = "127.0.0.1:" + std::to_string((*first)->port());
  auto second = HealthServer::Start(address, {});
  REQUIRE_FALSE(second.ok());
  CHECK(second.status().code() == absl::StatusCode::kUnavailable);
  CHECK(std::string(second.status().message()).find("cannot listen on " + address) !=
        std::string::npos);
}

}  // namespace
}  // namespace kubesched::scheduler
