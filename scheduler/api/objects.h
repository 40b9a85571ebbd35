#pragma once

// The Kubernetes objects the scheduler reads, in the shape it needs them. Decoded from v1 JSON or
// YAML by decode.h; label keys, values and namespaces are interned on the way in.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/btree_map.h"
#include "absl/time/time.h"
#include "scheduler/api/labels.h"
#include "scheduler/api/resource.h"
#include "scheduler/api/shared_list.h"
#include "scheduler/api/symbol.h"

namespace kubesched::api {

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  bool controller = false;
};

struct ObjectMeta {
  std::string name;
  std::string namespace_name;  // "" for cluster-scoped objects (and kept "" when input says so)
  Symbol namespace_symbol = kEmptySymbol;
  std::string uid;
  std::string resource_version;
  LabelSet labels;
  absl::btree_map<std::string, std::string> annotations;
  std::vector<OwnerReference> owner_references;
  std::optional<absl::Time> creation_timestamp;
  std::optional<absl::Time> deletion_timestamp;
};

// ---------------------------------------------------------------------------------------------
// Pod

enum class Protocol : uint8_t { kTCP, kUDP, kSCTP };

struct ContainerPort {
  int32_t container_port = 0;
  int32_t host_port = 0;  // 0 = no host port
  std::string host_ip;    // "" means all addresses (0.0.0.0)
  Protocol protocol = Protocol::kTCP;

  friend bool operator==(const ContainerPort&, const ContainerPort&) = default;
};

struct Container {
  std::string name;
  std::string image;
  ResourceList requests;
  ResourceList limits;
  // Whether requests lists cpu / memory at all: upstream's non-zero defaults (100m, 200Mi) apply
  // to a container that does not list them, and not to one that lists "0".
  bool requests_cpu = false;
  bool requests_memory = false;
  std::vector<ContainerPort> ports;
  // "Always" on an init container marks a sidecar (restartable init container).
  std::string restart_policy;

  // Every field: equal containers share one list (InternList).
  friend bool operator==(const Container&, const Container&) = default;
};

enum class TaintEffect : uint8_t { kNone, kNoSchedule, kPreferNoSchedule, kNoExecute };
enum class TolerationOperator : uint8_t { kEqual, kExists };

struct Taint {
  std::string key;
  std::string value;
  TaintEffect effect = TaintEffect::kNone;
};

struct Toleration {
  std::string key;  // "" with kExists tolerates every taint
  TolerationOperator op = TolerationOperator::kEqual;
  std::string value;
  TaintEffect effect = TaintEffect::kNone;  // kNone tolerates every effect
  std::optional<int64_t> toleration_seconds;

  bool Tolerates(const Taint& taint) const;
  // Every field: equal tolerations share one list (InternList).
  bool operator==(const Toleration&) const = default;
};

struct PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;

  friend bool operator==(const PreferredSchedulingTerm&, const PreferredSchedulingTerm&) = default;
};

struct NodeAffinity {
  std::optional<NodeSelector> required;
  std::vector<PreferredSchedulingTerm> preferred;

  friend bool operator==(const NodeAffinity&, const NodeAffinity&) = default;
};

struct PodAffinityTerm {
  std::optional<LabelSelector> label_selector;  // absent matches no pod
  std::vector<Symbol> namespaces;
  std::optional<LabelSelector> namespace_selector;  // present and empty matches all namespaces
  Symbol topology_key = kEmptySymbol;
  std::vector<Symbol> match_label_keys;
  std::vector<Symbol> mismatch_label_keys;

  friend bool operator==(const PodAffinityTerm&, const PodAffinityTerm&) = default;
};

struct WeightedPodAffinityTerm {
  int32_t weight = 0;
  PodAffinityTerm term;

  friend bool operator==(const WeightedPodAffinityTerm&, const WeightedPodAffinityTerm&) = default;
};

struct PodAffinity {
  std::vector<PodAffinityTerm> required;
  std::vector<WeightedPodAffinityTerm> preferred;

  friend bool operator==(const PodAffinity&, const PodAffinity&) = default;
};

struct Affinity {
  std::optional<NodeAffinity> node_affinity;
  std::optional<PodAffinity> pod_affinity;
  std::optional<PodAffinity> pod_anti_affinity;

  friend bool operator==(const Affinity&, const Affinity&) = default;
};

enum class UnsatisfiableConstraintAction : uint8_t { kDoNotSchedule, kScheduleAnyway };
enum class NodeInclusionPolicy : uint8_t { kHonor, kIgnore };

struct TopologySpreadConstraint {
  int32_t max_skew = 1;
  Symbol topology_key = kEmptySymbol;
  UnsatisfiableConstraintAction when_unsatisfiable = UnsatisfiableConstraintAction::kDoNotSchedule;
  std::optional<LabelSelector> label_selector;
  std::optional<int32_t> min_domains;
  std::optional<NodeInclusionPolicy> node_affinity_policy;  // default Honor
  std::optional<NodeInclusionPolicy> node_taints_policy;    // default Ignore
  std::vector<Symbol> match_label_keys;

  friend bool operator==(const TopologySpreadConstraint&,
                         const TopologySpreadConstraint&) = default;
};

// A pod volume, as far as scheduling reads it: the claim it uses, or the in-tree disk it names
// (disk conflicts, node volume limits). Other sources (configMap, emptyDir, ...) only have a name.
struct Volume {
  std::string name;
  std::string claim_name;         // persistentVolumeClaim.claimName
  bool ephemeral = false;         // a generic ephemeral volume: its claim is "<pod>-<volume>"
  bool read_only = false;         // of whichever source below
  std::string gce_pd_name;        // gcePersistentDisk.pdName
  std::string aws_ebs_volume_id;  // awsElasticBlockStore.volumeID
  std::string iscsi_iqn;          // iscsi.iqn
  std::vector<std::string> rbd_monitors;  // rbd.monitors
  std::string rbd_pool;    // rbd.pool ("rbd" when empty, as the API server defaults it)
  std::string rbd_image;   // rbd.image
  std::string csi_driver;  // csi.driver (inline CSI volume)

