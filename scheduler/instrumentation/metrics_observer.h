#pragma once

// What the scheduler reports through SchedulingObserver, turned into kube-scheduler's attempt,
// latency, preemption and bind metrics.

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/metrics/scheduler_metrics.h"
#include "scheduler/util/clock.h"

namespace kubesched::metrics {

// The series of the profile a pod is scheduled under, as upstream's `profile` label: the policy
// its kubesched.io/policy annotation names when that policy is configured, else the profile of
// its schedulerName. Only names whose series exist (configured profiles, policies whose
// framework was built) are returned, so a pod's free text never creates a series; null when
// neither exists (a pod no profile schedules).
ProfileMetrics* ProfileOf(const framework::PodInfo& pod, SchedulerMetrics& metrics);
// The same for a queued pod: the policy a policy binding chose for it in its latest cycle comes
// first.
ProfileMetrics* ProfileOf(const queue::QueuedPodInfo& queued, SchedulerMetrics& metrics);

// Results are counted as upstream counts them: an attempt that picked a node is "scheduled" only
// when its binding succeeds ("error" when it fails), and its duration runs from the start of the
// scheduling cycle to the end of the binding; an attempt that found no node is "unschedulable",
// one that failed internally "error". The SLI runs from the pod's first attempt to its binding on
// the scheduler's clock (virtual in simulate, so it shows the backoff a pod waited through).
//
// A pod group's duration runs on the same clock, from the earliest first attempt of its members
// that reached node selection to the binding of its minMember-th member; one observation per
// group placed. Kept per group from its first member's node selection until it is released
// (given up, its PodGroup deleted, its last member gone), so members beyond minMember do not
// start it again; a group given up starts again from its members' first attempts.
//
// Threads: scheduling-thread callbacks and bind-worker callbacks may interleave; one mutex guards
// the pods between their node selection and their binding's end, and the groups. The failure of
// the current attempt is the scheduling thread's alone (OnUnschedulable / OnError, then
// OnAttempt), so it takes no lock. std::mutex rather than absl::Mutex: Debian's abseil checks
// for deadlocks on every Lock, which cost more than everything else recorded per pod.
class MetricsObserver : public scheduler::SchedulingObserver {
 public:
  // `metrics` and `clock` (the scheduler's) must outlive the observer.
  MetricsObserver(SchedulerMetrics* metrics, const util::Clock* clock);

  void OnNodeSelected(const queue::QueuedPodInfo& queued, const std::string& node,
                      double seconds) override;
  void OnPolicyChosenByBinding(const framework::PodInfo& pod, const std::string& policy) override;
  void OnAttempt(const framework::PodInfo& pod, double seconds) override;
  void OnUnschedulable(const framework::PodInfo& pod, const std::string& message,
                       int attempts) override;
  void OnError(const framework::PodInfo& pod, const std::string& message, int attempts) override;
  void OnBound(const framework::PodInfo& pod, const std::string& node, int attempts) override;
  void OnBindFailed(const framework::PodInfo& pod, const std::string& node,
                    const std::string& message) override;
  void OnPreempted(const framework::PodInfo& pod, const std::string& node,
                   const std::vector<std::string>& victims) override;
  void OnGangMemberBound(const framework::PodInfo& member, int32_t min_member) override;
  void OnGangReleased(const std::string& gang_key) override;

  // The pod groups whose timing is kept (tests: it must not grow without bound).
  size_t TrackedGroups();

 private:
  using SteadyClock = std::chrono::steady_clock;
  // A pod between node selection and the end of its binding cycle.
  struct Binding {
    ProfileMetrics* profile = nullptr;
    SteadyClock::time_point cycle_start;
    absl::Time first_attempt;
  };
  // The attempt failed before its binding cycle: counted when OnAttempt ends it.
  void Failed(const framework::PodInfo& pod, AttemptResult result);
  // The series the current attempt of `pod` counts under.
  ProfileMetrics* AttemptProfile(const framework::PodInfo& pod) const;
  // Ends the binding of `pod`; false if it was not being tracked.
  bool EndBinding(const framework::PodInfo& pod, Binding* binding);

  // A pod group from its first member's node selection until it is released.
  struct GroupTiming {
    absl::Time first_attempt = absl::InfiniteFuture();
    int32_t bound = 0;    // members bound meanwhile
    bool placed = false;  // observed: minMember members were bound
  };

  SchedulerMetrics* const metrics_;
  const util::Clock* const clock_;
  std::mutex mu_;
  absl::flat_hash_map<std::string, Binding> binding_;     // guarded by mu_
  absl::flat_hash_map<std::string, GroupTiming> groups_;  // guarded by mu_; by gang key
  // The pod whose current attempt failed, and how (scheduling thread only).
  std::string failed_key_;
  AttemptResult failed_result_ = AttemptResult::kError;
  // The pod whose current attempt runs under the policy a binding chose, and that policy's series
  // (scheduling thread only).
  std::string bound_key_;
  ProfileMetrics* bound_profile_ = nullptr;
};

// Hands every event to each observer in turn (null entries are skipped), so that metrics and a
// mode's own reporting can watch the same scheduler.
class ObserverFanout : public scheduler::SchedulingObserver {
 public:
  explicit ObserverFanout(std::vector<scheduler::SchedulingObserver*> observers);

  void OnNodeSelected(const queue::QueuedPodInfo& queued, const std::string& node,
                      double seconds) override;
  void OnPolicyChosenByBinding(const framework::PodInfo& pod, const std::string& policy) override;
  void OnAttempt(const framework::PodInfo& pod, double seconds) override;
  void OnUnschedulable(const framework::PodInfo& pod, const std::string& message,
                       int attempts) override;
  void OnError(const framework::PodInfo& pod, const std::string& message, int attempts) override;
  void OnBound(const framework::PodInfo& pod, const std::string& node, int attempts) override;
  void OnBindFailed(const framework::PodInfo& pod, const std::string& node,
                    const std::string& message) override;
  void OnPreempted(const framework::PodInfo& pod, const std::string& node,
                   const std::vector<std::string>& victims) override;
  void OnEvicting(const framework::PodInfo& victim, const framework::PodInfo& preemptor,
                  const std::string& node) override;
  void OnEvicted(const framework::PodInfo& victim, const framework::PodInfo& preemptor,
                 const std::string& node) override;
  void OnNominationCleared(const framework::PodInfo& pod) override;
  void OnGangMemberBound(const framework::PodInfo& member, int32_t min_member) override;
  void OnGangReleased(const std::string& gang_key) override;
  void OnConfigWarning(const api::ObjectMeta& config_map, const std::string& reason,
                       const std::string& message) override;

 private:
  std::vector<scheduler::SchedulingObserver*> observers_;
};

}  // namespace kubesched::metrics
