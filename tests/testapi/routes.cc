#include "tests/testapi/routes.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"
#include "scheduler/api/yaml_to_json_internal.h"
#include "scheduler/util/strings.h"
#include "tests/testapi/admission.h"
#include "tests/testapi/custom_resources.h"
#include "tests/testapi/dra_validation.h"
#include "tests/testapi/event_views.h"
#include "tests/testapi/field_validation.h"
#include "tests/testapi/patch.h"
#include "tests/testapi/protobuf.h"
#include "tests/testapi/tables.h"

namespace kubesched::testapi {
namespace {

using util::Absl;
using Allocator = rapidjson::Document::AllocatorType;

constexpr int64_t kSystemClusterCritical = 2000000000;
constexpr int64_t kSystemNodeCritical = 2000001000;

std::string JsonQuote(std::string_view text) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
  writer.String(text.data(), static_cast<rapidjson::SizeType>(text.size()));
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string_view View(const rapidjson::Value& string_value) {
  return std::string_view(string_value.GetString(), string_value.GetStringLength());
}

// ---- Status bodies ----

struct StatusDetails {
  std::string name{};
  std::string group{};
  std::string kind{};
  // details.causes as {reason, message} pairs (StatusCause's `type` is serialized as "reason").
  std::vector<std::pair<std::string, std::string>> causes{};
  int retry_after_seconds = 0;
};

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
                            const StatusDetails& details = {}) {
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

// What fieldValidation=Warn found, as the real API reports it: one "Warning: 299 - ..." each.
HttpResponse WithWarnings(HttpResponse response, const std::vector<std::string>& warnings) {
  for (const std::string& warning : warnings) {
    response.headers.emplace_back("Warning", absl::StrCat("299 - ", JsonQuote(warning)));
  }
  return response;
}

std::string SuccessStatusJson(int code) {
  return absl::StrCat(
      "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Success\","
      "\"code\":",
      code, "}");
}

// ---- query strings ----

std::string PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '+') {
      out.push_back(' ');
    } else if (text[i] == '%' && i + 2 < text.size()) {
      int value = 0;
      if (absl::SimpleHexAtoi(Absl(text.substr(i + 1, 2)), &value)) {
        out.push_back(static_cast<char>(value));
        i += 2;
      } else {
        out.push_back(text[i]);
      }
    } else {
      out.push_back(text[i]);
    }
  }
  return out;
}

std::map<std::string, std::string, std::less<>> ParseQuery(std::string_view query) {
  std::map<std::string, std::string, std::less<>> params;
  for (absl::string_view pair : absl::StrSplit(Absl(query), '&', absl::SkipEmpty())) {
    size_t eq = pair.find('=');
    std::string key = PercentDecode(util::Std(pair.substr(0, eq)));
    std::string value =
        eq == absl::string_view::npos ? "" : PercentDecode(util::Std(pair.substr(eq + 1)));
    params[key] = value;
  }
  return params;
}

// strconv.ParseBool, as the real API reads boolean parameters.
bool ParseBool(std::string_view value) {
  return value == "1" || value == "t" || value == "T" || value == "true" || value == "TRUE" ||
         value == "True";
}

// ---- discovery ----

bool IsDisabled(const std::vector<std::string>& disabled, const ResourceType& type) {
  return std::find(disabled.begin(), disabled.end(), type.api_version()) != disabled.end();
}

std::string ResourceListJson(std::string_view group, std::string_view version) {
  std::vector<std::string> entries;
  for (const ResourceType& type : AllResourceTypes()) {
    if (type.group != group || type.version != version) continue;
    std::vector<std::string> verbs;
    for (const std::string& verb : type.verbs) verbs.push_back(JsonQuote(verb));
    std::vector<std::string> short_names;
    for (const std::string& name : type.short_names) short_names.push_back(JsonQuote(name));
    std::string entry = absl::StrCat(
        "{\"name\":", JsonQuote(type.plural), ",\"singularName\":", JsonQuote(type.singular),
        ",\"namespaced\":", type.namespaced ? "true" : "false", ",\"kind\":", JsonQuote(type.kind),
        ",\"verbs\":[", absl::StrJoin(verbs, ","), "]");
    if (!short_names.empty())
      absl::StrAppend(&entry, ",\"shortNames\":[", absl::StrJoin(short_names, ","), "]");
    entry += "}";
    entries.push_back(entry);
    for (const auto& [subresource, sub_verbs] : type.subresources) {
      std::vector<std::string> quoted;
      for (const std::string& verb : sub_verbs) quoted.push_back(JsonQuote(verb));
      entries.push_back(
          absl::StrCat("{\"name\":", JsonQuote(type.plural + "/" + subresource),
                       ",\"singularName\":\"\",\"namespaced\":", type.namespaced ? "true" : "false",
                       ",\"kind\":", JsonQuote(subresource == "binding" ? "Binding" : type.kind),
                       ",\"verbs\":[", absl::StrJoin(quoted, ","), "]}"));
    }
  }
  std::string group_version =
      group.empty() ? std::string(version) : absl::StrCat(Absl(group), "/", Absl(version));
  return absl::StrCat("{\"kind\":\"APIResourceList\",\"apiVersion\":\"v1\",\"groupVersion\":",
                      JsonQuote(group_version), ",\"resources\":[", absl::StrJoin(entries, ","),
                      "]}");
}

// The group versions served: every one of a type, less those turned off (--runtime-config).
std::vector<std::pair<std::string, std::string>> GroupVersions(
    const std::vector<std::string>& disabled) {
  std::vector<std::pair<std::string, std::string>> groups;
  for (const ResourceType& type : AllResourceTypes()) {
    if (type.group.empty() || IsDisabled(disabled, type)) continue;
    std::pair<std::string, std::string> entry{type.group, type.version};
    if (std::find(groups.begin(), groups.end(), entry) == groups.end()) groups.push_back(entry);
  }
  return groups;
}

std::string GroupJson(const std::string& group, const std::string& version) {
  std::string group_version = JsonQuote(group + "/" + version);
  std::string version_json =
      absl::StrCat("{\"groupVersion\":", group_version, ",\"version\":", JsonQuote(version), "}");
  return absl::StrCat("{\"name\":", JsonQuote(group), ",\"versions\":[", version_json,
                      "],\"preferredVersion\":", version_json, "}");
}

std::string GroupListJson(const std::vector<std::string>& disabled) {
  std::vector<std::string> groups;
  for (const auto& [group, version] : GroupVersions(disabled)) {
    groups.push_back(GroupJson(group, version));
  }
  return absl::StrCat("{\"kind\":\"APIGroupList\",\"apiVersion\":\"v1\",\"groups\":[",
                      absl::StrJoin(groups, ","), "]}");
}

constexpr std::string_view kVersionJson =
    R"({"major":"1","minor":"32","gitVersion":"v1.32.0-kubesched-testapi","gitCommit":"0000000000000000000000000000000000000000","gitTreeState":"clean","buildDate":"2025-01-01T00:00:00Z","goVersion":"go1.23.0","compiler":"gc","platform":"linux/amd64"})";

