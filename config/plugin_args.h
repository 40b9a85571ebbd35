#pragma once

// Plugin arguments as plain structs, one per plugin that takes args, with upstream's v1 field
// names in the comments. Parsed and validated in config/ (plugin_args.cc picks the decoder of the
// plugin's family: resource_args.cc, affinity_spread_args.cc, preemption_args.cc,
// volume_args.cc, which holds DynamicResources' too); plugins never see YAML.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "absl/time/time.h"
#include "scheduler/api/labels.h"
#include "scheduler/api/objects.h"

namespace kubesched::config {

struct ResourceWeight {
  std::string name;    // name
  int64_t weight = 1;  // weight, 1..100
};

struct UtilizationShapePoint {
  int32_t utilization = 0;  // 0..100
  int32_t score = 0;        // 0..10
};

// kWatermark is a kubesched extension (not in upstream's v1 API).
enum class ScoringStrategyType {
  kLeastAllocated,
  kMostAllocated,
  kRequestedToCapacityRatio,
  kWatermark,
};

// Thresholds on the cluster's allocated ratio for the Watermark strategy: spread (least
// allocated) below `high`, stack (most allocated) from `high` on until the ratio drops below
// `low`. 0 < low <= high <= 1.
// The name watermark reports give the nodes in no configured pool.
inline constexpr std::string_view kDefaultWatermarkPool = "default";

// `pools` (kubesched): pools of nodes named by label, each with its own ratio and hysteresis.
struct WatermarkPool {
  std::string name;  // name: a label value ("default" is the implicit pool's)
  // nodeSelector: label key -> value; a node is in the pool when it has them all.
  std::vector<std::pair<std::string, std::string>> node_selector;
  double high = 0.85;  // high: the watermark's unless given
  double low = 0.80;   // low: the watermark's unless given
};

struct WatermarkThresholds {
  double high = 0.85;                // high
  double low = 0.80;                 // low
  std::vector<WatermarkPool> pools;  // pools
};

struct ScoringStrategy {
  ScoringStrategyType type = ScoringStrategyType::kLeastAllocated;      // type
  std::vector<ResourceWeight> resources = {{"cpu", 1}, {"memory", 1}};  // resources
  std::vector<UtilizationShapePoint> shape;  // requestedToCapacityRatio.shape
  WatermarkThresholds watermark{};           // watermark (type Watermark only)
};

// NodeResourcesFitArgs
struct NodeResourcesFitArgs {
  std::vector<std::string> ignored_resources;        // ignoredResources
  std::vector<std::string> ignored_resource_groups;  // ignoredResourceGroups
  ScoringStrategy scoring_strategy;                  // scoringStrategy
};

// NodeResourcesBalancedAllocationArgs
struct BalancedAllocationArgs {
  std::vector<ResourceWeight> resources = {{"cpu", 1}, {"memory", 1}};  // resources
};

// NodeAffinityArgs
struct NodeAffinityArgs {
  std::optional<api::NodeAffinity> added_affinity;  // addedAffinity
};

// InterPodAffinityArgs
struct InterPodAffinityArgs {
  int32_t hard_pod_affinity_weight = 1;                  // hardPodAffinityWeight, 0..100
  bool ignore_preferred_terms_of_existing_pods = false;  // ignorePreferredTermsOfExistingPods
};

// PodTopologySpreadArgs.defaultingType
enum class SpreadDefaultingType { kSystem, kList };

// PodTopologySpreadArgs
struct PodTopologySpreadArgs {
  // defaultConstraints: applied to pods without constraints of their own; never carry a
  // labelSelector (it is deduced per pod). Ignored (and must be empty) with kSystem.
  std::vector<api::TopologySpreadConstraint> default_constraints{};
  SpreadDefaultingType defaulting_type = SpreadDefaultingType::kSystem;  // defaultingType
};

// MostAvailableArgs (kubesched extension; DESIGN.md "Scorers").
struct MostAvailableArgs {
  std::vector<ResourceWeight> resources = {{"cpu", 1}, {"memory", 1}};  // resources
  // metricsPollInterval: how often `run` lists metrics.k8s.io/v1beta1 nodes; > 0.
  absl::Duration metrics_poll_interval = absl::Seconds(30);
  // metricsStalenessLimit: a node whose latest sample is older than this (or that has none) is
  // scored on allocatable - requested instead; > 0.
  absl::Duration metrics_staleness_limit = absl::Minutes(3);
};

// DefaultPreemptionArgs
struct DefaultPreemptionArgs {
  // minCandidateNodesPercentage, 0..100: at least this share of the nodes where preemption might
  // help is dry-run for candidates...
  int32_t min_candidate_nodes_percentage = 10;
  // minCandidateNodesAbsolute, >= 0: ...and at least this many. Not both 0.
  int32_t min_candidate_nodes_absolute = 100;
  // nonPreemptibleOverridePriority (kubesched extension; DESIGN.md "Preemption"): a preemptor of
  // at least this priority may preempt NonPreemptible pods (default: the system classes). >= 0.
  int32_t non_preemptible_override_priority = 2000000000;
};

// VolumeBindingArgs
struct VolumeBindingArgs {
  // bindTimeoutSeconds, >= 0: how long PreBind waits for the claims to be bound.
  int64_t bind_timeout_seconds = 600;
};

// DynamicResourcesArgs
struct DynamicResourcesArgs {
  // filterTimeout, >= 0 (0: none): how long Filter may search one node's devices before the node
  // counts as unable to serve the pod's claims.
  absl::Duration filter_timeout = absl::Seconds(10);
};

using PluginArgs =
    std::variant<std::monostate, NodeResourcesFitArgs, BalancedAllocationArgs, NodeAffinityArgs,
                 InterPodAffinityArgs, PodTopologySpreadArgs, MostAvailableArgs,
                 DefaultPreemptionArgs, VolumeBindingArgs, DynamicResourcesArgs>;

}  // namespace kubesched::config
