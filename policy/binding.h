#pragma once

// Policy bindings (DESIGN.md "Policies (per-pod)"): a platform team attaches a policy, with the
// args of its template, to the pods a namespace selector and/or a pod label selector picks, so
// that application owners need not annotate their pods. A pod's own kubesched.io/policy wins;
// otherwise the first binding that matches it, in list order, chooses its policy.
//
// Bindings are read from the configuration file's `policyBindings:` list and from the data key
// `policyBindings` (or `policyBindings.yaml` / `.yml` / `.json`) of the watched policy ConfigMap
// by the same decoder. The key cannot be a policy's name (policy names are lowercase).

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "scheduler/api/labels.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace kubesched::policy {

// The configuration file's field and the ConfigMap's data key (without extension).
inline constexpr char kBindingsField[] = "policyBindings";

struct PolicyBinding {
  // Optional: names the binding in explain and in errors. A DNS label, unique within its list.
  std::string name;
  // At least one is present. An empty selector ({}) matches everything, as in Kubernetes.
  std::optional<api::LabelSelector> namespace_selector;
  std::optional<api::LabelSelector> pod_selector;
  std::string policy;
  // Fill the policy's template holes, as kubesched.io/policy-args does for an annotated pod.
  std::map<std::string, std::string> args;
};

// The configuration file's `policyBindings:` list (null: none). Errors name the field:
//   policyBindings[1].selector.matchExpressions[0].operator: unknown operator "Has" (...)
// Whether each binding's policy exists and its args fill the template is checked when the set is
// built (BuildPolicySet), against the policies then in force.
absl::StatusOr<std::vector<PolicyBinding>> ParseFileBindings(
    const std::shared_ptr<const YAML::Node>& list);

// The same list written as the text (YAML or JSON) of the ConfigMap's data key.
absl::StatusOr<std::vector<PolicyBinding>> ParseBindings(std::string_view text);

// Whether `binding` selects a pod with `pod_labels` in a namespace with `namespace_labels` (null:
// the namespace is unknown, which matches as a namespace without labels).
bool BindingMatches(const PolicyBinding& binding, const api::LabelSet& pod_labels,
                    const api::LabelSet* namespace_labels);

// `binding 2 "batch-namespaces"` (bindings are numbered from 1 in the order they are tried), or
// `binding 2` for a binding without a name: how explain says which binding chose a policy.
std::string DescribeBinding(size_t index, const PolicyBinding& binding);

}  // namespace kubesched::policy