// GET /openapi/v2 and /openapi/v3[/<group-version>] (field_validation.h); nullopt for other paths.
std::optional<HttpResponse> OpenApiResponse(std::string_view path) {
  constexpr std::string_view kV3Prefix = "/openapi/v3/";
  if (path == "/openapi/v3") return JsonResponse(200, OpenApiV3Root());
  if (path == "/openapi/v2") {
    HttpResponse document = JsonResponse(200, OpenApiV2Protobuf());
    document.content_type = std::string(kOpenApiV2MediaType);
    return document;
  }
  if (!path.starts_with(kV3Prefix)) return std::nullopt;
  std::optional<std::string> document = OpenApiV3GroupVersion(path.substr(kV3Prefix.size()));
  if (!document.has_value()) return std::nullopt;
  return JsonResponse(200, *std::move(document));
}

// ---- objects ----

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

// For a type with a status subresource: a write to the main resource keeps the old status, a
// write to /status keeps the old spec (and, for pods, metadata other than labels/annotations
// stays as the main resource left it).
void KeepOtherHalf(const ResourceType& type, std::string_view subresource,
                   const rapidjson::Value& original, rapidjson::Document& updated) {
  if (!type.HasSubresource("status")) return;
  const char* kept = subresource == "status" ? "spec" : "status";
  auto& allocator = updated.GetAllocator();
  if (HasMember(original, kept)) {
    SetMember(updated, kept, rapidjson::Value(original[kept], allocator), allocator);
  } else if (auto it = updated.FindMember(kept); it != updated.MemberEnd()) {
    updated.EraseMember(it);
  }
}

std::string ListJson(const ResourceType& type, const ListResult& result) {
  std::string body =
      absl::StrCat("{\"kind\":\"", type.list_kind(), "\",\"apiVersion\":\"", type.api_version(),
                   "\",\"metadata\":{\"resourceVersion\":\"", result.resource_version, "\"");
  if (!result.continue_token.empty()) {
    absl::StrAppend(&body, ",\"continue\":\"", result.continue_token, "\"");
  }
  if (result.remaining_item_count >= 0) {
    absl::StrAppend(&body, ",\"remainingItemCount\":", result.remaining_item_count);
  }
  body += "},\"items\":[";
  for (size_t i = 0; i < result.items.size(); ++i) {
    if (i > 0) body.push_back(',');
    body += Render(type, *result.items[i], TypeMeta::kOmit);
  }
  body += "]}";
  return body;
}

std::string WatchEventJson(std::string_view type, std::string_view object_json) {
  return absl::StrCat("{\"type\":\"", Absl(type), "\",\"object\":", Absl(object_json), "}\n");
}

std::string ExpiredEventJson(std::string_view message) {
  return WatchEventJson("ERROR", StatusJson(410, "Expired", message, {}));
}

enum class PatchKind { kMerge, kStrategic, kJson };

std::optional<PatchKind> PatchKindFor(std::string_view content_type) {
  content_type = content_type.substr(0, content_type.find(';'));
  if (content_type == "application/merge-patch+json") return PatchKind::kMerge;
  if (content_type == "application/strategic-merge-patch+json") return PatchKind::kStrategic;
  if (content_type == "application/json-patch+json") return PatchKind::kJson;
  return std::nullopt;
}

absl::Status ApplyPatch(PatchKind kind, const rapidjson::Document& patch,
                        rapidjson::Document& object) {
  switch (kind) {
    case PatchKind::kMerge:
      ApplyMergePatch(patch, &object);
      return absl::OkStatus();
    case PatchKind::kStrategic:
      return ApplyStrategicMergePatch(patch, &object);
    case PatchKind::kJson:
      return ApplyJsonPatch(patch, &object);
  }
  return absl::OkStatus();
}

// The checks every update and patch of an object or its status passes (create admits first).
absl::Status CheckWrite(const ResourceType& type, const rapidjson::Value& object) {
  if (absl::Status status = CheckCustomResourceSchema(type, object); !status.ok()) return status;
  return CheckDraObject(type, object);
}

}  // namespace

// ---- routing ----

struct ApiServer::Route {
  const ResourceType* type = nullptr;
  std::string namespace_name;  // from the URL; "" when absent
  std::string name;
  std::string subresource;
  std::string method;
  std::map<std::string, std::string, std::less<>> query;
  RequestKind kind;
  std::string accept;  // the request's Accept header

  std::string Param(std::string_view key) const {
    auto it = query.find(key);
    return it == query.end() ? "" : it->second;
  }
  StatusDetails Details() const {
    return {.name = name,
            .group = type != nullptr ? type->group : "",
            .kind = type != nullptr ? type->plural : ""};
  }
};

namespace {

// Splits /api/v1/... and /apis/<group>/<version>/... into a resource route. Returns false for
// paths that are not resource paths (discovery, unknown).
bool ParseResourcePath(const std::vector<std::string>& segments, std::string* group,
                       std::string* version, std::vector<std::string>* rest) {
  if (segments.size() >= 3 && segments[0] == "api") {
    *group = "";
    *version = segments[1];
    rest->assign(segments.begin() + 2, segments.end());
    return true;
  }
  if (segments.size() >= 4 && segments[0] == "apis") {
    *group = segments[1];
    *version = segments[2];
    rest->assign(segments.begin() + 3, segments.end());
    return true;
  }
  return false;
}

std::string VerbFor(const std::string& method, bool has_name, bool watch) {
  if (method == "GET") return watch ? "watch" : (has_name ? "get" : "list");
  if (method == "POST") return "create";
  if (method == "PUT") return "update";
  if (method == "PATCH") return "patch";
  if (method == "DELETE") return has_name ? "delete" : "deletecollection";
  return absl::AsciiStrToLower(method);
}

}  // namespace

ApiServer::ApiServer(Store* store, Faults* faults, ApiServerOptions options)
    : store_(store), faults_(faults), options_(std::move(options)) {}

void ApiServer::Count(const std::string& key) {
  absl::MutexLock lock(&stats_mu_);
  ++stat_counters_[key];
}

bool ApiServer::Authenticated(const HttpRequest& request) const {
  if (options_.tokens.empty() && !options_.client_certificates_authenticate) return true;
  if (options_.client_certificates_authenticate && request.client_certificate_verified) return true;
  constexpr std::string_view kBearer = "Bearer ";
  if (!request.authorization.starts_with(kBearer)) return false;
  std::string_view token = std::string_view(request.authorization).substr(kBearer.size());
  return std::find(options_.tokens.begin(), options_.tokens.end(), token) != options_.tokens.end();
}

