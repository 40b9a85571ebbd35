#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
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
  // A Warning Event on the ConfigMap, action "Reload".
  void OnConfigWarning(const api::ObjectMeta& config_map, const std::string& reason,
                       const std::string& message) override;

  // Writes again the reasons (PodScheduled=False) the API server refused or never answered, each
  // after a backoff (1 s doubling to 16 s): without this a pending pod whose last write failed
  // would say nothing until it is tried again, which may be minutes. Called about once a second
  // by the scheduling loop; only queues work.
  void RetryUnwrittenReasons();
  // Pods whose reason is waiting to be written again.
  size_t unwritten_reasons() const;

 private:
  // The PodScheduled=False writes of one pod: in flight, failed and waiting for a retry, or
  // overtaken by its bind.
  struct ReasonWrites {
    uint64_t latest = 0;  // sequence of the newest write started; older outcomes do not count
    int in_flight = 0;
    bool failed = false;  // the newest write failed: `pod` and `message` are written again
    bool bound = false;   // nothing more to write
    std::shared_ptr<const api::Pod> pod;
    std::string message;
    int retries = 0;
    absl::Time next_try;
  };

  // Queues the PodScheduled=False write of `pod`.
  void WriteReason(std::shared_ptr<const api::Pod> pod, std::string message);
  // Sends write `write` of `key` on the status queue, then records its outcome.
  void QueueReasonWrite(const std::string& key, uint64_t write, std::shared_ptr<const api::Pod> pod,
                        std::string message);
  void AfterReasonWrite(const std::string& key, uint64_t write, const absl::Status& status,
                        std::shared_ptr<const api::Pod> pod, std::string message);

  client::EventRecorder* events_;
  client::PodStatusWriter* status_;
  client::AsyncWriter* status_queue_;
  const util::Clock* clock_;
  // By pod key, only while a write is in flight or failed: entries go when nothing is left to do.
  // Guarded by mu_: written by the scheduling loop, the bind workers and the status queue's thread.
  mutable absl::Mutex mu_;
  uint64_t last_write_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, ReasonWrites> reasons_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubesched::scheduler
