#pragma once

// The per-pod policies in force, by name: the file's plus the watched ConfigMap's.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "policy/binding.h"
#include "policy/policy.h"

namespace kubesched::policy {

// An immutable set of policies by name: one snapshot serves a whole scheduling cycle while a
// reload builds the next one.
class PolicySet {
 public:
  PolicySet() = default;  // no policies

  // Null when there is no policy of that name.
  const Policy* Find(std::string_view name) const;
  // Sorted.
  std::vector<std::string> names() const;
  size_t size() const { return policies_.size(); }
  bool empty() const { return policies_.empty(); }
  // What the caller passed to BuildPolicySet (e.g. a reload counter), so that pods waiting for a
  // policy can tell that the set changed.
  int64_t generation() const { return generation_; }
  // "3 policies (generation 2): pool, spread, stack", for logs.
  std::string Describe() const;

  // The bindings in force, in the order they are tried: the file's, then the ConfigMap's.
  const std::vector<PolicyBinding>& bindings() const { return bindings_; }
  // The node affinity the template of binding `index`'s policy adds, filled with the binding's
  // args when the set was built (null when the policy has no template).
  const std::shared_ptr<const api::NodeAffinity>& binding_affinity(size_t index) const {
    return binding_affinities_[index];
  }
  // The first binding that selects `pod` (whose namespace carries `namespace_labels`, null if
  // unknown); nullopt when none does.
  std::optional<size_t> FirstBindingFor(const api::Pod& pod,
                                        const api::LabelSet* namespace_labels) const;

 private:
  friend absl::StatusOr<std::shared_ptr<const PolicySet>> BuildPolicySet(
      const std::vector<Policy>& from_file,
      const std::map<std::string, std::string>& configmap_data, int64_t generation,
      const std::vector<PolicyBinding>& file_bindings);

  std::map<std::string, Policy, std::less<>> policies_;
  std::vector<PolicyBinding> bindings_;
  std::vector<std::shared_ptr<const api::NodeAffinity>> binding_affinities_;  // by binding
  int64_t generation_ = 0;
};

// The file's policies (already parsed by ParseConfiguration) plus one policy per ConfigMap data
// key: the key is the policy's name, with a .yaml, .yml or .json extension stripped. Any bad
// policy rejects the whole set, so the caller keeps its last good one; errors name the policy and
// the field. A ConfigMap policy with the name of a file policy is an error naming both.
//
// The bindings are `file_bindings` (ParseFileBindings) followed by those of the data key
// `policyBindings` (binding.h). Each must name a policy of the set and give exactly the args its
// template's holes take; its template is filled here, once. Errors name the binding's field:
//   ConfigMap key "policyBindings": policyBindings[0].policy: no policy "gpu" (policies: pool)
absl::StatusOr<std::shared_ptr<const PolicySet>> BuildPolicySet(
    const std::vector<Policy>& from_file, const std::map<std::string, std::string>& configmap_data,
    int64_t generation = 0, const std::vector<PolicyBinding>& file_bindings = {});

}  // namespace kubesched::policy