HttpResponse ApiServer::Handle(const HttpRequest& request) {
  std::string_view target = request.target;
  size_t question = target.find('?');
  std::string_view path = target.substr(0, question);
  std::string_view query = question == std::string_view::npos ? "" : target.substr(question + 1);
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  request_log_.Record(request.authorization, request.method, path, query);

  bool public_path =
      path == "/healthz" || path == "/livez" || path == "/readyz" || path == "/version";
  if (!public_path && !Authenticated(request)) {
    Count("unauthorized");
    return StatusResponse(401, "Unauthorized", "Unauthorized");
  }
  if (public_path) {
    if (path == "/version") return JsonResponse(200, std::string(kVersionJson));
    HttpResponse response;
    response.content_type = "text/plain; charset=utf-8";
    response.body = "ok";
    return response;
  }
  if (path.starts_with("/testapi/")) return HandleControl(request, path);
  if (IsReviewPath(path)) {
    Count(ReviewCounter(path));
    return HandleReview(request, path, options_.reviews, options_.tokens);
  }

  std::vector<std::string> segments;
  for (absl::string_view segment : absl::StrSplit(Absl(path), '/', absl::SkipEmpty())) {
    segments.push_back(PercentDecode(util::Std(segment)));
  }
  if (request.method == "GET") {
    if (path == "/api") {
      return JsonResponse(200,
                          "{\"kind\":\"APIVersions\",\"versions\":[\"v1\"],"
                          "\"serverAddressByClientCIDRs\":[{\"clientCIDR\":\"0.0.0.0/0\","
                          "\"serverAddress\":\"127.0.0.1\"}]}");
    }
    // Aggregated discovery (Accept: ...as=APIGroupDiscoveryList) is not served: the plain
    // APIGroupList makes kubectl and client-go fall back to per-group discovery.
    if (path == "/apis") return JsonResponse(200, GroupListJson(options_.disabled_api_versions));
    if (std::optional<HttpResponse> document = OpenApiResponse(path)) return *document;
    if (path == "/api/v1") return JsonResponse(200, ResourceListJson("", "v1"));
    if (segments.size() == 2 && segments[0] == "apis") {
      for (const auto& [group, version] : GroupVersions(options_.disabled_api_versions)) {
        if (group == segments[1]) {
          return JsonResponse(200, absl::StrCat("{\"kind\":\"APIGroup\",\"apiVersion\":\"v1\",",
                                                GroupJson(group, version).substr(1)));
        }
      }
    }
    if (segments.size() == 3 && segments[0] == "apis") {
      for (const auto& [group, version] : GroupVersions(options_.disabled_api_versions)) {
        if (group == segments[1] && version == segments[2]) {
          return JsonResponse(200, ResourceListJson(group, version));
        }
      }
    }
  }

  Route route;
  route.method = request.method;
  route.query = ParseQuery(query);
  route.accept = request.accept;
  std::string group;
  std::string version;
  std::vector<std::string> rest;
  if (!ParseResourcePath(segments, &group, &version, &rest)) {
    HttpResponse response =
        StatusResponse(404, "NotFound", "the server could not find the requested resource");
    return response;
  }
  // /namespaces/<ns>/<plural>[/<name>[/<sub>]] unless <plural> is not a type of this group
  // version (then it is /namespaces/<name>/<subresource> of the namespace itself).
  if (rest.size() >= 3 && rest[0] == "namespaces" &&
      FindResourceType(group, version, rest[2]) != nullptr) {
    route.namespace_name = rest[1];
    rest.erase(rest.begin(), rest.begin() + 2);
  }
  route.type = FindResourceType(group, version, rest[0]);
  if (route.type != nullptr && IsDisabled(options_.disabled_api_versions, *route.type)) {
    route.type = nullptr;
  }
  if (route.type == nullptr || rest.size() > 3 ||
      (!route.namespace_name.empty() && !route.type->namespaced)) {
    return StatusResponse(404, "NotFound", "the server could not find the requested resource");
  }
  if (rest.size() >= 2) route.name = rest[1];
  if (rest.size() == 3) {
    route.subresource = rest[2];
    if (!route.type->HasSubresource(route.subresource)) {
      return StatusResponse(404, "NotFound", "the server could not find the requested resource");
    }
  }
  bool watch = ParseBool(route.Param("watch"));
  route.kind.verb = VerbFor(request.method, !route.name.empty(), watch);
  std::string suffix = route.subresource.empty() ? "" : "/" + route.subresource;
  route.kind.resource = route.type->plural + suffix;
  route.kind.qualified_resource = route.type->id() + suffix;
  {
    absl::MutexLock lock(&stats_mu_);
    ++request_counts_[absl::StrCat(route.kind.verb, " ", route.kind.qualified_resource)];
  }

  absl::Duration latency = faults_->Latency(route.kind);
  if (latency > absl::ZeroDuration()) {
    Count("faults.latency");
    HttpResponse delayed;
    delayed.delay = latency;
    delayed.deferred = [this, request, route] { return Dispatch(request, route); };
    return delayed;
  }
  return Dispatch(request, route);
}

HttpResponse ApiServer::Dispatch(const HttpRequest& request, const Route& route) {
  if (std::optional<int> code = faults_->TakeError(route.kind)) {
    Count(absl::StrCat("faults.error.", *code));
    StatusDetails details = route.Details();
    switch (*code) {
      case 409:
        return StatusResponse(
            409, "Conflict",
            absl::StrCat("Operation cannot be fulfilled on ", route.kind.resource, " \"",
                         route.name, "\": injected conflict (kubesched-testapi fault)"),
            details);
      case 429:
        details.retry_after_seconds = 1;
        return StatusResponse(429, "TooManyRequests", "Too many requests, please try again later.",
                              details);
      case 503:
        details.retry_after_seconds = 1;
        return StatusResponse(503, "ServiceUnavailable", "injected unavailability", details);
      default:
        details.retry_after_seconds = 1;
        return StatusResponse(500, "InternalError",
                              "Internal error occurred: injected failure (kubesched-testapi fault)",
                              details);
    }
  }
  HttpResponse response = HandleResource(request, route);
  if (!response.stream && faults_->TakeDrop(route.kind)) {
    Count("faults.drop");
    response.drop_connection_midway = true;
  }
  {
    absl::MutexLock lock(&stats_mu_);
    ++request_counts_[absl::StrCat("code ", response.status)];
  }
  return response;
}

HttpResponse ApiServer::HandleResource(const HttpRequest& request, const Route& route) {
  if (!AcceptsJson(request.accept)) {
    return StatusResponse(406, "NotAcceptable",
                          absl::StrCat("only the following media types are accepted: "
                                       "application/json, application/yaml, ",
                                       Absl(kTableContentType)));
  }
  const std::string& verb = route.kind.verb;
  if (verb == "get") return Get(route);
  if (verb == "list") return List(route);
  if (verb == "watch") return Watch(route);
  if (verb == "create" && route.subresource == "binding") return Bind(request, route);
  if (route.type->kind == "Binding") {
    if (verb != "create" || !route.name.empty()) {
      return StatusResponse(405, "MethodNotAllowed",
                            "the server does not allow this method on the requested resource");
    }
    auto body = ParseBody(request);
    if (!body.ok()) return ErrorResponse(body.status(), {});
    Route pod_route = route;
    pod_route.type = FindResourceType("", "v1", "pods");
    pod_route.name = StringAt(*body, "metadata.name");
    pod_route.subresource = "binding";
    return Bind(request, pod_route);
  }
  if (verb == "create" && route.name.empty()) return Create(request, route);
  if (verb == "update") return Update(request, route);
  if (verb == "patch") return Patch(request, route);
  if (verb == "delete" && route.subresource.empty()) return Delete(request, route);
  if (verb == "deletecollection") return DeleteCollection(route);
  return StatusResponse(405, "MethodNotAllowed",
                        absl::StrCat("the server does not allow this method on the requested "
                                     "resource"),
                        route.Details());
}

