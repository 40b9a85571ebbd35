#include "scheduler/serving/delegated_auth.h"

#include <openssl/evp.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "scheduler/util/log.h"
#include "scheduler/util/strings.h"

namespace kubesched::serving {
namespace {

using util::Absl;

constexpr std::string_view kAnonymousUser = "system:anonymous";
constexpr std::string_view kUnauthenticatedGroup = "system:unauthenticated";

std::string JsonQuote(std::string_view text) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string TokenKey(std::string_view token) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(token.data(), token.size(), digest, &size, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<const char*>(digest), size);
}

std::string AccessKey(const AccessRequest& request) {
  // NUL separates fields, which no user, group or path holds.
  return absl::StrCat(request.user.name, std::string(1, '\0'), request.user.uid,
                      std::string(1, '\0'), absl::StrJoin(request.user.groups, ","),
                      std::string(1, '\0'), request.verb, std::string(1, '\0'), request.path);
}

// Keeps a cache under its cap: expired entries go first, and if that is not enough, everything
// (a flood of distinct tokens must not grow memory without bound).
template <typename Map>
void MakeRoom(Map& cache, absl::Time now, size_t cap) {
  if (cache.size() < cap) return;
  absl::erase_if(cache, [now](const auto& entry) { return entry.second.expires <= now; });
  if (cache.size() >= cap) cache.clear();
}

// The bearer token of an Authorization header: nullopt for no header or another scheme (the
// request is anonymous), "" for "Bearer" with nothing after it (an invalid token).
std::optional<std::string> BearerToken(std::string_view authorization) {
  const std::string_view trimmed = util::Std(absl::StripAsciiWhitespace(Absl(authorization)));
  const size_t space = trimmed.find(' ');
  const std::string_view scheme = trimmed.substr(0, space);
  if (!absl::EqualsIgnoreCase(Absl(scheme), "bearer")) return std::nullopt;
  if (space == std::string_view::npos) return std::string();
  return std::string(absl::StripAsciiWhitespace(Absl(trimmed.substr(space + 1))));
}

}  // namespace

absl::StatusOr<PathAllowList> PathAllowList::Parse(const std::vector<std::string>& paths) {
  PathAllowList list;
  for (const std::string& path : paths) {
    if (path.empty()) continue;
    if (path.front() != '/') {
      return absl::InvalidArgumentError(absl::StrCat("\"", path, "\": a path starts with /"));
    }
    const size_t star = path.find('*');
    if (star != std::string::npos && star != path.size() - 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", path, "\": only a trailing * is allowed"));
    }
    if (star == std::string::npos) {
      list.exact_.push_back(path);
    } else {
      list.prefixes_.push_back(path.substr(0, star));
    }
  }
  return list;
}

bool PathAllowList::Allows(std::string_view path) const {
  for (const std::string& exact : exact_) {
    if (path == exact) return true;
  }
  for (const std::string& prefix : prefixes_) {
    if (path.starts_with(prefix)) return true;
  }
  return false;
}

DelegatedAuth::DelegatedAuth(ReviewClient* reviews, const util::Clock* clock,
                             DelegatedAuthOptions options)
    : reviews_(reviews), clock_(clock), options_(std::move(options)) {}

absl::StatusOr<TokenReviewResult> DelegatedAuth::Authenticate(const std::string& token) {
  const std::string key = TokenKey(token);
  {
    absl::MutexLock lock(&mu_);
    auto it = tokens_.find(key);
    if (it != tokens_.end() && it->second.expires > clock_->Now()) return it->second.result;
  }
  absl::StatusOr<TokenReviewResult> result = reviews_->ReviewToken(token);
  if (!result.ok()) return result;
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_->Now();
  MakeRoom(tokens_, now, options_.max_cache_entries);
  tokens_[key] = CachedToken{*result, now + options_.token_ttl};
  return result;
}

absl::StatusOr<AccessReviewResult> DelegatedAuth::Authorize(const AccessRequest& request) {
  const std::string key = AccessKey(request);
  {
    absl::MutexLock lock(&mu_);
    auto it = access_.find(key);
    if (it != access_.end() && it->second.expires > clock_->Now()) return it->second.result;
  }
  absl::StatusOr<AccessReviewResult> result = reviews_->ReviewAccess(request);
  if (!result.ok()) return result;
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_->Now();
  MakeRoom(access_, now, options_.max_cache_entries);
  access_[key] =
      CachedAccess{*result, now + (result->allowed ? options_.allowed_ttl : options_.denied_ttl)};
  return result;
}

AuthDecision DelegatedAuth::Check(std::string_view authorization, std::string_view path,
                                  std::string_view method) {
  if (AlwaysAllowed(path)) return AuthDecision{};
  AccessRequest request;
  request.path = std::string(path);
  request.verb = absl::AsciiStrToLower(Absl(method));
  if (std::optional<std::string> token = BearerToken(authorization); token.has_value()) {
    if (token->empty()) return AuthDecision{401, "application/json", UnauthorizedBody(), ""};
    absl::StatusOr<TokenReviewResult> review = Authenticate(*token);
    if (!review.ok()) {
      util::LogWarning(absl::StrCat("secure serving: TokenReview for ", Absl(path),
                                    " failed: ", review.status().message()));
      return AuthDecision{401, "application/json", UnauthorizedBody(), ""};
    }
    if (!review->authenticated)
      return AuthDecision{401, "application/json", UnauthorizedBody(), ""};
    request.user = review->user;
  } else {
    request.user = UserInfo{std::string(kAnonymousUser), "", {std::string(kUnauthenticatedGroup)}};
  }
  for (const std::string& group : request.user.groups) {
    if (std::find(options_.always_allow_groups.begin(), options_.always_allow_groups.end(),
                  group) != options_.always_allow_groups.end()) {
      return AuthDecision{200, "", "", request.user.name};
    }
  }
  absl::StatusOr<AccessReviewResult> access = Authorize(request);
  if (!access.ok()) {
    util::LogWarning(absl::StrCat("secure serving: SubjectAccessReview for user ",
                                  request.user.name, " on ", Absl(path),
                                  " failed: ", access.status().message()));
    return AuthDecision{500, "text/plain; charset=utf-8",
                        InternalErrorText(path, util::Std(access.status().message())),
                        request.user.name};
  }
  if (!access->allowed) {
    return AuthDecision{403, "application/json", ForbiddenBody(request, access->reason),
                        request.user.name};
  }
  return AuthDecision{200, "", "", request.user.name};
}

std::string UnauthorizedBody() {
  return R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",)"
         R"("message":"Unauthorized","reason":"Unauthorized","code":401})";
}

std::string ForbiddenBody(const AccessRequest& request, std::string_view reason) {
  std::string message = absl::StrCat("forbidden: User ", JsonQuote(request.user.name), " cannot ",
                                     request.verb, " path ", JsonQuote(request.path));
  if (!reason.empty()) absl::StrAppend(&message, ": ", Absl(reason));
  return absl::StrCat(
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":)",
      JsonQuote(message), R"(,"reason":"Forbidden","details":{},"code":403})");
}

std::string InternalErrorText(std::string_view path, std::string_view error) {
  return absl::StrCat("Internal Server Error: ", JsonQuote(path), ": ", Absl(error), "\n");
}

}  // namespace kubesched::serving
