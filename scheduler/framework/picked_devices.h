#pragma once

// What other plugins may read of DynamicResources' choice for a pod: the devices its claims would
// get on a node, for plugins that count devices (a queue quota by device model, budgets, a
// GPU-weighted score) without knowing the plugin.

#include "absl/functional/function_ref.h"
#include "scheduler/api/dra.h"
#include "scheduler/framework/cycle_state.h"
#include "scheduler/framework/node_info.h"

namespace kubesched::framework {

// DynamicResources' PreFilter stores one in the cycle state under PickedDevicesKey() for a pod
// with claims to allocate; it is absent for any other pod.
class PickedDevices : public StateData {
 public:
  // Calls fn with each device the pod's claims to allocate would get on `node`, and the slice that
  // publishes it: the allocation Reserve would make there; nothing when they do not fit. Devices
  // of claims allocated already are not included (they are counted where they were allocated).
  // Thread-safe and read-only like Filter, whose search it repeats: call it from Filter or Score
  // on the nodes that matter, or from Reserve on the chosen one.
  virtual void ForEachDevice(
      const NodeInfo& node,
      absl::FunctionRef<void(const api::ResourceSlice&, const api::Device&)> fn) const = 0;
};

inline CycleState::Key PickedDevicesKey() {
  static const CycleState::Key key = CycleState::AllocateKey("PickedDevices");
  return key;
}

}  // namespace kubesched::framework