HttpResponse ApiServer::Get(const Route& route) {
  auto object = store_->Get(StoredType(*route.type), route.namespace_name, route.name);
  if (!object.ok()) return ErrorResponse(object.status(), route.Details());
  if (WantsTable(route.accept)) {
    HttpResponse table = JsonResponse(200, TableJson(*route.type, {*object}, nullptr, absl::Now()));
    table.content_type = kTableContentType;
    return table;
  }
  return JsonResponse(200, Render(*route.type, **object, TypeMeta::kInclude));
}

namespace {

// Parses labelSelector and fieldSelector, checking the field names the type supports. The field
// selector is returned in terms of the stored type's fields.
absl::Status ParseSelectors(const ResourceType& type, const std::string& label_text,
                            const std::string& field_text, LabelSelector* labels,
                            FieldSelector* fields) {
  auto parsed_labels = LabelSelector::Parse(label_text);
  if (!parsed_labels.ok()) return parsed_labels.status();
  auto parsed_fields = FieldSelector::Parse(field_text);
  if (!parsed_fields.ok()) return parsed_fields.status();
  for (const auto& requirement : parsed_fields->requirements()) {
    if (!type.IsSelectableField(requirement.field)) {
      return absl::InvalidArgumentError(
          absl::StrCat("field label not supported: ", requirement.field));
    }
  }
  *labels = *std::move(parsed_labels);
  *fields = ToStoredSelector(type, *parsed_fields);
  return absl::OkStatus();
}

}  // namespace

HttpResponse ApiServer::List(const Route& route) {
  LabelSelector labels;
  FieldSelector fields;
  absl::Status status = ParseSelectors(*route.type, route.Param("labelSelector"),
                                       route.Param("fieldSelector"), &labels, &fields);
  if (!status.ok()) return ErrorResponse(status, {});
  ListOptions options{.namespace_name = route.namespace_name,
                      .labels = &labels,
                      .fields = &fields,
                      .continue_token = route.Param("continue")};
  if (std::string limit = route.Param("limit"); !limit.empty()) {
    if (!absl::SimpleAtoi(limit, &options.limit) || options.limit < 0) {
      return StatusResponse(400, "BadRequest", absl::StrCat("invalid limit: ", limit));
    }
  }
  auto result = store_->List(StoredType(*route.type), options);
  if (!result.ok()) return ErrorResponse(result.status(), {});
  if (WantsTable(route.accept)) {
    HttpResponse table =
        JsonResponse(200, TableJson(*route.type, result->items, &*result, absl::Now()));
    table.content_type = kTableContentType;
    return table;
  }
  return JsonResponse(200, ListJson(*route.type, *result));
}

// ---- watch ----

// One watch response: takes the store's events for it, applies the selectors (an object that
// stops matching is sent as DELETED, one that starts matching as ADDED, as the real API does),
// adds bookmarks and ends at its timeout.
class ApiServer::WatchStream : public ResponseStream {
 public:
  struct Settings {
    const ResourceType* type = nullptr;  // as served: events.k8s.io/v1 Events watch core ones
    LabelSelector labels;
    FieldSelector fields;
    absl::Time deadline;
    bool bookmarks = false;
    absl::Duration bookmark_interval;
    bool table = false;  // objects as one-row meta.k8s.io/v1 Tables (kubectl get -w)
    int64_t close_after_events = 0;
  };

  WatchStream(Store* store, ApiServer* server, Settings settings)
      : store_(store),
        server_(server),
        settings_(std::move(settings)),
        relay_(std::make_shared<WakeRelay>()) {
    next_bookmark_ = absl::Now() + settings_.bookmark_interval;
  }
  ~WatchStream() override {
    if (watcher_ != nullptr) store_->StopWatch(watcher_);
  }

  // The function the store calls; it forwards to the server's wake once Start has run.
  std::function<void()> StoreWake() {
    return [relay = relay_] { relay->Fire(); };
  }
  void Attach(std::shared_ptr<Watcher> watcher) { watcher_ = std::move(watcher); }

  void Start(std::function<void()> wake) override { relay_->Set(std::move(wake)); }

  Output Poll(absl::Time now) override {
    Output output;
    if (server_->faults_->WatchStalled(settings_.type->plural)) {
      // Held back, not lost: delivered once the stall is cleared (polled again meanwhile).
      output.next_deadline = std::min(settings_.deadline, now + absl::Milliseconds(100));
      return output;
    }
    for (const WatchEvent& event : watcher_->Take()) {
      std::optional<std::string> line = Translate(event);
      if (!line.has_value()) continue;
      output.chunks.push_back(*std::move(line));
      ++sent_events_;
      if (settings_.close_after_events > 0 && sent_events_ >= settings_.close_after_events) {
        server_->Count("faults.watchClosed");
        output.finished = true;
        return output;
      }
    }
    if (watcher_->overflowed() || now >= settings_.deadline) {
      output.finished = true;
      return output;
    }
    if (settings_.bookmarks && now >= next_bookmark_) {
      if (std::optional<uint64_t> rv = store_->BookmarkResourceVersion(*watcher_)) {
        output.chunks.push_back(WatchEventJson(
            "BOOKMARK",
            absl::StrCat("{\"kind\":\"", settings_.type->kind, "\",\"apiVersion\":\"",
                         settings_.type->api_version(), "\",\"metadata\":{\"resourceVersion\":\"",
                         *rv, "\",\"creationTimestamp\":null}}")));
        next_bookmark_ = now + settings_.bookmark_interval;
      }
    }
    output.next_deadline = settings_.deadline;
    if (settings_.bookmarks) output.next_deadline = std::min(output.next_deadline, next_bookmark_);
    return output;
  }

 private:
  class WakeRelay {
   public:
    void Fire() {
      std::function<void()> wake;
      {
        absl::MutexLock lock(&mu_);
        if (!wake_) {
          fired_ = true;
          return;
        }
        wake = wake_;
      }
      wake();
    }
    void Set(std::function<void()> wake) {
      bool fired;
      {
        absl::MutexLock lock(&mu_);
        wake_ = wake;
        fired = fired_;
      }
      if (fired) wake();
    }

   private:
    absl::Mutex mu_;
    std::function<void()> wake_ ABSL_GUARDED_BY(mu_);
    bool fired_ ABSL_GUARDED_BY(mu_) = false;
  };

  bool Selected(const StoredObject& object) const {
    return settings_.labels.Matches(object.labels) &&
           settings_.fields.Matches(
               [&object](std::string_view field) { return object.Field(field); });
  }

  std::optional<std::string> Translate(const WatchEvent& event) const {
    bool now_selected = Selected(*event.object);
    switch (event.type) {
      case EventType::kAdded:
        if (!now_selected) return std::nullopt;
        return WatchEventJson("ADDED", Served(*event.object));
      case EventType::kDeleted:
        if (!Selected(*event.previous)) return std::nullopt;
        return WatchEventJson("DELETED", Served(*event.object));
      case EventType::kModified:
        break;
    }
    bool was_selected = event.previous != nullptr && Selected(*event.previous);
    if (now_selected && was_selected) {
      return WatchEventJson("MODIFIED", Served(*event.object));
    }
    if (now_selected) return WatchEventJson("ADDED", Served(*event.object));
    if (!was_selected) return std::nullopt;
    // Stopped matching: the previous content with this event's resourceVersion.
    rapidjson::Document previous = event.previous->Parse();
    SetString(previous["metadata"], "resourceVersion", absl::StrCat(event.object->resource_version),
              previous.GetAllocator());
    return WatchEventJson("DELETED", Render(*settings_.type, previous, TypeMeta::kInclude));
  }

