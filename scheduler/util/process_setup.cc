#include "scheduler/util/process_setup.h"

#include "absl/synchronization/mutex.h"

namespace kubesched::util {

void SetUpProcess(bool optimised) {
  if (optimised) absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
}

}  // namespace kubesched::util
