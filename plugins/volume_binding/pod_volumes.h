#pragma once

// The two halves of upstream's volume binder that a scheduling cycle runs: what PreFilter learns
// once per pod (GetPodVolumeClaims: the pod's claims, bound or to bind; for each claim to bind,
// the PVs it could take whatever the node, which is every check of FindMatchingVolume but node
// affinity; GetEligibleNodes), and the per-node half that Filter and Reserve share
// (FindPodVolumes).
//
// Lifetime: every pointer in PodVolumes points into the snapshot it was collected from, so a
// PodVolumes is valid for that scheduling cycle only. Reserve copies what the binding cycle needs.
// Threads: a PodVolumes is built on the scheduling thread and then only read, by any number of
// Filter workers at once.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "scheduler/api/storage.h"
#include "scheduler/framework/pod_info.h"
#include "scheduler/framework/status.h"
#include "scheduler/framework/storage_state.h"

namespace kubesched::plugins::volume_binding {

// Filter's reasons (upstream's ConflictReasons), in the order upstream reports them.
inline constexpr std::string_view kReasonNodeConflict = "node(s) had volume node affinity conflict";
inline constexpr std::string_view kReasonBindConflict =
    "node(s) didn't find available persistent volumes to bind";
inline constexpr std::string_view kReasonPvNotExist =
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)";
// PreFilter's, when a claim of an Immediate class (or a claim pre-bound by the user) is not bound
// yet: the PV controller binds those, not the scheduler.
inline constexpr std::string_view kReasonUnboundImmediate =
    "pod has unbound immediate PersistentVolumeClaims";

// A claim with spec.volumeName and the bind-completed annotation.
struct BoundClaim {
  const api::PersistentVolumeClaim* claim = nullptr;
  const api::PersistentVolume* volume = nullptr;  // null: the PV it names does not exist
};

// A claim of a WaitForFirstConsumer class without a PV yet: the scheduler picks one of its
// candidates or has it provisioned on the chosen node.
struct ClaimToBind {
  const api::PersistentVolumeClaim* claim = nullptr;
  std::string key;        // "namespace/name"
  int64_t requested = 0;  // spec.resources.requests.storage, bytes
  // Its selected-node annotation: provisioning was already asked for there, so no other node fits.
  std::optional<std::string_view> selected_node;
  // PVs it could take on some node, smallest first (capacity, then name). With `prebound`, only
  // the PV whose claimRef names this claim: upstream uses that one or none.
  std::vector<const api::PersistentVolume*> candidates;
  bool prebound = false;
  // PVs whose node affinity can match only nodes with one of a few hostname labels (local
  // volumes), by hostname value, smallest first: a node looks at its own list, not at all of them.
  absl::flat_hash_map<api::Symbol, std::vector<const api::PersistentVolume*>> local_candidates;
  // Its class (WaitForFirstConsumer), for provisioning when no candidate fits a node.
  const api::StorageClass* storage_class = nullptr;
};

struct PodVolumes {
  std::vector<BoundClaim> bound;
  std::vector<ClaimToBind> to_bind;  // smallest request first, as upstream matches them
};

struct Collected {
  // Skip (no claim volumes), Success, or PreFilter's rejection or error.
  framework::Status status;
  PodVolumes volumes;
  // The nodes the bound PVs' hostname node affinity allows (upstream's GetEligibleNodes); nullopt
  // when they pin no node.
  std::optional<absl::flat_hash_set<std::string>> eligible_nodes;
};

// PreFilter: the pod's claims as upstream's podHasPVCs, GetPodVolumeClaims and GetEligibleNodes
// see them in `storage`.
Collected CollectPodVolumes(const framework::PodInfo& pod, const framework::StorageState& storage);

// One node's answer. `bind_conflict` is set when some claim to bind has neither a PV nor a way to
// be provisioned there.
struct NodeVerdict {
  bool node_conflict = false;  // a bound PV's node affinity does not match the node
  bool bind_conflict = false;
  bool pv_missing = false;  // a bound claim names a PV that does not exist
  bool ok() const { return !node_conflict && !bind_conflict && !pv_missing; }
};

// What Reserve takes from a fitting node: a PV for each claim matched, and the claims to have
// provisioned there.
struct NodeDecision {
  std::vector<std::pair<const ClaimToBind*, const api::PersistentVolume*>> bindings;
  std::vector<const ClaimToBind*> provisions;
};

// Upstream's FindPodVolumes on `node`. Allocates nothing while a pod has at most 8 claims to bind
// and `decision` is null (Filter); Reserve passes one to learn what to bind.
NodeVerdict EvaluateNode(const PodVolumes& volumes, const api::Node& node,
                         NodeDecision* decision = nullptr);

// Whether the PV's required node affinity admits a node with these labels (upstream's
// CheckNodeAffinity, which matches on labels only).
bool VolumeFitsLabels(const api::PersistentVolume& volume, const api::LabelSet& labels);

// The claim's class: the beta annotation, else spec.storageClassName, else "".
std::string_view ClaimClass(const api::PersistentVolumeClaim& claim);
// The PV's claimRef names the claim (upstream's IsVolumeBoundToClaim: a claimRef without a UID
// names any claim of that namespace and name).
bool VolumeBoundToClaim(const api::PersistentVolume& volume,
                        const api::PersistentVolumeClaim& claim);
// spec.volumeName set and the bind-completed annotation present.
bool IsFullyBound(const api::PersistentVolumeClaim& claim);
// The claim's storage request, bytes.
int64_t StorageRequest(const api::PersistentVolumeClaim& claim);

}  // namespace kubesched::plugins::volume_binding
