// Routing: a request's path and query to a route (authentication, discovery, resource routes),
// fault injection, and the dispatch of a resource route to its verb.

#include "tests/testapi/routes.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "scheduler/util/strings.h"
#include "tests/testapi/routes_internal.h"
#include "tests/testapi/tables.h"

namespace kubesched::testapi {

using routes_internal::DiscoveryResponse;
using routes_internal::ErrorResponse;
using routes_internal::IsDisabled;
using routes_internal::JsonResponse;
using routes_internal::ParseBody;
using routes_internal::ParseBool;
using routes_internal::StatusDetails;
using routes_internal::StatusResponse;
using util::Absl;

namespace routes_internal {

bool ParseBool(std::string_view value) {
  return value == "1" || value == "t" || value == "T" || value == "true" || value == "TRUE" ||
         value == "True";
}

}  // namespace routes_internal

namespace {

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

constexpr std::string_view kVersionJson =
    R"({"major":"1","minor":"32","gitVersion":"v1.32.0-kubesched-testapi","gitCommit":"0000000000000000000000000000000000000000","gitTreeState":"clean","buildDate":"2025-01-01T00:00:00Z","goVersion":"go1.23.0","compiler":"gc","platform":"linux/amd64"})";

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

  if (std::optional<HttpResponse> response = HandleOutsideResources(request, path)) {
    return *std::move(response);
  }
  std::vector<std::string> segments;
  for (absl::string_view segment : absl::StrSplit(Absl(path), '/', absl::SkipEmpty())) {
    segments.push_back(PercentDecode(util::Std(segment)));
  }
  if (request.method == "GET") {
    if (std::optional<HttpResponse> document =
            DiscoveryResponse(path, segments, options_.disabled_api_versions)) {
      return *std::move(document);
    }
  }
  std::optional<Route> route = ParseRoute(request, segments, query);
  if (!route.has_value()) {
    return StatusResponse(404, "NotFound", "the server could not find the requested resource");
  }
  return HandleRoute(request, *route);
}

std::optional<HttpResponse> ApiServer::HandleOutsideResources(const HttpRequest& request,
                                                              std::string_view path) {
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
  return std::nullopt;
}

std::optional<ApiServer::Route> ApiServer::ParseRoute(const HttpRequest& request,
                                                      const std::vector<std::string>& segments,
                                                      std::string_view query) const {
  Route route;
  route.method = request.method;
  route.query = ParseQuery(query);
  route.accept = request.accept;
  std::string group;
  std::string version;
  std::vector<std::string> rest;
  if (!ParseResourcePath(segments, &group, &version, &rest)) return std::nullopt;
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
    return std::nullopt;
  }
  if (rest.size() >= 2) route.name = rest[1];
  if (rest.size() == 3) {
    route.subresource = rest[2];
    if (!route.type->HasSubresource(route.subresource)) return std::nullopt;
  }
  bool watch = ParseBool(route.Param("watch"));
  route.kind.verb = VerbFor(request.method, !route.name.empty(), watch);
  std::string suffix = route.subresource.empty() ? "" : "/" + route.subresource;
  route.kind.resource = route.type->plural + suffix;
  route.kind.qualified_resource = route.type->id() + suffix;
  return route;
}

HttpResponse ApiServer::HandleRoute(const HttpRequest& request, const Route& route) {
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

}  // namespace kubesched::testapi
