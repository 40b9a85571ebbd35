#include "scheduler/run/api_reviews.h"

#include <catch2/catch.hpp>
#include <memory>

#include "scheduler/client/rest_client.h"
#include "scheduler/client/token_source.h"
#include "tests/testapi/server.h"

namespace kubesched::scheduler {
namespace {

// A test API server that knows alice (group ops), allowed to get /metrics, and the caller's token.
std::unique_ptr<testapi::Server> StartServer() {
  testapi::ServerOptions options;
  options.api.tokens = {"caller"};
  REQUIRE(testapi::ApplyReviewFlag("--token-user", "alice-token:alice:ops", &options.api.reviews,
                                   &options.api.tokens)
              .ok());
  REQUIRE(testapi::ApplyReviewFlag("--allow-path", "alice:/metrics", &options.api.reviews,
                                   &options.api.tokens)
              .ok());
  auto server = testapi::Server::Start(options);
  REQUIRE(server.ok());
  return *std::move(server);
}

std::unique_ptr<client::RestClient> Client(const std::string& url, const std::string& token) {
  client::RestConfig config;
  config.server = url;
  config.token = std::make_shared<client::StaticToken>(token);
  config.max_retries = 0;
  auto rest = client::RestClient::Create(config);
  REQUIRE(rest.ok());
  return *std::move(rest);
}

TEST_CASE("the reviews are posted to the API server and their answers read back",
          "[run][reviews]") {
  auto server = StartServer();
  auto rest = Client(server->url(), "caller");
  ApiReviewClient reviews(rest.get(), rest.get());

  auto alice = reviews.ReviewToken("alice-token");
  REQUIRE(alice.ok());
  CHECK(alice->authenticated);
  CHECK(alice->user.name == "alice");
  CHECK(alice->user.groups == std::vector<std::string>{"ops", "system:authenticated"});
  auto unknown = reviews.ReviewToken("who");
  REQUIRE(unknown.ok());
  CHECK_FALSE(unknown->authenticated);

  auto allowed = reviews.ReviewAccess({alice->user, "/metrics", "get"});
  REQUIRE(allowed.ok());
  CHECK(allowed->allowed);
  auto denied = reviews.ReviewAccess({alice->user, "/configz", "get"});
  REQUIRE(denied.ok());
  CHECK_FALSE(denied->allowed);
}

TEST_CASE("a review the API server refuses is an error, not a decision", "[run][reviews]") {
  auto server = StartServer();
  auto rest = Client(server->url(), "not-the-caller");
  ApiReviewClient reviews(rest.get(), rest.get());
  auto token = reviews.ReviewToken("alice-token");
  CHECK(absl::IsUnauthenticated(token.status()));
  auto access = reviews.ReviewAccess({serving::UserInfo{"alice", "", {}}, "/metrics", "get"});
  CHECK(absl::IsUnauthenticated(access.status()));
}

}  // namespace
}  // namespace kubesched::scheduler
