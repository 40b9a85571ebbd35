#pragma once

// DefaultPreemption's work on one node: which pods may go, and upstream's SelectVictimsOnNode.

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/time/time.h"
#include "plugins/default_preemption/gang_victims.h"
#include "scheduler/api/objects.h"
#include "scheduler/framework/plugin.h"
#include "scheduler/quota/quota_tracker.h"

namespace kubesched::plugins::preemption {

inline constexpr std::string_view kReasonNoVictims = "No preemption victims found for incoming pod";
inline constexpr std::string_view kReasonNonPreemptible = "NonPreemptible pods cannot be preempted";
inline constexpr std::string_view kReasonQuotaNotFreed =
    "preempting the queue's lower-priority pods here would not free enough quota";

// Who the preemptor may preempt.
struct VictimPolicy {
  int32_t preemptor_priority = 0;
  int32_t override_priority = 0;  // nonPreemptibleOverridePriority
  // Set when queue quota holds the preemptor back: only pods counted in the blocking queue's
  // subtree may go, and the victims must free the quota as well as the node.
  const quota::QuotaPreemption* quota = nullptr;
  // Set when some pod group has placed members: a member may go only with its whole group.
  const GangVictims* gangs = nullptr;

  // Lower priority, and not NonPreemptible unless the preemptor is at the override or above.
  bool MayPreempt(const framework::PodInfo& victim) const {
    return victim.priority < preemptor_priority &&
           (!victim.non_preemptible || preemptor_priority >= override_priority) &&
           (quota == nullptr || quota->MayPreempt(victim.key)) &&
           (gangs == nullptr || gangs->WholeGroupMayGo(victim));
  }
  // Lower priority but NonPreemptible: what only the override could remove.
  bool Protected(const framework::PodInfo& victim) const {
    return victim.priority < preemptor_priority && victim.non_preemptible &&
           preemptor_priority < override_priority;
  }
};

// Upstream's MoreImportantPod: higher priority, then earlier start; ties broken by key so that
// the order is total and runs are reproducible.
bool MoreImportant(const framework::PodInfo& a, const framework::PodInfo& b);

// The cluster's PodDisruptionBudgets and what each still allows, counted down as one node's
// victims are considered (upstream's filterPodsWithPDBViolation).
class PdbBudgets {
 public:
  explicit PdbBudgets(const std::vector<std::shared_ptr<const api::PodDisruptionBudget>>& pdbs);
  // Restores every budget to its disruptionsAllowed (before each node).
  void Reset();
  // Counts `pod` against every PDB of its namespace that selects it (unless the PDB lists it as
  // disrupted already); true if that takes one below zero.
  bool Disrupt(const api::Pod& pod);

 private:
  const std::vector<std::shared_ptr<const api::PodDisruptionBudget>>& pdbs_;
  absl::flat_hash_map<api::Symbol, std::vector<size_t>> by_namespace_;
  std::vector<int32_t> allowed_;
};

// Buffers reused from node to node, so that a dry run allocates little once warm.
struct VictimScratch {
  framework::NodeInfo node;  // the what-if copy
  // The cycle state's copy for `node`, when the PreFilter state follows the pods (else null).
  std::unique_ptr<framework::CycleState> state;
  // Pods of the snapshot node being judged, by the address of its own pointer to them (the
  // snapshot outlives the dry run): no reference count is touched per pod.
  using PodRef = const framework::PodInfoPtr*;
  std::vector<PodRef> potential;
  std::vector<PodRef> protected_pods;
  std::vector<PodRef> violating;
  std::vector<PodRef> non_violating;
  // The node `potential` and `protected_pods` were collected for (ScreenedOut leaves them for
  // SelectVictimsOnNode on the same node), or null.
  const framework::NodeInfo* collected_for = nullptr;
  std::vector<std::string> removed;  // keys of the pods off the what-if node (quota checks)
  // Requests and number of the pods off the what-if node, for the host's resource screen.
  api::ResourceList freed;
  size_t freed_pods = 0;
};

// Whether `node` can be passed over without a dry run: even with every pod the preemptor may
// preempt gone, the host's resource test says the filters would reject it. Only the diagnosis
// of a preemption that finds no candidate needs such a node's verdict (SelectVictimsOnNode's).
bool ScreenedOut(const framework::CycleState& state, const framework::PodInfo& pod,
                 const framework::NodeInfo& node, const VictimPolicy& policy,
                 const framework::PostFilterHost& host, VictimScratch& scratch);

// Upstream's SelectVictimsOnNode. On success, appends the victims to `victims` (most important
// first) and returns their PDB violations through `pdb_violations`; Success with no victims does
// not happen (a node rejected by the filters always needs some). Otherwise the node's status:
// the filters' rejection with every eligible pod removed, kReasonNoVictims (unresolvable) when
// there is nothing to remove, kReasonNonPreemptible when removing the NonPreemptible pods too
// would have made room, or an Error.
framework::Status SelectVictimsOnNode(const framework::CycleState& state,
                                      const framework::PodInfo& pod,
                                      const framework::NodeInfo& node, const VictimPolicy& policy,
                                      PdbBudgets& pdbs, const framework::PostFilterHost& host,
                                      VictimScratch& scratch,
                                      std::vector<const framework::PodInfo*>* victims,
                                      int* pdb_violations);

}  // namespace kubesched::plugins::preemption
