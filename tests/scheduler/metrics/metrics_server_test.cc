#include "scheduler/metrics/metrics_server.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "scheduler/client/rest_client.h"
#include "scheduler/metrics/scheduler_metrics.h"
#include "tests/testing/scrape.h"

namespace kubesched::metrics {
namespace {

// A TCP port held by a listening socket for the test's lifetime.
class HeldPort {
 public:
  HeldPort() {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    REQUIRE(fd_ >= 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    REQUIRE(bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
    REQUIRE(listen(fd_, 1) == 0);
    socklen_t length = sizeof(address);
    REQUIRE(getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length) == 0);
    port_ = ntohs(address.sin_port);
  }
  ~HeldPort() { close(fd_); }
  int port() const { return port_; }

 private:
  int fd_ = -1;
  int port_ = 0;
};

TEST_CASE("metrics server: a malformed address is InvalidArgument, naming it", "[metrics]") {
  for (const char* address : {"nope", "localhost:10251", "1.2.3.4:99999", "[::1:80"}) {
    INFO(address);
    const absl::Status status = ValidateMetricsAddress(address);
    CHECK(absl::IsInvalidArgument(status));
    CHECK(absl::StrContains(status.message(), address));
  }
  for (const char* address : {"0.0.0.0:10251", ":10251", "127.0.0.1:0", "[::1]:10251"}) {
    INFO(address);
    CHECK(ValidateMetricsAddress(address).ok());
  }
  auto server = MetricsServer::Start("nope", {});
  CHECK(absl::IsInvalidArgument(server.status()));
}

TEST_CASE("metrics server: serves /metrics over HTTP, a port in use is a clear error",
          "[metrics]") {
  HeldPort held;
  const std::string taken = absl::StrCat("127.0.0.1:", held.port());
  auto refused = MetricsServer::Start(taken, {});
  REQUIRE_FALSE(refused.ok());
  CHECK(absl::IsUnavailable(refused.status()));
  CHECK(absl::StrContains(refused.status().message(), absl::StrCat("cannot listen on ", taken)));

  SchedulerMetrics metrics;
  metrics.Profile("kubesched").ObserveAttempt(AttemptResult::kScheduled, 0.01);
  auto server = MetricsServer::Start("127.0.0.1:0", metrics.collectables());
  REQUIRE(server.ok());
  REQUIRE((*server)->port() > 0);

  client::RestConfig config;
  config.server = absl::StrCat("http://127.0.0.1:", (*server)->port());
  auto rest = client::RestClient::Create(config);
  REQUIRE(rest.ok());
  client::HttpRequest request;
  request.target = "/metrics";
  auto response = (*rest)->Do(request);
  REQUIRE(response.ok());
  CHECK(response->status == 200);
  auto scrape = testing::Scrape::Parse(response->body);
  REQUIRE(scrape.ok());
  CHECK(scrape->Value(kScheduleAttemptsTotal,
                      {{"result", "scheduled"}, {"profile", "kubesched"}}) == 1);
}

}  // namespace
}  // namespace kubesched::metrics
