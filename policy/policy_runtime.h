#pragma once

// The per-pod policies in force (DESIGN.md "Policies (per-pod)"), each with its own framework:
// built whole from a PolicySet and never changed afterwards, so a scheduling cycle that
// holds one keeps the policy it started with while a reload builds the next.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "plugins/registry/registry.h"
#include "policy/policy_set.h"
#include "scheduler/framework/cycle_state.h"
#include "scheduler/framework/pod_info.h"
#include "scheduler/framework/snapshot.h"
#include "scheduler/runtime/framework.h"

namespace kubesched::policy {

class PolicyRuntime {
 public:
  // Creates one framework per policy with `handle` and `registry` (those of the profiles). An
  // error names the policy.
  static absl::StatusOr<std::shared_ptr<const PolicyRuntime>> Build(
      std::shared_ptr<const PolicySet> set, const plugins::PluginHandle& handle,
      const plugins::RegistryMap& registry);

  const PolicySet& set() const { return *set_; }
  // Null when there is no policy of that name.
  const runtime::Framework* FrameworkOf(std::string_view name) const;

 private:
  std::shared_ptr<const PolicySet> set_;
  absl::flat_hash_map<std::string, std::unique_ptr<runtime::Framework>> frameworks_;
};

// The name a policy failure is reported under (as a plugin's would be): FailedScheduling reads
// `running "PolicySelection": policy "x" (annotation kubesched.io/policy) does not exist`.
inline constexpr std::string_view kPolicySelection = "PolicySelection";

// What a pod's policy annotations, or else the policy bindings, resolve to for one cycle.
struct PolicyChoice {
  // Empty when the pod names no policy and no binding selects it (its schedulerName's profile
  // applies).
  std::string name;
  // Which binding chose the policy (DescribeBinding: `binding 2 "batch-namespaces"`); empty when
  // the pod's annotation did, or nothing did.
  std::string binding;
  // The policy's framework; null when the pod names no policy or the choice failed.
  const runtime::Framework* framework = nullptr;
  // The node affinity the policy's template adds for this pod (null without a template).
  std::shared_ptr<const api::NodeAffinity> added_affinity;
  // Why the pod cannot use the policy it names: unknown, or args that do not fill the template.
  absl::Status error;
};

// Reads kubesched.io/policy and kubesched.io/policy-args of `pod` against `policies`; a pod
// without the annotation gets the policy of the first binding that selects it, whose namespace's
// labels are read from `snapshot` only then. Owned by the scheduling thread: it remembers the last
// template filled, so that a run of pods with the same policy and args fills it once.
class PolicyChooser {
 public:
  PolicyChoice Choose(const api::Pod& pod, const std::shared_ptr<const PolicyRuntime>& policies,
                      const framework::Snapshot& snapshot);

 private:
  static PolicyChoice ChooseByBinding(const api::Pod& pod, const PolicyRuntime& policies,
                                      const framework::Snapshot& snapshot);

  // The last rendering; `runtime` keeps `policy` (the key) alive, so its address is not reused.
  std::shared_ptr<const PolicyRuntime> runtime_;
  const Policy* policy_ = nullptr;
  std::string args_;
  std::shared_ptr<const api::NodeAffinity> rendered_;
};

// A new cycle state for a pod scheduled under `choice`: it carries the node affinity the policy's
// template adds (framework/policy_affinity.h), which NodeAffinity reads.
std::unique_ptr<framework::CycleState> NewCycleState(const PolicyChoice& choice);

// The wait key of a pod held back by its policy (see SchedulingQueue::MoveQuotaWaiters): it moves
// when the policy set is replaced.
std::string PolicyWaitKey(std::string_view policy);

}  // namespace kubesched::policy