  std::string Served(const StoredObject& object) const {
    if (settings_.table) return TableJson(*settings_.type, object, absl::Now());
    return Render(*settings_.type, object, TypeMeta::kInclude);
  }

  Store* const store_;
  ApiServer* const server_;
  const Settings settings_;
  std::shared_ptr<WakeRelay> relay_;
  std::shared_ptr<Watcher> watcher_;
  absl::Time next_bookmark_;
  int64_t sent_events_ = 0;
};

namespace {

// A 200 watch response that carries one ERROR event and ends.
class SingleEventStream : public ResponseStream {
 public:
  explicit SingleEventStream(std::string line) : line_(std::move(line)) {}
  void Start(std::function<void()>) override {}
  Output Poll(absl::Time) override {
    Output output;
    output.chunks.push_back(line_);
    output.finished = true;
    return output;
  }

 private:
  const std::string line_;
};

// What the real watch cache answers for a resourceVersion it has not reached
// (storage.NewTooLargeResourceVersionError): 504 Timeout with a ResourceVersionTooLarge cause,
// which client-go's reflector takes as a reason to list again.
HttpResponse TooLargeResourceVersionResponse(std::string_view message) {
  StatusDetails details;
  details.causes.emplace_back("ResourceVersionTooLarge", "Too large resource version");
  details.retry_after_seconds = 1;
  return StatusResponse(504, "Timeout", absl::StrCat("Timeout: ", Absl(message)), details);
}

HttpResponse ExpiredWatchResponse(bool as_event, std::string_view message) {
  if (!as_event) return StatusResponse(410, "Expired", message);
  HttpResponse response;
  response.stream = std::make_shared<SingleEventStream>(ExpiredEventJson(message));
  return response;
}

}  // namespace

HttpResponse ApiServer::Watch(const Route& route) {
  WatchStream::Settings settings;
  settings.type = route.type;
  absl::Status status =
      ParseSelectors(*route.type, route.Param("labelSelector"), route.Param("fieldSelector"),
                     &settings.labels, &settings.fields);
  if (!status.ok()) return ErrorResponse(status, {});
  uint64_t from = 0;
  std::string rv_text = route.Param("resourceVersion");
  if (!rv_text.empty() && !absl::SimpleAtoi(rv_text, &from)) {
    return StatusResponse(400, "BadRequest", absl::StrCat("invalid resource version: ", rv_text));
  }
  absl::Duration timeout = options_.default_watch_timeout;
  if (std::string seconds = route.Param("timeoutSeconds"); !seconds.empty()) {
    int64_t value = 0;
    if (absl::SimpleAtoi(seconds, &value) && value > 0) timeout = absl::Seconds(value);
  }
  settings.deadline = absl::Now() + timeout;
  settings.bookmarks = ParseBool(route.Param("allowWatchBookmarks"));
  settings.table = WantsTable(route.accept);
  settings.bookmark_interval = options_.bookmark_interval;
  settings.close_after_events = faults_->watch_close_after_events();

  if (std::optional<bool> as_event = faults_->TakeWatchGone()) {
    Count("faults.watchGone");
    return ExpiredWatchResponse(*as_event,
                                absl::StrCat("too old resource version: ", from, " (",
                                             store_->current_resource_version() + 1, ")"));
  }
  auto stream = std::make_shared<WatchStream>(store_, this, std::move(settings));
  auto watcher =
      store_->Watch(StoredType(*route.type), route.namespace_name, from, stream->StoreWake());
  if (!watcher.ok()) {
    if (watcher.status().code() == absl::StatusCode::kOutOfRange) {
      Count("watch.expired");
      return ExpiredWatchResponse(options_.expired_watch_as_event,
                                  util::Std(watcher.status().message()));
    }
    if (watcher.status().code() == absl::StatusCode::kDeadlineExceeded) {
      Count("watch.tooLarge");
      return TooLargeResourceVersionResponse(util::Std(watcher.status().message()));
    }
    return ErrorResponse(watcher.status(), route.Details());
  }
  stream->Attach(*std::move(watcher));
  Count("watch.opened");
  HttpResponse response;
  response.stream = std::move(stream);
  return response;
}

// ---- writes ----

absl::StatusOr<ObjectPtr> ApiServer::CreateObject(const ResourceType& type,
                                                  rapidjson::Document object, bool keep_status) {
  if (!object.IsObject()) return absl::InvalidArgumentError("the object must be a JSON object");
  const ResourceType& stored_type = StoredType(type);
  ToStoredForm(type, object, object.GetAllocator());
  absl::Status status = Admit(*store_, stored_type, object, keep_status);
  if (!status.ok()) return status;
  status = CheckCustomResourceSchema(stored_type, object);
  if (!status.ok()) return status;
  status = CheckDraObject(stored_type, object);
  if (!status.ok()) return status;
  return store_->Create(stored_type, std::move(object));
}

HttpResponse ApiServer::Create(const HttpRequest& request, const Route& route) {
  auto body = ParseBody(request);
  if (!body.ok()) return ErrorResponse(body.status(), {});
  rapidjson::Document object = *std::move(body);
  if (!object.IsObject())
    return StatusResponse(400, "BadRequest", "the body must be a JSON object");
  if (route.type->namespaced) {
    if (route.namespace_name.empty()) {
      return StatusResponse(405, "MethodNotAllowed",
                            "the server does not allow this method on the requested resource");
    }
    rapidjson::Value& metadata = ObjectMember(object, "metadata", object.GetAllocator());
    std::string body_namespace = StringAt(metadata, "namespace");
    if (!body_namespace.empty() && body_namespace != route.namespace_name) {
      return StatusResponse(400, "BadRequest",
                            "the namespace of the provided object does not match the namespace "
                            "sent on the request");
    }
    SetString(metadata, "namespace", route.namespace_name, object.GetAllocator());
  }
  StatusDetails details = route.Details();
  details.name = StringAt(object, "metadata.name");
  auto field_validation = ParseFieldValidation(route.Param("fieldValidation"));
  if (!field_validation.ok()) return ErrorResponse(field_validation.status(), {});
  std::vector<std::string> warnings;
  if (absl::Status fields = ValidateFields(*field_validation, *route.type, object, &warnings);
      !fields.ok()) {
    return ErrorResponse(fields, {});
  }
  if (absl::Status valid = ValidateWrite(*route.type, object, nullptr); !valid.ok()) {
    return ErrorResponse(valid, details);
  }
  auto created = CreateObject(*route.type, std::move(object), /*keep_status=*/false);
  if (!created.ok()) {
    if (created.status().code() == absl::StatusCode::kNotFound) {
      // The namespace is what is missing.
      return ErrorResponse(created.status(), {.name = route.namespace_name, .kind = "namespaces"});
    }
    return ErrorResponse(created.status(), details);
  }
  return WithWarnings(JsonResponse(201, Render(*route.type, **created, TypeMeta::kInclude)),
                      warnings);
}

