#include "policy/policy_runtime.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "scheduler/framework/policy_affinity.h"
#include "scheduler/util/strings.h"

namespace kubesched::policy {

absl::StatusOr<std::shared_ptr<const PolicyRuntime>> PolicyRuntime::Build(
    std::shared_ptr<const PolicySet> set, const plugins::PluginHandle& handle,
    const plugins::RegistryMap& registry) {
  auto built = std::shared_ptr<PolicyRuntime>(new PolicyRuntime());
  built->set_ = set != nullptr ? std::move(set) : std::make_shared<const PolicySet>();
  for (const std::string& name : built->set_->names()) {
    const Policy* policy = built->set_->Find(name);
    auto fw = runtime::Framework::Create(policy->profile, handle, registry);
    if (!fw.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("policy \"", name, "\": ", fw.status().message()));
    }
    built->frameworks_[name] = std::move(*fw);
  }
  return std::shared_ptr<const PolicyRuntime>(std::move(built));
}

const runtime::Framework* PolicyRuntime::FrameworkOf(std::string_view name) const {
  auto it = frameworks_.find(util::Absl(name));
  return it == frameworks_.end() ? nullptr : it->second.get();
}

PolicyChoice PolicyChooser::ChooseByBinding(const api::Pod& pod, const PolicyRuntime& policies,
                                            const framework::Snapshot& snapshot) {
  PolicyChoice choice;
  const PolicySet& set = policies.set();
  const std::optional<size_t> index =
      set.FirstBindingFor(pod, snapshot.NamespaceLabels(pod.meta.namespace_symbol));
  if (!index.has_value()) return choice;
  const PolicyBinding& binding = set.bindings()[*index];
  choice.name = binding.policy;
  choice.binding = DescribeBinding(*index, binding);
  // The set was built only if the binding's policy exists and its args fill the template.
  choice.framework = policies.FrameworkOf(binding.policy);
  choice.added_affinity = set.binding_affinity(*index);
  return choice;
}

PolicyChoice PolicyChooser::Choose(const api::Pod& pod,
                                   const std::shared_ptr<const PolicyRuntime>& policies,
                                   const framework::Snapshot& snapshot) {
  PolicyChoice choice;
  const std::optional<std::string_view> named = RequestedPolicy(pod);
  if (!named.has_value()) {
    if (policies->set().bindings().empty()) return choice;
    return ChooseByBinding(pod, *policies, snapshot);
  }
  choice.name = std::string(*named);
  const Policy* policy = policies->set().Find(choice.name);
  const runtime::Framework* fw = policies->FrameworkOf(choice.name);
  if (policy == nullptr || fw == nullptr) {
    choice.error = absl::NotFoundError(absl::StrCat("policy \"", choice.name, "\" (annotation ",
                                                    kPolicyAnnotation, ") does not exist"));
    return choice;
  }
  if (policy->node_affinity != nullptr) {
    const std::string_view args = RequestedPolicyArgs(pod);
    if (runtime_ != policies || policy_ != policy || args_ != args || rendered_ == nullptr) {
      absl::StatusOr<api::NodeAffinity> rendered = RenderNodeAffinity(*policy, args);
      if (!rendered.ok()) {
        choice.error = rendered.status();
        return choice;
      }
      runtime_ = policies;
      policy_ = policy;
      args_ = std::string(args);
      rendered_ = std::make_shared<const api::NodeAffinity>(*std::move(rendered));
    }
    choice.added_affinity = rendered_;
  }
  choice.framework = fw;
  return choice;
}

std::unique_ptr<framework::CycleState> NewCycleState(const PolicyChoice& choice) {
  auto state = std::make_unique<framework::CycleState>();
  if (choice.added_affinity != nullptr) {
    auto added = std::make_unique<framework::PolicyNodeAffinity>();
    added->affinity = choice.added_affinity;
    state->Write(framework::PolicyNodeAffinityKey(), std::move(added));
  }
  return state;
}

std::string PolicyWaitKey(std::string_view policy) {
  return absl::StrCat("policy:", util::Absl(policy));
}

}  // namespace kubesched::policy
