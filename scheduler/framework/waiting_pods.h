#pragma once

// Pods held at Permit: reserved and assumed in the cache, not yet bound, each waiting for the
// plugins that said Wait. The scheduler owns them; a plugin acts on them by pod key through this
// interface (PluginHandle::waiting_pods), typically the last member of a gang allowing the others.
//
// Thread-safety: every call may come from any thread; what an Allow or Reject sets in motion
// (binding, or unreserving and requeueing) runs later on the scheduling thread, never inside the
// call, so a plugin may call these from its own extension points.

#include <functional>
#include <string_view>

#include "scheduler/framework/pod_info.h"

namespace kubesched::framework {

class WaitingPods {
 public:
  virtual ~WaitingPods() = default;

  // Ends `plugin`'s wait on the pod; the pod goes to binding once no plugin waits on it. Returns
  // false if the pod is not waiting (or `plugin` does not hold it).
  virtual bool Allow(std::string_view pod_key, std::string_view plugin) = 0;
  // Ends the pod's wait with a rejection by `plugin`: it is unreserved, forgotten by the cache and
  // retried as unschedulable with `message` as its FailedScheduling message. Returns false if the
  // pod is not waiting.
  virtual bool Reject(std::string_view pod_key, std::string_view plugin,
                      std::string_view message) = 0;
  // Calls fn for every waiting pod (the assumed pod and its node) still waiting, not yet allowed
  // or rejected. fn must not call back into this object.
  virtual void ForEach(
      const std::function<void(const PodInfo& pod, std::string_view node)>& fn) const = 0;
};

}  // namespace kubesched::framework