HttpResponse ApiServer::Bind(const HttpRequest& request, const Route& route) {
  {
    constexpr std::string_view kBearer = "Bearer ";
    std::string_view by = request.authorization;
    by = by.starts_with(kBearer) ? by.substr(kBearer.size()) : std::string_view();
    absl::MutexLock lock(&stats_mu_);
    bind_log_.push_back({std::string(by), absl::Now()});
  }
  auto body = ParseBody(request);
  if (!body.ok()) return ErrorResponse(body.status(), {});
  const rapidjson::Document& binding = *body;
  std::string node_name = StringAt(binding, "target.name");
  std::string uid_precondition = StringAt(binding, "metadata.uid");
  StatusDetails details{.name = route.name, .kind = "pods/binding"};
  if (std::string binding_name = StringAt(binding, "metadata.name");
      !binding_name.empty() && binding_name != route.name) {
    return StatusResponse(400, "BadRequest", "name in URL does not match name in Binding object");
  }
  if (node_name.empty()) {
    return StatusResponse(
        422, "Invalid",
        absl::StrCat("Binding \"", route.name, "\" is invalid: target.name: Required value"),
        details);
  }
  auto conflict = [&route](std::string_view why) {
    return absl::AbortedError(absl::StrCat("Operation cannot be fulfilled on pods/binding \"",
                                           route.name, "\": ", Absl(why)));
  };
  const rapidjson::Value* annotations =
      HasMember(binding, "metadata") && HasMember(binding["metadata"], "annotations")
          ? &binding["metadata"]["annotations"]
          : nullptr;
  auto bound =
      store_->Update(*route.type, route.namespace_name, route.name, [&](rapidjson::Document& pod) {
        auto& allocator = pod.GetAllocator();
        rapidjson::Value& metadata = pod["metadata"];
        if (!uid_precondition.empty() && StringAt(metadata, "uid") != uid_precondition) {
          return conflict(
              absl::StrCat("Precondition failed: UID in precondition: ", uid_precondition,
                           ", UID in object meta: ", StringAt(metadata, "uid")));
        }
        if (HasMember(metadata, "deletionTimestamp")) {
          return conflict(
              absl::StrCat("pod ", route.name, " is being deleted, cannot be assigned to a host"));
        }
        rapidjson::Value& spec = ObjectMember(pod, "spec", allocator);
        if (std::string current = StringAt(spec, "nodeName"); !current.empty()) {
          return conflict(
              absl::StrCat("pod ", route.name, " is already assigned to node \"", current, "\""));
        }
        // The real API refuses to bind a pod that is not ready for scheduling (storage.go).
        if (HasSchedulingGates(spec)) {
          return conflict(absl::StrCat("pod ", route.name, " has non-empty .spec.schedulingGates"));
        }
        SetString(spec, "nodeName", node_name, allocator);
        if (annotations != nullptr && annotations->IsObject()) {
          rapidjson::Value& pod_annotations = ObjectMember(metadata, "annotations", allocator);
          for (auto it = annotations->MemberBegin(); it != annotations->MemberEnd(); ++it) {
            SetMember(pod_annotations, View(it->name), rapidjson::Value(it->value, allocator),
                      allocator);
          }
        }
        rapidjson::Value& status = ObjectMember(pod, "status", allocator);
        if (!HasMember(status, "conditions") || !status["conditions"].IsArray()) {
          SetMember(status, "conditions", rapidjson::Value(rapidjson::kArrayType), allocator);
        }
        rapidjson::Value& conditions = status["conditions"];
        for (auto it = conditions.Begin(); it != conditions.End();) {
          it = StringAt(*it, "type") == "PodScheduled" ? conditions.Erase(it) : it + 1;
        }
        rapidjson::Value condition(rapidjson::kObjectType);
        condition.AddMember("type", "PodScheduled", allocator);
        condition.AddMember("status", "True", allocator);
        condition.AddMember("lastProbeTime", rapidjson::Value(), allocator);
        SetString(condition, "lastTransitionTime", NowTimestamp(), allocator);
        conditions.PushBack(condition, allocator);
        return absl::OkStatus();
      });
  if (!bound.ok()) {
    Count(bound.status().code() == absl::StatusCode::kAborted ? "binds.conflicts" : "binds.failed");
    return ErrorResponse(bound.status(), bound.status().code() == absl::StatusCode::kNotFound
                                             ? route.Details()
                                             : details);
  }
  {
    absl::MutexLock lock(&stats_mu_);
    ++stat_counters_["binds"];
    ++binds_by_pod_uid_[(*bound)->uid];
  }
  return JsonResponse(201, SuccessStatusJson(201));
}

HttpResponse ApiServer::Update(const HttpRequest& request, const Route& route) {
  auto body = ParseBody(request);
  if (!body.ok()) return ErrorResponse(body.status(), {});
  rapidjson::Document replacement = *std::move(body);
  if (!replacement.IsObject())
    return StatusResponse(400, "BadRequest", "the body must be a JSON object");
  std::string requested_rv = StringAt(replacement, "metadata.resourceVersion");
  const ResourceType& type = *route.type;
  auto field_validation = ParseFieldValidation(route.Param("fieldValidation"));
  if (!field_validation.ok()) return ErrorResponse(field_validation.status(), {});
  std::vector<std::string> warnings;
  if (absl::Status fields = ValidateFields(*field_validation, type, replacement, &warnings);
      !fields.ok()) {
    return ErrorResponse(fields, {});
  }
  if (IsView(type)) {
    // Checked as the client wrote it, against the object it replaces (none: a create).
    auto current = store_->Get(StoredType(type), route.namespace_name, route.name);
    rapidjson::Document previous;
    if (current.ok()) {
      previous = (*current)->Parse();
      ToViewForm(type, previous, previous.GetAllocator());
    }
    absl::Status valid = ValidateWrite(type, replacement, current.ok() ? &previous : nullptr);
    if (!valid.ok()) return ErrorResponse(valid, route.Details());
  }
  ToStoredForm(type, replacement, replacement.GetAllocator());
  auto updated = store_->Update(
      StoredType(type), route.namespace_name, route.name, [&](rapidjson::Document& object) {
        if (!requested_rv.empty() && requested_rv != StringAt(object, "metadata.resourceVersion")) {
          return absl::AbortedError(absl::StrCat(
              "Operation cannot be fulfilled on ", type.plural, " \"", route.name,
              "\": the object has been modified; please apply your changes to the latest "
              "version and try again"));
        }
        rapidjson::Document original;
        original.CopyFrom(object, original.GetAllocator());
        object.CopyFrom(replacement, object.GetAllocator());
        KeepOtherHalf(type, route.subresource, original, object);
        return CheckWrite(type, object);
      });
  if (!updated.ok() && updated.status().code() == absl::StatusCode::kNotFound &&
      route.subresource.empty() && (type.kind == "Lease" || type.kind == "Event")) {
    // These types allow create on update, as in the real API.
    rapidjson::Value& metadata = ObjectMember(replacement, "metadata", replacement.GetAllocator());
    if (type.namespaced)
      SetString(metadata, "namespace", route.namespace_name, replacement.GetAllocator());
    if (StringAt(metadata, "name").empty())
      SetString(metadata, "name", route.name, replacement.GetAllocator());
    // Already in the stored form.
    auto created = CreateObject(StoredType(type), std::move(replacement), false);
    if (!created.ok()) return ErrorResponse(created.status(), route.Details());
    return JsonResponse(201, Render(type, **created, TypeMeta::kInclude));
  }
  if (!updated.ok()) return ErrorResponse(updated.status(), route.Details());
  return WithWarnings(JsonResponse(200, Render(type, **updated, TypeMeta::kInclude)), warnings);
}

