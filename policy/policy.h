#pragma once

// Per-pod scheduling policies (DESIGN.md "Policies (per-pod)"): named profiles that a pod picks
// with the annotation kubesched.io/policy, each optionally with a node-affinity template whose
// {{.Name}} holes are filled from the annotation kubesched.io/policy-args. Policies are read from
// the configuration file's `policies:` list and from a watched ConfigMap (one data key per
// policy) by the same decoder, so a ConfigMap update is accepted exactly when the same text in
// the file would be.

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "config/config.h"
#include "scheduler/api/objects.h"

namespace YAML {
class Node;
}  // namespace YAML

namespace kubesched::policy {

// The pod annotation naming the policy, and the one holding its template args: a JSON object of
// strings, e.g. {"PreferredPool": "A", "DefaultPool": "B"}.
inline constexpr char kPolicyAnnotation[] = "kubesched.io/policy";
inline constexpr char kPolicyArgsAnnotation[] = "kubesched.io/policy-args";

// The policy `pod` asks for (its kubesched.io/policy annotation); nullopt when it names none, and
// then its schedulerName's profile applies. An annotation with an empty value names the policy
// "", which does not exist. A view into the pod.
std::optional<std::string_view> RequestedPolicy(const api::Pod& pod);
// Its kubesched.io/policy-args annotation; empty when absent.
std::string_view RequestedPolicyArgs(const api::Pod& pod);

// What a policy name must be: a DNS label (lowercase letters, digits and '-', at most 63).
bool IsValidPolicyName(std::string_view name);
// The rule IsValidPolicyName checks, for messages.
extern const char kPolicyNameRule[];

// A node-affinity template compiled at parse time into literal and hole segments, so rendering
// does no parsing of the template (policy/node_affinity_template.h).
class NodeAffinityTemplate;

struct Policy {
  std::string name;
  // The same shape as a file profile, merged with the defaults as a file profile is.
  // scheduler_name is the policy's name, so whatever labels by profile shows the policy.
  config::Profile profile;
  // Null when the policy has no nodeAffinity. Shared, not copied: it never changes once parsed.
  std::shared_ptr<const NodeAffinityTemplate> node_affinity;
  // Every hole name the template uses ("PreferredPool"); empty without holes.
  std::set<std::string> hole_names;
};

// Parses one policy from a ConfigMap data value (YAML or JSON) with the fields of a `policies:`
// item: plugins, pluginConfig, percentageOfNodesToScore and nodeAffinity, plus an optional `name`
// that must then equal `name`. Errors are InvalidArgument and name the policy and the field:
//   policy "gpu-pack": plugins.score.enabled[0]: unknown plugin "Foo"
// A template is checked whole here (holes well formed, and a rendering with placeholder values
// is a valid node affinity), so a bad template never reaches RenderNodeAffinity.
absl::StatusOr<Policy> ParsePolicy(std::string_view name, std::string_view text);

// The configuration file's `policies:` list (config::Configuration::policies; null: none).
// Errors name the item and the policy:
//   policies[1]: policy "gpu-pack": plugins.score.enabled[0]: unknown plugin "Foo"
absl::StatusOr<std::vector<Policy>> ParseFilePolicies(
    const std::shared_ptr<const YAML::Node>& list);

// The policy's node affinity with its holes filled from `args_json` (the value of
// kubesched.io/policy-args; empty text counts as {}). Args that fill no hole are ignored. Errors
// name the policy: bad JSON, not an object, a non-string value, a hole without a value
// (`policy "pool": kubesched.io/policy-args has no value for PreferredPool`), or a value that
// makes a key or value invalid. A policy without a template gives an empty NodeAffinity (no
// required, no preferred) and does not read the args. Called once per pod per cycle: the
// template is pre-split, so this is string concatenation plus the object decoder.
absl::StatusOr<api::NodeAffinity> RenderNodeAffinity(const Policy& policy,
                                                     std::string_view args_json);

}  // namespace kubesched::policy
