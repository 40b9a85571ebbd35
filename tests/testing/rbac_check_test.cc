// The RBAC decisions of tests/testing/rbac_check.h, which the test of deploy/'s RBAC relies on:
// request paths become the attributes the API server gives RBAC, and rules grant only in the
// scope of their binding, for the bound ServiceAccount.

#include "tests/testing/rbac_check.h"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

namespace kubesched::testing {
namespace {

RequestAttributes Attributes(const std::string& method, const std::string& path,
                             bool watch = false) {
  absl::StatusOr<RequestAttributes> attributes =
      AttributesOf({.method = method, .path = path, .watch = watch});
  INFO(method << " " << path << ": " << attributes.status());
  REQUIRE(attributes.ok());
  return *attributes;
}

constexpr char kManifests[] = R"(
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: reader}
rules:
- apiGroups: [""]
  resources: [pods]
  verbs: [list, watch]
- apiGroups: [""]
  resources: [pods/binding]
  verbs: [create]
- nonResourceURLs: [/metrics]
  verbs: [get]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: reader}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: reader}
subjects: [{kind: ServiceAccount, name: sched, namespace: sys}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: lease, namespace: sys}
rules:
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [get, update]
  resourceNames: [sched]
- apiGroups: [coordination.k8s.io]
  resources: [leases]
  verbs: [create]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: lease, namespace: sys}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: lease}
subjects: [{kind: ServiceAccount, name: sched, namespace: sys}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: unbound}
rules:
- apiGroups: ["*"]
  resources: ["*"]
  verbs: ["*"]
)";

Rbac Load(const std::string& text, const std::string& account = "sched") {
  absl::StatusOr<Rbac> rbac = Rbac::ForServiceAccount(YAML::LoadAll(text), "sys", account);
  INFO(rbac.status());
  REQUIRE(rbac.ok());
  return *rbac;
}

TEST_CASE("rbac check: paths become the verb, group, resource and namespace RBAC sees",
          "[testing][rbac]") {
  RequestAttributes bind = Attributes("POST", "/api/v1/namespaces/default/pods/web/binding");
  CHECK(bind.resource_request);
  CHECK(bind.verb == "create");
  CHECK(bind.group.empty());
  CHECK(bind.resource == "pods");
  CHECK(bind.subresource == "binding");
  CHECK(bind.namespace_name == "default");
  CHECK(bind.name == "web");

  RequestAttributes watch = Attributes("GET", "/apis/coordination.k8s.io/v1/leases", true);
  CHECK(watch.verb == "watch");
  CHECK(watch.group == "coordination.k8s.io");
  CHECK(watch.namespace_name.empty());
  CHECK(Attributes("GET", "/api/v1/watch/pods").verb == "watch");
  CHECK(Attributes("GET", "/api/v1/pods").verb == "list");
  CHECK(Attributes("PUT", "/api/v1/namespaces/a/pods/b/status").verb == "update");
  CHECK(Attributes("PATCH", "/api/v1/persistentvolumes/pv").verb == "patch");
  CHECK(Attributes("DELETE", "/api/v1/namespaces/a/pods/b").verb == "delete");
  CHECK(Attributes("DELETE", "/api/v1/namespaces/a/pods").verb == "deletecollection");

  RequestAttributes ns = Attributes("GET", "/api/v1/namespaces/kube-system");
  CHECK(ns.resource == "namespaces");
  CHECK(ns.name == "kube-system");
  RequestAttributes ns_status = Attributes("PUT", "/api/v1/namespaces/x/status");
  CHECK(ns_status.resource == "namespaces");
  CHECK(ns_status.subresource == "status");

  CHECK_FALSE(Attributes("GET", "/version").resource_request);
  CHECK_FALSE(Attributes("GET", "/apis/events.k8s.io/v1").resource_request);
  CHECK(Attributes("GET", "/apis/events.k8s.io/v1").verb == "get");
}

TEST_CASE("rbac check: a method RBAC has no verb for is a clear error", "[testing][rbac]") {
  absl::StatusOr<RequestAttributes> attributes =
      AttributesOf({.method = "TRACE", .path = "/api/v1/pods"});
  REQUIRE_FALSE(attributes.ok());
  CHECK(attributes.status().message() == "no RBAC verb for method TRACE of /api/v1/pods");
}

TEST_CASE("rbac check: rules grant in their binding's scope, for the bound account only",
          "[testing][rbac]") {
  const Rbac rbac = Load(kManifests);
  CHECK(rbac.Allows(Attributes("GET", "/api/v1/pods", true)));
  CHECK(rbac.Allows(Attributes("POST", "/api/v1/namespaces/default/pods/web/binding")));
  CHECK_FALSE(rbac.Allows(Attributes("PATCH", "/api/v1/namespaces/default/pods/web/status")));
  CHECK_FALSE(rbac.Allows(Attributes("GET", "/api/v1/namespaces/default/pods/web")));
  // The Role grants in its own namespace only, and by name where it lists names.
  CHECK(rbac.Allows(Attributes("GET", "/apis/coordination.k8s.io/v1/namespaces/sys/leases/sched")));
  CHECK(rbac.Allows(Attributes("POST", "/apis/coordination.k8s.io/v1/namespaces/sys/leases")));
  CHECK_FALSE(
      rbac.Allows(Attributes("GET", "/apis/coordination.k8s.io/v1/namespaces/sys/leases/other")));
  CHECK_FALSE(rbac.Allows(
      Attributes("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/sched")));
  // Non-resource URLs: discovery is every user's; others need a rule.
  CHECK(rbac.Allows(Attributes("GET", "/apis")));
  CHECK(rbac.Allows(Attributes("GET", "/metrics")));
  CHECK_FALSE(rbac.Allows(Attributes("GET", "/configz")));
  // The wildcard ClusterRole is bound to nobody; another account gets nothing.
  CHECK_FALSE(rbac.Allows(Attributes("DELETE", "/api/v1/nodes/n")));
  CHECK_FALSE(Load(kManifests, "other").Allows(Attributes("GET", "/api/v1/pods")));
}

TEST_CASE("rbac check: a malformed rule is a clear error", "[testing][rbac]") {
  absl::StatusOr<Rbac> rbac = Rbac::ForServiceAccount(
      YAML::LoadAll("kind: ClusterRole\nmetadata: {name: r}\nrules:\n- verbs: get\n"), "sys", "a");
  REQUIRE_FALSE(rbac.ok());
  CHECK(rbac.status().message() == "ClusterRole r rule 1 verbs is not a list");
}

}  // namespace
}  // namespace kubesched::testing
