// Plugin args: upstream's v1 JSON field names, defaults (v1/defaults.go) and validation
// (validation/validation_pluginargs.go), with the kubesched differences noted where they are.

#include "config/plugin_args.h"

#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "config/decode_internal.h"
#include "config/yaml_reader.h"
#include "plugins/names.h"
#include "scheduler/api/decode.h"
#include "scheduler/api/labels.h"
#include "scheduler/api/symbol.h"
#include "scheduler/util/strings.h"

namespace kubesched::config {
namespace {

namespace names = plugins::names;
using util::Absl;
using yaml::Field;
using yaml::Get;
using yaml::HasValue;
using yaml::Index;
using yaml::Reader;

constexpr int64_t kMaxResourceWeight = 100;  // upstream: weight in (0, 100]
constexpr int32_t kMaxShapeScore = 10;       // upstream MaxCustomPriorityScore
constexpr int32_t kMaxHardPodAffinityWeight = 100;
constexpr int32_t kMaxPreferredTermWeight = 100;

std::string Quote(std::string_view text) { return absl::StrCat("\"", Absl(text), "\""); }

std::optional<ScoringStrategyType> ParseStrategyType(std::string_view type) {
  if (type == "LeastAllocated") return ScoringStrategyType::kLeastAllocated;
  if (type == "MostAllocated") return ScoringStrategyType::kMostAllocated;
  if (type == "RequestedToCapacityRatio") return ScoringStrategyType::kRequestedToCapacityRatio;
  if (type == "Watermark") return ScoringStrategyType::kWatermark;
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Resource weights (NodeResourcesFit scoringStrategy.resources, BalancedAllocation resources)

// Upstream only range-checks the weight; kubesched also rejects empty, malformed and repeated
// names, which upstream would silently score as a resource no node has (or count twice).
void ValidateResourceWeight(Reader& r, const ResourceWeight& resource, std::string_view path,
                            absl::flat_hash_set<std::string>& seen) {
  const std::string name_path = Field(path, "name");
  if (resource.name.empty()) {
    r.Fail(name_path, "required");
  } else if (!api::IsValidLabelKey(resource.name)) {
    r.Fail(name_path, Quote(resource.name) + " is not a valid resource name");
  } else if (!seen.insert(resource.name).second) {
    r.Fail(name_path, "duplicate resource " + Quote(resource.name));
  }
  // An absent weight is 1 (upstream's default). An explicit 0 is an error here, where upstream's
  // defaulting would quietly turn it into 1: a zero weight is almost surely a mistake.
  r.InRange(resource.weight, Field(path, "weight"), 1, kMaxResourceWeight);
}

void DecodeResourceWeights(Reader& r, const YAML::Node& node, std::string_view path,
                           std::vector<ResourceWeight>* out) {
  if (!r.List(node, path) || !HasValue(node)) return;
  std::vector<ResourceWeight> resources;
  absl::flat_hash_set<std::string> seen;
  for (const YAML::Node& item : node) {
    const std::string item_path = Index(path, resources.size());
    ResourceWeight resource;  // weight 1 unless given
    if (!r.Map(item, item_path, {"name", "weight"})) return;
    r.String(Get(item, "name"), Field(item_path, "name"), &resource.name);
    r.Int64(Get(item, "weight"), Field(item_path, "weight"), &resource.weight);
    if (!r.ok()) return;
    ValidateResourceWeight(r, resource, item_path, seen);
    resources.push_back(std::move(resource));
  }
  // An empty list keeps the default (cpu and memory, weight 1), as upstream's defaulting does.
  if (r.ok() && !resources.empty()) *out = std::move(resources);
}

// ---------------------------------------------------------------------------------------------
// NodeResourcesFit

void DecodeShape(Reader& r, const YAML::Node& ratio, std::string_view ratio_path,
                 std::vector<UtilizationShapePoint>* out) {
  if (!r.Map(ratio, ratio_path, {"shape"})) return;
  const YAML::Node shape = Get(ratio, "shape");
  const std::string path = Field(ratio_path, "shape");
  if (!r.List(shape, path)) return;
  if (!HasValue(shape) || shape.size() == 0) {
    r.Fail(path, "at least one point is required");
    return;
  }
  std::vector<UtilizationShapePoint> points;
  for (const YAML::Node& item : shape) {
    const std::string item_path = Index(path, points.size());
    UtilizationShapePoint point;
    if (!r.Map(item, item_path, {"utilization", "score"})) return;
    r.Int32(Get(item, "utilization"), Field(item_path, "utilization"), &point.utilization);
    r.Int32(Get(item, "score"), Field(item_path, "score"), &point.score);
    r.InRange(point.utilization, Field(item_path, "utilization"), 0, 100);
    r.InRange(point.score, Field(item_path, "score"), 0, kMaxShapeScore);
    if (r.ok() && !points.empty() && point.utilization <= points.back().utilization) {
      r.Fail(Field(item_path, "utilization"),
             absl::StrCat("must be greater than the previous point's (", points.back().utilization,
                          "), got ", point.utilization));
    }
    points.push_back(point);
  }
  if (r.ok()) *out = std::move(points);
}

// scoringStrategy.watermark: optional for type Watermark (defaults high 0.85, low 0.80), refused
// for the other types; 0 < low <= high <= 1.
void DecodeWatermark(Reader& r, const YAML::Node& node, std::string_view path, bool wanted,
                     WatermarkThresholds* out) {
  if (!HasValue(node)) return;
  if (!wanted) {
    r.Fail(path, "must not be set unless type is Watermark");
    return;
  }
  if (!r.Map(node, path, {"high", "low"})) return;
  r.Double(Get(node, "high"), Field(path, "high"), &out->high);
  r.Double(Get(node, "low"), Field(path, "low"), &out->low);
  if (!r.ok()) return;
  if (!(out->high > 0 && out->high <= 1)) {
    r.Fail(Field(path, "high"), "must be in (0, 1]");
  } else if (!(out->low > 0 && out->low <= out->high)) {
    r.Fail(Field(path, "low"), "must be in (0, high]");
  }
}

void DecodeScoringStrategy(Reader& r, const YAML::Node& node, std::string_view path,
                           ScoringStrategy* out) {
  if (!r.Map(node, path, {"type", "resources", "requestedToCapacityRatio", "watermark"})) return;
  std::string type;
  r.String(Get(node, "type"), Field(path, "type"), &type);
  // Upstream defaults the type only when the whole strategy is absent; kubesched also reads a
  // strategy without a type as LeastAllocated, the documented default.
  if (!type.empty()) {
    const std::optional<ScoringStrategyType> parsed = ParseStrategyType(type);
    if (!parsed.has_value()) {
      r.Fail(Field(path, "type"), "unknown type " + Quote(type) +
                                      "; want LeastAllocated, MostAllocated, "
                                      "RequestedToCapacityRatio or Watermark");
      return;
    }
    out->type = *parsed;
  }
  DecodeResourceWeights(r, Get(node, "resources"), Field(path, "resources"), &out->resources);

  const YAML::Node ratio = Get(node, "requestedToCapacityRatio");
  const std::string ratio_path = Field(path, "requestedToCapacityRatio");
  const bool wants_ratio = out->type == ScoringStrategyType::kRequestedToCapacityRatio;
  if (wants_ratio && !HasValue(ratio)) {
    r.Fail(ratio_path, "required when type is RequestedToCapacityRatio");
  } else if (!wants_ratio && HasValue(ratio)) {
    r.Fail(ratio_path, "must not be set unless type is RequestedToCapacityRatio");
  } else if (wants_ratio) {
    DecodeShape(r, ratio, ratio_path, &out->shape);
  }
  DecodeWatermark(r, Get(node, "watermark"), Field(path, "watermark"),
                  out->type == ScoringStrategyType::kWatermark, &out->watermark);
}

void ValidateIgnoredResources(Reader& r, const NodeResourcesFitArgs& args, std::string_view path) {
  const std::string resources_path = Field(path, "ignoredResources");
  for (size_t i = 0; i < args.ignored_resources.size(); ++i) {
    const std::string& name = args.ignored_resources[i];
    if (!api::IsValidLabelKey(name)) {
      r.Fail(Index(resources_path, i), Quote(name) + " is not a valid resource name");
    }
  }
  const std::string groups_path = Field(path, "ignoredResourceGroups");
  for (size_t i = 0; i < args.ignored_resource_groups.size(); ++i) {
    const std::string& group = args.ignored_resource_groups[i];
    if (group.find('/') != std::string::npos) {
      r.Fail(Index(groups_path, i),
             "a resource group name cannot contain '/', got " + Quote(group));
    } else if (!api::IsValidLabelKey(group)) {
      r.Fail(Index(groups_path, i), Quote(group) + " is not a valid resource group name");
    }
  }
}

absl::StatusOr<PluginArgs> DecodeFitArgs(const YAML::Node& node, std::string_view path) {
  Reader r;
  NodeResourcesFitArgs args;
  if (!r.Map(
          node, path,
          {"apiVersion", "kind", "ignoredResources", "ignoredResourceGroups", "scoringStrategy"})) {
    return r.status();
  }
  CheckTypeMeta(r, node, path, "NodeResourcesFitArgs", /*required=*/false);
  r.StringList(Get(node, "ignoredResources"), Field(path, "ignoredResources"),
               &args.ignored_resources);
  r.StringList(Get(node, "ignoredResourceGroups"), Field(path, "ignoredResourceGroups"),
               &args.ignored_resource_groups);
  if (r.ok()) ValidateIgnoredResources(r, args, path);
  DecodeScoringStrategy(r, Get(node, "scoringStrategy"), Field(path, "scoringStrategy"),
                        &args.scoring_strategy);
  if (!r.ok()) return r.status();
  return PluginArgs(std::move(args));
}

// ---------------------------------------------------------------------------------------------
// NodeResourcesBalancedAllocation

absl::StatusOr<PluginArgs> DecodeBalancedAllocationArgs(const YAML::Node& node,
                                                        std::string_view path) {
  Reader r;
  BalancedAllocationArgs args;
  if (!r.Map(node, path, {"apiVersion", "kind", "resources"})) return r.status();
  CheckTypeMeta(r, node, path, "NodeResourcesBalancedAllocationArgs", /*required=*/false);
  // Upstream requires every weight to be 1; kubesched's GPU-weighted balance uses them (1..100).
  DecodeResourceWeights(r, Get(node, "resources"), Field(path, "resources"), &args.resources);
  if (!r.ok()) return r.status();
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

// ---------------------------------------------------------------------------------------------
// MostAvailable

void DecodePositiveDuration(Reader& r, const YAML::Node& node, std::string_view path,
                            absl::Duration* out) {
  r.Duration(node, path, out);
  if (r.ok() && *out <= absl::ZeroDuration()) {
    r.Fail(path, "must be greater than zero, got " + absl::FormatDuration(*out));
  }
}

absl::StatusOr<PluginArgs> DecodeMostAvailableArgs(const YAML::Node& node, std::string_view path) {
  Reader r;
  MostAvailableArgs args;
  if (!r.Map(node, path,
             {"apiVersion", "kind", "resources", "metricsPollInterval", "metricsStalenessLimit"})) {
    return r.status();
  }
  CheckTypeMeta(r, node, path, "MostAvailableArgs", /*required=*/false);
  DecodeResourceWeights(r, Get(node, "resources"), Field(path, "resources"), &args.resources);
  DecodePositiveDuration(r, Get(node, "metricsPollInterval"), Field(path, "metricsPollInterval"),
                         &args.metrics_poll_interval);
  DecodePositiveDuration(r, Get(node, "metricsStalenessLimit"),
                         Field(path, "metricsStalenessLimit"), &args.metrics_staleness_limit);
  if (!r.ok()) return r.status();
  return PluginArgs(std::move(args));
}

// ---------------------------------------------------------------------------------------------
// DefaultPreemption

// Upstream's ValidateDefaultPreemptionArgs, with its messages (field.Invalid's "Invalid value: v:
// ..."); the first error only, as every decoder here reports one.
void ValidateDefaultPreemptionArgs(Reader& r, const DefaultPreemptionArgs& args,
                                   std::string_view path) {
  const std::string percentage_path = Field(path, "minCandidateNodesPercentage");
  const std::string absolute_path = Field(path, "minCandidateNodesAbsolute");
  const std::string override_path = Field(path, "nonPreemptibleOverridePriority");
  const int32_t percentage = args.min_candidate_nodes_percentage;
  const int32_t absolute = args.min_candidate_nodes_absolute;
  if (percentage < 0 || percentage > 100) {
    r.Fail(percentage_path,
           absl::StrCat("Invalid value: ", percentage, ": not in valid range [0, 100]"));
  } else if (absolute < 0) {
    r.Fail(absolute_path,
           absl::StrCat("Invalid value: ", absolute, ": not in valid range [0, inf)"));
  } else if (percentage == 0 && absolute == 0) {
    r.Fail(percentage_path,
           "Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute");
  } else if (args.non_preemptible_override_priority < 0) {
    // kubesched's: a negative override would let every pod preempt NonPreemptible pods.
    r.Fail(override_path,
           absl::StrCat("must not be negative, got ", args.non_preemptible_override_priority));
  }
}

absl::StatusOr<PluginArgs> DecodeDefaultPreemptionArgs(const YAML::Node& node,
                                                       std::string_view path) {
  Reader r;
  DefaultPreemptionArgs args;
  if (!r.Map(node, path,
             {"apiVersion", "kind", "minCandidateNodesPercentage", "minCandidateNodesAbsolute",
              "nonPreemptibleOverridePriority"})) {
    return r.status();
  }
  CheckTypeMeta(r, node, path, "DefaultPreemptionArgs", /*required=*/false);
  r.Int32(Get(node, "minCandidateNodesPercentage"), Field(path, "minCandidateNodesPercentage"),
          &args.min_candidate_nodes_percentage);
  r.Int32(Get(node, "minCandidateNodesAbsolute"), Field(path, "minCandidateNodesAbsolute"),
          &args.min_candidate_nodes_absolute);
  r.Int32(Get(node, "nonPreemptibleOverridePriority"),
          Field(path, "nonPreemptibleOverridePriority"), &args.non_preemptible_override_priority);
  if (r.ok()) ValidateDefaultPreemptionArgs(r, args, path);
  if (!r.ok()) return r.status();
  return PluginArgs(args);
}

// ---------------------------------------------------------------------------------------------
// NodeAffinity

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

absl::StatusOr<PluginArgs> DecodeNoArgs(const YAML::Node& node, std::string_view path) {
  // `args: {}` is what tools emit for "nothing"; anything more would be silently ignored.
  if (HasValue(node) && !(node.IsMap() && node.size() == 0)) {
    return yaml::PathError(path, "must be empty; the plugin takes no args");
  }
  return PluginArgs(std::monostate());
}

}  // namespace

absl::StatusOr<PluginArgs> DecodePluginArgs(std::string_view plugin_name, const YAML::Node& args,
                                            std::string_view path) {
  if (auto status = CheckPluginName(plugin_name); !status.ok()) {
    return yaml::PathError(path, util::Std(status.message()));
  }
  try {
    if (plugin_name == names::kNodeResourcesFit) return DecodeFitArgs(args, path);
    if (plugin_name == names::kNodeResourcesBalancedAllocation) {
      return DecodeBalancedAllocationArgs(args, path);
    }
    if (plugin_name == names::kNodeAffinity) return DecodeNodeAffinityArgs(args, path);
    if (plugin_name == names::kInterPodAffinity) return DecodeInterPodAffinityArgs(args, path);
    if (plugin_name == names::kPodTopologySpread) return DecodePodTopologySpreadArgs(args, path);
    if (plugin_name == names::kMostAvailable) return DecodeMostAvailableArgs(args, path);
    if (plugin_name == names::kDefaultPreemption) return DecodeDefaultPreemptionArgs(args, path);
    return DecodeNoArgs(args, path);
  } catch (const std::exception& e) {
    // yaml-cpp throws on misuse; no exception may leave config/.
    return yaml::PathError(path, absl::StrCat("cannot decode: ", e.what()));
  }
}

absl::StatusOr<PluginArgs> ParsePluginArgs(std::string_view plugin_name, std::string_view text) {
  if (auto status = CheckPluginName(plugin_name); !status.ok()) return status;
  const auto with_plugin = [plugin_name](const absl::Status& status) {
    return absl::InvalidArgumentError(absl::StrCat(Absl(plugin_name), ": ", status.message()));
  };
  absl::StatusOr<YAML::Node> node = yaml::ParseDocument(text);
  if (!node.ok()) return with_plugin(node.status());
  absl::StatusOr<PluginArgs> args = DecodePluginArgs(plugin_name, *node, "");
  if (!args.ok()) return with_plugin(args.status());
  return args;
}

PluginArgs DefaultPluginArgs(std::string_view plugin_name) {
  if (plugin_name == names::kNodeResourcesFit) return NodeResourcesFitArgs();
  if (plugin_name == names::kNodeResourcesBalancedAllocation) return BalancedAllocationArgs();
  if (plugin_name == names::kNodeAffinity) return NodeAffinityArgs();
  if (plugin_name == names::kInterPodAffinity) return InterPodAffinityArgs();
  if (plugin_name == names::kPodTopologySpread) return PodTopologySpreadArgs();
  if (plugin_name == names::kMostAvailable) return MostAvailableArgs();
  if (plugin_name == names::kDefaultPreemption) return DefaultPreemptionArgs();
  return std::monostate();
}

}  // namespace kubesched::config
