#include "scheduler/instrumentation/metrics_observer.h"

#include <algorithm>
#include <utility>

#include "policy/policy.h"

namespace kubesched::metrics {

ProfileMetrics* ProfileOf(const framework::PodInfo& pod, SchedulerMetrics& metrics) {
  if (const std::optional<std::string_view> policy = policy::RequestedPolicy(pod.get())) {
    if (ProfileMetrics* found = metrics.FindProfile(*policy)) return found;
  }
  return metrics.FindProfile(pod.get().spec.scheduler_name);
}

ProfileMetrics* ProfileOf(const queue::QueuedPodInfo& queued, SchedulerMetrics& metrics) {
  if (!queued.bound_policy.empty()) {
    if (ProfileMetrics* found = metrics.FindProfile(queued.bound_policy)) return found;
  }
  return ProfileOf(*queued.pod_info, metrics);
}

namespace {

double SecondsBetween(std::chrono::steady_clock::time_point start,
                      std::chrono::steady_clock::time_point end) {
  return std::chrono::duration<double>(end - start).count();
}

}  // namespace

MetricsObserver::MetricsObserver(SchedulerMetrics* metrics, const util::Clock* clock)
    : metrics_(metrics), clock_(clock) {}

void MetricsObserver::OnPolicyChosenByBinding(const framework::PodInfo& pod,
                                              const std::string& policy) {
  bound_key_ = pod.key;
  bound_profile_ = metrics_->FindProfile(policy);
}

ProfileMetrics* MetricsObserver::AttemptProfile(const framework::PodInfo& pod) const {
  if (bound_profile_ != nullptr && bound_key_ == pod.key) return bound_profile_;
  return ProfileOf(pod, *metrics_);
}

void MetricsObserver::OnNodeSelected(const queue::QueuedPodInfo& queued, const std::string& node,
                                     double seconds) {
  metrics_->ObserveAlgorithm(seconds);
  const auto cycle_start = SteadyClock::now() - std::chrono::duration_cast<SteadyClock::duration>(
                                                    std::chrono::duration<double>(seconds));
  ProfileMetrics* profile = AttemptProfile(*queued.pod_info);
  const framework::GangMembership& gang = queued.pod_info->gang;
  std::lock_guard<std::mutex> lock(mu_);
  binding_[queued.pod_info->key] = Binding{profile, cycle_start, queued.initial_attempt_timestamp};
  if (gang.InGroup()) {
    GroupTiming& group = groups_[gang.key];
    group.first_attempt = std::min(group.first_attempt, queued.initial_attempt_timestamp);
  }
}

void MetricsObserver::Failed(const framework::PodInfo& pod, AttemptResult result) {
  {
    // A failure after node selection (assume, Reserve, Permit) ends the attempt before binding.
    std::lock_guard<std::mutex> lock(mu_);
    binding_.erase(pod.key);
  }
  failed_key_ = pod.key;
  failed_result_ = result;
}

void MetricsObserver::OnUnschedulable(const framework::PodInfo& pod, const std::string&, int) {
  Failed(pod, AttemptResult::kUnschedulable);
}

void MetricsObserver::OnError(const framework::PodInfo& pod, const std::string&, int) {
  Failed(pod, AttemptResult::kError);
}

void MetricsObserver::OnAttempt(const framework::PodInfo& pod, double seconds) {
  ProfileMetrics* profile = AttemptProfile(pod);
  bound_key_.clear();
  bound_profile_ = nullptr;
  // Not failed: a node was selected and the binding cycle counts the attempt when it ends.
  if (failed_key_ != pod.key) return;
  failed_key_.clear();
  if (profile != nullptr) profile->ObserveAttempt(failed_result_, seconds);
}

bool MetricsObserver::EndBinding(const framework::PodInfo& pod, Binding* binding) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = binding_.find(pod.key);
  if (it == binding_.end()) return false;
  *binding = it->second;
  binding_.erase(it);
  return true;
}

void MetricsObserver::OnBound(const framework::PodInfo& pod, const std::string&, int attempts) {
  Binding binding;
  if (!EndBinding(pod, &binding)) {
    if (ProfileMetrics* profile = ProfileOf(pod, *metrics_)) profile->CountBind(true);
    return;
  }
  if (binding.profile != nullptr) {
    binding.profile->CountBind(true);
    binding.profile->ObserveAttempt(AttemptResult::kScheduled,
                                    SecondsBetween(binding.cycle_start, SteadyClock::now()));
  }
  metrics_->ObservePodScheduled(attempts,
                                absl::ToDoubleSeconds(clock_->Now() - binding.first_attempt));
}

