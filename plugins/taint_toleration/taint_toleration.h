#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "config/plugin_args.h"
#include "plugins/plugin_handle.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::plugins {

// Upstream's TaintToleration.
// Filter: a NoSchedule/NoExecute taint the pod does not tolerate rejects the node.
// Score: the number of PreferNoSchedule taints not tolerated by the pod's tolerations whose
// effect is empty or PreferNoSchedule; normalized reversed (fewer such taints, higher score).
// PreScore stores those tolerations in CycleState (key "TaintToleration"); Filter and Score only
// read and are safe to call concurrently. Default weight 3.
// Nodes name their taints by an interned taint-set id (framework::TaintSets): PreFilter judges
// the pod's tolerations against every taint set once, PreScore counts each set's intolerable
// PreferNoSchedule taints, and Filter and Score per node read one entry by the node's id. Without
// PreFilter or PreScore (a profile may enable Filter or Score alone) they judge the node's taints.
class TaintToleration final : public framework::PreFilterPlugin,
                              public framework::FilterPlugin,
                              public framework::RowFilterPlugin,
                              public framework::PreScorePlugin,
                              public framework::ScorePlugin,
                              public framework::RowScorePlugin,
                              public framework::ScoreNormalizer {
 public:
  // The newest upstream wording (older releases named the taint).
  static constexpr std::string_view kReason = "node(s) had untolerated taint(s)";

  std::string_view Name() const override;
  // Never skips: the verdicts per taint set (key "TaintToleration/filter").
  framework::PreFilterOutcome PreFilter(framework::CycleState& state, const framework::PodInfo& pod,
                                        const framework::Snapshot& snapshot) override;
  // UnschedulableAndUnresolvable kReason on the first untolerated NoSchedule/NoExecute taint.
  framework::Status Filter(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node) const override;
  // Reads the row alone after PreFilter (the node's taints without it).
  framework::Status FilterWithRow(const framework::CycleState& state, const framework::PodInfo& pod,
                                  const framework::NodeInfo& node,
                                  const framework::NodeRow& row) const override;
  // Once PreFilter judged every taint set: the nodes' sets were all interned before it ran.
  bool FilterReadsOnlyRow(const framework::CycleState& state,
                          const framework::PodInfo& pod) const override;
  // Clears the flags of the nodes with a taint set PreFilter found untolerated (or did not judge).
  void ClearFailingRows(const framework::CycleState& state, const framework::PodInfo& pod,
                        absl::Span<const framework::NodeRow> rows, uint8_t* passes) const override;
  // Reads the node's taints only.
  bool FilterReadsPods() const override { return false; }
  // PreFilter's verdicts per taint set follow from the pod's tolerations alone.
  bool FilterJudgesPodAndNodeAlone(const framework::CycleState& /*state*/,
                                   const framework::PodInfo& /*pod*/) const override {
    return true;
  }
  // Never skips: untolerated PreferNoSchedule taints lower a node's score even for a pod with no
  // tolerations.
  framework::Status PreScore(framework::CycleState& state, const framework::PodInfo& pod,
                             const framework::Snapshot& snapshot,
                             absl::Span<const framework::NodeInfo* const> feasible) override;
  int64_t Score(const framework::CycleState& state, const framework::PodInfo& pod,
                const framework::NodeInfo& node) const override;
  // Reads the row alone after PreScore (the node's taints without it).
  int64_t ScoreWithRow(const framework::CycleState& state, const framework::PodInfo& pod,
                       const framework::NodeInfo& node,
                       const framework::NodeRow& row) const override;
  // PreScore's counts per taint set are read once for the chunk.
  void ScoreRows(const framework::CycleState& state, const framework::PodInfo& pod,
                 absl::Span<const framework::NodeInfo* const> nodes,
                 const framework::NodeRow* const* rows, int64_t* scores) const override;
  const framework::ScoreNormalizer* normalizer() const override { return this; }
  // DefaultNormalizeScore(100, reverse=true).
  void NormalizeScore(const framework::CycleState& state, const framework::PodInfo& pod,
                      absl::Span<int64_t> scores) const override;
};

// Takes no args.
absl::StatusOr<std::unique_ptr<framework::Plugin>> NewTaintToleration(
    const config::PluginArgs& args, const PluginHandle& handle);

}  // namespace kubesched::plugins
