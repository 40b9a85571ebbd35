#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "config/plugin_args.h"
#include "plugins/helper/integer_division.h"
#include "plugins/node_resources_fit/watermark.h"
#include "plugins/plugin_handle.h"
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
// Watermark (kubesched extension; the seed article's "water-level aware stack and spread"):
// LeastAllocated scoring (spread) while the allocated ratio is below watermark.high,
// MostAllocated (stack) from high on until the ratio drops below watermark.low (hysteresis), so
// that a nearly full pool packs the leftovers together and large pods still find room.
// The allocated ratio, over the strategy's resources R (without `pods`, and without resources of
// which the nodes counted have no allocatable):
//
//   ratio = Σ_{r∈R} w_r · (Σ_nodes requested_r / Σ_nodes allocatable_r) / Σ_{r∈R} w_r
//
// where requested are the real requests (no non-zero defaults) of bound and assumed pods, and
// the nodes are those of the pod's pool it could use (see Watermark: taints it does not tolerate
// and cordons leave nodes out; watermark.pools names pools by node labels); 0 when R is empty.
// The sums come per group of alike nodes from the snapshot, which the cache keeps incrementally,
// so a cycle costs O(groups · |R|), never a node scan.
// The modes are state across cycles, one per pool: PreScore (once per pod, on the scheduling
// thread) computes the ratio, moves its pool's mode and copies it into CycleState; Score reads it
// from there. Cycles that do not score (no or one feasible node) do not move the mode; the
// sequence of modes is a function of the sequence of scored snapshots and pods, hence
// deterministic.
//
// Filter and Score only read CycleState and are safe to call concurrently.
class NodeResourcesFit final : public framework::PreFilterPlugin,
                               public framework::FilterPlugin,
                               public framework::RowFilterPlugin,
                               public framework::RequestsFilterPlugin,
                               public framework::PreScorePlugin,
                               public framework::ScorePlugin,
                               public framework::RowScorePlugin,
                               public framework::WatermarkReporter {
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
  // The row answers for pods, cpu and memory; other resources are read from `node`.
  framework::Status FilterWithRow(const framework::CycleState& state, const framework::PodInfo& pod,
                                  const framework::NodeInfo& node,
                                  const framework::NodeRow& row) const override;
  // When the pod requests no resource beyond cpu and memory.
  bool FilterReadsOnlyRow(const framework::CycleState& state,
                          const framework::PodInfo& pod) const override;
  // Clears the flags of the nodes without room, read from the rows.
  void ClearFailingRows(const framework::CycleState& state, const framework::PodInfo& pod,
                        absl::Span<const framework::NodeRow> rows, uint8_t* passes) const override;
  // Filter's test on given sums: the pods' requests and their number.
  framework::Status FilterRequests(const framework::CycleState& state,
                                   const framework::PodInfo& pod, const framework::NodeInfo& node,
                                   const api::ResourceList& requested,
                                   int64_t num_pods) const override;
  // "Insufficient cpu" and "Too many pods" are this filter's own verdicts.
  bool RejectsShortOfBasicResources() const override { return true; }
  // The pod's requests against the node's allocatable and its pods' requests.
  bool FilterJudgesPodAndNodeAlone(const framework::CycleState& /*state*/,
                                   const framework::PodInfo& /*pod*/) const override {
    return true;
  }
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const framework::Snapshot& snapshot,
                             absl::Span<const framework::NodeInfo* const> feasible) override;
  // Works without PreScore too (computes the list inline, without allocating for up to 8
  // resources), as upstream's Score does.
  int64_t Score(const framework::CycleState& state, const framework::PodInfo& pod,
                const framework::NodeInfo& node) const override;
  // The row answers for cpu and memory; other resources are read from `node`.
  int64_t ScoreWithRow(const framework::CycleState& state, const framework::PodInfo& pod,
                       const framework::NodeInfo& node,
                       const framework::NodeRow& row) const override;
  // The pod's scoring list is resolved once for the chunk.
  void ScoreRows(const framework::CycleState& state, const framework::PodInfo& pod,
                 absl::Span<const framework::NodeInfo* const> nodes,
                 const framework::NodeRow* const* rows, int64_t* scores) const override;

  // A scoring resource resolved at construction.
  struct ResourceWeight {
    api::ResourceId id;
    int64_t weight;
  };
  // The divisors of cpu and memory's weighted mean: both weights, or the one of the only resource
  // a node has. The configuration fixes them, so they are made once, with the plugin.
  struct WeightSums {
    helper::ConstantDivisor both;
    helper::ConstantDivisor cpu_only;
    helper::ConstantDivisor memory_only;
  };
  // A point of the RequestedToCapacityRatio shape, score already scaled to 0..100.
  struct ShapePoint {
    int64_t utilization;
    int64_t score;
  };

  using WatermarkMode = Watermark::Mode;
  using WatermarkStatus = Watermark::Status;
  // "spread" / "stack", as explain and simulate print them.
  static std::string_view ModeName(WatermarkMode mode);
  // The hysteresis: stack at ratio >= high, spread at ratio < low, else `previous`.
  static WatermarkMode NextMode(WatermarkMode previous, double ratio,
                                const config::WatermarkThresholds& thresholds);

  // The cluster's allocated ratio over this plugin's scoring resources (formula above), over
  // every node.
  double AllocatedRatio(const framework::Snapshot& snapshot) const;
  // Moves the mode of the pool of a pod with `tolerations` by `snapshot`'s ratio over that pool
  // and returns it; nullopt unless the strategy is Watermark. Called by PreScore, and by
  // explain/simulate to report the state.
  std::optional<WatermarkStatus> ObserveWatermark(
      const framework::Snapshot& snapshot, const std::vector<api::Toleration>& tolerations = {});
  // Every observed pool's mode and the ratio that last moved it, without moving them (metrics
  // read them when scraped); empty unless the strategy is Watermark.
  std::vector<WatermarkStatus> LastWatermarks() const;
  // The three above as the scheduler reports them.
  std::optional<std::vector<std::string>> NodeGroupLabelKeys() const override;
  std::optional<framework::WatermarkState> ObserveWatermarkState(
      const framework::Snapshot& snapshot, const framework::PodInfo* pod) override;
  std::vector<framework::WatermarkState> LastWatermarkStates() const override;

 private:
  // Whether the filter ignores this resource (string look-ups: PreFilter only).
  bool IsIgnored(api::ResourceId id) const;
  // One resource's 0..100 score under `strategy` (never kWatermark: resolved per cycle).
  int64_t ResourceScore(config::ScoringStrategyType strategy, int64_t requested,
                        int64_t capacity) const;
  // The configured strategy with Watermark resolved to the kept mode's strategy (for a Score
  // call without PreScore; PreScore stores the cycle's resolved strategy in CycleState).
  config::ScoringStrategyType KeptStrategy() const;

  absl::flat_hash_set<std::string> ignored_resources_;
  absl::flat_hash_set<std::string> ignored_groups_;
  config::ScoringStrategyType strategy_;
  std::vector<ResourceWeight> resources_;
  // Null unless cpu and memory are both listed, with weights of 1 to 100 (as validated): only then
  // does ScoreRows' cpu-and-memory loop apply.
  std::optional<WeightSums> weight_sums_;
  std::vector<ShapePoint> shape_;
  config::WatermarkThresholds watermark_{};
  // The Watermark modes kept across cycles, per pool; null unless the strategy is Watermark.
  std::unique_ptr<Watermark> watermark_pools_;
};

// Validates args as upstream: ignoredResources are qualified names; ignoredResourceGroups are
// qualified names without '/'; scoringStrategy.resources have non-empty unique names and weights
// in 1..100 (an empty list means the default cpu+memory, weight 1); RequestedToCapacityRatio
// needs at least one shape point, utilization 0..100 strictly increasing, score 0..10; Watermark
// needs 0 < watermark.low <= watermark.high <= 1.
absl::StatusOr<std::unique_ptr<framework::Plugin>> NewNodeResourcesFit(
    const config::PluginArgs& args, const PluginHandle& handle);

}  // namespace kubesched::plugins
