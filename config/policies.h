#pragma once

// Per-pod scheduling policies (DESIGN.md "Policies (per-pod)"): named profiles that a pod picks
// with the annotation kubesched.io/policy, each optionally with a node-affinity template whose
// {{.Name}} holes are filled from the annotation kubesched.io/policy-args. Policies are read from
// the configuration file's `policies:` list and from a watched ConfigMap (one data key per
// policy) by the same decoder, so a ConfigMap update is accepted exactly when the same text in
// the file would be.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "config/config.h"
#include "scheduler/api/objects.h"

namespace kubesched::config {

// The pod annotation naming the policy, and the one holding its template args: a JSON object of
// strings, e.g. {"PreferredPool": "A", "DefaultPool": "B"}.
inline constexpr char kPolicyAnnotation[] = "kubesched.io/policy";
inline constexpr char kPolicyArgsAnnotation[] = "kubesched.io/policy-args";

// A node-affinity template compiled at parse time into literal and hole segments, so rendering
// does no parsing of the template. Defined in policies.cc; only RenderNodeAffinity reads it.
class NodeAffinityTemplate;

struct Policy {
  // A DNS label: lowercase letters, digits and '-', at most 63 characters.
  std::string name;
  // The same shape as a file profile, merged with the defaults as a file profile is.
  // scheduler_name is the policy's name, so whatever labels by profile shows the policy.
  Profile profile;
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

// The policy's node affinity with its holes filled from `args_json` (the value of
// kubesched.io/policy-args; empty text counts as {}). Args that fill no hole are ignored. Errors
// name the policy: bad JSON, not an object, a non-string value, a hole without a value
// (`policy "pool": kubesched.io/policy-args has no value for PreferredPool`), or a value that
// makes a key or value invalid. A policy without a template gives an empty NodeAffinity (no
// required, no preferred) and does not read the args. Called once per pod per cycle: the
// template is pre-split, so this is string concatenation plus the object decoder.
absl::StatusOr<api::NodeAffinity> RenderNodeAffinity(const Policy& policy,
                                                     std::string_view args_json);

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

 private:
  friend absl::StatusOr<std::shared_ptr<const PolicySet>> BuildPolicySet(
      const std::vector<Policy>& from_file,
      const std::map<std::string, std::string>& configmap_data, int64_t generation);

  std::map<std::string, Policy, std::less<>> policies_;
  int64_t generation_ = 0;
};

// The file's policies (already parsed by ParseConfiguration) plus one policy per ConfigMap data
// key: the key is the policy's name, with a .yaml, .yml or .json extension stripped. Any bad
// policy rejects the whole set, so the caller keeps its last good one; errors name the policy and
// the field. A ConfigMap policy with the name of a file policy is an error naming both.
absl::StatusOr<std::shared_ptr<const PolicySet>> BuildPolicySet(
    const std::vector<Policy>& from_file, const std::map<std::string, std::string>& configmap_data,
    int64_t generation = 0);

}  // namespace kubesched::config