HttpResponse ApiServer::Patch(const HttpRequest& request, const Route& route) {
  rapidjson::Document patch;
  if (patch.Parse(request.body.data(), request.body.size()).HasParseError()) {
    return StatusResponse(400, "BadRequest", "the patch is not valid JSON");
  }
  std::optional<PatchKind> kind = PatchKindFor(request.content_type);
  // Custom resources have no patch strategy to merge by.
  if (kind == PatchKind::kStrategic && route.type->custom) kind.reset();
  if (!kind.has_value()) {
    return StatusResponse(415, "UnsupportedMediaType",
                          absl::StrCat("the body of the request was in an unknown format - "
                                       "accepted media types include: "
                                       "application/json-patch+json, "
                                       "application/merge-patch+json, "
                                       "application/strategic-merge-patch+json"));
  }
  const ResourceType& type = *route.type;
  auto field_validation = ParseFieldValidation(route.Param("fieldValidation"));
  if (!field_validation.ok()) return ErrorResponse(field_validation.status(), {});
  std::vector<std::string> warnings;
  auto patched = store_->Update(
      StoredType(type), route.namespace_name, route.name, [&](rapidjson::Document& object) {
        std::string current_rv = StringAt(object, "metadata.resourceVersion");
        rapidjson::Document original;
        original.CopyFrom(object, original.GetAllocator());
        // A patch applies to the object as the client sees it, in the group it was sent to.
        rapidjson::Document previous;
        if (IsView(type)) {
          ToViewForm(type, object, object.GetAllocator());
          previous.CopyFrom(object, previous.GetAllocator());
        }
        absl::Status status = ApplyPatch(*kind, patch, object);
        if (!status.ok()) return MarkInvalid(status);
        if (!object.IsObject())
          return absl::InvalidArgumentError("the patched object is not an object");
        warnings.clear();  // the store may run this again on a conflict
        status = ValidateFields(*field_validation, type, object, &warnings);
        if (!status.ok()) return status;
        if (IsView(type)) {
          if (absl::Status valid = ValidateWrite(type, object, &previous); !valid.ok()) {
            return valid;
          }
          ToStoredForm(type, object, object.GetAllocator());
        }
        if (StringAt(object, "metadata.resourceVersion") != current_rv) {
          return absl::AbortedError(absl::StrCat(
              "Operation cannot be fulfilled on ", type.plural, " \"", route.name,
              "\": the object has been modified; please apply your changes to the latest "
              "version and try again"));
        }
        KeepOtherHalf(type, route.subresource, original, object);
        return CheckWrite(type, object);
      });
  if (!patched.ok()) return ErrorResponse(patched.status(), route.Details());
  return WithWarnings(JsonResponse(200, Render(type, **patched, TypeMeta::kInclude)), warnings);
}

void ApiServer::DeleteNamespaceContents(const std::string& namespace_name) {
  for (const ResourceType& type : AllResourceTypes()) {
    if (!type.namespaced || IsView(type)) continue;
    auto items = store_->List(type, {.namespace_name = namespace_name});
    if (!items.ok()) continue;
    for (const ObjectPtr& item : items->items) {
      (void)store_->Delete(type, namespace_name, item->name, std::nullopt, std::nullopt);
    }
  }
}

HttpResponse ApiServer::Delete(const HttpRequest& request, const Route& route) {
  std::optional<std::string> uid;
  std::optional<std::string> resource_version;
  if (!request.body.empty()) {
    rapidjson::Document options;
    if (options.Parse(request.body.data(), request.body.size()).HasParseError()) {
      return StatusResponse(400, "BadRequest", "the DeleteOptions body is not valid JSON");
    }
    if (HasMember(options, "preconditions")) {
      if (std::string value = StringAt(options, "preconditions.uid"); !value.empty()) uid = value;
      if (std::string value = StringAt(options, "preconditions.resourceVersion"); !value.empty()) {
        resource_version = value;
      }
    }
  }
  if (route.type->kind == "Namespace") {
    if (route.name == "default" || route.name == "kube-system" || route.name == "kube-public") {
      return StatusResponse(403, "Forbidden",
                            absl::StrCat("namespaces \"", route.name,
                                         "\" is forbidden: this namespace may not be deleted"),
                            route.Details());
    }
    if (store_->Get(*route.type, "", route.name).ok()) DeleteNamespaceContents(route.name);
  }
  auto deleted = store_->Delete(StoredType(*route.type), route.namespace_name, route.name, uid,
                                resource_version);
  if (!deleted.ok()) return ErrorResponse(deleted.status(), route.Details());
  return JsonResponse(200, Render(*route.type, **deleted, TypeMeta::kInclude));
}

HttpResponse ApiServer::DeleteCollection(const Route& route) {
  LabelSelector labels;
  FieldSelector fields;
  absl::Status status = ParseSelectors(*route.type, route.Param("labelSelector"),
                                       route.Param("fieldSelector"), &labels, &fields);
  if (!status.ok()) return ErrorResponse(status, {});
  const ResourceType& stored_type = StoredType(*route.type);
  auto items = store_->List(
      stored_type, {.namespace_name = route.namespace_name, .labels = &labels, .fields = &fields});
  if (!items.ok()) return ErrorResponse(items.status(), {});
  ListResult deleted;
  for (const ObjectPtr& item : items->items) {
    auto result =
        store_->Delete(stored_type, item->namespace_name, item->name, std::nullopt, std::nullopt);
    if (result.ok()) deleted.items.push_back(*result);
  }
  deleted.resource_version = store_->current_resource_version();
  return JsonResponse(200, ListJson(*route.type, deleted));
}

// ---- control endpoints ----

namespace {

// GET, or POST/PUT {"enabled": bool}: the volume controller's state (volume_controller.h).
HttpResponse HandleVolumeController(const HttpRequest& request, VolumeController& controller) {
  if (request.method == "POST" || request.method == "PUT") {
    rapidjson::Document body;
    if (body.Parse(request.body.data(), request.body.size()).HasParseError() || !body.IsObject() ||
        !HasMember(body, "enabled") || !body["enabled"].IsBool()) {
      return StatusResponse(400, "BadRequest", "expected {\"enabled\": true|false}");
    }
    controller.SetEnabled(body["enabled"].GetBool());
  } else if (request.method != "GET") {
    return StatusResponse(405, "MethodNotAllowed", "GET or POST");
  }
  return JsonResponse(200, controller.enabled() ? "{\"enabled\":true}" : "{\"enabled\":false}");
}

}  // namespace

