#pragma once

// The queue tree from the watched queue ConfigMap (queues.configMap, data key queues.yaml): a
// valid update replaces the tree and model labels from the next cycle; a bad one is logged with
// the queue and field, and the last good tree stays; deleting the ConfigMap restores the file's.
//
// Threads: Reload runs on an informer thread; reloads() on a scrape. mu_ guards the counts; the
// tracker locks itself.

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "config/queues.h"
#include "scheduler/api/objects.h"
#include "scheduler/quota/quota_tracker.h"

namespace kubesched::quota {

class QueueConfigReloader {
 public:
  // `tracker` must outlive the reloader. `file_queues` is the configuration file's section: where
  // the ConfigMap lives, and the tree in force while it does not exist.
  QueueConfigReloader(QuotaTracker* tracker, config::QueuesConfig file_queues)
      : tracker_(tracker), file_queues_(std::move(file_queues)) {}

  // An add, update or delete (`deleted`) of `map`; does nothing unless it is the queue ConfigMap.
  void Reload(const api::ConfigMap& map, bool deleted);

  config::ConfigReloads reloads() const;

 private:
  QuotaTracker* const tracker_;
  const config::QueuesConfig file_queues_;
  mutable absl::Mutex mu_;
  config::ConfigReloads reloads_ ABSL_GUARDED_BY(mu_);
};

}  // namespace kubesched::quota
