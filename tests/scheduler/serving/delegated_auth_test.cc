#include "scheduler/serving/delegated_auth.h"

#include <catch2/catch.hpp>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/synchronization/mutex.h"
#include "scheduler/util/clock.h"

namespace kubesched::serving {
namespace {

// Answers from a script and counts what was asked; `fail` makes every review an error.
class FakeReviews : public ReviewClient {
 public:
  absl::StatusOr<TokenReviewResult> ReviewToken(const std::string& token) override {
    absl::MutexLock lock(&mu_);
    ++token_reviews;
    if (fail) return absl::UnavailableError("connection refused");
    auto it = users.find(token);
    if (it == users.end()) return TokenReviewResult{false, {}, "invalid token"};
    return TokenReviewResult{true, it->second, ""};
  }
  absl::StatusOr<AccessReviewResult> ReviewAccess(const AccessRequest& request) override {
    absl::MutexLock lock(&mu_);
    ++access_reviews;
    asked.push_back(request);
    if (fail) return absl::DeadlineExceededError("timed out");
    for (const std::string& allowed : allowed_users) {
      if (allowed == request.user.name) return AccessReviewResult{true, "allowed by test"};
    }
    return AccessReviewResult{false, ""};
  }

  std::map<std::string, UserInfo> users = {
      {"good", UserInfo{"prometheus", "uid-1", {"monitoring", "system:authenticated"}}},
      {"nobody", UserInfo{"nobody", "", {"system:authenticated"}}},
      {"admin", UserInfo{"admin", "", {"system:masters", "system:authenticated"}}}};
  std::vector<std::string> allowed_users = {"prometheus"};
  bool fail = false;
  int token_reviews = 0;
  int access_reviews = 0;
  std::vector<AccessRequest> asked;

