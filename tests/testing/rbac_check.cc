#include "tests/testing/rbac_check.h"

#include <algorithm>
#include <map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace kubesched::testing {
namespace {

bool Has(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end() ||
         std::find(list.begin(), list.end(), "*") != list.end();
}

// Paths every authenticated user may GET through the default cluster roles.
bool PublicNonResourcePath(const std::string& path) {
  for (const char* exact : {"/api", "/apis", "/version", "/healthz", "/livez", "/readyz"}) {
    if (path == exact) return true;
  }
  for (const char* prefix : {"/api/", "/apis/", "/openapi/", "/healthz/", "/livez/", "/readyz/"}) {
    if (absl::StartsWith(path, prefix)) return true;
  }
  return false;
}

std::string VerbOf(const std::string& method, bool named, bool watch) {
  if (method == "GET" || method == "HEAD") return watch ? "watch" : named ? "get" : "list";
  if (method == "POST") return "create";
  if (method == "PUT") return "update";
  if (method == "PATCH") return "patch";
  if (method == "DELETE") return named ? "delete" : "deletecollection";
  return "";
}

absl::StatusOr<std::vector<std::string>> StringList(const YAML::Node& node,
                                                    const std::string& where) {
  std::vector<std::string> values;
  if (!node) return values;
  if (!node.IsSequence()) return absl::InvalidArgumentError(absl::StrCat(where, " is not a list"));
  for (const YAML::Node& item : node) {
    if (!item.IsScalar()) {
      return absl::InvalidArgumentError(absl::StrCat(where, " holds a value that is not a string"));
    }
    values.push_back(item.as<std::string>());
  }
  return values;
}

// A string under `node` (maps only), or "" when a step is missing.
std::string Text(const YAML::Node& node, const char* key, const char* subkey = nullptr) {
  if (!node.IsMap() || !node[key]) return "";
  const YAML::Node value = node[key];
  if (subkey == nullptr) return value.IsScalar() ? value.as<std::string>() : "";
  if (!value.IsMap() || !value[subkey] || !value[subkey].IsScalar()) return "";
  return value[subkey].as<std::string>();
}

bool BindsServiceAccount(const YAML::Node& binding, const std::string& namespace_name,
                         const std::string& name) {
  for (const YAML::Node& subject : binding["subjects"]) {
    if (Text(subject, "kind") == "ServiceAccount" && Text(subject, "name") == name &&
        Text(subject, "namespace") == namespace_name) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::string RequestAttributes::Describe() const {
  if (!resource_request) return absl::StrCat(verb, " non-resource URL ", path);
  std::string text = absl::StrCat(verb, " ", resource, subresource.empty() ? "" : "/", subresource,
                                  " (group \"", group, "\")");
  if (!namespace_name.empty()) absl::StrAppend(&text, " in namespace ", namespace_name);
  absl::StrAppend(&text, ", ", path);
  return text;
}

absl::StatusOr<RequestAttributes> AttributesOf(const ApiRequest& request) {
  RequestAttributes attributes;
  attributes.path = request.path;
  std::vector<std::string> parts = absl::StrSplit(request.path, '/', absl::SkipEmpty());
  size_t skip = 0;
  if (parts.size() >= 3 && parts[0] == "api") {
    skip = 2;  // /api/v1
  } else if (parts.size() >= 4 && parts[0] == "apis") {
    attributes.group = parts[1];
    skip = 3;  // /apis/GROUP/VERSION
  }
  if (skip == 0) {
    attributes.verb = absl::AsciiStrToLower(request.method);
    return attributes;
  }
  attributes.resource_request = true;
  parts.erase(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(skip));
  bool watch = request.watch;
  if (parts[0] == "watch") {  // the legacy /api/v1/watch/... form
    watch = true;
    parts.erase(parts.begin());
  }
  // /namespaces/NS/RESOURCE..., unless it is the namespace itself (or its status, finalize).
  if (parts.size() >= 3 && parts[0] == "namespaces" && parts[2] != "status" &&
      parts[2] != "finalize") {
    attributes.namespace_name = parts[1];
    parts.erase(parts.begin(), parts.begin() + 2);
  } else if (parts.size() >= 2 && parts[0] == "namespaces") {
    attributes.namespace_name = parts[1];
  }
  attributes.resource = parts.empty() ? "" : parts[0];
  if (parts.size() >= 2) attributes.name = parts[1];
  if (parts.size() >= 3) attributes.subresource = parts[2];
  attributes.verb = VerbOf(request.method, !attributes.name.empty(), watch);
  if (attributes.verb.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("no RBAC verb for method ", request.method, " of ", request.path));
  }
  return attributes;
}

absl::StatusOr<Rbac> Rbac::ForServiceAccount(const std::vector<YAML::Node>& documents,
                                             const std::string& namespace_name,
                                             const std::string& name) {
  std::map<std::string, std::vector<Rule>> cluster_roles;
  std::map<std::pair<std::string, std::string>, std::vector<Rule>> roles;  // (namespace, name)
  for (const YAML::Node& document : documents) {
    const std::string kind = Text(document, "kind");
    if (kind != "ClusterRole" && kind != "Role") continue;
    const std::string role = Text(document, "metadata", "name");
    std::vector<Rule> rules;
    for (const YAML::Node& rule : document["rules"]) {
      const std::string where = absl::StrCat(kind, " ", role, " rule ", rules.size() + 1, " ");
      Rule parsed;
      for (auto [field, out] :
           {std::pair{"apiGroups", &parsed.api_groups}, std::pair{"resources", &parsed.resources},
            std::pair{"verbs", &parsed.verbs}, std::pair{"resourceNames", &parsed.resource_names},
            std::pair{"nonResourceURLs", &parsed.non_resource_urls}}) {
        absl::StatusOr<std::vector<std::string>> values =
            StringList(rule[field], absl::StrCat(where, field));
        if (!values.ok()) return values.status();
        *out = *std::move(values);
      }
      rules.push_back(std::move(parsed));
    }
    if (kind == "ClusterRole") {
      cluster_roles[role] = std::move(rules);
    } else {
      roles[{Text(document, "metadata", "namespace"), role}] = std::move(rules);
    }
  }
  Rbac rbac;
  for (const YAML::Node& document : documents) {
    const std::string kind = Text(document, "kind");
    if (kind != "ClusterRoleBinding" && kind != "RoleBinding") continue;
    if (!BindsServiceAccount(document, namespace_name, name)) continue;
    const std::string scope = kind == "RoleBinding" ? Text(document, "metadata", "namespace") : "";
    const std::string role_kind = Text(document, "roleRef", "kind");
    const std::string role = Text(document, "roleRef", "name");
    const std::vector<Rule>* rules = nullptr;
    if (role_kind == "ClusterRole" && cluster_roles.contains(role)) rules = &cluster_roles[role];
    if (role_kind == "Role" && kind == "RoleBinding" && roles.contains({scope, role})) {
      rules = &roles[{scope, role}];
    }
    if (rules == nullptr) continue;  // a binding to a role that does not exist grants nothing
    for (const Rule& rule : *rules) rbac.grants_.push_back({scope, rule});
  }
  return rbac;
}

bool Rbac::Allows(const RequestAttributes& request) const {
  if (!request.resource_request) {
    if (request.verb == "get" && PublicNonResourcePath(request.path)) return true;
    for (const Grant& grant : grants_) {
      if (!grant.namespace_name.empty() || !Has(grant.rule.verbs, request.verb)) continue;
      for (const std::string& url : grant.rule.non_resource_urls) {
        if (url == request.path ||
            (absl::EndsWith(url, "*") &&
             absl::StartsWith(request.path, url.substr(0, url.size() - 1)))) {
          return true;
        }
      }
    }
    return false;
  }
  const std::string resource = request.subresource.empty()
                                   ? request.resource
                                   : absl::StrCat(request.resource, "/", request.subresource);
  for (const Grant& grant : grants_) {
    if (!grant.namespace_name.empty() && grant.namespace_name != request.namespace_name) continue;
    const Rule& rule = grant.rule;
    if (!Has(rule.api_groups, request.group) || !Has(rule.resources, resource) ||
        !Has(rule.verbs, request.verb)) {
      continue;
    }
    if (rule.resource_names.empty() ||
        (!request.name.empty() && Has(rule.resource_names, request.name))) {
      return true;
    }
  }
  return false;
}

}  // namespace kubesched::testing
