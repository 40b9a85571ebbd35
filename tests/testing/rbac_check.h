#pragma once

// Whether RBAC manifests allow the requests a client made, decided as the API server decides:
// each request (method, path, watch) becomes the attributes RBAC sees (verb, API group, resource,
// subresource, namespace, name), and is allowed when a rule of a role bound to the client's
// ServiceAccount covers it in that scope (a ClusterRole through a ClusterRoleBinding everywhere,
// a Role or ClusterRole through a RoleBinding in the binding's namespace only). The discovery
// and health paths every authenticated client may read (system:discovery,
// system:public-info-viewer) are allowed without a rule. Used by the test of deploy/'s RBAC.

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace kubesched::testing {

struct ApiRequest {
  std::string method{};  // "GET"
  std::string path{};    // without the query
  bool watch = false;    // ?watch=true
};

struct RequestAttributes {
  bool resource_request = false;  // false: a non-resource URL such as /version
  std::string verb{};             // get list watch create update patch delete deletecollection
  std::string group{};            // "" for the core group
  std::string resource{};
  std::string subresource{};
  std::string namespace_name{};  // "" for cluster-scoped requests
  std::string name{};
  std::string path{};

  // "create pods/binding (group \"\") in namespace default", for messages.
  std::string Describe() const;
};

// The attributes of a request, as the API server's request-info resolver derives them; an error
// for a method RBAC has no verb for.
absl::StatusOr<RequestAttributes> AttributesOf(const ApiRequest& request);

class Rbac {
 public:
  // From the documents of RBAC manifests (roles, cluster roles and their bindings; other kinds
  // are ignored), for the ServiceAccount `namespace_name`/`name`. An error names a malformed role.
  static absl::StatusOr<Rbac> ForServiceAccount(const std::vector<YAML::Node>& documents,
                                                const std::string& namespace_name,
                                                const std::string& name);
  bool Allows(const RequestAttributes& request) const;

 private:
  struct Rule {
    std::vector<std::string> api_groups, resources, verbs, resource_names, non_resource_urls;
  };
  struct Grant {
    std::string namespace_name;  // "" = every namespace and the cluster scope
    Rule rule;
  };
  std::vector<Grant> grants_;
};

}  // namespace kubesched::testing
