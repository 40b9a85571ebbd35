#pragma once

#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "config/plugin_args.h"
#include "plugins/plugin_handle.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::plugins {

// Upstream's NodeAffinity: spec.nodeSelector, required and preferred node affinity, plus the
// scheduler-enforced args.addedAffinity.
//
// PreFilter: Skip when there is nothing required; when every required term pins metadata.name
// with In, the pinned names (intersection within a term, union across terms) become
// PreFilterResult.node_names, and an empty set rejects the pod (kReasonConflict).
// Filter: addedAffinity.required first (kReasonEnforced), then the required terms the pod's
// policy template adds (framework::PolicyNodeAffinity in the cycle state, kReasonPolicy), then
// nodeSelector and required terms (kReasonPod); all UnschedulableAndUnresolvable.
// Score: the sum of the weights of the matching preferred terms (the pod's, addedAffinity's and
// the policy template's), normalized with DefaultNormalizeScore(100). Default weight 2.
// Filter and Score read only the pod, the node, the policy's affinity in the cycle state and the
// plugin's immutable args: they are safe to call concurrently.
class NodeAffinity final : public framework::PreFilterPlugin,
                           public framework::FilterPlugin,
                           public framework::PreScorePlugin,
                           public framework::ScorePlugin,
                           public framework::ScoreNormalizer {
 public:
  static constexpr std::string_view kReasonPod =
      "node(s) didn't match Pod's node affinity/selector";
  static constexpr std::string_view kReasonEnforced =
      "node(s) didn't match scheduler-enforced node affinity";
  // A node outside the node affinity that the pod's policy template adds (kubesched's own).
  static constexpr std::string_view kReasonPolicy =
      "node(s) didn't match the node affinity of the pod's policy";
  static constexpr std::string_view kReasonConflict = "pod affinity terms conflict";

  explicit NodeAffinity(const config::NodeAffinityArgs& args);

  std::string_view Name() const override;
  framework::PreFilterOutcome PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                        const framework::Snapshot& snapshot) override;
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) const override;
  // Reads the node's labels and name only.
  bool FilterReadsPods() const override { return false; }
  // The pod's terms and the profile's addedAffinity against the node; not when a policy adds
  // affinity through the cycle state (the policy may change between cycles).
  bool FilterJudgesPodAndNodeAlone(const framework::CycleState& state,
                                   const framework::PodInfo& pod) const override;
  // Skip when neither the pod nor addedAffinity has preferred terms.
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const framework::Snapshot& snapshot,
                             absl::Span<const framework::NodeInfo* const> feasible) override;
  int64_t Score(const framework::CycleState& state, const framework::PodInfo& pod,
                const framework::NodeInfo& node) const override;
  const framework::ScoreNormalizer* normalizer() const override { return this; }
  void NormalizeScore(const framework::CycleState& state, const framework::PodInfo& pod,
                      absl::Span<int64_t> scores) const override;

 private:
  std::optional<api::NodeSelector> added_required_;
  std::vector<api::PreferredSchedulingTerm> added_preferred_;
};

// Validates args.addedAffinity: every requirement well-formed, preferred weights in 0..100.
absl::StatusOr<std::unique_ptr<framework::Plugin>> NewNodeAffinity(const config::PluginArgs& args,
                                                                   const PluginHandle& handle);

}  // namespace kubesched::plugins
