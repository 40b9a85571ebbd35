// QuotaTracker: placement, which queue a pod goes to (its label, its namespace's annotations, or
// a queue created for its namespace).

#include "absl/strings/str_cat.h"
#include "scheduler/quota/quota_tracker.h"
#include "scheduler/quota/quota_tracker_internal.h"
#include "scheduler/util/strings.h"

namespace kubesched::quota {
namespace {

using util::Absl;

}  // namespace

QuotaTracker::Resolution QuotaTracker::ResolvePodLocked(const framework::PodInfo& pod) {
  const api::Pod& p = pod.get();
  return ResolveLocked(p.meta.namespace_name, internal::LabelText(p.meta.labels, kQueueLabel));
}

QuotaTracker::Resolution QuotaTracker::ResolveLocked(std::string_view ns,
                                                     std::string_view label_queue) {
  auto named = [&](const std::string& path, std::string_view source) {
    Resolution r;
    const int index = tree_.Find(path);
    if (index < 0) {
      r.account = tree_.DeepestExisting(path);
      r.error = absl::StrCat("queue ", path, " (", Absl(source), ") does not exist");
    } else if (tree_.node(index).has_children) {
      r.account = index;
      r.error = absl::StrCat("queue ", path, " (", Absl(source),
                             ") is a parent queue; pods go to leaf queues only");
    } else {
      r.queue = r.account = index;
    }
    return r;
  };
  if (!label_queue.empty()) {
    return named(NormalizeQueuePath(label_queue), absl::StrCat("pod label ", kQueueLabel));
  }
  const auto it = namespaces_.find(Absl(ns));
  const NamespaceInfo* info = it == namespaces_.end() ? nullptr : &it->second;
  if (info != nullptr && !info->queue.empty()) {
    return named(NormalizeQueuePath(info->queue),
                 absl::StrCat("annotation ", kQueueAnnotation, " of namespace ", Absl(ns)));
  }
  Resolution r;
  if (!config_.auto_create) {
    r.error = absl::StrCat("the pod names no queue (label ", kQueueLabel,
                           ", or the namespace annotation) and queues.autoCreate is off");
    return r;
  }
  int parent = 0;
  if (info != nullptr && !info->parent.empty()) {
    parent = tree_.Find(NormalizeQueuePath(info->parent));
    if (parent < 0) {
      r.account = tree_.DeepestExisting(NormalizeQueuePath(info->parent));
      r.error =
          absl::StrCat("queue ", NormalizeQueuePath(info->parent), " (annotation ",
                       kParentQueueAnnotation, " of namespace ", Absl(ns), ") does not exist");
      return r;
    }
  }
  if (info != nullptr && !info->quota_error.empty()) {
    r.account = parent;
    r.error = info->quota_error;
    return r;
  }
  static const api::ResourceList kNoMax;
  static const std::vector<api::ResourceId> kNoLimits;
  const int index = tree_.AddAutoQueue(parent, ns, info != nullptr ? info->max : kNoMax,
                                       info != nullptr ? info->limited : kNoLimits);
  EnsureBudgetStatesLocked(clock_->Now());
  if (tree_.node(index).has_children) {
    r.account = index;
    r.error = absl::StrCat("queue ", tree_.node(index).path, " (created for namespace ", Absl(ns),
                           ") is a parent queue; pods go to leaf queues only");
    return r;
  }
  r.queue = r.account = index;
  return r;
}

}  // namespace kubesched::quota
