#pragma once

// Who may read the secure port, decided as kube-scheduler decides it: a bearer token is
// authenticated by the API server (a TokenReview), a request without one is system:anonymous,
// and the user is then authorized for the path (a SubjectAccessReview with non-resource
// attributes: the path and the lower-cased method as verb). Both answers are cached, authenticated
// or rejected tokens for token_ttl, allowed and denied decisions for allowed_ttl / denied_ttl
// (kube-scheduler's defaults: 10 s each); a review that could not be made is never cached. Paths
// of --authorization-always-allow-paths skip both, so a probe never depends on the API server.
//
// Thread-safe: Check may be called concurrently; it blocks on the reviews, so the server calls
// it off its I/O threads.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "scheduler/util/clock.h"

namespace kubesched::serving {

struct UserInfo {
  std::string name;
  std::string uid;
  std::vector<std::string> groups;
};

struct TokenReviewResult {
  bool authenticated = false;
  UserInfo user;      // when authenticated
  std::string error;  // status.error, when not
};

struct AccessRequest {
  UserInfo user;
  std::string path;  // "/metrics"
  std::string verb;  // "get"
};

struct AccessReviewResult {
  bool allowed = false;
  std::string reason;  // status.reason
};

// The API server's reviews. An error means no answer came (unreachable, timeout, the review
// itself refused); a review that says no is a value.
class ReviewClient {
 public:
  virtual ~ReviewClient() = default;
  virtual absl::StatusOr<TokenReviewResult> ReviewToken(const std::string& token) = 0;
  virtual absl::StatusOr<AccessReviewResult> ReviewAccess(const AccessRequest& request) = 0;
};

// --authorization-always-allow-paths: "/healthz" matches that path only, "/debug/*" every path
// under the prefix; only a trailing '*' is allowed, and every entry starts with '/'.
class PathAllowList {
 public:
  static absl::StatusOr<PathAllowList> Parse(const std::vector<std::string>& paths);
  bool Allows(std::string_view path) const;

 private:
  std::vector<std::string> exact_;
  std::vector<std::string> prefixes_;
};

struct DelegatedAuthOptions {
  PathAllowList always_allow;
  std::vector<std::string> always_allow_groups = {"system:masters"};
  absl::Duration token_ttl = absl::Seconds(10);
  absl::Duration allowed_ttl = absl::Seconds(10);
  absl::Duration denied_ttl = absl::Seconds(10);
  size_t max_cache_entries = 4096;  // per cache; expired entries go first, then all
};

// What to answer: 200 lets the request through; otherwise the status and its body (a v1 Status,
// as the API server's own refusals).
struct AuthDecision {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::string user;  // who asked ("" when unauthenticated)
};

class DelegatedAuth {
 public:
  DelegatedAuth(ReviewClient* reviews, const util::Clock* clock, DelegatedAuthOptions options);

  bool AlwaysAllowed(std::string_view path) const { return options_.always_allow.Allows(path); }

  // `authorization` is the request's Authorization header ("" when absent).
  AuthDecision Check(std::string_view authorization, std::string_view path,
                     std::string_view method);

 private:
  struct CachedToken {
    TokenReviewResult result;
    absl::Time expires;
  };
  struct CachedAccess {
    AccessReviewResult result;
    absl::Time expires;
  };

  absl::StatusOr<TokenReviewResult> Authenticate(const std::string& token);
  absl::StatusOr<AccessReviewResult> Authorize(const AccessRequest& request);

  ReviewClient* const reviews_;
  const util::Clock* const clock_;
  const DelegatedAuthOptions options_;
  absl::Mutex mu_;
  // Keyed by the token's SHA-256, so the cache holds no credential.
  absl::flat_hash_map<std::string, CachedToken> tokens_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, CachedAccess> access_ ABSL_GUARDED_BY(mu_);
};

// The refusals' bodies, as kube-scheduler writes them: v1 Status objects for 401 and 403, a line
// of text for a 500 (an authorization review that could not be made).
std::string UnauthorizedBody();
std::string ForbiddenBody(const AccessRequest& request, std::string_view reason);
std::string InternalErrorText(std::string_view path, std::string_view error);

}  // namespace kubesched::serving
