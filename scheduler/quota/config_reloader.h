#pragma once

// The queue tree from the watched queue ConfigMap (queues.configMap, data key queues.yaml): a
// valid update replaces the tree and model labels from the next cycle; a bad one is logged with
// the queue and field, and the last good tree stays; deleting the ConfigMap restores the file's.
//
// What users should see on the ConfigMap itself goes to the warning handler (run mode makes it a
// Warning Event): a refused update (reason QueueConfigRejected), and typed limits that match no
// node's model (TypedLimitMatchesNoNode). The latter are checked once the nodes are known
// (CheckTypedLimits, after the informers' first lists) and after every reload from then on; each
// such limit is logged once per check.
//
// Threads: Reload runs on an informer thread, CheckTypedLimits on the thread that starts
// scheduling; reloads() on a scrape. mu_ guards the counts and where the tree came from; the
// tracker locks itself. The handler is called outside mu_ and must not block.

#include <functional>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "config/queues.h"
#include "scheduler/api/objects.h"
#include "scheduler/quota/quota_tracker.h"

namespace kubesched::quota {

inline constexpr char kQueueConfigRejectedReason[] = "QueueConfigRejected";
inline constexpr char kTypedLimitMatchesNoNodeReason[] = "TypedLimitMatchesNoNode";

class QueueConfigReloader {
 public:
  // (the ConfigMap, a reason, a message) for a Warning about the ConfigMap.
  using WarningHandler = std::function<void(const api::ObjectMeta& config_map,
                                            const std::string& reason, const std::string& message)>;

  // `tracker` must outlive the reloader. `file_queues` is the configuration file's section: where
  // the ConfigMap lives, and the tree in force while it does not exist.
  QueueConfigReloader(QuotaTracker* tracker, config::QueuesConfig file_queues)
      : tracker_(tracker), file_queues_(std::move(file_queues)) {}

  // Set once, before events flow.
  void SetWarningHandler(WarningHandler handler) { warn_ = std::move(handler); }

  // An add, update or delete (`deleted`) of `map`; does nothing unless it is the queue ConfigMap.
  void Reload(const api::ConfigMap& map, bool deleted);

  // Logs (and, when the tree came from the ConfigMap, reports on it) the typed limits that match
  // no known node, and from now on does so after every reload. Returns them.
  std::vector<UnmatchedTypedLimit> CheckTypedLimits();

  config::ConfigReloads reloads() const;

 private:
  QuotaTracker* const tracker_;
  const config::QueuesConfig file_queues_;
  WarningHandler warn_;
  mutable absl::Mutex mu_;
  config::ConfigReloads reloads_ ABSL_GUARDED_BY(mu_);
  // The ConfigMap the tree in force came from; none: the file's.
  std::optional<api::ObjectMeta> source_ ABSL_GUARDED_BY(mu_);
  bool nodes_known_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace kubesched::quota