void MetricsObserver::OnBindFailed(const framework::PodInfo& pod, const std::string&,
                                   const std::string&) {
  Binding binding;
  if (!EndBinding(pod, &binding)) {
    if (ProfileMetrics* profile = ProfileOf(pod, *metrics_)) profile->CountBind(false);
    return;
  }
  if (binding.profile != nullptr) {
    binding.profile->CountBind(false);
    binding.profile->ObserveAttempt(AttemptResult::kError,
                                    SecondsBetween(binding.cycle_start, SteadyClock::now()));
  }
}

void MetricsObserver::OnPreempted(const framework::PodInfo&, const std::string&,
                                  const std::vector<std::string>& victims) {
  metrics_->ObservePreemptionVictims(victims.size());
}

void MetricsObserver::OnGangMemberBound(const framework::PodInfo& member, int32_t min_member) {
  double seconds = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = groups_.find(member.gang.key);
    // Not selected since the group was released (it was deleted meanwhile), or already placed.
    if (it == groups_.end() || it->second.placed) return;
    GroupTiming& group = it->second;
    if (++group.bound < min_member) return;
    group.placed = true;
    seconds = absl::ToDoubleSeconds(clock_->Now() - group.first_attempt);
  }
  metrics_->ObservePodGroupScheduled(seconds);
}

void MetricsObserver::OnGangReleased(const std::string& gang_key) {
  std::lock_guard<std::mutex> lock(mu_);
  groups_.erase(gang_key);
}

size_t MetricsObserver::TrackedGroups() {
  std::lock_guard<std::mutex> lock(mu_);
  return groups_.size();
}

// ---------------------------------------------------------------------------------------------
// ObserverFanout

ObserverFanout::ObserverFanout(std::vector<scheduler::SchedulingObserver*> observers)
    : observers_(std::move(observers)) {
  std::erase(observers_, nullptr);
}

void ObserverFanout::OnNodeSelected(const queue::QueuedPodInfo& queued, const std::string& node,
                                    double seconds) {
  for (auto* o : observers_) o->OnNodeSelected(queued, node, seconds);
}
void ObserverFanout::OnPolicyChosenByBinding(const framework::PodInfo& pod,
                                             const std::string& policy) {
  for (auto* o : observers_) o->OnPolicyChosenByBinding(pod, policy);
}
void ObserverFanout::OnAttempt(const framework::PodInfo& pod, double seconds) {
  for (auto* o : observers_) o->OnAttempt(pod, seconds);
}
void ObserverFanout::OnUnschedulable(const framework::PodInfo& pod, const std::string& message,
                                     int attempts) {
  for (auto* o : observers_) o->OnUnschedulable(pod, message, attempts);
}
void ObserverFanout::OnError(const framework::PodInfo& pod, const std::string& message,
                             int attempts) {
  for (auto* o : observers_) o->OnError(pod, message, attempts);
}
void ObserverFanout::OnBound(const framework::PodInfo& pod, const std::string& node, int attempts) {
  for (auto* o : observers_) o->OnBound(pod, node, attempts);
}
void ObserverFanout::OnBindFailed(const framework::PodInfo& pod, const std::string& node,
                                  const std::string& message) {
  for (auto* o : observers_) o->OnBindFailed(pod, node, message);
}
void ObserverFanout::OnPreempted(const framework::PodInfo& pod, const std::string& node,
                                 const std::vector<std::string>& victims) {
  for (auto* o : observers_) o->OnPreempted(pod, node, victims);
}
void ObserverFanout::OnEvicting(const framework::PodInfo& victim,
                                const framework::PodInfo& preemptor, const std::string& node) {
  for (auto* o : observers_) o->OnEvicting(victim, preemptor, node);
}
void ObserverFanout::OnEvicted(const framework::PodInfo& victim,
                               const framework::PodInfo& preemptor, const std::string& node) {
  for (auto* o : observers_) o->OnEvicted(victim, preemptor, node);
}
void ObserverFanout::OnNominationCleared(const framework::PodInfo& pod) {
  for (auto* o : observers_) o->OnNominationCleared(pod);
}
void ObserverFanout::OnGangMemberBound(const framework::PodInfo& member, int32_t min_member) {
  for (auto* o : observers_) o->OnGangMemberBound(member, min_member);
}
void ObserverFanout::OnGangReleased(const std::string& gang_key) {
  for (auto* o : observers_) o->OnGangReleased(gang_key);
}

void ObserverFanout::OnConfigWarning(const api::ObjectMeta& config_map, const std::string& reason,
                                     const std::string& message) {
  for (auto* o : observers_) o->OnConfigWarning(config_map, reason, message);
}

}  // namespace kubesched::metrics
