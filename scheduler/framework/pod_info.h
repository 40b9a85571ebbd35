#pragma once

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "scheduler/api/objects.h"
#include "scheduler/framework/gang_membership.h"
#include "scheduler/framework/pod_groups.h"

namespace kubesched::framework {

// A pod (anti-)affinity term compiled for matching: its namespace set resolved from the owning
// pod (an empty list with no namespaceSelector means the owner's own namespace).
struct AffinityTerm {
  std::optional<api::LabelSelector> selector;  // absent: matches no pod
  absl::flat_hash_set<api::Symbol> namespaces;
  std::optional<api::LabelSelector> namespace_selector;  // present and empty: all namespaces
  api::Symbol topology_key = api::kEmptySymbol;
  // Equal for terms with equal content (set by MakePodInfo); a copy whose namespaces are changed
  // afterwards must not be looked up by it.
  TermId id = 0;

  // Whether `pod` (whose namespace carries `namespace_labels`, null if unknown) is selected.
  bool Matches(const api::Pod& pod, const api::LabelSet* namespace_labels) const;
};

struct WeightedAffinityTerm {
  AffinityTerm term;
  int32_t weight = 0;
};

// A pod's inter-pod affinity and anti-affinity terms, compiled. Most pods have none, so PodInfo
// holds them out of line: a pointer in every PodInfo instead of four vectors (80 bytes a pod,
// 20 MB in a cluster of 250,000 pods).
struct PodAffinityTerms {
  std::vector<AffinityTerm> required_affinity;
  std::vector<AffinityTerm> required_anti_affinity;
  std::vector<WeightedAffinityTerm> preferred_affinity;
  std::vector<WeightedAffinityTerm> preferred_anti_affinity;
  bool empty() const {
    return required_affinity.empty() && required_anti_affinity.empty() &&
           preferred_affinity.empty() && preferred_anti_affinity.empty();
  }
};

// What a pod without terms reads (constant-initialized: no guard on each read).
inline const PodAffinityTerms kNoAffinityTerms{};

// A volume of a pod that the volume plugins look for on a node (NodeInfo::volume_refs): a claim
// (persistentVolumeClaim, or a generic ephemeral volume's claim), or an in-tree disk named inline
// (gcePersistentDisk, awsElasticBlockStore, rbd, iscsi). Other volumes (configMap, emptyDir,
// inline CSI, ...) make none. Built once per pod by MakePodInfo; the pointers point into the
// PodInfo's own pod, so a ref lives as long as its PodInfo.
struct PodVolumeRef {
  enum class Kind : uint8_t { kClaim, kInlineDisk };
  Kind kind = Kind::kClaim;
  bool ephemeral = false;  // a generic ephemeral volume's claim, which its pod must own
  size_t key_hash = 0;     // std::hash of `key`, compared before the key
  std::string key;         // kClaim: "namespace/claim"; kInlineDisk: ""
  const api::Volume* volume = nullptr;
  const api::Pod* pod = nullptr;

  bool SameClaim(const PodVolumeRef& other) const {
    return kind == Kind::kClaim && other.kind == Kind::kClaim && key_hash == other.key_hash &&
           key == other.key;
  }
};

// Everything about a pod that the scheduler derives once, when the pod enters the scheduler, so
// that no plugin recomputes it per node or per cycle. Immutable after construction; shared by
// the queue, the cache and snapshots through PodInfoPtr.
struct PodInfo {
  // What preemption reads of every pod on every node it judges (priority, NonPreemptible, the
  // requests) comes first, so that judging a pod touches as few cache lines as possible.
  int32_t priority = 0;
  // The pod, or its PriorityClass, carries kubesched.io/preemption-policy: NonPreemptible: it is
  // never a preemption victim, except of a preemptor at or above the override priority.
  bool non_preemptible = false;
  // preemptionPolicy Never, from the pod or else its PriorityClass: it preempts nobody.
  bool preempt_never = false;
  // Some container claims a host port (see ForEachHostPort): spares NodeInfo a walk over the
  // containers of every pod added or removed.
  bool uses_host_ports = false;
  // Shared by every pod with the same namespace, labels and terminating state: what selectors
  // (and spreading, which skips terminating pods) see of a pod.
  LabelGroupId label_group = 0;
  size_t key_hash = 0;  // std::hash of `key`, to tell pods apart without comparing keys
  // Effective requests: max(sum of containers + sidecars, each init container + preceding
  // sidecars) + overhead, per resource (upstream's PodRequests).
  api::ResourceList requests;
  // The cpu and memory of `requests` with upstream's non-zero defaults (100m, 200Mi) applied to
  // containers that do not list them; used by scoring, as upstream. Read through NonZeroRequest.
  int64_t non_zero_cpu = 0;
  int64_t non_zero_memory = 0;
  // MostAvailable's estimate of use (see virtual_request.h), parsed once here: the annotation
  // kubesched.io/virtual-request where it gives other amounts than `requests`, else absent (most
  // pods: `requests` stand for it); read it through VirtualRequestAmounts() or VirtualRequestOf.
  // The error is set when the annotation is present but does not parse.
  api::SharedOptional<api::ResourceList> virtual_request_override;
  absl::Status virtual_request_error;
  // status.startTime; a pod that has not started counts as starting last (InfiniteFuture).
  absl::Time start_time = absl::InfiniteFuture();
  std::shared_ptr<const api::Pod> pod;
  std::string key;  // "namespace/name"

