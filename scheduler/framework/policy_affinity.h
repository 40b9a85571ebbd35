#pragma once

// The node affinity a per-pod policy's template adds for the pod of one cycle (its
// kubesched.io/policy-args filled in). The scheduler writes it before PreFilter; NodeAffinity
// applies it as it applies its scheduler-enforced addedAffinity.

#include <memory>

#include "scheduler/api/objects.h"
#include "scheduler/framework/cycle_state.h"

namespace kubesched::framework {

struct PolicyNodeAffinity final : StateData {
  // Shared: pods with the same policy and args get the same rendering.
  std::shared_ptr<const api::NodeAffinity> affinity;
  std::unique_ptr<StateData> Clone() const override {
    return std::make_unique<PolicyNodeAffinity>(*this);
  }
};

inline CycleState::Key PolicyNodeAffinityKey() {
  static const CycleState::Key key = CycleState::AllocateKey("PolicyNodeAffinity");
  return key;
}

}  // namespace kubesched::framework
