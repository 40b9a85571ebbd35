#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "config/plugin_args.h"
#include "plugins/default_preemption/verdict_cache.h"
#include "plugins/plugin_handle.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::plugins {

// DefaultPreemption (upstream's PostFilter, DESIGN.md "Preemption"): when a pod fits no node,
// find the node where removing the fewest and least important lower-priority pods makes it fit.
//
//   1. Eligibility: a pod with preemptionPolicy Never preempts nobody; nor does a pod whose
//      nominated node still has a terminating pod it could have preempted (its earlier victims
//      are on their way out), unless that node is now unresolvable for it.
//   2. Nodes where preemption might help (dry_run.h): those the Filter phase rejected as
//      Unschedulable (not UnschedulableAndUnresolvable; not for the queue's quota, which removing
//      pods from one node cannot free). Starting at a pseudo-random offset, nodes are dry-run
//      until max(n * minCandidateNodesPercentage / 100, minCandidateNodesAbsolute) candidates are
//      found (at least one without PDB violations), or every node was tried. A node's verdict is
//      kept for the next preemptor alike (verdict_cache.h) where nothing else decides it.
//   3. Per node (victims.h): remove every pod the preemptor may preempt, check that the filters
//      pass, then reprieve pods, most important first, PDB-violating ones before the others.
//   4. Pick the candidate (pick_node.h): fewest PDB violations, lowest highest victim priority,
//      smallest priority sum, fewest victims, latest start of the highest-priority victims.
//
// Pod groups (gang_victims.h): a member of a group being placed needs a candidate per member still
// missing, and the victims of that many best candidates go; a placed group's members are victims
// only together. A member held back by group quota (Coscheduling's rejection) is judged with the
// group's need (QuotaTracker::GangPreemptionView).
//
// NonPreemptible pods (PodInfo::non_preemptible) are never victims unless the preemptor's priority
// is at least nonPreemptibleOverridePriority. A node where they are what stands in the way (the
// preemptor would fit if they could go) is reported as "NonPreemptible pods cannot be preempted".
//
// On failure the status is upstream's: "preemption: 0/N nodes are available: <histogram>." Its
// text lives in the CycleState (the reasons of a Status are views), so it is valid as long as the
// cycle's state is. On success, `victims` are pod keys, most important first.
//
// Candidates are evaluated in parallel through PostFilterHost::ParallelFor, in rounds whose
// results are read in node order: the outcome is the sequential one, whatever the thread count.
class DefaultPreemption final : public framework::PostFilterPlugin {
 public:
  // `args` must be valid (see NewDefaultPreemption).
  // `quota` (may be null): for quota-aware preemption of pods that queue quota holds back.
  explicit DefaultPreemption(const config::DefaultPreemptionArgs& args,
                             quota::QuotaTracker* quota = nullptr);

  std::string_view Name() const override;
  framework::PostFilterOutcome PostFilter(framework::CycleState& state,
                                          const framework::PodInfo& pod,
                                          const framework::Snapshot& snapshot,
                                          absl::Span<const framework::NodeStatus> filtered,
                                          const framework::PostFilterHost& host) override;

  // Upstream's calculateNumCandidates: how many candidates to look for among `num_nodes`.
  int32_t NumCandidates(int32_t num_nodes) const;

 private:
  // A pseudo-random offset in [0, n); deterministic from a constant seed, so `simulate` is
  // reproducible. Thread-safe.
  int32_t NextOffset(int32_t n);

  config::DefaultPreemptionArgs args_;
  quota::QuotaTracker* const quota_;
  std::atomic<uint64_t> random_state_;
  // Dry-run verdicts kept for the next preemptor alike (verdict_cache.h); held for a whole dry
  // run, taken with TryLock so that a concurrent PostFilter never waits for it.
  absl::Mutex verdicts_mu_;
  preemption::VerdictCache verdicts_ ABSL_GUARDED_BY(verdicts_mu_);
};

// Validates args as upstream (minCandidateNodesPercentage in 0..100, minCandidateNodesAbsolute
// >= 0, not both 0) and nonPreemptibleOverridePriority >= 0.
absl::StatusOr<std::unique_ptr<framework::Plugin>> NewDefaultPreemption(
    const config::PluginArgs& args, const PluginHandle& handle);

}  // namespace kubesched::plugins
