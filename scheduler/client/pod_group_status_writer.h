#pragma once

// Where the scheduler writes a PodGroup's status (scheduler-plugins' status fields: phase, the
// member counts, occupiedBy, scheduleStartTime). Run mode PATCHes the status subresource
// (ApiPodGroupStatusWriter), the embedded cluster updates its object in place; the core sees
// only this interface (SchedulerDeps::pod_group_status).

#include <string>

#include "scheduler/api/pod_group.h"

namespace kubesched::client {

// Fire and forget: WriteStatus returns at once and never fails the caller. A write that cannot
// be made (the group is gone, the server refuses it) is logged by the implementation, since the
// status only reports what the scheduler decided and the next write carries the whole status
// again.
//
// Thread-safe: WriteStatus may be called from any thread.
class PodGroupStatusWriter {
 public:
  virtual ~PodGroupStatusWriter() = default;
  // Replaces the group's status with `status` (every field, empty ones removed).
  virtual void WriteStatus(const std::string& namespace_name, const std::string& name,
                           const api::PodGroupStatus& status) = 0;
};

}  // namespace kubesched::client
