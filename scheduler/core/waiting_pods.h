#pragma once

// The pods held at Permit (framework::WaitingPods). An entry keeps everything its binding cycle
// needs, so that an Allow sends it on as if Permit had said yes, and a Reject or a timeout undoes
// it on the same path as any failure after assume.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/btree_map.h"
#include "absl/container/btree_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "scheduler/framework/cycle_state.h"
#include "scheduler/framework/waiting_pods.h"
#include "scheduler/queue/scheduling_queue.h"
#include "scheduler/runtime/framework.h"

namespace kubesched::scheduler {

struct WaitingPod {
  const runtime::Framework* fw = nullptr;
  std::shared_ptr<framework::CycleState> state;
  queue::QueuedPodInfo queued;
  framework::PodInfoPtr assumed;
  std::string node;
  absl::Duration timeout;  // the shortest the waiting plugins asked for
  absl::Time deadline;
  absl::btree_set<std::string, std::less<>> waiting_on;  // plugins that have not allowed it yet
  // Set by Reject or by the deadline: the plugin and the FailedScheduling message.
  std::optional<std::pair<std::string, std::string>> rejection;
};

// Thread-safety: one mutex guards the entries; the scheduling thread adds entries and takes the
// settled ones (TakeSettled), any thread may Allow or Reject.
class WaitingPodRegistry : public framework::WaitingPods {
 public:
  void Add(WaitingPod pod);
  bool Allow(std::string_view pod_key, std::string_view plugin) override;
  bool Reject(std::string_view pod_key, std::string_view plugin, std::string_view message) override;
  void ForEach(const std::function<void(const framework::PodInfo& pod, std::string_view node)>& fn)
      const override;

  // Marks every pod whose deadline is at or before `now` as rejected with upstream's timeout
  // message, then removes and returns every pod that is allowed by all its plugins or rejected.
  std::vector<WaitingPod> TakeSettled(absl::Time now);
  // The earliest deadline of a pod still waiting; nullopt when none waits.
  std::optional<absl::Time> NextDeadline() const;
  bool IsWaiting(std::string_view pod_key) const;
  // Whether a member of the gang waits (settled or not).
  bool HasGangMember(std::string_view gang_key) const;
  size_t size() const;

 private:
  mutable absl::Mutex mu_;
  // By pod key, ordered, so that pods settled together are handled in the same order every run.
  absl::btree_map<std::string, WaitingPod, std::less<>> pods_ ABSL_GUARDED_BY(mu_);
  size_t settled_ ABSL_GUARDED_BY(mu_) = 0;  // entries allowed or rejected, not yet taken
};

}  // namespace kubesched::scheduler
