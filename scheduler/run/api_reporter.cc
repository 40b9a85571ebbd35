#include "scheduler/run/api_reporter.h"

#include <memory>

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
  std::shared_ptr<const api::Pod> object = pod.pod;
  status_queue_->Enqueue([this, object, message] {
    const absl::Status status = status_->SetUnschedulable(*object, message, clock_->Now());
    if (!status.ok() && !absl::IsNotFound(status)) LogWarning(status.message());
  });
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
}  // namespace kubesched::scheduler
