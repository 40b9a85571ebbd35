#include "tests/testapi/reviews.h"

#include <catch2/catch.hpp>
#include <string>

#include "absl/strings/match.h"
#include "tests/testapi/api_fixture.h"

namespace kubesched::testapi {
namespace {

constexpr char kCaller[] = "Bearer caller-token";

struct ReviewFixture {
  ReviewFixture() : store(StoreOptions{}), api(&store, &faults, Options()) {
    REQUIRE(api.Bootstrap().ok());
  }
  static ApiServerOptions Options() {
    ApiServerOptions options;
    options.tokens = {"caller-token"};
    REQUIRE(
        ApplyReviewFlag("--token-user", "t1:alice:team-a,ops", &options.reviews, &options.tokens)
            .ok());
    REQUIRE(
        ApplyReviewFlag("--token-user", "t2:root:system:masters", &options.reviews, &options.tokens)
            .ok());
    REQUIRE(
        ApplyReviewFlag("--allow-path", "alice:/metrics", &options.reviews, &options.tokens).ok());
    REQUIRE(
        ApplyReviewFlag("--allow-path", "ops:/debug/*", &options.reviews, &options.tokens).ok());
    return options;
  }
  HttpResponse Post(std::string_view path, std::string body, std::string authorization = kCaller) {
    return api.Handle({.method = "POST",
                       .target = std::string(path),
                       .content_type = "application/json",
                       .authorization = std::move(authorization),
                       .body = std::move(body)});
  }
  rapidjson::Document Status(std::string_view path, std::string body) {
    HttpResponse response = Post(path, std::move(body));
    INFO(response.body);
    REQUIRE(response.status == 201);
    rapidjson::Document review = Json(response.body);
    REQUIRE(review.HasMember("status"));
    rapidjson::Document status;
    status.CopyFrom(review["status"], status.GetAllocator());
    return status;
  }
  rapidjson::Document Access(const std::string& user, const std::string& groups,
                             const std::string& path, const std::string& verb = "get") {
    return Status(kSubjectAccessReviewsPath,
                  absl::StrCat(R"({"apiVersion":"authorization.k8s.io/v1",)",
                               R"("kind":"SubjectAccessReview","spec":{"user":")", user,
                               R"(","groups":[)", groups, R"(],"nonResourceAttributes":)",
                               R"({"path":")", path, R"(","verb":")", verb, R"("}}})"));
  }

  Store store;
  Faults faults;
  ApiServer api;
};

std::string TokenReview(const std::string& token) {
  return absl::StrCat(R"({"apiVersion":"authentication.k8s.io/v1","kind":"TokenReview",)",
                      R"("spec":{"token":")", token, R"("}})");
}

TEST_CASE("a TokenReview authenticates the server's tokens as their users", "[testapi][reviews]") {
  ReviewFixture f;
  rapidjson::Document alice = f.Status(kTokenReviewsPath, TokenReview("t1"));
  CHECK(alice["authenticated"].GetBool());
  CHECK(std::string(alice["user"]["username"].GetString()) == "alice");
  REQUIRE(alice["user"]["groups"].Size() == 3);
  CHECK(std::string(alice["user"]["groups"][2].GetString()) == "system:authenticated");
  rapidjson::Document plain = f.Status(kTokenReviewsPath, TokenReview("caller-token"));
  CHECK(std::string(plain["user"]["username"].GetString()) == "testapi-user");
  rapidjson::Document unknown = f.Status(kTokenReviewsPath, TokenReview("nope"));
  CHECK_FALSE(unknown.HasMember("authenticated"));
  CHECK(unknown["user"].ObjectEmpty());
}

TEST_CASE("a SubjectAccessReview allows what --allow-path grants and system:masters",
          "[testapi][reviews]") {
  ReviewFixture f;
  CHECK(f.Access("alice", "", "/metrics")["allowed"].GetBool());
  CHECK_FALSE(f.Access("alice", "", "/configz")["allowed"].GetBool());
  CHECK_FALSE(f.Access("alice", "", "/metrics", "post")["allowed"].GetBool());
  CHECK(f.Access("bob", R"("ops")", "/debug/pprof")["allowed"].GetBool());
  CHECK_FALSE(
      f.Access("system:anonymous", R"("system:unauthenticated")", "/metrics")["allowed"].GetBool());
  CHECK(f.Access("root", R"("system:masters")", "/anything")["allowed"].GetBool());
}

TEST_CASE("reviews are refused as the real API refuses them", "[testapi][reviews]") {
  ReviewFixture f;
  CHECK(f.Post(kTokenReviewsPath, TokenReview("t1"), "").status == 401);
  CHECK(f.Post(kTokenReviewsPath, TokenReview("t1"), "Bearer wrong").status == 401);
  HttpResponse no_token = f.Post(kTokenReviewsPath, R"({"spec":{}})");
  CHECK(no_token.status == 400);
  CHECK(absl::StrContains(no_token.body, "token is required"));
  HttpResponse both =
      f.Post(kSubjectAccessReviewsPath, R"({"spec":{"user":"a","nonResourceAttributes":{},)"
                                        R"("resourceAttributes":{}}})");
  CHECK(both.status == 422);
  CHECK(absl::StrContains(both.body, "exactly one of nonResourceAttributes or resourceAttributes"));
  HttpResponse nobody = f.Post(kSubjectAccessReviewsPath,
                               R"({"spec":{"nonResourceAttributes":{"path":"/x","verb":"get"}}})");
  CHECK(nobody.status == 422);
  CHECK(absl::StrContains(nobody.body, "at least one of user or group"));
  CHECK(f.Post(kTokenReviewsPath, "not json").status == 400);
  HttpResponse get = f.api.Handle(
      {.method = "GET", .target = std::string(kTokenReviewsPath), .authorization = kCaller});
  CHECK(get.status == 405);
}

TEST_CASE("review flags with a missing part are refused", "[testapi][reviews]") {
  ReviewOptions options;
  std::vector<std::string> tokens;
  for (const char* value : {"", "token", ":user", "token:"}) {
    INFO(value);
    CHECK(absl::IsInvalidArgument(ApplyReviewFlag("--token-user", value, &options, &tokens)));
  }
  CHECK(absl::IsInvalidArgument(ApplyReviewFlag("--allow-path", "alice", &options, &tokens)));
  CHECK(options.users.empty());
  CHECK(tokens.empty());
}

}  // namespace
}  // namespace kubesched::testapi
