#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "config/plugin_args.h"
#include "plugins/plugin_handle.h"
#include "scheduler/api/resource.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::plugins {

// MostAvailable (kubesched extension, opt-in; DESIGN.md "Scorers", the seed article's
// load-aware scheduling): prefers the node with the most room left by measured load.
//
//   VirtualAvailable_r(node) = allocatable_r − usage_r at the node's latest metrics sample
//                              − Σ VirtualRequest_r of pods placed on the node since that sample
//   Score = 100 × Σ_r w_r·min(1, max(0, VirtualAvailable_r − VirtualRequest_r(pod)) /
//   allocatable_r)
//               / Σ_r w_r      (rounded to an integer)
//
// A node with no sample, or one older than args.metricsStalenessLimit at the snapshot's time,
// uses VirtualAvailable_r = allocatable_r − requested_r (real requests of bound and assumed pods).
// Resources the node has none of are left out of both sums (as NodeResourcesFit does); a node
// with none of the listed resources scores 0. The VirtualRequests placed since the sample stop a
// burst of pods scheduled between two samples from all landing on the one node that looked idle.
//
// VirtualRequest: framework/virtual_request.h. A pod whose annotation does not parse is scored by
// its requests and a warning is logged once per pod.
//
// PreScore (once per pod) stores the pod's (resource, weight, VirtualRequest) entries, the weight
// sum and the staleness cut-off; Score reads only CycleState and the NodeInfo: no allocation, no
// lookups by name, safe to call concurrently.
class MostAvailable final : public framework::PreScorePlugin,
                            public framework::ScorePlugin,
                            public framework::NodeMetricsConsumer {
 public:
  // `args` must be valid (see NewMostAvailable).
  explicit MostAvailable(const config::MostAvailableArgs& args);

  std::string_view Name() const override;
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const framework::Snapshot& snapshot,
                             absl::Span<const framework::NodeInfo* const> feasible) override;
  // 0 when PreScore did not run (it always runs before Score in a cycle).
  int64_t Score(const framework::CycleState& state, const framework::PodInfo& pod,
                const framework::NodeInfo& node) const override;
  // metricsPollInterval.
  absl::Duration NodeMetricsPollInterval() const override { return poll_interval_; }

  struct ResourceWeight {
    api::ResourceId id;
    int64_t weight;
  };

 private:
  // Logs a bad annotation once per pod (by UID, else key); bounded so it cannot grow forever.
  void WarnOnce(const framework::PodInfo& pod, const absl::Status& error);

  std::vector<ResourceWeight> resources_;
  absl::Duration poll_interval_;
  absl::Duration staleness_limit_;
  // Pods already warned about. PreScore may run for several pods at once (explain, reports):
  // warned_mu_ is the one lock, owned by this plugin instance.
  absl::Mutex warned_mu_;
  absl::flat_hash_set<std::string> warned_ ABSL_GUARDED_BY(warned_mu_);
};

// Validates args: resources as NodeResourcesFit's (non-empty unique names, weights 1..100; empty
// means cpu and memory, weight 1); metricsPollInterval and metricsStalenessLimit > 0.
absl::StatusOr<std::unique_ptr<framework::Plugin>> NewMostAvailable(const config::PluginArgs& args,
                                                                    const PluginHandle& handle);

}  // namespace kubesched::plugins
