// Discovery: /api, /apis, the resource list of each served group version, and the OpenAPI
// documents.

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/util/strings.h"
#include "tests/testapi/field_validation.h"
#include "tests/testapi/routes_internal.h"

namespace kubesched::testapi::routes_internal {
namespace {

using util::Absl;

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

}  // namespace

bool IsDisabled(const std::vector<std::string>& disabled, const ResourceType& type) {
  return std::find(disabled.begin(), disabled.end(), type.api_version()) != disabled.end();
}

std::optional<HttpResponse> DiscoveryResponse(std::string_view path,
                                              const std::vector<std::string>& segments,
                                              const std::vector<std::string>& disabled) {
  if (path == "/api") {
    return JsonResponse(200,
                        "{\"kind\":\"APIVersions\",\"versions\":[\"v1\"],"
                        "\"serverAddressByClientCIDRs\":[{\"clientCIDR\":\"0.0.0.0/0\","
                        "\"serverAddress\":\"127.0.0.1\"}]}");
  }
  // Aggregated discovery (Accept: ...as=APIGroupDiscoveryList) is not served: the plain
  // APIGroupList makes kubectl and client-go fall back to per-group discovery.
  if (path == "/apis") return JsonResponse(200, GroupListJson(disabled));
  if (std::optional<HttpResponse> document = OpenApiResponse(path)) return document;
  if (path == "/api/v1") return JsonResponse(200, ResourceListJson("", "v1"));
  if (segments.size() == 2 && segments[0] == "apis") {
    for (const auto& [group, version] : GroupVersions(disabled)) {
      if (group == segments[1]) {
        return JsonResponse(200, absl::StrCat("{\"kind\":\"APIGroup\",\"apiVersion\":\"v1\",",
                                              GroupJson(group, version).substr(1)));
      }
    }
  }
  if (segments.size() == 3 && segments[0] == "apis") {
    for (const auto& [group, version] : GroupVersions(disabled)) {
      if (group == segments[1] && version == segments[2]) {
        return JsonResponse(200, ResourceListJson(group, version));
      }
    }
  }
  return std::nullopt;
}

}  // namespace kubesched::testapi::routes_internal
