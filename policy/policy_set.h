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

}  // namespace kubesched::policy
