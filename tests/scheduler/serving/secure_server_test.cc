#include "scheduler/serving/secure_server.h"

#include <atomic>
#include <catch2/catch.hpp>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/synchronization/notification.h"
#include "scheduler/util/clock.h"
#include "tests/testing/https_get.h"

namespace kubesched::serving {
namespace {

using testing::HttpsGet;

// "good" is allowed everything; other tokens are rejected. `hold` keeps every review waiting
// until released, as an API server that does not answer.
class Reviews : public ReviewClient {
 public:
  absl::StatusOr<TokenReviewResult> ReviewToken(const std::string& token) override {
    Wait();
    if (token != "good") return TokenReviewResult{};
    return TokenReviewResult{true, UserInfo{"prometheus", "", {}}, ""};
  }
  absl::StatusOr<AccessReviewResult> ReviewAccess(const AccessRequest& request) override {
    Wait();
    return AccessReviewResult{request.user.name == "prometheus", ""};
  }
  void Wait() {
    waiting++;
    if (hold) release.WaitForNotification();
  }

  bool hold = false;
  std::atomic<int> waiting{0};
  absl::Notification release;
};

struct Fixture {
  explicit Fixture(bool hold = false) {
    reviews.hold = hold;
    auto certificate = GenerateSelfSigned(SelfSignedRequest{});
    REQUIRE(certificate.ok());
    chain_pem = certificate->chain_pem;
    DelegatedAuthOptions options;
    options.always_allow = *PathAllowList::Parse({"/healthz"});
    auth = std::make_unique<DelegatedAuth>(&reviews, &clock, options);
    SecureServerOptions server_options;
    server_options.bind_address = "127.0.0.1";
    server_options.port = 0;
    server_options.certificate = *certificate;
    server_options.handlers["/healthz"] = [] { return Response{200, "text/plain", "ok"}; };
    server_options.handlers["/metrics"] = [] { return Response{200, "text/plain", "up 1\n"}; };
    auto started = SecureServer::Start(server_options, auth.get());
    REQUIRE(started.ok());
    server = *std::move(started);
  }
  ~Fixture() {
    if (!reviews.release.HasBeenNotified()) reviews.release.Notify();
  }

  Reviews reviews;
  util::RealClock clock;
  std::string chain_pem;
  std::unique_ptr<DelegatedAuth> auth;
  std::unique_ptr<SecureServer> server;
};

TEST_CASE("the secure port answers over TLS with a certificate its CA verifies for 127.0.0.1",
          "[serving][server]") {
  Fixture fixture;
  // The chain holds the CA, so it verifies the server (and its IP SAN) as a client would.
  const client::HttpResponse health =
      HttpsGet(fixture.server->port(), "/healthz", "", fixture.chain_pem);
  CHECK(health.status == 200);
  CHECK(health.body == "ok");
  CHECK(absl::StartsWith(testing::PeerCertificatePem(fixture.server->port()), "-----BEGIN"));
}

TEST_CASE("the secure port refuses, then serves, as the reviews decide", "[serving][server]") {
  Fixture fixture;
  const int port = fixture.server->port();
  CHECK(HttpsGet(port, "/metrics").status == 403);
  CHECK(HttpsGet(port, "/metrics", "bad").status == 401);
  const client::HttpResponse metrics = HttpsGet(port, "/metrics", "good");
  CHECK(metrics.status == 200);
  CHECK(metrics.body == "up 1\n");
  // An unknown path is authorized first (as upstream), then not found.
  CHECK(HttpsGet(port, "/nope").status == 403);
  CHECK(HttpsGet(port, "/nope", "good").status == 404);
}

TEST_CASE("a probe is answered while a review waits on an API server that does not answer",
          "[serving][server]") {
  Fixture fixture(/*hold=*/true);
  const int port = fixture.server->port();
  int metrics_status = 0;
  std::thread scrape([&] { metrics_status = HttpsGet(port, "/metrics", "good").status; });
  while (fixture.reviews.waiting.load() == 0) std::this_thread::yield();
  CHECK(HttpsGet(port, "/healthz").status == 200);
  fixture.reviews.release.Notify();
  scrape.join();
  CHECK(metrics_status == 200);
}

TEST_CASE("a bind address that is not an IP and a port in use are clear errors",
          "[serving][server]") {
  Fixture fixture;
  Reviews reviews;
  util::RealClock clock;
  DelegatedAuth auth(&reviews, &clock, DelegatedAuthOptions{});
  auto certificate = GenerateSelfSigned(SelfSignedRequest{});
  REQUIRE(certificate.ok());
  SecureServerOptions options;
  options.certificate = *certificate;
  options.bind_address = "localhost";
  auto bad_address = SecureServer::Start(options, &auth);
  REQUIRE_FALSE(bad_address.ok());
  CHECK(absl::StrContains(bad_address.status().message(), "is not an IP address"));
  options.bind_address = "127.0.0.1";
  options.port = fixture.server->port();
  auto taken = SecureServer::Start(options, &auth);
  REQUIRE_FALSE(taken.ok());
  CHECK(absl::IsUnavailable(taken.status()));
  CHECK(absl::StrContains(taken.status().message(), "cannot listen on 127.0.0.1:"));
}

}  // namespace
}  // namespace kubesched::serving
