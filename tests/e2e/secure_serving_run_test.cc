// The secure port of `kubesched run` end to end, as a Prometheus ServiceMonitor and the kubelet
// see it: HTTPS, probes without a token, /metrics and /configz for a bearer token the API server
// authenticates (TokenReview) and authorizes (SubjectAccessReview), the answers cached, and the
// certificate given on the command line served as it is.

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "rapidjson/document.h"
#include "tests/testapi/testapi_process.h"
#include "tests/testing/child_process.h"
#include "tests/testing/https_get.h"
#include "tests/testing/kubesched_process.h"
#include "tests/testing/scrape.h"
#include "tests/testing/test_api_client.h"

namespace kubesched {
namespace {

using testapi::TestApiProcess;
using testing::HttpsGet;

constexpr char kMetricsToken[] = "prometheus-token";
constexpr char kNobodyToken[] = "nobody-token";

absl::StatusOr<std::unique_ptr<TestApiProcess>> StartApiServer() {
  return TestApiProcess::Start({"--token-user", absl::StrCat(kMetricsToken, ":prometheus"),
                                "--token-user", absl::StrCat(kNobodyToken, ":nobody"),
                                "--allow-path", "prometheus:/metrics", "--allow-path",
                                "prometheus:/configz"});
}

int64_t Counter(testing::TestApiClient& api, const char* name) {
  rapidjson::Document stats = api.GetOk("/testapi/stats");
  const rapidjson::Value& counters = stats["counters"];
  return counters.HasMember(name) ? counters[name].GetInt64() : 0;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_CASE("secure port: probes need no token, /metrics and /configz need an authorized one",
          "[serving][run][e2e]") {
  auto server = StartApiServer();
  REQUIRE(server.ok());
  testing::TestApiClient api(**server);
  const int port = testing::FreeLocalPort();
  auto scheduler =
      testing::StartKubeschedRun({.kubeconfig = (*server)->kubeconfig(), .secure_port = port});
  REQUIRE(testing::LoggedPort(*scheduler, ") on port ") == port);
  CHECK(testing::CountInLog(*scheduler, "certificate: a self-signed certificate") == 1);

  // Probes: always allowed, no review.
  testing::RequireEventually("/readyz is 200", *scheduler,
                             [&] { return HttpsGet(port, "/readyz").status == 200; });
  const client::HttpResponse health = HttpsGet(port, "/healthz");
  CHECK(health.status == 200);
  CHECK(health.body == "ok");
  CHECK(HttpsGet(port, "/livez", "not-a-token").status == 200);
  CHECK(Counter(api, "reviews.tokenreviews") == 0);
  CHECK(Counter(api, "reviews.subjectaccessreviews") == 0);

  const client::HttpResponse anonymous = HttpsGet(port, "/metrics");
  CHECK(anonymous.status == 403);
  CHECK(absl::StrContains(anonymous.body,
                          R"(forbidden: User \"system:anonymous\" cannot get path \"/metrics\")"));
  const client::HttpResponse unknown = HttpsGet(port, "/metrics", "unknown-token");
  CHECK(unknown.status == 401);
  CHECK(absl::StrContains(unknown.body, R"("reason":"Unauthorized")"));
  const client::HttpResponse nobody = HttpsGet(port, "/metrics", kNobodyToken);
  CHECK(nobody.status == 403);
  CHECK(absl::StrContains(nobody.body, R"(User \"nobody\" cannot get path \"/metrics\")"));

  const client::HttpResponse metrics = HttpsGet(port, "/metrics", kMetricsToken);
  REQUIRE(metrics.status == 200);
  auto scrape = testing::Scrape::Parse(metrics.body);
  REQUIRE(scrape.ok());
  CHECK(scrape->Has("scheduler_pending_pods"));

  const client::HttpResponse configz = HttpsGet(port, "/configz", kMetricsToken);
  REQUIRE(configz.status == 200);
  rapidjson::Document json;
  json.Parse(configz.body.data(), configz.body.size());
  REQUIRE(json.IsObject());
  CHECK(std::string(json["componentconfig"]["Profiles"][0]["SchedulerName"].GetString()) ==
        "kubesched");

  // Within the TTL, the same token and paths are answered from the caches.
  const int64_t token_reviews = Counter(api, "reviews.tokenreviews");
  const int64_t access_reviews = Counter(api, "reviews.subjectaccessreviews");
  CHECK(token_reviews == 3);   // unknown, nobody, prometheus
  CHECK(access_reviews == 4);  // anonymous, nobody, prometheus on /metrics and /configz
  CHECK(HttpsGet(port, "/metrics", kMetricsToken).status == 200);
  CHECK(HttpsGet(port, "/metrics").status == 403);
  CHECK(Counter(api, "reviews.tokenreviews") == token_reviews);
  CHECK(Counter(api, "reviews.subjectaccessreviews") == access_reviews);

  REQUIRE(scheduler->Stop(SIGTERM, absl::Seconds(15)).value_or(-1) == 0);
}

TEST_CASE("secure port: serves the certificate and key it is given", "[serving][run][e2e]") {
  auto server = StartApiServer();
  REQUIRE(server.ok());
  const int port = testing::FreeLocalPort();
  // The test API server's own serving pair (127.0.0.1 and localhost), signed by its CA.
  const std::string cert = (*server)->dir() + "/server.crt";
  auto scheduler =
      testing::StartKubeschedRun({.kubeconfig = (*server)->kubeconfig(),
                                  .secure_port = port,
                                  .extra_args = {"--tls-cert-file", cert, "--tls-private-key-file",
                                                 (*server)->dir() + "/server.key"}});
  REQUIRE(testing::LoggedPort(*scheduler, ") on port ") == port);
  CHECK(testing::PeerCertificatePem(port) == ReadFile(cert));
  // And a client that trusts that CA verifies it.
  CHECK(HttpsGet(port, "/healthz", "", ReadFile((*server)->ca_file())).status == 200);
  REQUIRE(scheduler->Stop(SIGTERM, absl::Seconds(15)).value_or(-1) == 0);
}

TEST_CASE("secure port: --authentication-kubeconfig is the TokenReviews' connection",
          "[serving][run][e2e]") {
  auto server = StartApiServer();
  REQUIRE(server.ok());
  testing::TestApiClient api(**server);
  // The same server with a token it does not accept: every TokenReview is refused (401).
  const std::string refused = (*server)->dir() + "/refused-kubeconfig";
  std::string kubeconfig = ReadFile((*server)->kubeconfig());
  const size_t token = kubeconfig.find(TestApiProcess::kToken);
  REQUIRE(token != std::string::npos);
  kubeconfig.replace(token, std::string_view(TestApiProcess::kToken).size(), "stale-token");
  std::ofstream(refused) << kubeconfig;
  const int port = testing::FreeLocalPort();
  auto scheduler =
      testing::StartKubeschedRun({.kubeconfig = (*server)->kubeconfig(),
                                  .secure_port = port,
                                  .extra_args = {"--authentication-kubeconfig", refused}});
  REQUIRE(testing::LoggedPort(*scheduler, ") on port ") == port);
  // A review that cannot be made: 401, logged, and not cached (asked again).
  CHECK(HttpsGet(port, "/metrics", kMetricsToken).status == 401);
  CHECK(HttpsGet(port, "/metrics", kMetricsToken).status == 401);
  testing::WaitForLog(*scheduler, "secure serving: TokenReview for /metrics failed", 2);
  CHECK(Counter(api, "reviews.tokenreviews") == 0);
  // Authorization still goes over the scheduler's own connection.
  CHECK(HttpsGet(port, "/metrics").status == 403);
  CHECK(Counter(api, "reviews.subjectaccessreviews") == 1);
  REQUIRE(scheduler->Stop(SIGTERM, absl::Seconds(15)).value_or(-1) == 0);
}

TEST_CASE("secure port: an unreadable or mismatched certificate is exit code 2, said clearly",
          "[serving][run][e2e]") {
  auto server = StartApiServer();
  REQUIRE(server.ok());
  const std::string dir = (*server)->dir();
  struct Case {
    std::string cert;
    std::string key;
    std::string message;
  };
  for (const Case& c : {Case{dir + "/missing.crt", dir + "/server.key",
                             "error: --tls-cert-file " + dir + "/missing.crt: "},
                        Case{dir + "/server.crt", dir + "/client.key",
                             "the private key does not match the certificate"}}) {
    auto scheduler = testing::StartKubeschedRun(
        {.kubeconfig = (*server)->kubeconfig(),
         .secure_port = testing::FreeLocalPort(),
         .extra_args = {"--tls-cert-file", c.cert, "--tls-private-key-file", c.key}});
    auto exit_code = scheduler->Wait(absl::Seconds(30));
    INFO(scheduler->ReadStderr());
    REQUIRE(exit_code.ok());
    CHECK(*exit_code == 2);
    CHECK(absl::StrContains(scheduler->ReadStderr(), c.message));
  }
}

}  // namespace
}  // namespace kubesched
