#pragma once

// PodTopologySpread: spreads pods that match a label selector evenly over topology domains (zones,
// hosts, ...), with upstream kube-scheduler's semantics, reasons and scores. DoNotSchedule
// constraints filter (skew), ScheduleAnyway constraints score.
//
// Layout follows upstream: common.{h,cc} (constraints compiled per pod, counting), filtering.cc
// (PreFilter/Filter), scoring.cc (PreScore/Score/NormalizeScore).

#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "config/plugin_args.h"
#include "plugins/plugin_handle.h"
#include "plugins/pod_topology_spread/spread_counts.h"
#include "scheduler/api/objects.h"
#include "scheduler/framework/kept_result.h"
#include "scheduler/framework/label_columns.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::plugins {

// Args: std::monostate (defaults: System defaulting) or config::PodTopologySpreadArgs.
// InvalidArgument naming the field for args config/ would have rejected.
absl::StatusOr<std::unique_ptr<framework::Plugin>> NewPodTopologySpread(
    const config::PluginArgs& args, const PluginHandle& handle);

// Filter reasons, verbatim from upstream.
inline constexpr std::string_view kReasonTopologySpreadConstraintsNotMatch =
    "node(s) didn't match pod topology spread constraints";
inline constexpr std::string_view kReasonTopologySpreadMissingLabel =
    "node(s) didn't match pod topology spread constraints (missing required label)";

// Upstream's system default constraints (defaultingType: System): hostname maxSkew 3 and zone
// maxSkew 5, both ScheduleAnyway.
std::vector<api::TopologySpreadConstraint> SystemDefaultSpreadConstraints();

// Per pod, everything Filter and Score read lives in CycleState, so one instance serves
// concurrent Filter/Score calls from worker threads. Between cycles, PreFilter keeps the domain
// counts of the last few pod templates and brings them up to date by the nodes that changed
// (spread_counts.h); it runs on the scheduling thread only.
//
// Default constraints: upstream gives a pod without constraints of its own the default ones,
// with a selector merged from the Services, ReplicationControllers, ReplicaSets and StatefulSets
// that select it. kubesched watches none of those, so it deduces the selector from the pod alone,
// and only for a pod whose controller (ownerReference with controller: true) is a ReplicaSet,
// StatefulSet or ReplicationController: the selector is the pod's labels, minus the labels those
// controllers stamp on each pod individually (statefulset.kubernetes.io/pod-name,
// apps.kubernetes.io/pod-index, controller-revision-hash), which no controller selects on. For
// Deployment/ReplicaSet pods this equals the ReplicaSet's selector whenever the template's labels
// are the selector's (the usual case); Service-only pods get no default spreading.
class PodTopologySpread final : public framework::PreFilterPlugin,
                                public framework::FilterPlugin,
                                public framework::PreScorePlugin,
                                public framework::ScorePlugin,
                                public framework::ScoreNormalizer,
                                public framework::PreFilterExtensions {
 public:
  // `pool` (may be null) counts the domains across nodes in PreFilter.
  explicit PodTopologySpread(const config::PodTopologySpreadArgs& args,
                             util::WorkerPool* pool = nullptr);

  std::string_view Name() const override;

  // Counts, per DoNotSchedule constraint, the matching pods in each eligible topology domain
  // (kept for the pod's template, recounting only the nodes changed since its last pod).
  // Skip when the pod has no DoNotSchedule constraint (own or defaulted); Error when a selector
  // is invalid, as upstream.
  framework::PreFilterOutcome PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                        const framework::Snapshot& snapshot) override;
  // Map look-ups only: no allocation, no strings.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) const override;
  // The domain counts follow pods added to or removed from a what-if node (preemption, nominated
  // pods).
  const framework::PreFilterExtensions* pre_filter_extensions() const override { return this; }
  framework::Status AddPod(framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::PodInfo& added,
                           const framework::NodeInfo& node) const override;
  framework::Status RemovePod(framework::CycleState& state, const framework::PodInfo& pod,
                              const framework::PodInfo& removed,
                              const framework::NodeInfo& node) const override;

  // Counts, per ScheduleAnyway constraint, the matching pods in the domains of the feasible
  // nodes. Skip when the pod has no ScheduleAnyway constraint.
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const framework::Snapshot& snapshot,
                             absl::Span<const framework::NodeInfo* const> feasible) override;
  // Weighted matching-pod count of the node's domains (lower is better). A node lacking one of
  // the topology keys scores kIgnoredNode, which NormalizeScore turns into 0 (upstream keeps a
  // set of ignored node names; the sentinel spares a name look-up per node).
  int64_t Score(const framework::CycleState& state, const framework::PodInfo& pod,
                const framework::NodeInfo& node) const override;
  const framework::ScoreNormalizer* normalizer() const override { return this; }
  // Fewer matching pods -> higher score: 100 * (max + min - s) / max; ignored nodes 0.
  void NormalizeScore(const framework::CycleState& state, const framework::PodInfo& pod,
                      absl::Span<int64_t> scores) const override;

  static constexpr int64_t kIgnoredNode = -1;

 private:
  // Templates kept at once: pods of a few templates may alternate in the queue.
  static constexpr size_t kKeptTemplates = 8;

  std::vector<api::TopologySpreadConstraint> default_constraints_;
  util::WorkerPool* pool_ = nullptr;
  framework::KeptResults<pod_topology_spread::SpreadCounter> kept_{kKeptTemplates};
  // The nodes' values of the constraints' topology keys, by snapshot position, for Filter.
  framework::KeptLabelColumns label_columns_;
  // System defaulting: nodes without a zone label still get hostname spreading when the pod
  // relies on the defaults (upstream's requireAllTopologies is false then).
  bool system_defaulted_ = false;
};

}  // namespace kubesched::plugins
