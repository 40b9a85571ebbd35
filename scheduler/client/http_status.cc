// StatusFromResponse, declared in http_transport.h.

#include <rapidjson/document.h>

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "scheduler/client/http_transport.h"
#include "scheduler/util/strings.h"

namespace kubesched::client {
namespace {

constexpr size_t kMaxBodyExcerpt = 200;

std::string_view ReasonPhrase(int status) {
  switch (status) {
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 406:
      return "Not Acceptable";
    case 409:
      return "Conflict";
    case 410:
      return "Gone";
    case 413:
      return "Payload Too Large";
    case 415:
      return "Unsupported Media Type";
    case 422:
      return "Unprocessable Entity";
    case 429:
      return "Too Many Requests";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    default:
      return "unexpected HTTP status";
  }
}

// The `message` and `reason` of a v1 Status body, when the body is one.
struct StatusBody {
  std::string message;
  std::string reason;
};

StatusBody ParseStatusBody(const std::string& body) {
  StatusBody out;
  rapidjson::Document document;
  document.Parse(body.data(), body.size());
  if (document.HasParseError() || !document.IsObject()) return out;
  auto string_member = [&](const char* name) -> std::string {
    auto it = document.FindMember(name);
    if (it == document.MemberEnd() || !it->value.IsString()) return "";
    return std::string(it->value.GetString(), it->value.GetStringLength());
  };
  out.message = string_member("message");
  out.reason = string_member("reason");
  return out;
}

// The human-readable cause: the Status message, else the start of the body, else the phrase.
std::string Reason(const HttpResponse& response, const StatusBody& parsed) {
  if (!parsed.message.empty()) return parsed.message;
  std::string_view body = util::Std(absl::StripAsciiWhitespace(util::Absl(response.body)));
  if (!body.empty()) {
    std::string excerpt(body.substr(0, kMaxBodyExcerpt));
    if (body.size() > kMaxBodyExcerpt) excerpt += "...";
    return excerpt;
  }
  return std::string(ReasonPhrase(response.status));
}

absl::StatusCode CodeFor(int http_status, const StatusBody& parsed) {
  if (http_status >= 500 && http_status <= 599) return absl::StatusCode::kUnavailable;
  switch (http_status) {
    case 401:
      return absl::StatusCode::kUnauthenticated;
    case 403:
      return absl::StatusCode::kPermissionDenied;
    case 404:
      return absl::StatusCode::kNotFound;
    // A create of an existing object vs. an update that lost a resourceVersion race.
    case 409:
      return parsed.reason == "AlreadyExists" ? absl::StatusCode::kAlreadyExists
                                              : absl::StatusCode::kAborted;
    case 410:
      return absl::StatusCode::kFailedPrecondition;
    case 429:
      return absl::StatusCode::kResourceExhausted;
    default:
      break;
  }
  if (http_status >= 400 && http_status <= 499) return absl::StatusCode::kInvalidArgument;
  return absl::StatusCode::kUnknown;
}

}  // namespace

absl::Status StatusFromResponse(const HttpResponse& response, std::string_view what) {
  if (response.status >= 200 && response.status <= 299) return absl::OkStatus();
  const StatusBody parsed = ParseStatusBody(response.body);
  return absl::Status(CodeFor(response.status, parsed),
                      absl::StrCat(util::Absl(what), ": ", Reason(response, parsed), " (HTTP ",
                                   response.status, ")"));
}

}  // namespace kubesched::client
