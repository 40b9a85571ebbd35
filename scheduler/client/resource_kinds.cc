// The kinds the scheduler watches, and the query encoding their selectors need (reflector.h).

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/client/reflector.h"

namespace kubesched::client {
namespace {

ResourceKind Kind(std::string kind, std::string list_path, std::string field_selector = "") {
  ResourceKind resource;
  resource.kind = std::move(kind);
  resource.list_path = std::move(list_path);
  resource.field_selector = std::move(field_selector);
  return resource;
}

// resource.k8s.io/v1 is served from Kubernetes 1.34 on; older servers answer 404.
ResourceKind DraKind(std::string kind, const std::string& plural) {
  ResourceKind resource = Kind(std::move(kind), absl::StrCat("/apis/resource.k8s.io/v1/", plural));
  resource.optional = true;
  resource.crd = absl::StrCat(plural, ".resource.k8s.io");
  resource.absent_reason =
      "resource.k8s.io/v1 is not served (Kubernetes before 1.34, or the API group is disabled)";
  return resource;
}

}  // namespace

ResourceKind PodResourceKind() {
  return Kind("Pod", "/api/v1/pods", "status.phase!=Succeeded,status.phase!=Failed");
}
ResourceKind NodeResourceKind() { return Kind("Node", "/api/v1/nodes"); }
ResourceKind NamespaceResourceKind() { return Kind("Namespace", "/api/v1/namespaces"); }
ResourceKind PersistentVolumeClaimResourceKind() {
  return Kind("PersistentVolumeClaim", "/api/v1/persistentvolumeclaims");
}
ResourceKind PersistentVolumeResourceKind() {
  return Kind("PersistentVolume", "/api/v1/persistentvolumes");
}
ResourceKind StorageClassResourceKind() {
  return Kind("StorageClass", "/apis/storage.k8s.io/v1/storageclasses");
}
ResourceKind CsiNodeResourceKind() { return Kind("CSINode", "/apis/storage.k8s.io/v1/csinodes"); }
ResourceKind VolumeAttachmentResourceKind() {
  return Kind("VolumeAttachment", "/apis/storage.k8s.io/v1/volumeattachments");
}
ResourceKind PodGroupResourceKind() {
  ResourceKind kind = Kind("PodGroup", "/apis/scheduling.x-k8s.io/v1alpha1/podgroups");
  kind.optional = true;
  kind.crd = "podgroups.scheduling.x-k8s.io";
  return kind;
}
ResourceKind DeviceClassResourceKind() { return DraKind("DeviceClass", "deviceclasses"); }
ResourceKind ResourceSliceResourceKind() { return DraKind("ResourceSlice", "resourceslices"); }
ResourceKind ResourceClaimResourceKind() { return DraKind("ResourceClaim", "resourceclaims"); }
ResourceKind ResourceClaimTemplateResourceKind() {
  return DraKind("ResourceClaimTemplate", "resourceclaimtemplates");
}
ResourceKind PriorityClassResourceKind() {
  return Kind("PriorityClass", "/apis/scheduling.k8s.io/v1/priorityclasses");
}
ResourceKind PodDisruptionBudgetResourceKind() {
  return Kind("PodDisruptionBudget", "/apis/policy/v1/poddisruptionbudgets");
}
ResourceKind ConfigMapResourceKind(std::string_view namespace_name) {
  return Kind("ConfigMap", absl::StrCat("/api/v1/namespaces/", UrlEncodeQueryValue(namespace_name),
                                        "/configmaps"));
}

std::string UrlEncodeQueryValue(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(value.size());
  for (const char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    const bool unreserved = (byte >= 'A' && byte <= 'Z') || (byte >= 'a' && byte <= 'z') ||
                            (byte >= '0' && byte <= '9') || byte == '-' || byte == '.' ||
                            byte == '_' || byte == '~';
    if (unreserved) {
      out.push_back(c);
    } else {
      out.push_back('%');
      out.push_back(kHex[byte >> 4]);
      out.push_back(kHex[byte & 0xF]);
    }
  }
  return out;
}

}  // namespace kubesched::client
