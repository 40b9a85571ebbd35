#pragma once

// What the scheduler tells about the pods it handles. Implemented outside the core (simulate's
// report, run mode's events and pod conditions, the Prometheus metrics), so that the core names
// none of them.

#include <cstdint>
#include <string>
#include <vector>

#include "scheduler/framework/pod_info.h"
#include "scheduler/queue/scheduling_queue.h"

namespace kubesched::scheduler {

// OnConfigWarning's reason for a refused update of the policy ConfigMap.
inline constexpr char kPolicyConfigRejectedReason[] = "PolicyConfigRejected";

// What happened to pods, for whoever reports it: simulate's summary, run's events and pod
// conditions. Called from the scheduling thread (attempts, failures) and from bind workers
// (bind results); implementations do their own locking.
class SchedulingObserver {
 public:
  virtual ~SchedulingObserver() = default;
  // A policy binding chose `policy` for the pod (which names no policy itself) this cycle, before
  // the algorithm runs; the attempt then counts under that policy's profile.
  virtual void OnPolicyChosenByBinding(const framework::PodInfo& pod, const std::string& policy) {}
  // One scheduling attempt finished; `seconds` is its wall time.
  virtual void OnAttempt(const framework::PodInfo& pod, double seconds) {}
  // The algorithm chose `node`, `seconds` after the cycle began (before assume and Reserve).
  virtual void OnNodeSelected(const queue::QueuedPodInfo& queued, const std::string& node,
                              double seconds) {}
  virtual void OnUnschedulable(const framework::PodInfo& pod, const std::string& message,
                               int attempts) {}
  virtual void OnError(const framework::PodInfo& pod, const std::string& message, int attempts) {}
  virtual void OnBound(const framework::PodInfo& pod, const std::string& node, int attempts) {}
  virtual void OnBindFailed(const framework::PodInfo& pod, const std::string& node,
                            const std::string& message) {}
  // A PostFilter plugin (preemption) nominated `node` for the pod and chose `victims`
  // ("namespace/name"), which are deleted next (on a bind worker).
  virtual void OnPreempted(const framework::PodInfo& pod, const std::string& node,
                           const std::vector<std::string>& victims) {}
  // Around each victim's deletion, on the bind worker that deletes it: before (run mode marks it
  // with a DisruptionTarget condition) and after it was deleted (the Preempted event).
  virtual void OnEvicting(const framework::PodInfo& victim, const framework::PodInfo& preemptor,
                          const std::string& node) {}
  virtual void OnEvicted(const framework::PodInfo& victim, const framework::PodInfo& preemptor,
                         const std::string& node) {}
  // A pod of lower priority lost its nomination to `node` to a preemptor.
  virtual void OnNominationCleared(const framework::PodInfo& pod) {}
  // A member of a usable pod group (PodInfo::gang) was bound, right after its OnBound, on the
  // thread that bound it; `min_member` is the group's (its PodGroup's spec, else the member's
  // annotation). Members beyond minMember are told too.
  virtual void OnGangMemberBound(const framework::PodInfo& member, int32_t min_member) {}
  // The group `gang_key` was given up (its members waiting at Permit were rejected and its quota
  // hold released), its PodGroup was deleted, or its last member went: what an observer keeps
  // about it may go. May be told more than once, and of groups it never heard of.
  virtual void OnGangReleased(const std::string& gang_key) {}
  // Something users should see on a configuration ConfigMap (kubectl describe): a refused update
  // (QueueConfigRejected, PolicyConfigRejected) or typed limits matching no node
  // (TypedLimitMatchesNoNode). Called on informer threads and the thread that starts scheduling,
  // never the scheduling one; must not block.
  virtual void OnConfigWarning(const api::ObjectMeta& config_map, const std::string& reason,
                               const std::string& message) {}
};

}  // namespace kubesched::scheduler
