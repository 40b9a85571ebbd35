// Args of the plugins that place pods relative to nodes and to other pods: NodeAffinity,
// InterPodAffinity and PodTopologySpread. Upstream's v1 JSON field names, defaults
// (v1/defaults.go) and validation (validation/validation_pluginargs.go), with the kubesched
// differences noted where they are.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "config/decode_internal.h"
#include "config/plugin_args_internal.h"
#include "config/yaml_reader.h"
#include "scheduler/api/decode.h"
#include "scheduler/api/labels.h"
#include "scheduler/api/symbol.h"
#include "scheduler/util/strings.h"

namespace kubesched::config {
namespace {

using util::Absl;
using yaml::Field;
using yaml::Get;
using yaml::HasValue;
using yaml::Index;
using yaml::Reader;

constexpr int32_t kMaxHardPodAffinityWeight = 100;
constexpr int32_t kMaxPreferredTermWeight = 100;

std::string Quote(std::string_view text) { return absl::StrCat("\"", Absl(text), "\""); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// NodeAffinity

namespace {

// The decoder keeps requirements upstream would reject (marked invalid, matching nothing, as in a
// pod's own affinity); in scheduler-enforced args upstream's validation rejects them instead.
void ValidateTerm(Reader& r, const api::NodeSelectorTerm& term, std::string_view path) {
  for (size_t i = 0; i < term.match_expressions.size(); ++i) {
    const api::Requirement& requirement = term.match_expressions[i];
    if (requirement.valid) continue;
    r.Fail(Index(Field(path, "matchExpressions"), i),
           absl::StrCat("invalid requirement on key \"", Absl(api::SymbolText(requirement.key)),
                        "\" (unknown operator, In/NotIn without values, Exists/DoesNotExist "
                        "with values, or Gt/Lt without one integer)"));
  }
  for (size_t i = 0; i < term.match_fields.size(); ++i) {
    const api::FieldRequirement& requirement = term.match_fields[i];
    if (requirement.valid) continue;
    r.Fail(Index(Field(path, "matchFields"), i),
           absl::StrCat("invalid requirement on field \"", requirement.field,
                        "\" (only metadata.name with In or NotIn and one value)"));
  }
}

void ValidateAddedAffinity(Reader& r, const api::NodeAffinity& affinity, std::string_view path) {
  if (affinity.required.has_value()) {
    const std::string terms_path =
        Field(Field(path, "requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms");
    for (size_t i = 0; i < affinity.required->terms.size(); ++i) {
      ValidateTerm(r, affinity.required->terms[i], Index(terms_path, i));
    }
  }
  const std::string preferred_path = Field(path, "preferredDuringSchedulingIgnoredDuringExecution");
  for (size_t i = 0; i < affinity.preferred.size(); ++i) {
    const api::PreferredSchedulingTerm& term = affinity.preferred[i];
    const std::string term_path = Index(preferred_path, i);
    r.InRange(term.weight, Field(term_path, "weight"), 1, kMaxPreferredTermWeight);
    ValidateTerm(r, term.preference, Field(term_path, "preference"));
  }
}

// Strict field check of a NodeSelectorTerm subtree. The object decoder is lenient about unknown
// fields (as reading pods must be), but in a config a misspelt "nodeSelectorTerm" would leave a
// required affinity with no terms, which matches no node at all.
void CheckTermFields(Reader& r, const YAML::Node& term, std::string_view path) {
  if (!r.Map(term, path, {"matchExpressions", "matchFields"})) return;
  for (std::string_view list : {"matchExpressions", "matchFields"}) {
    const YAML::Node requirements = Get(term, list);
    const std::string list_path = Field(path, list);
    if (!r.List(requirements, list_path) || !HasValue(requirements)) continue;
    size_t i = 0;
    for (const YAML::Node& requirement : requirements) {
      r.Map(requirement, Index(list_path, i++), {"key", "operator", "values"});
    }
  }
}

void CheckAffinityFields(Reader& r, const YAML::Node& affinity, std::string_view path) {
  constexpr std::string_view kRequired = "requiredDuringSchedulingIgnoredDuringExecution";
  constexpr std::string_view kPreferred = "preferredDuringSchedulingIgnoredDuringExecution";
  if (!r.Map(affinity, path, {kRequired, kPreferred})) return;
  const YAML::Node required = Get(affinity, kRequired);
  const std::string required_path = Field(path, kRequired);
  if (r.Map(required, required_path, {"nodeSelectorTerms"})) {
    const YAML::Node terms = Get(required, "nodeSelectorTerms");
    const std::string terms_path = Field(required_path, "nodeSelectorTerms");
    if (r.List(terms, terms_path) && HasValue(terms)) {
      size_t i = 0;
      for (const YAML::Node& term : terms) CheckTermFields(r, term, Index(terms_path, i++));
    }
  }
  const YAML::Node preferred = Get(affinity, kPreferred);
  const std::string preferred_path = Field(path, kPreferred);
  if (!r.List(preferred, preferred_path) || !HasValue(preferred)) return;
  size_t i = 0;
  for (const YAML::Node& term : preferred) {
    const std::string term_path = Index(preferred_path, i++);
    if (!r.Map(term, term_path, {"weight", "preference"})) return;
    CheckTermFields(r, Get(term, "preference"), Field(term_path, "preference"));
  }
}

}  // namespace

absl::StatusOr<PluginArgs> DecodeNodeAffinityArgs(const YAML::Node& node, std::string_view path) {
  Reader r;
  NodeAffinityArgs args;
  if (!r.Map(node, path, {"apiVersion", "kind", "addedAffinity"})) return r.status();
  CheckTypeMeta(r, node, path, "NodeAffinityArgs", /*required=*/false);
  const YAML::Node added = Get(node, "addedAffinity");
  const std::string added_path = Field(path, "addedAffinity");
  CheckAffinityFields(r, added, added_path);
  if (!r.ok()) return r.status();
  if (!HasValue(added)) return PluginArgs(std::move(args));
  // The object decoder takes text; re-emit the subtree (block style, so that it is never
  // mistaken for JSON).
  absl::StatusOr<std::string> text = yaml::EmitBlock(added);
  if (!text.ok()) return yaml::PathError(added_path, util::Std(text.status().message()));
  absl::StatusOr<api::NodeAffinity> affinity = api::DecodeNodeAffinity(*text);
  if (!affinity.ok()) return yaml::PathError(added_path, util::Std(affinity.status().message()));
  ValidateAddedAffinity(r, *affinity, added_path);
  if (!r.ok()) return r.status();
  args.added_affinity = std::move(*affinity);
  return PluginArgs(std::move(args));
}

// ---------------------------------------------------------------------------------------------
// InterPodAffinity

absl::StatusOr<PluginArgs> DecodeInterPodAffinityArgs(const YAML::Node& node,
                                                      std::string_view path) {
  Reader r;
  InterPodAffinityArgs args;
  if (!r.Map(
          node, path,
          {"apiVersion", "kind", "hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"})) {
    return r.status();
  }
  CheckTypeMeta(r, node, path, "InterPodAffinityArgs", /*required=*/false);
  const std::string weight_path = Field(path, "hardPodAffinityWeight");
  r.Int32(Get(node, "hardPodAffinityWeight"), weight_path, &args.hard_pod_affinity_weight);
  r.InRange(args.hard_pod_affinity_weight, weight_path, 0, kMaxHardPodAffinityWeight);
  r.Bool(Get(node, "ignorePreferredTermsOfExistingPods"),
         Field(path, "ignorePreferredTermsOfExistingPods"),
         &args.ignore_preferred_terms_of_existing_pods);
  if (!r.ok()) return r.status();
  return PluginArgs(args);
}

// ---------------------------------------------------------------------------------------------
// PodTopologySpread
namespace {

std::optional<api::NodeInclusionPolicy> ParseInclusionPolicy(std::string_view text) {
  if (text == "Honor") return api::NodeInclusionPolicy::kHonor;
  if (text == "Ignore") return api::NodeInclusionPolicy::kIgnore;
  return std::nullopt;
}

void DecodeInclusionPolicy(Reader& r, const YAML::Node& node, std::string_view path,
                           std::optional<api::NodeInclusionPolicy>* out) {
  std::string text;
  r.String(node, path, &text);
  if (!r.ok() || !HasValue(node)) return;
  *out = ParseInclusionPolicy(text);
  if (!out->has_value()) {
    r.Fail(path, "unsupported value " + Quote(text) + "; want Honor or Ignore");
  }
}

void DecodeWhenUnsatisfiable(Reader& r, const YAML::Node& node, std::string_view path,
                             api::UnsatisfiableConstraintAction* out) {
  std::string text;
  r.String(node, path, &text);
  if (!r.ok()) return;
  if (text == "DoNotSchedule") {
    *out = api::UnsatisfiableConstraintAction::kDoNotSchedule;
  } else if (text == "ScheduleAnyway") {
    *out = api::UnsatisfiableConstraintAction::kScheduleAnyway;
  } else {
    r.Fail(path, "unsupported value " + Quote(text) + "; want DoNotSchedule or ScheduleAnyway");
  }
}

// One defaultConstraints entry, with upstream's checks (ValidatePodTopologySpreadArgs) plus
// minDomains > 0 and valid matchLabelKeys, which upstream checks only on pods.
void DecodeDefaultConstraint(Reader& r, const YAML::Node& node, std::string_view path,
                             api::TopologySpreadConstraint* out) {
  if (!r.Map(node, path,
             {"maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector", "minDomains",
              "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys"})) {
    return;
  }
  out->max_skew = 0;  // required
  r.Int32(Get(node, "maxSkew"), Field(path, "maxSkew"), &out->max_skew);
  if (r.ok() && out->max_skew <= 0) {
    r.Fail(Field(path, "maxSkew"), absl::StrCat("must be greater than zero, got ", out->max_skew));
  }
  std::string key;
  r.String(Get(node, "topologyKey"), Field(path, "topologyKey"), &key);
  if (r.ok() && key.empty()) r.Fail(Field(path, "topologyKey"), "required");
  if (r.ok() && !api::IsValidLabelKey(key)) {
    r.Fail(Field(path, "topologyKey"), Quote(key) + " is not a valid label key");
  }
  out->topology_key = api::Intern(key);
  DecodeWhenUnsatisfiable(r, Get(node, "whenUnsatisfiable"), Field(path, "whenUnsatisfiable"),
                          &out->when_unsatisfiable);
  if (r.ok() && HasValue(Get(node, "labelSelector"))) {
    r.Fail(Field(path, "labelSelector"), "must not be set: the selector is deduced for each pod");
  }
  int32_t min_domains = 0;
  r.Int32(Get(node, "minDomains"), Field(path, "minDomains"), &min_domains);
  if (r.ok() && HasValue(Get(node, "minDomains"))) {
    if (min_domains <= 0) {
      r.Fail(Field(path, "minDomains"),
             absl::StrCat("must be greater than zero, got ", min_domains));
    }
    out->min_domains = min_domains;
  }
  DecodeInclusionPolicy(r, Get(node, "nodeAffinityPolicy"), Field(path, "nodeAffinityPolicy"),
                        &out->node_affinity_policy);
  DecodeInclusionPolicy(r, Get(node, "nodeTaintsPolicy"), Field(path, "nodeTaintsPolicy"),
                        &out->node_taints_policy);
  std::vector<std::string> keys;
  r.StringList(Get(node, "matchLabelKeys"), Field(path, "matchLabelKeys"), &keys);
  for (size_t i = 0; r.ok() && i < keys.size(); ++i) {
    if (!api::IsValidLabelKey(keys[i])) {
      r.Fail(Index(Field(path, "matchLabelKeys"), i), Quote(keys[i]) + " is not a valid label key");
    }
    out->match_label_keys.push_back(api::Intern(keys[i]));
  }
}

void DecodeDefaultConstraints(Reader& r, const YAML::Node& node, std::string_view path,
                              std::vector<api::TopologySpreadConstraint>* out) {
  if (!r.List(node, path) || !HasValue(node)) return;
  for (const YAML::Node& item : node) {
    const std::string item_path = Index(path, out->size());
    api::TopologySpreadConstraint constraint;
    DecodeDefaultConstraint(r, item, item_path, &constraint);
    if (!r.ok()) return;
    for (const api::TopologySpreadConstraint& earlier : *out) {
      if (earlier.topology_key == constraint.topology_key &&
          earlier.when_unsatisfiable == constraint.when_unsatisfiable) {
        r.Fail(item_path, "duplicate {topologyKey, whenUnsatisfiable} pair");
        return;
      }
    }
    out->push_back(std::move(constraint));
  }
}

}  // namespace

absl::StatusOr<PluginArgs> DecodePodTopologySpreadArgs(const YAML::Node& node,
                                                       std::string_view path) {
  Reader r;
  PodTopologySpreadArgs args;
  if (!r.Map(node, path, {"apiVersion", "kind", "defaultConstraints", "defaultingType"})) {
    return r.status();
  }
  CheckTypeMeta(r, node, path, "PodTopologySpreadArgs", /*required=*/false);
  DecodeDefaultConstraints(r, Get(node, "defaultConstraints"), Field(path, "defaultConstraints"),
                           &args.default_constraints);
  // v1 defaults an absent defaultingType to System, even next to defaultConstraints (which then
  // fail validation, as upstream).
  std::string type;
  const std::string type_path = Field(path, "defaultingType");
  r.String(Get(node, "defaultingType"), type_path, &type);
  if (r.ok() && type == "List") {
    args.defaulting_type = SpreadDefaultingType::kList;
  } else if (r.ok() && !type.empty() && type != "System") {
    r.Fail(type_path, "unsupported value " + Quote(type) + "; want System or List");
  } else if (r.ok() && !args.default_constraints.empty()) {
    r.Fail(type_path, "must be List when defaultConstraints are not empty");
  }
  if (!r.ok()) return r.status();
  return PluginArgs(std::move(args));
}

}  // namespace kubesched::config