 private:
  absl::Mutex mu_;
};

DelegatedAuthOptions Options() {
  DelegatedAuthOptions options;
  auto paths = PathAllowList::Parse({"/healthz", "/readyz", "/livez"});
  REQUIRE(paths.ok());
  options.always_allow = *paths;
  return options;
}

TEST_CASE("always-allowed paths are served without any review, with or without a token",
          "[serving][auth]") {
  FakeReviews reviews;
  util::FakeClock clock;
  DelegatedAuth auth(&reviews, &clock, Options());
  CHECK(auth.Check("", "/healthz", "GET").status == 200);
  CHECK(auth.Check("Bearer bogus", "/readyz", "GET").status == 200);
  CHECK(auth.AlwaysAllowed("/livez"));
  CHECK_FALSE(auth.AlwaysAllowed("/metrics"));
  CHECK_FALSE(auth.AlwaysAllowed("/healthz/extra"));
  CHECK(reviews.token_reviews == 0);
  CHECK(reviews.access_reviews == 0);
}

TEST_CASE("the allow-list takes exact paths and trailing-star prefixes, and refuses the rest",
          "[serving][auth]") {
  auto paths = PathAllowList::Parse({"/healthz", "/debug/*"});
  REQUIRE(paths.ok());
  CHECK(paths->Allows("/healthz"));
  CHECK(paths->Allows("/debug/pprof/heap"));
  CHECK(paths->Allows("/debug/"));
  CHECK_FALSE(paths->Allows("/debug"));
  CHECK_FALSE(paths->Allows("/metrics"));
  auto empty = PathAllowList::Parse({});
  REQUIRE(empty.ok());
  CHECK_FALSE(empty->Allows("/healthz"));
  for (const char* bad : {"/a*b", "healthz", "*"}) {
    auto parsed = PathAllowList::Parse({bad});
    INFO(bad);
    CHECK_FALSE(parsed.ok());
  }
  CHECK(absl::StrContains(PathAllowList::Parse({"/a*b"}).status().message(),
                          "only a trailing * is allowed"));
}

TEST_CASE("a request without a token is system:anonymous, denied with kube-scheduler's 403",
          "[serving][auth]") {
  FakeReviews reviews;
  util::FakeClock clock;
  DelegatedAuth auth(&reviews, &clock, Options());
  const AuthDecision decision = auth.Check("", "/metrics", "GET");
  CHECK(decision.status == 403);
  CHECK(decision.body ==
        R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
        R"("message":"forbidden: User \"system:anonymous\" cannot get path \"/metrics\"",)"
        R"("reason":"Forbidden","details":{},"code":403})");
  CHECK(reviews.token_reviews == 0);
  REQUIRE(reviews.asked.size() == 1);
  CHECK(reviews.asked[0].user.name == "system:anonymous");
  CHECK(reviews.asked[0].user.groups == std::vector<std::string>{"system:unauthenticated"});
  CHECK(reviews.asked[0].path == "/metrics");
  CHECK(reviews.asked[0].verb == "get");
}

TEST_CASE("a token the API server rejects gets 401, and so does an empty bearer token",
          "[serving][auth]") {
  FakeReviews reviews;
  util::FakeClock clock;
  DelegatedAuth auth(&reviews, &clock, Options());
  const AuthDecision decision = auth.Check("Bearer unknown", "/metrics", "GET");
  CHECK(decision.status == 401);
  CHECK(decision.body == R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
                         R"("message":"Unauthorized","reason":"Unauthorized","code":401})");
  CHECK(auth.Check("Bearer ", "/metrics", "GET").status == 401);
  CHECK(reviews.token_reviews == 1);  // the empty one needs no review
  CHECK(reviews.access_reviews == 0);
}

TEST_CASE("an authenticated user is authorized by a review: allowed 200, denied 403 naming it",
          "[serving][auth]") {
  FakeReviews reviews;
  util::FakeClock clock;
  DelegatedAuth auth(&reviews, &clock, Options());
  const AuthDecision allowed = auth.Check("Bearer good", "/metrics", "GET");
  CHECK(allowed.status == 200);
  CHECK(allowed.user == "prometheus");
  REQUIRE(reviews.asked.size() == 1);
  CHECK(reviews.asked[0].user.uid == "uid-1");
  CHECK(reviews.asked[0].user.groups ==
        std::vector<std::string>{"monitoring", "system:authenticated"});
  const AuthDecision denied = auth.Check("bearer nobody", "/configz", "GET");
  CHECK(denied.status == 403);
  CHECK(absl::StrContains(denied.body, R"(User \"nobody\" cannot get path \"/configz\")"));
}

TEST_CASE("system:masters is allowed without a SubjectAccessReview", "[serving][auth]") {
  FakeReviews reviews;
  util::FakeClock clock;
  DelegatedAuth auth(&reviews, &clock, Options());
  CHECK(auth.Check("Bearer admin", "/metrics", "GET").status == 200);
  CHECK(reviews.access_reviews == 0);
}

TEST_CASE("answers are cached for their TTL: no new review within it, a new one after",
          "[serving][auth]") {
  FakeReviews reviews;
  util::FakeClock clock;
  DelegatedAuth auth(&reviews, &clock, Options());
  for (int i = 0; i < 3; ++i) {
    CHECK(auth.Check("Bearer good", "/metrics", "GET").status == 200);
    CHECK(auth.Check("Bearer unknown", "/metrics", "GET").status == 401);
    CHECK(auth.Check("", "/metrics", "GET").status == 403);
    clock.Advance(absl::Seconds(3));
  }
  CHECK(reviews.token_reviews == 2);   // good, unknown
  CHECK(reviews.access_reviews == 2);  // prometheus allowed, anonymous denied
  clock.Advance(absl::Seconds(1));     // 10 s after the first answers: expired
  reviews.allowed_users.clear();
  CHECK(auth.Check("Bearer good", "/metrics", "GET").status == 403);
  CHECK(reviews.token_reviews == 3);
  CHECK(reviews.access_reviews == 3);
  // Another path is another decision.
  auth.Check("Bearer good", "/configz", "GET");
  CHECK(reviews.access_reviews == 4);
}

TEST_CASE("a review that cannot be made is refused and not cached: 401 or 500, asked again",
          "[serving][auth]") {
  FakeReviews reviews;
  util::FakeClock clock;
  DelegatedAuth auth(&reviews, &clock, Options());
  reviews.fail = true;
  CHECK(auth.Check("Bearer good", "/metrics", "GET").status == 401);
  const AuthDecision anonymous = auth.Check("", "/metrics", "GET");
  CHECK(anonymous.status == 500);
  CHECK(anonymous.body == "Internal Server Error: \"/metrics\": timed out\n");
  reviews.fail = false;
  CHECK(auth.Check("Bearer good", "/metrics", "GET").status == 200);
  CHECK(auth.Check("", "/metrics", "GET").status == 403);
  CHECK(reviews.token_reviews == 2);
  CHECK(reviews.access_reviews == 3);
}

TEST_CASE("a flood of distinct tokens keeps the cache within its cap", "[serving][auth]") {
  FakeReviews reviews;
  util::FakeClock clock;
  DelegatedAuthOptions options = Options();
  options.max_cache_entries = 4;
  DelegatedAuth auth(&reviews, &clock, options);
  for (int i = 0; i < 10; ++i) auth.Check("Bearer junk" + std::to_string(i), "/metrics", "GET");
  CHECK(reviews.token_reviews == 10);
  // The cap was reached and the cache emptied: the first junk token is reviewed again, while
  // the last one is still cached.
  auth.Check("Bearer junk0", "/metrics", "GET");
  auth.Check("Bearer junk9", "/metrics", "GET");
  CHECK(reviews.token_reviews == 11);
}

}  // namespace
}  // namespace kubesched::serving
