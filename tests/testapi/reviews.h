#pragma once

// TokenReview (authentication.k8s.io/v1) and SubjectAccessReview (authorization.k8s.io/v1) of
// kubesched-testapi, answered as the real API answers them: POST only, by an authenticated
// caller (routes.cc checks that first), 201 with the review echoed and its status filled in,
// 400/422 for a malformed review.
//
// Users: a --token-user token authenticates as its user; a --token token as "testapi-user". The
// real API's group system:authenticated is added to every authenticated user. Decisions: a
// non-resource SubjectAccessReview is allowed when --allow-path grants the user (or one of its
// groups) the path ("*": any path, "/x/*": a prefix), or the user is in system:masters;
// everything else is not allowed, without a reason (as RBAC answers "no opinion").

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "tests/testapi/http_server.h"

namespace kubesched::testapi {

struct ReviewUser {
  std::string token{};
  std::string name{};
  std::vector<std::string> groups{};
};

struct ReviewGrant {
  std::string subject{};  // a user or a group name
  std::string path{};     // "*", "/metrics", "/debug/*"
};

struct ReviewOptions {
  std::vector<ReviewUser> users{};
  std::vector<ReviewGrant> grants{};
};

inline constexpr std::string_view kTokenReviewsPath = "/apis/authentication.k8s.io/v1/tokenreviews";
inline constexpr std::string_view kSubjectAccessReviewsPath =
    "/apis/authorization.k8s.io/v1/subjectaccessreviews";

bool IsReviewPath(std::string_view path);

// The stats counter a review is counted under ("reviews.tokenreviews", ...).
std::string ReviewCounter(std::string_view path);

// `tokens` are the --token tokens (a user of their own each, "testapi-user").
HttpResponse HandleReview(const HttpRequest& request, std::string_view path,
                          const ReviewOptions& options, const std::vector<std::string>& tokens);

// --token-user TOKEN:NAME[:GROUP,GROUP...] (the token also authenticates every request) and
// --allow-path SUBJECT:PATH. NotFound for another flag; InvalidArgument for a malformed value.
bool IsReviewFlag(std::string_view flag);
absl::Status ApplyReviewFlag(std::string_view flag, const std::string& value,
                             ReviewOptions* options, std::vector<std::string>* tokens);

}  // namespace kubesched::testapi
