// What every route uses: Status bodies (as the real API writes them), JSON responses and the
// parsing of request bodies.

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "scheduler/api/yaml_to_json_internal.h"
#include "scheduler/util/strings.h"
#include "tests/testapi/protobuf.h"
#include "tests/testapi/routes_internal.h"
#include "tests/testapi/tables.h"

namespace kubesched::testapi::routes_internal {

using util::Absl;

std::string JsonQuote(std::string_view text) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string_view View(const rapidjson::Value& string_value) {
  return std::string_view(string_value.GetString(), string_value.GetStringLength());
}

namespace {

std::string_view ReasonFor(int code) {
  switch (code) {
    case 400:
      return "BadRequest";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "NotFound";
    case 405:
      return "MethodNotAllowed";
    case 406:
      return "NotAcceptable";
    case 409:
      return "Conflict";
    case 410:
      return "Expired";
    case 415:
      return "UnsupportedMediaType";
    case 422:
      return "Invalid";
    case 429:
      return "TooManyRequests";
    case 503:
      return "ServiceUnavailable";
    default:
      return "InternalError";
  }
}

}  // namespace

std::string StatusJson(int code, std::string_view reason, std::string_view message,
                       const StatusDetails& details) {
  std::string json = absl::StrCat(
      "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
      "\"message\":",
      JsonQuote(message), ",\"reason\":", JsonQuote(reason));
  if (!details.name.empty() || !details.kind.empty() || !details.causes.empty() ||
      details.retry_after_seconds > 0) {
    json += ",\"details\":{";
    std::vector<std::string> fields;
    if (!details.name.empty()) fields.push_back("\"name\":" + JsonQuote(details.name));
    if (!details.group.empty()) fields.push_back("\"group\":" + JsonQuote(details.group));
    if (!details.kind.empty()) fields.push_back("\"kind\":" + JsonQuote(details.kind));
    if (!details.causes.empty()) {
      std::vector<std::string> causes;
      for (const auto& [cause_reason, cause_message] : details.causes) {
        causes.push_back(absl::StrCat("{\"reason\":", JsonQuote(cause_reason),
                                      ",\"message\":", JsonQuote(cause_message), "}"));
      }
      fields.push_back("\"causes\":[" + absl::StrJoin(causes, ",") + "]");
    }
    if (details.retry_after_seconds > 0) {
      fields.push_back(absl::StrCat("\"retryAfterSeconds\":", details.retry_after_seconds));
    }
    json += absl::StrJoin(fields, ",") + "}";
  }
  absl::StrAppend(&json, ",\"code\":", code, "}");
  return json;
}

HttpResponse StatusResponse(int code, std::string_view reason, std::string_view message,
                            const StatusDetails& details) {
  HttpResponse response;
  response.status = code;
  response.body = StatusJson(code, reason, message, details);
  if (details.retry_after_seconds > 0) {
    response.headers.emplace_back("Retry-After", absl::StrCat(details.retry_after_seconds));
  }
  return response;
}

HttpResponse ErrorResponse(const absl::Status& status, const StatusDetails& details) {
  int code = 500;
  switch (status.code()) {
    case absl::StatusCode::kNotFound:
      code = 404;
      break;
    case absl::StatusCode::kAlreadyExists:
      return StatusResponse(409, "AlreadyExists", util::Std(status.message()), details);
    case absl::StatusCode::kAborted:
      code = 409;
      break;
    case absl::StatusCode::kOutOfRange:
      code = 410;
      break;
    case absl::StatusCode::kInvalidArgument:
      code = IsMarkedInvalid(status) ? 422 : 400;
      break;
    case absl::StatusCode::kPermissionDenied:
      code = 403;
      break;
    case absl::StatusCode::kUnimplemented:
      code = 415;
      break;
    default:
      break;
  }
  return StatusResponse(code, ReasonFor(code), util::Std(status.message()), details);
}

HttpResponse JsonResponse(int code, std::string body) {
  HttpResponse response;
  response.status = code;
  response.body = std::move(body);
  return response;
}

absl::StatusOr<rapidjson::Document> ParseBody(const HttpRequest& request) {
  rapidjson::Document doc;
  const std::string media_type = MediaType(request.content_type);
  if (media_type == kProtobufMediaType) return DecodeProtobufObject(request.body);
  if (!media_type.empty() && media_type != "application/json" && media_type != "application/yaml") {
    return absl::UnimplementedError(
        absl::StrCat("the body of the request was in an unknown format - accepted media types "
                     "include: application/json, application/yaml, ",
                     Absl(kProtobufMediaType), " (namespaces and config maps)"));
  }
  if (absl::StrContains(request.content_type, "yaml")) {
    rapidjson::Document documents;
    absl::Status status = api::internal::YamlToJson(request.body, "request body", &documents);
    if (!status.ok()) return absl::InvalidArgumentError(status.message());
    if (!documents.IsArray() || documents.Empty()) {
      return absl::InvalidArgumentError("the request body is empty");
    }
    doc.CopyFrom(documents[0], doc.GetAllocator());
    return doc;
  }
  if (doc.Parse(request.body.data(), request.body.size()).HasParseError()) {
    return absl::InvalidArgumentError(
        absl::StrCat("couldn't get version/kind; json parse error: invalid JSON at offset ",
                     doc.GetErrorOffset()));
  }
  return doc;
}

}  // namespace kubesched::testapi::routes_internal
