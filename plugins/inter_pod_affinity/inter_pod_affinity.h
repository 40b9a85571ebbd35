#pragma once

// InterPodAffinity: required pod affinity/anti-affinity as a filter (including the required
// anti-affinity of pods already running), preferred terms in both directions as a score, with
// upstream kube-scheduler's semantics, reasons and normalization.
//
// Layout follows upstream: filtering.cc (PreFilter/Filter), scoring.cc (PreScore/Score/
// NormalizeScore), topology.{h,cc} (topology pairs and term resolution shared by both).

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "config/plugin_args.h"
#include "plugins/inter_pod_affinity/preferred_scores.h"
#include "plugins/inter_pod_affinity/required_counts.h"
#include "plugins/plugin_handle.h"
#include "scheduler/framework/kept_result.h"
#include "scheduler/framework/label_columns.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::plugins {

// Args: std::monostate (defaults) or config::InterPodAffinityArgs. InvalidArgument when
// hardPodAffinityWeight is outside 0..100 or the args belong to another plugin.
absl::StatusOr<std::unique_ptr<framework::Plugin>> NewInterPodAffinity(
    const config::PluginArgs& args, const PluginHandle& handle);

// Filter reasons, verbatim from upstream.
inline constexpr std::string_view kReasonAffinityRulesNotMatch =
    "node(s) didn't match pod affinity rules";
inline constexpr std::string_view kReasonAntiAffinityRulesNotMatch =
    "node(s) didn't match pod anti-affinity rules";
inline constexpr std::string_view kReasonExistingAntiAffinityRulesNotMatch =
    "node(s) didn't satisfy existing pods anti-affinity rules";

// Per pod, everything Filter and Score read lives in CycleState, so one instance serves
// concurrent Filter/Score calls from worker threads (both are const and read-only). Between
// cycles, PreFilter and PreScore keep their counts for the last few pod templates and bring them
// up to date by the nodes that changed (required_counts.h, preferred_scores.h); they run on the
// scheduling thread only.
class InterPodAffinity final : public framework::PreFilterPlugin,
                               public framework::FilterPlugin,
                               public framework::PreScorePlugin,
                               public framework::ScorePlugin,
                               public framework::ScoreNormalizer,
                               public framework::PreFilterExtensions {
 public:
  explicit InterPodAffinity(const config::InterPodAffinityArgs& args) : args_(args) {}

  std::string_view Name() const override;
  // A pod appearing on a node may satisfy the incoming pod's required affinity.
  framework::ClusterEventSet EventsToRegister() const override {
    return framework::kDefaultEvents |
           framework::EventBit(framework::ClusterEvent::kAssignedPodAdded);
  }

  // Counts, per topology pair, the existing pods that the incoming pod's required terms select
  // and the existing pods whose required anti-affinity selects the incoming pod. Skip when the
  // pod has no required terms and no existing anti-affinity term selects it.
  framework::PreFilterOutcome PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                        const framework::Snapshot& snapshot) override;
  // Map look-ups only: no allocation, no strings. Error if PreFilter did not store its state.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) const override;
  // The counts follow pods added to or removed from a what-if node (preemption, nominated pods).
  const framework::PreFilterExtensions* pre_filter_extensions() const override { return this; }
  framework::Status AddPod(framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::PodInfo& added,
                           const framework::NodeInfo& node) const override;
  framework::Status RemovePod(framework::CycleState& state, const framework::PodInfo& pod,
                              const framework::PodInfo& removed,
                              const framework::NodeInfo& node) const override;

  // Adds every relevant term weight into a map keyed by topology pair (phase 1 of scoring).
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const framework::Snapshot& snapshot,
                             absl::Span<const framework::NodeInfo* const> feasible) override;
  // Sums the map over the node's topology labels (phase 2); 0 without PreScore state.
  int64_t Score(const framework::CycleState& state, const framework::PodInfo& pod,
                const framework::NodeInfo& node) const override;
  const framework::ScoreNormalizer* normalizer() const override { return this; }
  // Min-max scaling to 0..100 over the scored nodes; all 0 when they are equal.
  void NormalizeScore(const framework::CycleState& state, const framework::PodInfo& pod,
                      absl::Span<int64_t> scores) const override;

 private:
  framework::Status UpdateWithPod(framework::CycleState& state, const framework::PodInfo& pod,
                                  const framework::PodInfo& changed,
                                  const framework::NodeInfo& node, int64_t delta) const;

  // Templates kept at once: pods of a few templates may alternate in the queue.
  static constexpr size_t kKeptTemplates = 8;

  const config::InterPodAffinityArgs args_;
  framework::KeptResults<inter_pod_affinity::RequiredCounter> required_{kKeptTemplates};
  framework::KeptResults<inter_pod_affinity::PreferredScores> preferred_{kKeptTemplates};
  // The nodes' values of the topology keys Filter reads, by snapshot position.
  framework::KeptLabelColumns label_columns_;
};

}  // namespace kubesched::plugins
