#pragma once

// What the routes*.cc files share: Status bodies and JSON responses, request bodies, selectors,
// lists, the served group versions, and the route a request resolves to.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rapidjson/document.h"
#include "tests/testapi/faults.h"
#include "tests/testapi/http_server.h"
#include "tests/testapi/resources.h"
#include "tests/testapi/routes.h"
#include "tests/testapi/selectors.h"
#include "tests/testapi/store.h"

namespace kubesched::testapi {
namespace routes_internal {

// routes_common.cc

std::string JsonQuote(std::string_view text);
std::string_view View(const rapidjson::Value& string_value);

struct StatusDetails {
  std::string name{};
  std::string group{};
  std::string kind{};
  // details.causes as {reason, message} pairs (StatusCause's `type` is serialized as "reason").
  std::vector<std::pair<std::string, std::string>> causes{};
  int retry_after_seconds = 0;
};

std::string StatusJson(int code, std::string_view reason, std::string_view message,
                       const StatusDetails& details);
HttpResponse StatusResponse(int code, std::string_view reason, std::string_view message,
                            const StatusDetails& details = {});
HttpResponse ErrorResponse(const absl::Status& status, const StatusDetails& details);
HttpResponse JsonResponse(int code, std::string body);
absl::StatusOr<rapidjson::Document> ParseBody(const HttpRequest& request);

// routes.cc

// strconv.ParseBool, as the real API reads boolean parameters.
bool ParseBool(std::string_view value);

// routes_discovery.cc

bool IsDisabled(const std::vector<std::string>& disabled, const ResourceType& type);
// GET /api, /apis, /api/v1, /apis/<group>[/<version>] and /openapi/...: the discovery documents
// of what is served (less the `disabled` group versions); nullopt for other paths.
std::optional<HttpResponse> DiscoveryResponse(std::string_view path,
                                              const std::vector<std::string>& segments,
                                              const std::vector<std::string>& disabled);

// routes_reads.cc

// Parses labelSelector and fieldSelector, checking the field names the type supports. The field
// selector is returned in terms of the stored type's fields.
absl::Status ParseSelectors(const ResourceType& type, const std::string& label_text,
                            const std::string& field_text, LabelSelector* labels,
                            FieldSelector* fields);
std::string ListJson(const ResourceType& type, const ListResult& result);

}  // namespace routes_internal

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
  routes_internal::StatusDetails Details() const {
    return {.name = name,
            .group = type != nullptr ? type->group : "",
            .kind = type != nullptr ? type->plural : ""};
  }
};

}  // namespace kubesched::testapi