  // Null for a pod without inter-pod affinity terms; read through the accessors below.
  std::shared_ptr<const PodAffinityTerms> affinity_terms;
  // The claims and inline disks of the pod (see PodVolumeRef); empty for a pod without them.
  std::vector<PodVolumeRef> volume_refs;
  // The gang (pod group) the pod belongs to, if any (see gang_membership.h).
  GangMembership gang;

  const api::Pod& get() const { return *pod; }
  const std::vector<AffinityTerm>& required_affinity() const { return Terms().required_affinity; }
  const std::vector<AffinityTerm>& required_anti_affinity() const {
    return Terms().required_anti_affinity;
  }
  const std::vector<WeightedAffinityTerm>& preferred_affinity() const {
    return Terms().preferred_affinity;
  }
  const std::vector<WeightedAffinityTerm>& preferred_anti_affinity() const {
    return Terms().preferred_anti_affinity;
  }
  // Upstream's non-zero request for scoring: the defaulted amount for cpu and memory, the
  // requested one for the other resources.
  int64_t NonZeroRequest(api::ResourceId id) const {
    if (id == api::kCpu) return non_zero_cpu;
    if (id == api::kMemory) return non_zero_memory;
    return requests.Get(id);
  }
  bool HasAffinity() const { return !Terms().empty(); }
  bool HasRequiredAntiAffinity() const { return !required_anti_affinity().empty(); }

  const api::ResourceList& VirtualRequestAmounts() const {
    return virtual_request_override.has_value() ? *virtual_request_override : requests;
  }

 private:
  const PodAffinityTerms& Terms() const {
    return affinity_terms != nullptr ? *affinity_terms : kNoAffinityTerms;
  }
};

using PodInfoPtr = std::shared_ptr<const PodInfo>;

// Calls fn(const ContainerPort&) for every port of the pod that claims a host port while the pod
// runs: its containers and its sidecars (restartable init containers), as upstream. Ordinary init
// containers have exited by then.
template <typename Fn>
void ForEachHostPort(const api::Pod& pod, Fn&& fn) {
  for (const auto* containers : {&pod.spec.init_containers, &pod.spec.containers}) {
    for (const auto& container : *containers) {
      const bool runs = containers == &pod.spec.containers || container.restart_policy == "Always";
      if (!runs) continue;
      for (const auto& port : container.ports) {
        if (port.host_port > 0) fn(port);
      }
    }
  }
}

inline constexpr char kPreemptionPolicyAnnotation[] = "kubesched.io/preemption-policy";
inline constexpr char kNonPreemptible[] = "NonPreemptible";

// What a pod's PriorityClass says about preemption.
struct PriorityClassTraits {
  bool non_preemptible = false;  // annotated kubesched.io/preemption-policy: NonPreemptible
  bool preempt_never = false;    // preemptionPolicy: Never
};

// Builds the PodInfo of `pod` with the given resolved priority and its class's traits (the pod's
// own annotation and preemptionPolicy are read here and win over the class's policy).
// Upstream's PodRequests (resourcehelper.PodRequests): what PodInfo::requests holds (with
// `non_zero`, PodInfo::non_zero_requests), for a pod no PodInfo is made for.
api::ResourceList PodRequests(const api::PodSpec& spec, bool non_zero);

PodInfoPtr MakePodInfo(std::shared_ptr<const api::Pod> pod, int32_t priority,
                       PriorityClassTraits traits = {});

// Upstream's non-zero defaults.
inline constexpr int64_t kDefaultMilliCpuRequest = 100;
inline constexpr int64_t kDefaultMemoryRequest = 200LL * 1024 * 1024;

}  // namespace kubesched::framework
