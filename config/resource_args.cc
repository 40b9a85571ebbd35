// Args of the plugins that weigh node resources: NodeResourcesFit, NodeResourcesBalancedAllocation
// and kubesched's MostAvailable. Upstream's v1 JSON field names, defaults (v1/defaults.go) and
// validation (validation/validation_pluginargs.go), with the kubesched differences noted where
// they are.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "config/decode_internal.h"
#include "config/plugin_args_internal.h"
#include "config/yaml_reader.h"
#include "scheduler/api/labels.h"
#include "scheduler/util/strings.h"

namespace kubesched::config {
namespace {

using util::Absl;
using yaml::Field;
using yaml::Get;
using yaml::HasValue;
using yaml::Index;
using yaml::Reader;

constexpr int64_t kMaxResourceWeight = 100;  // upstream: weight in (0, 100]
constexpr int32_t kMaxShapeScore = 10;       // upstream MaxCustomPriorityScore

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

// The high/low pair of a watermark or of one of its pools: 0 < low <= high <= 1.
void ValidateThresholds(Reader& r, double high, double low, std::string_view path) {
  if (!(high > 0 && high <= 1)) {
    r.Fail(Field(path, "high"), "must be in (0, 1]");
  } else if (!(low > 0 && low <= high)) {
    r.Fail(Field(path, "low"), "must be in (0, high]");
  }
}

// A pool's nodeSelector: a non-empty map of label key to value, both valid labels.
void DecodePoolSelector(Reader& r, const YAML::Node& node, std::string_view path,
                        WatermarkPool* out) {
  if (!HasValue(node)) {
    r.Fail(path, "required: the labels that put a node in the pool");
    return;
  }
  if (!node.IsMap() || node.size() == 0) {
    r.Fail(path, "must be a non-empty map of node label to value");
    return;
  }
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    const std::string entry_path = Field(path, key);
    std::string value;
    r.String(entry.second, entry_path, &value);
    if (!r.ok()) return;
    if (!api::IsValidLabelKey(key)) {
      r.Fail(entry_path, Quote(key) + " is not a valid label key");
    } else if (!api::IsValidLabelValue(value)) {
      r.Fail(entry_path, Quote(value) + " is not a valid label value");
    }
    out->node_selector.emplace_back(key, std::move(value));
  }
}

void DecodePool(Reader& r, const YAML::Node& item, std::string_view path,
                const WatermarkThresholds& parent, absl::flat_hash_set<std::string>& names,
                WatermarkPool* out) {
  if (!r.Map(item, path, {"name", "nodeSelector", "high", "low"})) return;
  out->high = parent.high;
  out->low = parent.low;
  r.String(Get(item, "name"), Field(path, "name"), &out->name);
  r.Double(Get(item, "high"), Field(path, "high"), &out->high);
  r.Double(Get(item, "low"), Field(path, "low"), &out->low);
  if (!r.ok()) return;
  const std::string name_path = Field(path, "name");
  if (out->name.empty()) {
    r.Fail(name_path, "required");
  } else if (out->name == kDefaultWatermarkPool) {
    r.Fail(name_path, "\"default\" is the name of the nodes in no pool; choose another");
  } else if (!api::IsValidLabelValue(out->name)) {
    r.Fail(name_path, Quote(out->name) + " must be a valid label value");
  } else if (!names.insert(out->name).second) {
    r.Fail(name_path, "duplicate pool " + Quote(out->name));
  }
  DecodePoolSelector(r, Get(item, "nodeSelector"), Field(path, "nodeSelector"), out);
  if (r.ok()) ValidateThresholds(r, out->high, out->low, path);
}

// The pools are numbered in one 64-bit word per pod cycle.
constexpr size_t kMaxWatermarkPools = 32;

void DecodePools(Reader& r, const YAML::Node& node, std::string_view path,
                 WatermarkThresholds* out) {
  if (!r.List(node, path) || !HasValue(node)) return;
  if (node.size() > kMaxWatermarkPools) {
    r.Fail(path, absl::StrCat("at most ", kMaxWatermarkPools, " pools, got ", node.size()));
    return;
  }
  absl::flat_hash_set<std::string> names;
  for (const YAML::Node& item : node) {
    WatermarkPool pool;
    DecodePool(r, item, Index(path, out->pools.size()), *out, names, &pool);
    if (!r.ok()) return;
    out->pools.push_back(std::move(pool));
  }
}

// scoringStrategy.watermark: optional for type Watermark (defaults high 0.85, low 0.80), refused
// for the other types; 0 < low <= high <= 1; pools inherit high and low unless they set them.
void DecodeWatermark(Reader& r, const YAML::Node& node, std::string_view path, bool wanted,
                     WatermarkThresholds* out) {
  if (!HasValue(node)) return;
  if (!wanted) {
    r.Fail(path, "must not be set unless type is Watermark");
    return;
  }
  if (!r.Map(node, path, {"high", "low", "pools"})) return;
  r.Double(Get(node, "high"), Field(path, "high"), &out->high);
  r.Double(Get(node, "low"), Field(path, "low"), &out->low);
  if (!r.ok()) return;
  ValidateThresholds(r, out->high, out->low, path);
  if (r.ok()) DecodePools(r, Get(node, "pools"), Field(path, "pools"), out);
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

}  // namespace

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
// MostAvailable

namespace {

void DecodePositiveDuration(Reader& r, const YAML::Node& node, std::string_view path,
                            absl::Duration* out) {
  r.Duration(node, path, out);
  if (r.ok() && *out <= absl::ZeroDuration()) {
    r.Fail(path, "must be greater than zero, got " + absl::FormatDuration(*out));
  }
}

}  // namespace

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

}  // namespace kubesched::config
