// Decoding policies: the one decoder for the file's `policies:` items and the ConfigMap's values.

#include "policy/policy.h"

#include <array>
#include <exception>
#include <utility>

#include "absl/strings/str_cat.h"
#include "config/merge.h"
#include "config/profile_body.h"
#include "config/yaml_reader.h"
#include "policy/node_affinity_template.h"
#include "policy/template_text.h"
#include "scheduler/util/strings.h"

namespace kubesched::policy {

const char kPolicyNameRule[] =
    "lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63 "
    "characters";

namespace {

using config::yaml::Field;
using config::yaml::Get;
using config::yaml::HasValue;
using config::yaml::Index;
using config::yaml::Reader;

constexpr std::array<std::string_view, 5> kPolicyFields = {
    "name", "plugins", "pluginConfig", "percentageOfNodesToScore", "nodeAffinity"};

constexpr size_t kMaxPolicyNameLength = 63;
constexpr std::string_view kSectionPath = "policies";

std::optional<std::string_view> AnnotationOf(const api::Pod& pod, const std::string& key) {
  const auto& annotations = pod.meta.annotations;
  const auto it = annotations.find(key);
  if (it == annotations.end()) return std::nullopt;
  return std::string_view(it->second);
}

// One policy's fields. A `name` field, if any, must equal `name`. Errors are prefixed
// `policy "<name>": `.
absl::StatusOr<Policy> DecodePolicy(std::string_view name, const YAML::Node& node) {
  Reader r;
  Policy policy;
  policy.name = std::string(name);
  if (r.Map(node, "", kPolicyFields)) {
    std::string written_name;
    r.String(Get(node, "name"), "name", &written_name);
    if (r.ok() && !written_name.empty() && written_name != name) {
      r.Fail("name", absl::StrCat("must be ", Quote(name), " (the policy's name), got ",
                                  Quote(written_name)));
    }
    config::DecodeProfileBody(r, node, "", &policy.profile);
    policy.node_affinity =
        CompileNodeAffinityTemplate(r, Get(node, kNodeAffinityField), kNodeAffinityField);
  }
  if (!r.ok()) return PolicyError(name, util::Std(r.status().message()));
  if (policy.node_affinity != nullptr) {
    policy.hole_names = std::set<std::string>(policy.node_affinity->holes.begin(),
                                              policy.node_affinity->holes.end());
  }
  policy.profile.scheduler_name = policy.name;
  policy.profile.plugins = config::MergeDefaults(config::DefaultPlugins(), policy.profile.plugins);
  return policy;
}

// The name of the list item at `item_path`, checked: present, valid and not taken by an earlier
// item of `decoded`. Errors go to `r`.
std::string ItemName(Reader& r, const YAML::Node& item, const std::string& item_path,
                     const std::vector<Policy>& decoded) {
  const std::string name_path = Field(item_path, "name");
  if (!item.IsMap()) {
    r.Fail(item_path, "must be a map with a name, got " + config::yaml::Describe(item));
    return "";
  }
  std::string name;
  r.String(Get(item, "name"), name_path, &name);
  if (!r.ok()) return "";
  if (name.empty()) {
    r.Fail(name_path, "required");
  } else if (!IsValidPolicyName(name)) {
    r.Fail(name_path,
           absl::StrCat("invalid policy name ", Quote(name), " (", kPolicyNameRule, ")"));
  }
  for (size_t j = 0; j < decoded.size() && r.ok(); ++j) {
    if (decoded[j].name != name) continue;
    r.Fail(name_path, absl::StrCat("duplicate policy name ", Quote(name), " (also ",
                                   Index(kSectionPath, j), ")"));
  }
  return name;
}

}  // namespace

std::optional<std::string_view> RequestedPolicy(const api::Pod& pod) {
  static const std::string* const key = new std::string(kPolicyAnnotation);
  return AnnotationOf(pod, *key);
}

std::string_view RequestedPolicyArgs(const api::Pod& pod) {
  static const std::string* const key = new std::string(kPolicyArgsAnnotation);
  return AnnotationOf(pod, *key).value_or(std::string_view());
}

bool IsValidPolicyName(std::string_view name) {
  return name.size() <= kMaxPolicyNameLength && IsDnsLabelText(name);
}

absl::StatusOr<std::vector<Policy>> ParseFilePolicies(
    const std::shared_ptr<const YAML::Node>& list) {
  std::vector<Policy> out;
  if (list == nullptr) return out;
  Reader r;
  const YAML::Node& node = *list;
  if (!r.List(node, kSectionPath)) return r.status();
  if (!HasValue(node)) return out;
  for (size_t i = 0; i < node.size() && r.ok(); ++i) {
    const std::string item_path = Index(kSectionPath, i);
    const YAML::Node item = node[i];
    const std::string name = ItemName(r, item, item_path, out);
    if (!r.ok()) break;
    absl::StatusOr<Policy> policy = DecodePolicy(name, item);
    if (!policy.ok()) {
      r.Fail(item_path, util::Std(policy.status().message()));
      break;
    }
    out.push_back(*std::move(policy));
  }
  if (!r.ok()) return r.status();
  return out;
}

absl::StatusOr<Policy> ParsePolicy(std::string_view name, std::string_view text) {
  if (!IsValidPolicyName(name)) {
    return PolicyError(name, absl::StrCat("invalid name (", kPolicyNameRule, ")"));
  }
  try {
    absl::StatusOr<YAML::Node> root = config::yaml::ParseDocument(text);
    if (!root.ok()) return PolicyError(name, util::Std(root.status().message()));
    return DecodePolicy(name, *root);
  } catch (const std::exception& e) {
    // yaml-cpp throws on misuse; no exception may leave policy/.
    return PolicyError(name, absl::StrCat("cannot decode: ", e.what()));
  }
}

absl::StatusOr<api::NodeAffinity> RenderNodeAffinity(const Policy& policy,
                                                     std::string_view args_json) {
  if (policy.node_affinity == nullptr) return api::NodeAffinity{};
  absl::StatusOr<api::NodeAffinity> rendered = RenderTemplate(*policy.node_affinity, args_json);
  if (!rendered.ok()) return PolicyError(policy.name, util::Std(rendered.status().message()));
  return rendered;
}

}  // namespace kubesched::policy
