#include "policy/policy_set.h"

#include <array>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "policy/template_text.h"

namespace kubesched::policy {
namespace {

constexpr std::array<std::string_view, 3> kDataKeyExtensions = {".yaml", ".yml", ".json"};

// "gpu-pack.yaml" -> "gpu-pack": a data key may carry the format of its value.
std::string_view PolicyNameOfDataKey(std::string_view key) {
  for (std::string_view extension : kDataKeyExtensions) {
    if (key.size() > extension.size() && key.substr(key.size() - extension.size()) == extension) {
      return key.substr(0, key.size() - extension.size());
    }
  }
  return key;
}

}  // namespace

const Policy* PolicySet::Find(std::string_view name) const {
  const auto it = policies_.find(name);
  return it == policies_.end() ? nullptr : &it->second;
}

std::vector<std::string> PolicySet::names() const {
  std::vector<std::string> names;
  names.reserve(policies_.size());
  for (const auto& [name, policy] : policies_) names.push_back(name);
  return names;
}

std::string PolicySet::Describe() const {
  const std::string count = policies_.size() == 1 ? "1 policy"
                            : policies_.empty()   ? "no policies"
                                                  : absl::StrCat(policies_.size(), " policies");
  std::string out = absl::StrCat(count, " (generation ", generation_, ")");
  if (!policies_.empty()) absl::StrAppend(&out, ": ", absl::StrJoin(names(), ", "));
  return out;
}

absl::StatusOr<std::shared_ptr<const PolicySet>> BuildPolicySet(
    const std::vector<Policy>& from_file, const std::map<std::string, std::string>& configmap_data,
    int64_t generation) {
  auto set = std::make_shared<PolicySet>();
  set->generation_ = generation;
  // Where each policy came from, for the error when a name is defined twice.
  std::map<std::string, std::string, std::less<>> origin;
  for (size_t i = 0; i < from_file.size(); ++i) {
    const std::string where = absl::StrCat("the configuration file (policies[", i, "])");
    const auto [it, inserted] = origin.emplace(from_file[i].name, where);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat("policy ", Quote(from_file[i].name),
                                                     " is defined twice: in ", it->second,
                                                     " and in ", where));
    }
    set->policies_.emplace(from_file[i].name, from_file[i]);
  }
  for (const auto& [key, text] : configmap_data) {
    const std::string_view name = PolicyNameOfDataKey(key);
    if (!IsValidPolicyName(name)) {
      return absl::InvalidArgumentError(absl::StrCat("ConfigMap key ", Quote(key),
                                                     ": invalid policy name ", Quote(name), " (",
                                                     kPolicyNameRule, ")"));
    }
    const std::string where = absl::StrCat("the ConfigMap (key ", Quote(key), ")");
    const auto [it, inserted] = origin.emplace(name, where);
    if (!inserted) {
      return absl::InvalidArgumentError(absl::StrCat(
          "policy ", Quote(name), " is defined twice: in ", it->second, " and in ", where));
    }
    absl::StatusOr<Policy> policy = ParsePolicy(name, text);
    if (!policy.ok()) return policy.status();
    set->policies_.emplace(std::string(name), *std::move(policy));
  }
  return std::shared_ptr<const PolicySet>(std::move(set));
}

}  // namespace kubesched::policy