  // Which in-tree disk the volume names, told by the source's required field (the API server
  // rejects the source without it; rbd's pool is defaulted by the decoder).
  bool IsGcePd() const { return !gce_pd_name.empty(); }
  bool IsAwsEbs() const { return !aws_ebs_volume_id.empty(); }
  bool IsIscsi() const { return !iscsi_iqn.empty(); }
  bool IsRbd() const { return !rbd_pool.empty() || !rbd_image.empty(); }
  bool IsInlineDisk() const { return IsGcePd() || IsAwsEbs() || IsIscsi() || IsRbd(); }

  // The claim this volume uses: claim_name, or "<pod>-<volume>" for an ephemeral volume; ""
  // for none.
  std::string ClaimName(const std::string& pod_name) const {
    return ephemeral ? pod_name + "-" + name : claim_name;
  }

  friend bool operator==(const Volume&, const Volume&) = default;
};

// spec.resourceClaims[]: a claim the pod needs, by name or from a template.
struct PodResourceClaim {
  std::string name;
  std::string resource_claim_name;
  std::string resource_claim_template_name;

  friend bool operator==(const PodResourceClaim&, const PodResourceClaim&) = default;
};

// status.resourceClaimStatuses[]: the claim generated for a pod's template claim (by
// spec.resourceClaims[].name); an empty resource_claim_name means none is needed.
struct PodResourceClaimStatus {
  std::string name;
  std::string resource_claim_name;
};

enum class PreemptionPolicy : uint8_t { kPreemptLowerPriority, kNever };
enum class PodPhase : uint8_t { kPending, kRunning, kSucceeded, kFailed, kUnknown };

struct PodCondition {
  std::string type;
  std::string status;
  std::string reason;
  std::string message;
};

// The pods of a workload hold alike containers and tolerations: the decoders give equal lists one
// vector (shared_list.h), and an absent affinity costs a pointer.
struct PodSpec {
  SharedList<Container> containers;
  SharedList<Container> init_containers;
  ResourceList overhead;
  LabelSet node_selector;
  SharedOptional<Affinity> affinity;
  SharedList<Toleration> tolerations;
  std::vector<TopologySpreadConstraint> topology_spread_constraints;
  std::optional<int32_t> priority;
  std::string priority_class_name;
  std::optional<PreemptionPolicy> preemption_policy;
  std::string scheduler_name;  // decoders default "" to "default-scheduler", as the API server
  std::string node_name;
  bool host_network = false;
  std::vector<Volume> volumes;
  // spec.schedulingGates[].name: while any is left, the pod must not be scheduled.
  std::vector<std::string> scheduling_gates;
  std::vector<PodResourceClaim> resource_claims;

  friend bool operator==(const PodSpec&, const PodSpec&) = default;
};

struct PodStatus {
  PodPhase phase = PodPhase::kPending;
  std::vector<PodCondition> conditions;
  std::string nominated_node_name;
  std::optional<absl::Time> start_time;
  std::vector<PodResourceClaimStatus> resource_claim_statuses;
};

struct Pod {
  ObjectMeta meta;
  PodSpec spec;
  PodStatus status;

  // "namespace/name", the pod's identity in the scheduler.
  std::string Key() const { return meta.namespace_name + "/" + meta.name; }
  bool IsTerminal() const {
    return status.phase == PodPhase::kSucceeded || status.phase == PodPhase::kFailed;
  }
};

// ---------------------------------------------------------------------------------------------
// Node

struct NodeCondition {
  std::string type;
  std::string status;
};

struct NodeSpec {
  bool unschedulable = false;
  std::vector<Taint> taints;
};

// status.images[]: an image the node holds, under every name it is known by.
struct ContainerImage {
  std::vector<std::string> names;
  int64_t size_bytes = 0;
};

struct NodeStatus {
  ResourceList capacity;
  ResourceList allocatable;  // defaults to capacity when the input has none
  std::vector<NodeCondition> conditions;
  std::vector<ContainerImage> images;
};

struct Node {
  ObjectMeta meta;
  NodeSpec spec;
  NodeStatus status;
};

// ---------------------------------------------------------------------------------------------
// Cluster-level objects

struct Namespace {
  ObjectMeta meta;
};

struct PriorityClass {
  ObjectMeta meta;
  int32_t value = 0;
  bool global_default = false;
  std::optional<PreemptionPolicy> preemption_policy;
  std::string description;
};

struct ConfigMap {
  ObjectMeta meta;
  absl::btree_map<std::string, std::string> data;
};

// An int-or-string field such as minAvailable: "50%" or 3.
struct IntOrPercent {
  int32_t value = 0;
  bool is_percent = false;
};

struct PodDisruptionBudget {
  ObjectMeta meta;
  std::optional<IntOrPercent> min_available;
  std::optional<IntOrPercent> max_unavailable;
  std::optional<LabelSelector> selector;
  int32_t disruptions_allowed = 0;
  int32_t current_healthy = 0;
  int32_t desired_healthy = 0;
  int32_t expected_pods = 0;
  std::vector<std::string> disrupted_pods;  // names
};

// metrics.k8s.io/v1beta1 NodeMetrics: measured usage of a node at a time.
struct NodeMetrics {
  ObjectMeta meta;
  std::optional<absl::Time> timestamp;
  ResourceList usage;
};

}  // namespace kubesched::api