HttpResponse ApiServer::HandleControl(const HttpRequest& request, std::string_view path) {
  if (path == "/testapi/faults") {
    if (request.method == "GET") return JsonResponse(200, FaultConfigToJson(faults_->Get()));
    if (request.method == "DELETE") {
      faults_->Set({});
      return JsonResponse(200, FaultConfigToJson(faults_->Get()));
    }
    if (request.method == "POST" || request.method == "PUT") {
      auto config = ParseFaultConfig(request.body);
      if (!config.ok())
        return StatusResponse(400, "BadRequest", util::Std(config.status().message()));
      faults_->Set(*std::move(config));
      return JsonResponse(200, FaultConfigToJson(faults_->Get()));
    }
  }
  if (path == "/testapi/volume-controller" && volume_controller_ != nullptr) {
    return HandleVolumeController(request, *volume_controller_);
  }
  if (path == "/testapi/stats" && request.method == "GET") return JsonResponse(200, StatsJson());
  if (path == "/testapi/requests" && request.method == "GET") {
    return JsonResponse(200, request_log_.Json());
  }
  if (path == "/testapi/stats/reset" && request.method == "POST") {
    absl::MutexLock lock(&stats_mu_);
    request_counts_.clear();
    stat_counters_.clear();
    binds_by_pod_uid_.clear();
    bind_log_.clear();
    request_log_.Clear();
    return JsonResponse(200, "{}");
  }
  return StatusResponse(404, "NotFound", "the server could not find the requested resource");
}

std::string ApiServer::StatsJson() const {
  auto object_of = [](const std::map<std::string, int64_t>& counts) {
    std::vector<std::string> fields;
    for (const auto& [key, value] : counts)
      fields.push_back(absl::StrCat(JsonQuote(key), ":", value));
    return absl::StrCat("{", absl::StrJoin(fields, ","), "}");
  };
  std::map<std::string, int64_t> objects;
  for (const ResourceType& type : AllResourceTypes()) {
    objects[type.id()] = static_cast<int64_t>(store_->Count(StoredType(type)));
  }
  absl::MutexLock lock(&stats_mu_);
  int64_t pods_bound_more_than_once = 0;
  for (const auto& [uid, count] : binds_by_pod_uid_) pods_bound_more_than_once += count > 1 ? 1 : 0;
  auto counter = [this](const char* key) {
    auto it = stat_counters_.find(key);
    return it == stat_counters_.end() ? 0 : it->second;
  };
  return absl::StrCat(
      "{\"resourceVersion\":\"", store_->current_resource_version(),
      "\",\"oldestWatchableResourceVersion\":\"", store_->oldest_watchable_resource_version(),
      "\",\"requests\":", object_of(request_counts_), ",\"counters\":", object_of(stat_counters_),
      ",\"binds\":", counter("binds"), ",\"bindConflicts\":", counter("binds.conflicts"),
      ",\"podsBound\":", binds_by_pod_uid_.size(),
      ",\"podsBoundMoreThanOnce\":", pods_bound_more_than_once,
      ",\"bindsByPodUid\":", object_of(binds_by_pod_uid_), ",\"bindLog\":[",
      absl::StrJoin(bind_log_, ",",
                    [](std::string* out, const BindRecord& bind) {
                      absl::StrAppend(out, "{\"by\":", JsonQuote(bind.by),
                                      ",\"atMicros\":", absl::ToUnixMicros(bind.at), "}");
                    }),
      "]", ",\"watchesOpen\":", store_->open_watches(), ",\"objects\":", object_of(objects), "}");
}

// ---- bootstrap and fixtures ----

absl::Status ApiServer::Bootstrap() {
  const ResourceType& namespaces = *FindResourceType("", "v1", "namespaces");
  for (const char* name : {"default", "kube-system", "kube-public", "kube-node-lease"}) {
    if (store_->Get(namespaces, "", name).ok()) continue;
    rapidjson::Document ns;
    std::string json = absl::StrCat("{\"metadata\":{\"name\":\"", name, "\"}}");
    ns.Parse(json.data(), json.size());
    auto created = CreateObject(namespaces, std::move(ns), false);
    if (!created.ok()) return created.status();
  }
  const ResourceType& priority_classes =
      *FindResourceType("scheduling.k8s.io", "v1", "priorityclasses");
  for (auto [name, value] : {std::pair{"system-cluster-critical", kSystemClusterCritical},
                             std::pair{"system-node-critical", kSystemNodeCritical}}) {
    if (store_->Get(priority_classes, "", name).ok()) continue;
    rapidjson::Document pc;
    std::string json = absl::StrCat(
        "{\"metadata\":{\"name\":\"", name, "\"},\"value\":", value,
        ",\"description\":\"Used for system critical pods that must not be moved from their "
        "current node.\"}");
    pc.Parse(json.data(), json.size());
    auto created = CreateObject(priority_classes, std::move(pc), false);
    if (!created.ok()) return created.status();
  }
  return absl::OkStatus();
}

absl::Status ApiServer::LoadObjects(std::string_view text, std::string_view source) {
  rapidjson::Document documents;
  absl::Status status = api::internal::YamlToJson(text, source, &documents);
  if (!status.ok()) return status;
  std::vector<const rapidjson::Value*> objects;
  for (const auto& document : documents.GetArray()) {
    if (!document.IsObject()) continue;
    if (StringAt(document, "kind") == "List" ||
        absl::EndsWith(StringAt(document, "kind"), "List")) {
      if (HasMember(document, "items") && document["items"].IsArray()) {
        for (const auto& item : document["items"].GetArray()) objects.push_back(&item);
      }
      continue;
    }
    objects.push_back(&document);
  }
  // Namespaces and priority classes first, so that pods referring to them are admitted.
  std::stable_sort(objects.begin(), objects.end(), [](const auto* a, const auto* b) {
    auto rank = [](const rapidjson::Value* object) {
      std::string kind = StringAt(*object, "kind");
      return kind == "Namespace" ? 0 : kind == "PriorityClass" ? 1 : 2;
    };
    return rank(a) < rank(b);
  });
  for (const rapidjson::Value* value : objects) {
    const ResourceType* type =
        FindResourceTypeByKind(StringAt(*value, "apiVersion"), StringAt(*value, "kind"));
    if (type == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(Absl(source), ": unsupported object ",
                                                     StringAt(*value, "apiVersion"), " ",
                                                     StringAt(*value, "kind")));
    }
    rapidjson::Document object;
    object.CopyFrom(*value, object.GetAllocator());
    rapidjson::Value& metadata = ObjectMember(object, "metadata", object.GetAllocator());
    if (type->namespaced && StringAt(metadata, "namespace").empty()) {
      SetString(metadata, "namespace", "default", object.GetAllocator());
    }
    // A cluster dump holds the objects every API server creates itself (default namespaces,
    // system priority classes): those already exist here, and loading keeps them.
    const bool built_in_kind = type->kind == "Namespace" || type->kind == "PriorityClass";
    if (built_in_kind && store_->Get(*type, "", StringAt(metadata, "name")).ok()) continue;
    auto created = CreateObject(*type, std::move(object), /*keep_status=*/true);
    if (!created.ok()) {
      return absl::Status(created.status().code(),
                          absl::StrCat(Absl(source), ": ", created.status().message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace kubesched::testapi
