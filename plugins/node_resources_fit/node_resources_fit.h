#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "config/plugin_args.h"
#include "plugins/registry.h"
#include "scheduler/api/resource.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::plugins {

// Upstream's NodeResourcesFit.
//
// PreFilter stores the pod's positive requests in CycleState (key "NodeResourcesFit"): cpu,
// memory, ephemeral-storage, then scalar resources in ascending ResourceId order, leaving out the
// extended resources named by args.ignoredResources or whose group (the part before '/') is in
// args.ignoredResourceGroups.
//
// Filter: "Too many pods" when pods + 1 > allocatable pods; then "Insufficient <name>" for each
// stored request > allocatable - requested (real requests), in the stored order. The code is
// UnschedulableAndUnresolvable when one failing request alone exceeds the node's allocatable
// (a pod alone exceeds a node with 0 allocatable pods), as preemption cannot help there; else
// Unschedulable.
//
// Score (no normalizer, default weight 1) by args.scoringStrategy over its resources: cpu and
// memory use the non-zero requests (node's non_zero_requested + pod's non_zero_requests), other
// resources the real ones; a scalar resource the pod does not request, `pods`, and resources the
// node has none of are left out. PreScore stores the per-pod (resource, weight, request) list
// (same key space, its own key).
//
// Filter and Score only read CycleState and are safe to call concurrently.
class NodeResourcesFit final : public framework::PreFilterPlugin,
                               public framework::FilterPlugin,
                               public framework::PreScorePlugin,
                               public framework::ScorePlugin {
 public:
  static constexpr std::string_view kTooManyPods = "Too many pods";

  // `args` must be valid (see NewNodeResourcesFit).
  explicit NodeResourcesFit(const config::NodeResourcesFitArgs& args);

  std::string_view Name() const override;
  // Never skips: "Too many pods" applies to every pod.
  framework::PreFilterOutcome PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                        const framework::Snapshot& snapshot) override;
  // Error when PreFilter did not run.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) const override;
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const framework::Snapshot& snapshot,
                             absl::Span<const framework::NodeInfo* const> feasible) override;
  // Works without PreScore too (computes the list inline, without allocating for up to 8
  // resources), as upstream's Score does.
  int64_t Score(const framework::CycleState& state, const framework::PodInfo& pod,
                const framework::NodeInfo& node) const override;

  // A scoring resource resolved at construction.
  struct ResourceWeight {
    api::ResourceId id;
    int64_t weight;
  };
  // A point of the RequestedToCapacityRatio shape, score already scaled to 0..100.
  struct ShapePoint {
    int64_t utilization;
    int64_t score;
  };

 private:
  // Whether the filter ignores this resource (string look-ups: PreFilter only).
  bool IsIgnored(api::ResourceId id) const;
  // One resource's 0..100 score under the configured strategy.
  int64_t ResourceScore(int64_t requested, int64_t capacity) const;

  absl::flat_hash_set<std::string> ignored_resources_;
  absl::flat_hash_set<std::string> ignored_groups_;
  config::ScoringStrategyType strategy_;
  std::vector<ResourceWeight> resources_;
  std::vector<ShapePoint> shape_;
};

// Validates args as upstream: ignoredResources are qualified names; ignoredResourceGroups are
// qualified names without '/'; scoringStrategy.resources have non-empty unique names and weights
// in 1..100 (an empty list means the default cpu+memory, weight 1); RequestedToCapacityRatio
// needs at least one shape point, utilization 0..100 strictly increasing, score 0..10.
absl::StatusOr<std::unique_ptr<framework::Plugin>> NewNodeResourcesFit(
    const config::PluginArgs& args, const PluginHandle& handle);

}  // namespace kubesched::plugins
