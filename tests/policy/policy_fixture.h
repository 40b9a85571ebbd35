#pragma once

// Builders and printers shared by the policy tests.

#include <algorithm>
#include <catch2/catch.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "config/config.h"
#include "policy/policy.h"
#include "scheduler/api/labels.h"
#include "scheduler/api/symbol.h"
#include "scheduler/util/strings.h"

namespace kubesched::policy::testing {

template <typename T>
inline std::string ErrorOf(const absl::StatusOr<T>& parsed) {
  if (parsed.ok()) return "(ok)";
  return std::string(parsed.status().message());
}

inline Policy MustParse(std::string_view name, std::string_view text) {
  absl::StatusOr<Policy> policy = ParsePolicy(name, text);
  INFO(ErrorOf(policy));
  REQUIRE(policy.ok());
  return *std::move(policy);
}

inline const config::PluginArgs* ArgsOf(const config::Profile& profile, std::string_view plugin) {
  for (const config::PluginConfig& entry : profile.plugin_config) {
    if (entry.name == plugin) return &entry.args;
  }
  return nullptr;
}

inline int32_t MultiPointWeight(const config::Profile& profile, std::string_view plugin) {
  for (const config::PluginRef& ref : profile.plugins.multi_point.enabled) {
    if (ref.name == plugin) return ref.weight;
  }
  return -1;
}

// "pool In (A, B)"; values sorted by text.
inline std::string Describe(const api::Requirement& requirement) {
  static constexpr const char* kOperators[] = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
  std::vector<std::string> values;
  for (api::Symbol value : requirement.values) values.emplace_back(api::SymbolText(value));
  std::sort(values.begin(), values.end());
  std::string out = absl::StrCat(util::Absl(api::SymbolText(requirement.key)), " ",
                                 kOperators[static_cast<int>(requirement.op)]);
  if (!values.empty()) absl::StrAppend(&out, " (", absl::StrJoin(values, ", "), ")");
  if (!requirement.valid) out += " INVALID";
  return out;
}

inline std::string Describe(const api::NodeSelectorTerm& term) {
  std::vector<std::string> parts;
  for (const api::Requirement& r : term.match_expressions) parts.push_back(Describe(r));
  for (const api::FieldRequirement& r : term.match_fields) {
    parts.push_back(absl::StrCat(r.field, " field (", absl::StrJoin(r.values, ", "), ")",
                                 r.valid ? "" : " INVALID"));
  }
  return absl::StrJoin(parts, " and ");
}

// "required: <term> | <term>; preferred: 3: <term>; 2: <term>"
inline std::string Describe(const api::NodeAffinity& affinity) {
  std::vector<std::string> required;
  if (affinity.required.has_value()) {
    for (const api::NodeSelectorTerm& term : affinity.required->terms) {
      required.push_back(Describe(term));
    }
  }
  std::vector<std::string> preferred;
  for (const api::PreferredSchedulingTerm& term : affinity.preferred) {
    preferred.push_back(absl::StrCat(term.weight, ": ", Describe(term.preference)));
  }
  return absl::StrCat(
      "required: ", affinity.required.has_value() ? absl::StrJoin(required, " | ") : "none",
      "; preferred: ", preferred.empty() ? "none" : absl::StrJoin(preferred, "; "));
}

inline api::LabelSet Labels(std::string_view key, std::string_view value) {
  return api::LabelSet::FromPairs({{api::Intern(key), api::Intern(value)}});
}

// The source's resource-pool example.
inline constexpr char kPoolPolicy[] = R"(
nodeAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    nodeSelectorTerms:
      - matchExpressions:
          - key: pool
            operator: In
            values: ["{{.PreferredPool}}", "{{.DefaultPool}}"]
  preferredDuringSchedulingIgnoredDuringExecution:
    - weight: 3
      preference:
        matchExpressions:
          - {key: pool, operator: In, values: ["{{.PreferredPool}}"]}
    - weight: 2
      preference:
        matchExpressions:
          - {key: pool, operator: In, values: ["{{.DefaultPool}}"]}
)";

inline constexpr char kConfigHeader[] =
    "apiVersion: kubescheduler.config.k8s.io/v1\n"
    "kind: KubeSchedulerConfiguration\n";

// A template with one required term holding `requirement`.
inline std::string RequiredTemplate(const std::string& requirement) {
  return absl::StrCat(R"(
nodeAffinity:
  requiredDuringSchedulingIgnoredDuringExecution:
    nodeSelectorTerms:
      - matchExpressions:
          - )",
                      requirement, "\n");
}

inline constexpr char kExpression0[] =
    "nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]."
    "matchExpressions[0]";

}  // namespace kubesched::policy::testing
