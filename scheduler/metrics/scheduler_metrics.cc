#include "scheduler/metrics/scheduler_metrics.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "scheduler/util/strings.h"

namespace kubesched::metrics {
namespace {

using prometheus::BuildCounter;

constexpr std::array<AttemptResult, 3> kAttemptResults = {
    AttemptResult::kScheduled, AttemptResult::kUnschedulable, AttemptResult::kError};

// client-go's rest_client_request_duration_seconds buckets.
std::vector<double> ApiRequestBuckets() {
  return {0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0};
}

}  // namespace

std::string_view AttemptResultName(AttemptResult result) {
  switch (result) {
    case AttemptResult::kScheduled:
      return "scheduled";
    case AttemptResult::kUnschedulable:
      return "unschedulable";
    case AttemptResult::kError:
      return "error";
  }
  return "error";
}

// ---------------------------------------------------------------------------------------------
// ProfileMetrics

ProfileMetrics::ProfileMetrics(std::string label, prometheus::Family<prometheus::Counter>& attempts,
                               HistogramFamily& attempt_duration, HistogramFamily& extension_points,
                               prometheus::Family<prometheus::Counter>& binds)
    : label_(std::move(label)), extension_point_family_(extension_points) {
  // Every result's series exists from the start (at zero), so that rate() and ratios work from
  // the first scrape on.
  for (AttemptResult result : kAttemptResults) {
    const auto index = static_cast<size_t>(result);
    const std::string result_name(AttemptResultName(result));
    attempts_[index] = &attempts.Add({{"result", result_name}, {"profile", label_}});
    attempt_duration_[index] = &attempt_duration.Get({result_name, label_});
  }
  bound_ = &binds.Add({{"result", "bound"}, {"profile", label_}});
  bind_failed_ = &binds.Add({{"result", "failed"}, {"profile", label_}});
}

void ProfileMetrics::ObserveAttempt(AttemptResult result, double seconds) {
  const auto index = static_cast<size_t>(result);
  attempts_[index]->Increment();
  attempt_duration_[index]->Observe(seconds);
}

void ProfileMetrics::ObserveExtensionPoint(ExtensionPoint point, framework::Code code,
                                           double seconds) {
  const size_t index =
      static_cast<size_t>(point) * PluginTimings::kCodes + static_cast<size_t>(code);
  if (index >= extension_points_.size()) return;
  AtomicHistogram* histogram = extension_points_[index].load(std::memory_order_acquire);
  if (histogram == nullptr) {
    // Racing creators get the same series: the family returns the existing one.
    histogram = &extension_point_family_.Get(
        {std::string(ExtensionPointName(point)), std::string(framework::CodeName(code)), label_});
    extension_points_[index].store(histogram, std::memory_order_release);
  }
  histogram->Observe(seconds);
}

void ProfileMetrics::CountBind(bool bound) { (bound ? bound_ : bind_failed_)->Increment(); }

// ---------------------------------------------------------------------------------------------
// SchedulerMetrics

SchedulerMetrics::SchedulerMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      plugin_timings_(std::make_shared<PluginTimings>()),
      attempt_duration_(std::make_shared<HistogramFamily>(
          kSchedulingAttemptDuration,
          "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
          std::vector<std::string>{"result", "profile"}, ExponentialBuckets(0.001, 2, 15))),
      algorithm_duration_family_(std::make_shared<HistogramFamily>(
          kSchedulingAlgorithmDuration, "Scheduling algorithm latency in seconds",
          std::vector<std::string>{}, ExponentialBuckets(0.001, 2, 15))),
      sli_duration_(std::make_shared<HistogramFamily>(
          kPodSchedulingSliDuration,
          "E2e latency for a pod being scheduled, from the time the pod enters the scheduling "
          "queue and might involve multiple scheduling attempts.",
          std::vector<std::string>{"attempts"}, ExponentialBuckets(0.01, 2, 20))),
      pod_attempts_family_(std::make_shared<HistogramFamily>(
          kPodSchedulingAttempts, "Number of attempts to successfully schedule a pod.",
          std::vector<std::string>{}, ExponentialBuckets(1, 2, 5))),
      extension_points_(std::make_shared<HistogramFamily>(
          kFrameworkExtensionPointDuration,
          "Latency for running all plugins of a specific extension point.",
          std::vector<std::string>{"extension_point", "status", "profile"},
          ExponentialBuckets(0.0001, 2, 12))),
      preemption_victims_family_(std::make_shared<HistogramFamily>(
          kPreemptionVictims, "Number of selected preemption victims", std::vector<std::string>{},
          ExponentialBuckets(1, 2, 7))),
      api_request_duration_(std::make_shared<HistogramFamily>(
          kRestClientRequestDuration, "Request latency in seconds. Broken down by verb, and host.",
          std::vector<std::string>{"verb", "host"}, ApiRequestBuckets())),
      // The SLI's buckets: a group's wait is a pod's, for all its members at once.
      pod_group_duration_family_(std::make_shared<HistogramFamily>(
          kPodGroupSchedulingDuration,
          "Latency for a pod group being scheduled whole, from its first member's first "
          "scheduling attempt to the binding that makes minMember of its members bound.",
          std::vector<std::string>{}, ExponentialBuckets(0.01, 2, 20))),
      algorithm_duration_(algorithm_duration_family_->Get({})),
      pod_attempts_(pod_attempts_family_->Get({})),
      preemption_victims_(preemption_victims_family_->Get({})),
      pod_group_duration_(pod_group_duration_family_->Get({})),
      attempts_(BuildCounter()
                    .Name(kScheduleAttemptsTotal)
                    .Help("Number of attempts to schedule pods, by the result. 'unschedulable' "
                          "means a pod could not be scheduled, while 'error' means an internal "
                          "scheduler problem.")
                    .Register(*registry_)),
      preemption_attempts_(BuildCounter()
                               .Name(kPreemptionAttemptsTotal)
                               .Help("Total preemption attempts in the cluster till now")
                               .Register(*registry_)
                               .Add({})),
      api_requests_(BuildCounter()
                        .Name(kRestClientRequestsTotal)
                        .Help("Number of HTTP requests, partitioned by status code, method, and "
                              "host.")
                        .Register(*registry_)),
      leader_status_(prometheus::BuildGauge()
                         .Name(kLeaderElectionMasterStatus)
                         .Help("Gauge of if the reporting system is master of the relevant lease, "
                               "0 indicates backup, 1 indicates master. 'name' is the string used "
                               "to identify the lease. Please make sure to group by name.")
                         .Register(*registry_)),
      binds_(BuildCounter()
                 .Name(kBindsTotal)
                 .Help("Binding cycles by outcome: 'bound' when the binding was accepted, "
                       "'failed' when it was not and the pod went back to the queue.")
                 .Register(*registry_)),
      policy_reloads_(BuildCounter()
                          .Name(kPolicyReloadsTotal)
                          .Help("Policy updates by result: 'applied', or 'rejected' (the last "
                                "good policies stay in force).")
                          .Register(*registry_)) {
  // Both results exist from the start, at zero.
  policy_reloads_applied_ = &policy_reloads_.Add({{"result", "applied"}});
  policy_reloads_rejected_ = &policy_reloads_.Add({{"result", "rejected"}});
}

std::vector<std::shared_ptr<prometheus::Collectable>> SchedulerMetrics::collectables() const {
  return {registry_,
          attempt_duration_,
          algorithm_duration_family_,
          sli_duration_,
          pod_attempts_family_,
          extension_points_,
          preemption_victims_family_,
          api_request_duration_,
          pod_group_duration_family_,
          plugin_timings_};
}

ProfileMetrics* SchedulerMetrics::FindProfile(std::string_view label) {
  ProfileMetrics* last = last_profile_.load(std::memory_order_acquire);
  if (last != nullptr && last->label() == label) return last;
  absl::MutexLock lock(&mu_);
  auto it = profiles_.find(util::Absl(label));
  if (it == profiles_.end()) return nullptr;
  last_profile_.store(it->second.get(), std::memory_order_release);
  return it->second.get();
}

ProfileMetrics& SchedulerMetrics::Profile(std::string_view label) {
  if (ProfileMetrics* found = FindProfile(label); found != nullptr) return *found;
  absl::MutexLock lock(&mu_);
  auto it = profiles_.find(util::Absl(label));
  if (it == profiles_.end()) {
    std::unique_ptr<ProfileMetrics> created(new ProfileMetrics(
        std::string(label), attempts_, *attempt_duration_, *extension_points_, binds_));
    it = profiles_.emplace(std::string(label), std::move(created)).first;
  }
  last_profile_.store(it->second.get(), std::memory_order_release);
  return *it->second;
}

void SchedulerMetrics::ObserveAlgorithm(double seconds) { algorithm_duration_.Observe(seconds); }

void SchedulerMetrics::ObservePodScheduled(int attempts, double sli_seconds) {
  pod_attempts_.Observe(static_cast<double>(attempts));
  const size_t index = static_cast<size_t>(std::clamp(attempts, 1, 15) - 1);
  AtomicHistogram* histogram = sli_by_attempts_[index].load(std::memory_order_acquire);
  if (histogram == nullptr) {
    histogram = &sli_duration_->Get({index == 14 ? "15+" : absl::StrCat(index + 1)});
    sli_by_attempts_[index].store(histogram, std::memory_order_release);
  }
  histogram->Observe(std::max(0.0, sli_seconds));
}

void SchedulerMetrics::CountPreemptionAttempt() { preemption_attempts_.Increment(); }

void SchedulerMetrics::ObservePreemptionVictims(size_t victims) {
  preemption_victims_.Observe(static_cast<double>(victims));
}

void SchedulerMetrics::ObserveApiRequest(std::string_view host, std::string_view method, int status,
                                         double seconds) {
  prometheus::Counter* counter = nullptr;
  {
    absl::MutexLock lock(&mu_);
    const std::string code = status >= 100 && status <= 599 ? absl::StrCat(status) : "<error>";
    auto& slot =
        api_requests_by_key_[absl::StrCat(util::Absl(method), " ", code, " ", util::Absl(host))];
    if (slot == nullptr) {
      slot = &api_requests_.Add(
          {{"code", code}, {"method", std::string(method)}, {"host", std::string(host)}});
    }
    counter = slot;
  }
  counter->Increment();
  if (seconds >= 0) {
    api_request_duration_->Get({std::string(method), std::string(host)}).Observe(seconds);
  }
}

void SchedulerMetrics::SetLeaderStatus(std::string_view lease, bool leading) {
  absl::MutexLock lock(&mu_);
  leader_status_.Add({{"name", std::string(lease)}}).Set(leading ? 1 : 0);
}

void SchedulerMetrics::ObservePodGroupScheduled(double seconds) {
  pod_group_duration_.Observe(std::max(0.0, seconds));
}

void SchedulerMetrics::CountPolicyReload(bool applied) {
  (applied ? policy_reloads_applied_ : policy_reloads_rejected_)->Increment();
}

}  // namespace kubesched::metrics
