#pragma once

#include <string>
#include <vector>

#include "scheduler/client/async_writer.h"
#include "scheduler/client/event_recorder.h"
#include "scheduler/client/pod_status_writer.h"
#include "scheduler/core/observer.h"
#include "scheduler/framework/pod_info.h"
#include "scheduler/util/clock.h"

namespace kubesched::scheduler {

// Reports scheduling outcomes to the API server: FailedScheduling / Scheduled / Preempted events,
// the PodScheduled and DisruptionTarget conditions and the nominated node name. Called on the
// scheduling thread and bind workers; it only queues work (the recorder and the writer send from
// their own threads), so nobody waits on the network, except OnEvicting (see there). Failures are
// logged; a pod that is gone (NotFound) is not an error.
//
// The recorder, writer, queue and clock must outlive it; the queue must be stopped before the
// reporter goes, as its queued writes refer to it.
class ApiReporter : public SchedulingObserver {
 public:
  ApiReporter(client::EventRecorder* events, client::PodStatusWriter* status,
              client::AsyncWriter* status_queue, const util::Clock* clock)
      : events_(events), status_(status), status_queue_(status_queue), clock_(clock) {}

  void OnUnschedulable(const framework::PodInfo& pod, const std::string& message,
                       int attempts) override;
  void OnError(const framework::PodInfo& pod, const std::string& message, int attempts) override;
  void OnBound(const framework::PodInfo& pod, const std::string& node, int attempts) override;
  void OnBindFailed(const framework::PodInfo& pod, const std::string& node,
                    const std::string& message) override;
  void OnPreempted(const framework::PodInfo& pod, const std::string& node,
                   const std::vector<std::string>& victims) override;
  // On the bind worker that deletes the victim, so the condition is written first (upstream).
  void OnEvicting(const framework::PodInfo& victim, const framework::PodInfo& preemptor,
                  const std::string& node) override;
  void OnEvicted(const framework::PodInfo& victim, const framework::PodInfo& preemptor,
                 const std::string& node) override;
  void OnNominationCleared(const framework::PodInfo& pod) override;

 private:
  client::EventRecorder* events_;
  client::PodStatusWriter* status_;
  client::AsyncWriter* status_queue_;
  const util::Clock* clock_;
};

}  // namespace kubesched::scheduler
