#include "tests/testapi/reviews.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "scheduler/util/strings.h"

namespace kubesched::testapi {
namespace {

using Allocator = rapidjson::Document::AllocatorType;

constexpr std::string_view kPlainTokenUser = "testapi-user";
constexpr std::string_view kAuthenticatedGroup = "system:authenticated";
constexpr std::string_view kMastersGroup = "system:masters";

std::string ToJson(const rapidjson::Value& value) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  value.Accept(writer);
  return std::string(buffer.GetString(), buffer.GetSize());
}

rapidjson::Value Str(std::string_view text, Allocator& allocator) {
  return rapidjson::Value(text.data(), static_cast<rapidjson::SizeType>(text.size()), allocator);
}

std::string StringAt(const rapidjson::Value& object, const char* name) {
  if (!object.IsObject()) return "";
  auto it = object.FindMember(name);
  if (it == object.MemberEnd() || !it->value.IsString()) return "";
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

HttpResponse Status(int code, std::string_view reason, const std::string& message) {
  rapidjson::Document status(rapidjson::kObjectType);
  Allocator& a = status.GetAllocator();
  status.AddMember("kind", "Status", a).AddMember("apiVersion", "v1", a);
  status.AddMember("metadata", rapidjson::Value(rapidjson::kObjectType), a);
  status.AddMember("status", "Failure", a).AddMember("message", Str(message, a), a);
  status.AddMember("reason", Str(reason, a), a).AddMember("code", code, a);
  HttpResponse response;
  response.status = code;
  response.body = ToJson(status);
  return response;
}

HttpResponse Invalid(std::string_view kind, const std::string& field, const std::string& detail) {
  return Status(
      422, "Invalid",
      absl::StrCat(util::Absl(kind), " \"\" is invalid: ", field, ": Invalid value: ", detail));
}

// The review as sent, with metadata reset and `status` replacing any sent status.
HttpResponse Answer(rapidjson::Document review, rapidjson::Value status) {
  Allocator& a = review.GetAllocator();
  review.RemoveMember("status");
  review.RemoveMember("metadata");
  rapidjson::Value metadata(rapidjson::kObjectType);
  metadata.AddMember("creationTimestamp", rapidjson::Value(), a);
  review.AddMember("metadata", metadata, a);
  review.AddMember("status", status, a);
  HttpResponse response;
  response.status = 201;
  response.body = ToJson(review);
  return response;
}

const ReviewUser* FindUser(const std::string& token, const ReviewOptions& options,
                           const std::vector<std::string>& tokens, ReviewUser* plain) {
  for (const ReviewUser& user : options.users) {
    if (user.token == token) return &user;
  }
  if (std::find(tokens.begin(), tokens.end(), token) == tokens.end()) return nullptr;
  *plain = ReviewUser{token, std::string(kPlainTokenUser), {}};
  return plain;
}

HttpResponse TokenReview(rapidjson::Document review, const ReviewOptions& options,
                         const std::vector<std::string>& tokens) {
  const std::string token =
      review.HasMember("spec") ? StringAt(review["spec"], "token") : std::string();
  if (token.empty()) {
    return Status(400, "BadRequest", "token is required for TokenReview in authentication");
  }
  Allocator& a = review.GetAllocator();
  rapidjson::Value status(rapidjson::kObjectType);
  rapidjson::Value user_json(rapidjson::kObjectType);
  ReviewUser plain;
  if (const ReviewUser* user = FindUser(token, options, tokens, &plain); user != nullptr) {
    status.AddMember("authenticated", true, a);
    user_json.AddMember("username", Str(user->name, a), a);
    rapidjson::Value groups(rapidjson::kArrayType);
    for (const std::string& group : user->groups) groups.PushBack(Str(group, a), a);
    groups.PushBack(Str(kAuthenticatedGroup, a), a);
    user_json.AddMember("groups", groups, a);
  }
  status.AddMember("user", user_json, a);
  return Answer(std::move(review), std::move(status));
}

bool PathMatches(std::string_view pattern, std::string_view path) {
  if (pattern == "*") return true;
  if (pattern.ends_with('*')) return path.starts_with(pattern.substr(0, pattern.size() - 1));
  return pattern == path;
}

// The grant that allows `path` to the user or one of its groups, or null.
const ReviewGrant* Grant(const ReviewOptions& options, const std::string& user,
                         const std::vector<std::string>& groups, const std::string& path) {
  for (const ReviewGrant& grant : options.grants) {
    const bool subject = grant.subject == user ||
                         std::find(groups.begin(), groups.end(), grant.subject) != groups.end();
    if (subject && PathMatches(grant.path, path)) return &grant;
  }
  return nullptr;
}

HttpResponse SubjectAccessReview(rapidjson::Document review, const ReviewOptions& options) {
  constexpr std::string_view kKind = "SubjectAccessReview.authorization.k8s.io";
  if (!review.HasMember("spec") || !review["spec"].IsObject()) {
    return Invalid(kKind, "spec", "null: spec is required");
  }
  const rapidjson::Value& spec = review["spec"];
  const bool non_resource = spec.HasMember("nonResourceAttributes");
  if (non_resource == spec.HasMember("resourceAttributes")) {
    return Invalid(kKind, "spec.resourceAttributes",
                   "exactly one of nonResourceAttributes or resourceAttributes must be specified");
  }
  const std::string user = StringAt(spec, "user");
  std::vector<std::string> groups;
  if (auto it = spec.FindMember("groups"); it != spec.MemberEnd() && it->value.IsArray()) {
    for (const auto& group : it->value.GetArray()) {
      if (group.IsString()) groups.emplace_back(group.GetString());
    }
  }
  if (user.empty() && groups.empty()) {
    return Invalid(kKind, "spec.user", "\"\": at least one of user or group must be specified");
  }
  Allocator& a = review.GetAllocator();
  rapidjson::Value status(rapidjson::kObjectType);
  const ReviewGrant* grant = nullptr;
  if (non_resource && StringAt(spec["nonResourceAttributes"], "verb") == "get") {
    grant = Grant(options, user, groups, StringAt(spec["nonResourceAttributes"], "path"));
  }
  if (std::find(groups.begin(), groups.end(), kMastersGroup) != groups.end()) {
    status.AddMember("allowed", true, a);
    status.AddMember("reason", "allowed to group system:masters", a);
  } else if (grant != nullptr) {
    status.AddMember("allowed", true, a);
    status.AddMember(
        "reason",
        Str(absl::StrCat("allowed by --allow-path ", grant->subject, ":", grant->path), a), a);
  } else {
    status.AddMember("allowed", false, a);
  }
  return Answer(std::move(review), std::move(status));
}

}  // namespace

bool IsReviewPath(std::string_view path) {
  return path == kTokenReviewsPath || path == kSubjectAccessReviewsPath;
}

std::string ReviewCounter(std::string_view path) {
  return path == kTokenReviewsPath ? "reviews.tokenreviews" : "reviews.subjectaccessreviews";
}

HttpResponse HandleReview(const HttpRequest& request, std::string_view path,
                          const ReviewOptions& options, const std::vector<std::string>& tokens) {
  if (request.method != "POST") {
    return Status(405, "MethodNotAllowed",
                  "the server does not allow this method on the requested resource");
  }
  rapidjson::Document review;
  if (review.Parse(request.body.data(), request.body.size()).HasParseError() ||
      !review.IsObject()) {
    return Status(400, "BadRequest", "the request body is not a JSON object");
  }
  if (path == kTokenReviewsPath) return TokenReview(std::move(review), options, tokens);
  return SubjectAccessReview(std::move(review), options);
}

bool IsReviewFlag(std::string_view flag) {
  return flag == "--token-user" || flag == "--allow-path";
}

absl::Status ApplyReviewFlag(std::string_view flag, const std::string& value,
                             ReviewOptions* options, std::vector<std::string>* tokens) {
  std::vector<std::string> parts = absl::StrSplit(value, absl::MaxSplits(':', 2));
  const auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid value for ", util::Absl(flag), ": \"", value, "\""));
  };
  if (parts.size() < 2 || parts[0].empty() || parts[1].empty()) return bad();
  if (flag == "--token-user") {
    ReviewUser user{parts[0], parts[1], {}};
    if (parts.size() == 3) user.groups = absl::StrSplit(parts[2], ',', absl::SkipEmpty());
    options->users.push_back(std::move(user));
    tokens->push_back(parts[0]);
    return absl::OkStatus();
  }
  if (flag == "--allow-path") {
    // SUBJECT:PATH where PATH may itself hold colons.
    options->grants.push_back(ReviewGrant{parts[0], value.substr(parts[0].size() + 1)});
    return absl::OkStatus();
  }
  return absl::NotFoundError(absl::StrCat("not a review flag: ", util::Absl(flag)));
}

}  // namespace kubesched::testapi
