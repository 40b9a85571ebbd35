#include "tests/testapi/resources.h"

#include <algorithm>

#include "tests/testapi/event_views.h"

namespace kubesched::testapi {
namespace {

const std::vector<std::string> kAllVerbs = {"create", "delete", "deletecollection", "get",
                                            "list",   "patch",  "update",           "watch"};
const std::vector<std::string> kStatusVerbs = {"get", "patch", "update"};

std::vector<ResourceType> BuildTypes() {
  std::vector<ResourceType> types;
  auto add = [&types](ResourceType type) {
    if (type.verbs.empty()) type.verbs = kAllVerbs;
    types.push_back(std::move(type));
  };
  add({.group = "",
       .version = "v1",
       .plural = "pods",
       .singular = "pod",
       .kind = "Pod",
       .namespaced = true,
       .short_names = {"po"},
       .subresources = {{"binding", {"create"}}, {"status", kStatusVerbs}},
       .selectable_fields = {"spec.nodeName", "spec.schedulerName", "spec.serviceAccountName",
                             "spec.restartPolicy", "status.phase", "status.podIP",
                             "status.nominatedNodeName"}});
  // The older way to bind (what client libraries call create_namespaced_binding): the pod is
  // named by the Binding's metadata.name.
  add({.group = "",
       .version = "v1",
       .plural = "bindings",
       .singular = "binding",
       .kind = "Binding",
       .verbs = {"create"}});
  add({.group = "",
       .version = "v1",
       .plural = "nodes",
       .singular = "node",
       .kind = "Node",
       .namespaced = false,
       .short_names = {"no"},
       .subresources = {{"status", kStatusVerbs}},
       .selectable_fields = {"spec.unschedulable"}});
  add({.group = "",
       .version = "v1",
       .plural = "namespaces",
       .singular = "namespace",
       .kind = "Namespace",
       .namespaced = false,
       .short_names = {"ns"},
       .verbs = {"create", "delete", "get", "list", "patch", "update", "watch"},
       .subresources = {{"status", kStatusVerbs}},
       .selectable_fields = {"status.phase"}});
  add({.group = "",
       .version = "v1",
       .plural = "configmaps",
       .singular = "configmap",
       .kind = "ConfigMap",
       .short_names = {"cm"}});
  add({.group = "",
       .version = "v1",
       .plural = "events",
       .singular = "event",
       .kind = "Event",
       .short_names = {"ev"},
       .selectable_fields = {"involvedObject.kind", "involvedObject.namespace",
                             "involvedObject.name", "involvedObject.uid",
                             "involvedObject.apiVersion", "involvedObject.resourceVersion",
                             "involvedObject.fieldPath", "reason", "reportingComponent", "source",
                             "type"},
       .field_value = CoreEventFieldValue});
  add({.group = "",
       .version = "v1",
       .plural = "services",
       .singular = "service",
       .kind = "Service",
       .short_names = {"svc"},
       .subresources = {{"status", kStatusVerbs}}});
  add({.group = "",
       .version = "v1",
       .plural = "persistentvolumeclaims",
       .singular = "persistentvolumeclaim",
       .kind = "PersistentVolumeClaim",
       .short_names = {"pvc"},
       .subresources = {{"status", kStatusVerbs}}});
  add({.group = "",
       .version = "v1",
       .plural = "persistentvolumes",
       .singular = "persistentvolume",
       .kind = "PersistentVolume",
       .namespaced = false,
       .short_names = {"pv"},
       .subresources = {{"status", kStatusVerbs}}});
  add({.group = "events.k8s.io",
       .version = "v1",
       .plural = "events",
       .singular = "event",
       .kind = "Event",
       .short_names = {"ev"},
       // Served from the core v1 Events' storage (event_views.h); these are the real API's field
       // labels for it, translated to the core names before selecting.
       .selectable_fields = {"regarding.kind", "regarding.namespace", "regarding.name",
                             "regarding.uid", "regarding.apiVersion", "regarding.resourceVersion",
                             "regarding.fieldPath", "reason", "reportingController", "type"}});
  add({.group = "scheduling.k8s.io",
       .version = "v1",
       .plural = "priorityclasses",
       .singular = "priorityclass",
       .kind = "PriorityClass",
       .namespaced = false,
       .short_names = {"pc"}});
  add({.group = "policy",
       .version = "v1",
       .plural = "poddisruptionbudgets",
       .singular = "poddisruptionbudget",
       .kind = "PodDisruptionBudget",
       .short_names = {"pdb"},
       .subresources = {{"status", kStatusVerbs}}});
  add({.group = "storage.k8s.io",
       .version = "v1",
       .plural = "storageclasses",
       .singular = "storageclass",
       .kind = "StorageClass",
       .namespaced = false,
       .short_names = {"sc"}});
  add({.group = "storage.k8s.io",
       .version = "v1",
       .plural = "csinodes",
       .singular = "csinode",
       .kind = "CSINode",
       .namespaced = false});
  add({.group = "storage.k8s.io",
       .version = "v1",
       .plural = "volumeattachments",
       .singular = "volumeattachment",
       .kind = "VolumeAttachment",
       .namespaced = false,
       .subresources = {{"status", kStatusVerbs}}});
  // scheduler-plugins' PodGroup, served as the API server serves its CRD: a custom resource, so
  // merge and JSON patches only, and its schema checked on every write (admission.h).
  add({.group = "scheduling.x-k8s.io",
       .version = "v1alpha1",
       .plural = "podgroups",
       .singular = "podgroup",
       .kind = "PodGroup",
       .short_names = {"pg", "pgs"},
       .subresources = {{"status", kStatusVerbs}},
       .custom = true});
  // Dynamic Resource Allocation (resource.k8s.io/v1, Kubernetes 1.34). Writes are validated
  // (dra_validation.h); claims have a status subresource, which the scheduler writes.
  add({.group = "resource.k8s.io",
       .version = "v1",
       .plural = "deviceclasses",
       .singular = "deviceclass",
       .kind = "DeviceClass",
       .namespaced = false});
  add({.group = "resource.k8s.io",
       .version = "v1",
       .plural = "resourceslices",
       .singular = "resourceslice",
       .kind = "ResourceSlice",
       .namespaced = false,
       .selectable_fields = {"spec.driver", "spec.nodeName"}});
  add({.group = "resource.k8s.io",
       .version = "v1",
       .plural = "resourceclaims",
       .singular = "resourceclaim",
       .kind = "ResourceClaim",
       .subresources = {{"status", kStatusVerbs}}});
  add({.group = "resource.k8s.io",
       .version = "v1",
       .plural = "resourceclaimtemplates",
       .singular = "resourceclaimtemplate",
       .kind = "ResourceClaimTemplate"});
  add({.group = "coordination.k8s.io",
       .version = "v1",
       .plural = "leases",
       .singular = "lease",
       .kind = "Lease"});
  // The real metrics API is read-only; tests set values with create/update/delete here.
  add({.group = "metrics.k8s.io",
       .version = "v1beta1",
       .plural = "nodes",
       .singular = "",
       .kind = "NodeMetrics",
       .namespaced = false});
  add({.group = "metrics.k8s.io",
       .version = "v1beta1",
       .plural = "pods",
       .singular = "",
       .kind = "PodMetrics"});
  return types;
}

}  // namespace

bool ResourceType::HasSubresource(std::string_view name) const {
  return std::any_of(subresources.begin(), subresources.end(),
                     [name](const auto& entry) { return entry.first == name; });
}

bool ResourceType::IsSelectableField(std::string_view field) const {
  if (field == "metadata.name" || field == "metadata.namespace") return true;
  return std::find(selectable_fields.begin(), selectable_fields.end(), field) !=
         selectable_fields.end();
}

const std::vector<ResourceType>& AllResourceTypes() {
  static const std::vector<ResourceType>* const types = new std::vector<ResourceType>(BuildTypes());
  return *types;
}

const ResourceType* FindResourceType(std::string_view group, std::string_view version,
                                     std::string_view plural) {
  for (const ResourceType& type : AllResourceTypes()) {
    if (type.group == group && type.version == version && type.plural == plural) return &type;
  }
  return nullptr;
}

const ResourceType* FindResourceTypeByKind(std::string_view api_version, std::string_view kind) {
  for (const ResourceType& type : AllResourceTypes()) {
    if (type.kind == kind && type.api_version() == api_version) return &type;
  }
  return nullptr;
}

}  // namespace kubesched::testapi
