#include "scheduler/run/api_reviews.h"

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "rapidjson/document.h"
#include "scheduler/client/json_encode.h"
#include "scheduler/util/strings.h"

namespace kubesched::scheduler {
namespace {

constexpr char kTokenReviews[] = "/apis/authentication.k8s.io/v1/tokenreviews";
constexpr char kSubjectAccessReviews[] = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

// POSTs `body` and parses the 201 answer's status; an error for no answer or a refusal.
absl::StatusOr<rapidjson::Document> PostReview(client::HttpTransport& transport, const char* target,
                                               std::string body, absl::Duration timeout,
                                               std::string_view what) {
  client::HttpRequest request;
  request.method = "POST";
  request.target = target;
  request.body = std::move(body);
  request.content_type = "application/json";
  request.timeout = timeout;
  request.max_retries = 1;
  absl::StatusOr<client::HttpResponse> response = transport.Do(request);
  if (!response.ok()) return response.status();
  if (absl::Status status = client::StatusFromResponse(*response, what); !status.ok()) {
    return status;
  }
  rapidjson::Document document;
  document.Parse(response->body.data(), response->body.size());
  if (document.HasParseError() || !document.IsObject() || !document.HasMember("status") ||
      !document["status"].IsObject()) {
    return absl::InternalError(absl::StrCat(util::Absl(what), ": the answer has no status object"));
  }
  return document;
}

std::string StringMember(const rapidjson::Value& object, const char* name) {
  if (!object.IsObject()) return "";
  auto it = object.FindMember(name);
  if (it == object.MemberEnd() || !it->value.IsString()) return "";
  return std::string(it->value.GetString(), it->value.GetStringLength());
}

bool BoolMember(const rapidjson::Value& object, const char* name) {
  if (!object.IsObject()) return false;
  auto it = object.FindMember(name);
  return it != object.MemberEnd() && it->value.IsBool() && it->value.GetBool();
}

}  // namespace

ApiReviewClient::ApiReviewClient(client::HttpTransport* authentication,
                                 client::HttpTransport* authorization, absl::Duration timeout)
    : authentication_(authentication), authorization_(authorization), timeout_(timeout) {}

absl::StatusOr<serving::TokenReviewResult> ApiReviewClient::ReviewToken(const std::string& token) {
  client::JsonWriter body;
  body.BeginObject()
      .Field("apiVersion", "authentication.k8s.io/v1")
      .Field("kind", "TokenReview")
      .Key("spec")
      .BeginObject()
      .Field("token", token)
      .EndObject()
      .EndObject();
  absl::StatusOr<rapidjson::Document> review =
      PostReview(*authentication_, kTokenReviews, body.str(), timeout_, "create TokenReview");
  if (!review.ok()) return review.status();
  const rapidjson::Value& status = (*review)["status"];
  serving::TokenReviewResult result;
  result.authenticated = BoolMember(status, "authenticated");
  result.error = StringMember(status, "error");
  if (auto user = status.FindMember("user"); result.authenticated && user != status.MemberEnd()) {
    result.user.name = StringMember(user->value, "username");
    result.user.uid = StringMember(user->value, "uid");
    if (auto groups = user->value.FindMember("groups");
        groups != user->value.MemberEnd() && groups->value.IsArray()) {
      for (const auto& group : groups->value.GetArray()) {
        if (group.IsString()) result.user.groups.emplace_back(group.GetString());
      }
    }
  }
  return result;
}

absl::StatusOr<serving::AccessReviewResult> ApiReviewClient::ReviewAccess(
    const serving::AccessRequest& request) {
  client::JsonWriter body;
  body.BeginObject()
      .Field("apiVersion", "authorization.k8s.io/v1")
      .Field("kind", "SubjectAccessReview")
      .Key("spec")
      .BeginObject()
      .Key("nonResourceAttributes")
      .BeginObject()
      .Field("path", request.path)
      .Field("verb", request.verb)
      .EndObject()
      .Field("user", request.user.name);
  if (!request.user.uid.empty()) body.Field("uid", request.user.uid);
  body.Key("groups").BeginArray();
  for (const std::string& group : request.user.groups) body.String(group);
  body.EndArray().EndObject().EndObject();
  absl::StatusOr<rapidjson::Document> review = PostReview(
      *authorization_, kSubjectAccessReviews, body.str(), timeout_, "create SubjectAccessReview");
  if (!review.ok()) return review.status();
  const rapidjson::Value& status = (*review)["status"];
  serving::AccessReviewResult result;
  // A review may answer with an evaluationError and no decision: that is a "no".
  result.allowed = BoolMember(status, "allowed") && !BoolMember(status, "denied");
  result.reason = StringMember(status, "reason");
  return result;
}

}  // namespace kubesched::scheduler
