#include "policy/policy_set.h"

#include <array>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "config/yaml_reader.h"
#include "policy/node_affinity_template.h"
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

// Binding i's policy name, checked against `set`, and the affinity its args fill in. Errors are
// prefixed with `path` (policyBindings[i]).
absl::StatusOr<std::shared_ptr<const api::NodeAffinity>> ResolveBinding(
    const PolicySet& set, const PolicyBinding& binding, const std::string& path) {
  using config::yaml::Field;
  using config::yaml::PathError;
  const Policy* policy = set.Find(binding.policy);
  if (policy == nullptr) {
    return PathError(Field(path, "policy"),
                     absl::StrCat("no policy ", Quote(binding.policy), " (policies: ",
                                  set.empty() ? "none" : absl::StrJoin(set.names(), ", "), ")"));
  }
  const std::string args_path = Field(path, "args");
  for (const auto& [name, value] : binding.args) {
    if (policy->hole_names.contains(name)) continue;
    return PathError(
        Field(args_path, name),
        absl::StrCat(
            "policy ", Quote(policy->name), " has no hole ", name,
            policy->hole_names.empty()
                ? " (it has no nodeAffinity template)"
                : absl::StrCat(" (holes: ", absl::StrJoin(policy->hole_names, ", "), ")")));
  }
  if (policy->node_affinity == nullptr) return std::shared_ptr<const api::NodeAffinity>();
  std::vector<std::string_view> hole_values;
  for (const std::string& hole : policy->node_affinity->holes) {
    const auto it = binding.args.find(hole);
    if (it == binding.args.end()) {
      return PathError(args_path, absl::StrCat("no value for ", hole, " (a hole of policy ",
                                               Quote(policy->name), ")"));
    }
    hole_values.push_back(it->second);
  }
  absl::StatusOr<api::NodeAffinity> rendered =
      RenderWith(*policy->node_affinity, hole_values, Fill::kArgs);
  if (!rendered.ok()) {
    return PathError(
        args_path, absl::StrCat("policy ", Quote(policy->name), ": ", rendered.status().message()));
  }
  return std::make_shared<const api::NodeAffinity>(*std::move(rendered));
}

// The ConfigMap's data key holding bindings, if `key` is one.
bool IsBindingsKey(std::string_view key) { return PolicyNameOfDataKey(key) == kBindingsField; }

}  // namespace

std::optional<size_t> PolicySet::FirstBindingFor(const api::Pod& pod,
                                                 const api::LabelSet* namespace_labels) const {
  for (size_t i = 0; i < bindings_.size(); ++i) {
    if (BindingMatches(bindings_[i], pod.meta.labels, namespace_labels)) return i;
  }
  return std::nullopt;
}

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
  if (!bindings_.empty()) {
    absl::StrAppend(&out, "; ", bindings_.size(), bindings_.size() == 1 ? " binding" : " bindings");
  }
  return out;
}

absl::StatusOr<std::shared_ptr<const PolicySet>> BuildPolicySet(
    const std::vector<Policy>& from_file, const std::map<std::string, std::string>& configmap_data,
    int64_t generation, const std::vector<PolicyBinding>& file_bindings) {
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
  // Bindings name policies: the ConfigMap's are read after all policies are.
  std::vector<std::string> binding_origins(file_bindings.size());
  std::string_view bindings_key;  // the ConfigMap's key holding bindings, once seen
  set->bindings_ = file_bindings;
  for (const auto& [key, text] : configmap_data) {
    if (!IsBindingsKey(key)) continue;
    absl::StatusOr<std::vector<PolicyBinding>> bindings = ParseBindings(text);
    if (!bindings.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("ConfigMap key ", Quote(key), ": ", bindings.status().message()));
    }
    if (!bindings_key.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("ConfigMap key ", Quote(key),
                                                     ": bindings are also given under key ",
                                                     Quote(bindings_key)));
    }
    bindings_key = key;
    binding_origins.resize(file_bindings.size() + bindings->size(),
                           absl::StrCat("ConfigMap key ", Quote(key), ": "));
    for (PolicyBinding& binding : *bindings) set->bindings_.push_back(std::move(binding));
  }
  for (const auto& [key, text] : configmap_data) {
    if (IsBindingsKey(key)) continue;
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
  for (size_t i = 0, in_source = 0; i < set->bindings_.size(); ++i, ++in_source) {
    if (i == file_bindings.size()) in_source = 0;
    auto affinity =
        ResolveBinding(*set, set->bindings_[i], config::yaml::Index(kBindingsField, in_source));
    if (!affinity.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(binding_origins[i], affinity.status().message()));
    }
    set->binding_affinities_.push_back(*std::move(affinity));
  }
  return std::shared_ptr<const PolicySet>(std::move(set));
}

}  // namespace kubesched::policy
