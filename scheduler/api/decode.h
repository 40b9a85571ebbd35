#pragma once

// Decoding of Kubernetes objects from v1 JSON or YAML text, as `kubectl get -o json|yaml` prints
// them: a `kind: List` with `items`, multi-document YAML, or single objects.
//
// Error policy: a document that does not parse is a returned error naming the source and the
// position; an object that parses but is bad (unknown kind, no name, bad quantity, negative
// request...) is reported as a DecodeProblem naming the object and skipped, and the rest is kept.

#include <cstddef>
#include <deque>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/api/dra.h"
#include "scheduler/api/objects.h"
#include "scheduler/api/pod_group.h"
#include "scheduler/api/storage.h"

namespace kubesched::api {

using Object =
    std::variant<Pod, Node, Namespace, PriorityClass, ConfigMap, PodDisruptionBudget, NodeMetrics,
                 PersistentVolumeClaim, PersistentVolume, StorageClass, CsiNode, VolumeAttachment,
                 PodGroup, DeviceClass, ResourceSlice, ResourceClaim, ResourceClaimTemplate>;

// "Pod ns/name", "Node name", or "item 3" when the object has no usable name.
std::string DescribeObject(const Object& object);

struct DecodeProblem {
  std::string source;   // file name (or other origin) given by the caller
  std::string object;   // "Pod ns/name", "item 4 (kind Pod)"
  std::string message;  // what is wrong: "spec.containers[0].resources.requests.cpu: ..."

  std::string ToString() const;  // "<source>: <object>: <message>"
};

struct DecodedObjects {
  std::vector<Object> objects;
  std::vector<DecodeProblem> problems;
};

// Decodes every object in `text`. JSON is detected by its first non-space character ('{' or '['),
// everything else is read as (multi-document) YAML.
absl::StatusOr<DecodedObjects> DecodeObjects(std::string_view text, std::string_view source);

// The largest file DecodeFile reads: room for a dump of a large cluster, while a path such as
// /dev/zero ends in an error instead of exhausting memory.
inline constexpr size_t kMaxObjectFileBytes = size_t{256} << 20;

// Reads and decodes a file; a missing, unreadable or too large file is an error naming the path.
absl::StatusOr<DecodedObjects> DecodeFile(const std::string& path);

// DecodeFile's objects and problems (the same, in the same order) in a queue, for a caller that
// takes the objects from the front one by one: each object's storage is freed as it is taken.
struct DecodedObjectQueue {
  std::deque<Object> objects;
  std::vector<DecodeProblem> problems;
};

// DecodeFile for large inputs. A JSON list (or array) of items is read from the file in slices and
// decoded one item at a time, so that a cluster dump of hundreds of MiB is never held as text,
// parsed document and objects at once; any other input (YAML, a single object, a file that does
// not parse) is read by DecodeFile, which reports errors with their line and column.
absl::StatusOr<DecodedObjectQueue> DecodeFileQueue(const std::string& path);

// Single-object decoders for callers that know the kind (the API client's watch stream, tests).
// The JSON text is one object.
absl::StatusOr<Pod> DecodePodJson(std::string_view json);
absl::StatusOr<Node> DecodeNodeJson(std::string_view json);

// Decodes a v1 NodeAffinity (requiredDuringScheduling... / preferredDuringScheduling...) from JSON
// or YAML text; used for NodeAffinityArgs.addedAffinity. Errors name the field.
absl::StatusOr<NodeAffinity> DecodeNodeAffinity(std::string_view json_or_yaml);

// Decodes a JSON object of resource name -> quantity (string or number), as annotations carry
// them ({"cpu":"2","memory":"4Gi"}), by the rules of requests in a pod spec. Errors name the
// resource and what is wrong; never throws.
absl::StatusOr<ResourceList> DecodeResourceListJson(std::string_view json);

}  // namespace kubesched::api
