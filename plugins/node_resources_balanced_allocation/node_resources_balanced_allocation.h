#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "config/plugin_args.h"
#include "plugins/plugin_handle.h"
#include "scheduler/api/resource.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::plugins {

// Upstream's NodeResourcesBalancedAllocation, with per-resource weights honoured (GPU-weighted
// balancing).
//
// For each configured resource the node has (allocatable > 0): f_r = min(1, (node requested_r +
// pod request_r) / allocatable_r), with REAL requests (no non-zero defaults, as upstream); scalar
// resources the pod does not request and `pods` are left out. Score = int64((1 - σ) * 100) where
// σ is the weighted population standard deviation of the f_r (weighted mean μ = Σ w f / Σ w,
// σ = sqrt(Σ w (f - μ)² / Σ w)). When all weights are equal this is computed exactly as upstream
// (|f0 - f1| / 2 for two resources), so equal weights reproduce upstream's scores bit for bit.
// No normalizer; default weight 1.
//
// DRA devices that the queue configuration counts as a resource (`devices`: a GPU as
// `nvidia.com/gpu`) count as it here too: a node's amounts of the resource include the devices
// its own slices publish and those of them allocated (NodeInfo::device_allocatable, kept by the
// cache), and the pod's request the devices its claims would get, counted once per pod on the
// first feasible node. Nothing changes for a resource devices do not count as.
//
// PreScore stores the per-pod (resource, weight, request) list in CycleState (key
// "NodeResourcesBalancedAllocation") and returns Skip when every configured request is zero.
// Score only reads and is safe to call concurrently.
class NodeResourcesBalancedAllocation final : public framework::PreScorePlugin,
                                              public framework::ScorePlugin,
                                              public framework::RowScorePlugin {
 public:
  struct ResourceWeight {
    api::ResourceId id;
    int64_t weight;
  };

  // `args` must be valid (see NewNodeResourcesBalancedAllocation).
  explicit NodeResourcesBalancedAllocation(const config::BalancedAllocationArgs& args);

  std::string_view Name() const override;
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const framework::Snapshot& snapshot,
                             absl::Span<const framework::NodeInfo* const> feasible) override;
  // Works without PreScore too (computes the list inline).
  int64_t Score(const framework::CycleState& state, const framework::PodInfo& pod,
                const framework::NodeInfo& node) const override;
  // The row answers for cpu and memory; other resources are read from `node`.
  int64_t ScoreWithRow(const framework::CycleState& state, const framework::PodInfo& pod,
                       const framework::NodeInfo& node,
                       const framework::NodeRow& row) const override;
  // The pod's entries are read once for the chunk.
  void ScoreRows(const framework::CycleState& state, const framework::PodInfo& pod,
                 absl::Span<const framework::NodeInfo* const> nodes,
                 const framework::NodeRow* const* rows, int64_t* scores) const override;

 private:
  std::vector<ResourceWeight> resources_;
};

// Validates args.resources: non-empty unique names, weights in 1..100 (upstream allows only 1;
// kubesched honours weights). An empty list means the default cpu+memory, weight 1.
absl::StatusOr<std::unique_ptr<framework::Plugin>> NewNodeResourcesBalancedAllocation(
    const config::PluginArgs& args, const PluginHandle& handle);

}  // namespace kubesched::plugins
