#include "scheduler/run/api_reporter.h"

#include <algorithm>
#include <memory>
#include <tuple>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/api/objects.h"
#include "scheduler/util/log.h"

namespace kubesched::scheduler {

using util::LogWarning;

void ApiReporter::OnUnschedulable(const framework::PodInfo& pod, const std::string& message,
                                  int attempts) {
  if (util::V(2)) {
    util::LogV(2,
               absl::StrCat("pod ", pod.key, " unschedulable (attempt ", attempts, "): ", message),
               {util::KObjFromKey("pod", pod.key), util::KV("attempts", attempts),
                util::KV("reason", message)});
  }
  events_->FailedScheduling(pod.get(), message);
  WriteReason(pod.pod, message);
}

void ApiReporter::WriteReason(std::shared_ptr<const api::Pod> pod, std::string message) {
  const std::string key = pod->Key();
  uint64_t write = 0;
  {
    absl::MutexLock lock(&mu_);
    write = ++last_write_;
    ReasonWrites& writes = reasons_[key];
    writes.latest = write;
    writes.bound = false;  // a pod of this name pending again
    ++writes.in_flight;
  }
  QueueReasonWrite(key, write, std::move(pod), std::move(message));
}

void ApiReporter::QueueReasonWrite(const std::string& key, uint64_t write,
                                   std::shared_ptr<const api::Pod> pod, std::string message) {
  const bool queued = status_queue_->Enqueue([this, key, write, pod, message]() mutable {
    const absl::Status status = status_->SetUnschedulable(*pod, message, clock_->Now());
    AfterReasonWrite(key, write, status, std::move(pod), std::move(message));
  });
  // A full queue is a write that failed: retried like one.
  if (!queued) {
    AfterReasonWrite(key, write, absl::UnavailableError("the status queue is full"), std::move(pod),
                     std::move(message));
  }
}

void ApiReporter::AfterReasonWrite(const std::string& key, uint64_t write,
                                   const absl::Status& status, std::shared_ptr<const api::Pod> pod,
                                   std::string message) {
  absl::MutexLock lock(&mu_);
  auto it = reasons_.find(key);
  if (it == reasons_.end()) return;
  ReasonWrites& writes = it->second;
  --writes.in_flight;
  if (write == writes.latest && !writes.bound) {
    writes.failed = !status.ok() && !absl::IsNotFound(status);
    if (!writes.failed) {
      writes.retries = 0;
    } else {
      if (writes.retries == 0) LogWarning(absl::StrCat(status.message(), "; written again later"));
      if (pod != nullptr) {
        writes.pod = std::move(pod);
        writes.message = std::move(message);
      }
      writes.next_try = clock_->Now() + absl::Seconds(1 << std::min(writes.retries, 4));
      ++writes.retries;
    }
  }
  if (writes.in_flight == 0 && (!writes.failed || writes.bound || writes.pod == nullptr)) {
    reasons_.erase(it);
  }
}

void ApiReporter::RetryUnwrittenReasons() {
  constexpr size_t kMaxPerCall = 256;  // leaves the writer's queue to new outcomes
  const absl::Time now = clock_->Now();
  std::vector<std::tuple<std::string, uint64_t, std::shared_ptr<const api::Pod>, std::string>> due;
  {
    absl::MutexLock lock(&mu_);
    for (auto& [key, writes] : reasons_) {
      if (!writes.failed || writes.bound || writes.in_flight > 0 || writes.next_try > now) continue;
      ++writes.in_flight;
      due.emplace_back(key, writes.latest, writes.pod, writes.message);
      if (due.size() == kMaxPerCall) break;
    }
  }
  for (auto& [key, write, pod, message] : due) {
    QueueReasonWrite(key, write, std::move(pod), std::move(message));
  }
}

size_t ApiReporter::unwritten_reasons() const {
  absl::MutexLock lock(&mu_);
  size_t failed = 0;
  for (const auto& [key, writes] : reasons_) failed += writes.failed && !writes.bound ? 1 : 0;
  return failed;
}

void ApiReporter::OnError(const framework::PodInfo& pod, const std::string& message, int attempts) {
  events_->FailedScheduling(pod.get(), message);
}

void ApiReporter::OnBound(const framework::PodInfo& pod, const std::string& node, int attempts) {
  if (util::V(2)) {
    util::LogV(2,
               absl::StrCat("pod ", pod.key, " bound to node ", node, " (attempt ", attempts, ")"),
               {util::KObjFromKey("pod", pod.key), util::KV("node", node),
                util::KV("attempts", attempts)});
  }
  events_->Scheduled(pod.get(), node);
  absl::MutexLock lock(&mu_);
  if (auto it = reasons_.find(pod.key); it != reasons_.end()) {
    it->second.bound = true;  // writes still in flight find it so, and stop
    if (it->second.in_flight == 0) reasons_.erase(it);
  }
}

void ApiReporter::OnBindFailed(const framework::PodInfo& pod, const std::string& node,
                               const std::string& message) {
  if (util::V(1)) {
    util::LogV(
        1,
        absl::StrCat("bind of pod ", pod.key, " to node ", node,
                     " failed; the pod is requeued: ", message),
        {util::KObjFromKey("pod", pod.key), util::KV("node", node), util::KV("err", message)});
  }
  events_->Record(pod.get(), nullptr, client::EventKind::kWarning, "FailedScheduling", "Scheduling",
                  absl::StrCat("binding rejected: ", message));
}

void ApiReporter::OnPreempted(const framework::PodInfo& pod, const std::string& node,
                              const std::vector<std::string>& victims) {
  if (util::V(1)) {
    util::LogV(1,
               absl::StrCat("pod ", pod.key, " preempts ", absl::StrJoin(victims, ", "),
                            " on node ", node),
               {util::KObjFromKey("pod", pod.key), util::KV("node", node),
                util::KV("victims", absl::StrJoin(victims, ","))});
  }
  std::shared_ptr<const api::Pod> object = pod.pod;
  status_queue_->Enqueue([this, object, node] {
    const absl::Status status = status_->SetNominatedNodeName(*object, node);
    if (!status.ok() && !absl::IsNotFound(status)) LogWarning(status.message());
  });
}

void ApiReporter::OnEvicting(const framework::PodInfo& victim, const framework::PodInfo& preemptor,
                             const std::string& node) {
  const absl::Status status = status_->AddDisruptionTarget(
      victim.get(),
      absl::StrCat(preemptor.get().spec.scheduler_name,
                   ": preempting to accommodate a higher priority pod"),
      clock_->Now());
  if (!status.ok() && !absl::IsNotFound(status)) LogWarning(status.message());
}

void ApiReporter::OnEvicted(const framework::PodInfo& victim, const framework::PodInfo& preemptor,
                            const std::string& node) {
  events_->Record(victim.get(), &preemptor.get(), client::EventKind::kNormal, "Preempted",
                  "Preempting",
                  absl::StrCat("Preempted by pod ", preemptor.get().meta.uid, " on node ", node));
}

void ApiReporter::OnNominationCleared(const framework::PodInfo& pod) {
  std::shared_ptr<const api::Pod> object = pod.pod;
  status_queue_->Enqueue([this, object] {
    const absl::Status status = status_->SetNominatedNodeName(*object, "");
    if (!status.ok() && !absl::IsNotFound(status)) LogWarning(status.message());
  });
}
void ApiReporter::OnConfigWarning(const api::ObjectMeta& config_map, const std::string& reason,
                                  const std::string& message) {
  events_->RecordAbout("ConfigMap", config_map, client::EventKind::kWarning, reason, "Reload",
                       message);
}

}  // namespace kubesched::scheduler
