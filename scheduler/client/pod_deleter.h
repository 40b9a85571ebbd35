#pragma once

#include <string>

#include "absl/status/status.h"

namespace kubesched::client {

// Deletes pods (preemption victims). Implemented by the embedded cluster and the API client.
// Synchronous; called off the per-node loop, once per victim.
class PodDeleter {
 public:
  virtual ~PodDeleter() = default;
  // Deletes the pod if it still has `uid` (a UID precondition, so a recreated pod of the same
  // name survives). NotFound if it is gone.
  virtual absl::Status DeletePod(const std::string& namespace_name, const std::string& name,
                                 const std::string& uid) = 0;
};

}  // namespace kubesched::client
