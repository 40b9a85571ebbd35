#include "plugins/default_preemption/victims.h"

#include <algorithm>
#include <string>

#include "scheduler/util/strings.h"

namespace kubesched::plugins::preemption {
namespace {

using framework::PodInfoPtr;
using framework::Status;
using PodRef = VictimScratch::PodRef;

bool MoreImportantRef(PodRef a, PodRef b) { return MoreImportant(**a, **b); }

// The what-if copy of one node for one preemptor: the node (in the scratch buffers) and, when the
// host says the PreFilter state follows the pods, the cycle state's own copy for this node.
class WhatIf {
 public:
  WhatIf(const framework::CycleState& state, const framework::PodInfo& pod,
         const framework::NodeInfo& original, const framework::PostFilterHost& host,
         VictimScratch& scratch)
      : cycle_state_(state), pod_(pod), original_(original), host_(host), scratch_(scratch) {
    scratch_.node = original;  // reuses the buffers of the previous node's copy
    scratch_.state.reset();
    if (host_.StateFollowsPods()) scratch_.state = state.Clone();
  }

  Status Remove(const framework::PodInfo& victim) {
    framework::NodeInfo& node = scratch_.node;
    if (absl::Status removed = node.RemovePod(victim, node.generation()); !removed.ok()) {
      return Status::Error(util::Std(removed.message()));
    }
    if (scratch_.state == nullptr) return Status::Success();
    return host_.PodRemoved(*scratch_.state, pod_, victim, node);
  }
  Status RemoveAll(const std::vector<PodRef>& pods) {
    for (const PodRef victim : pods) {
      if (Status removed = Remove(**victim); !removed.IsSuccess()) return removed;
    }
    return Status::Success();
  }
  Status Add(PodRef victim) {
    framework::NodeInfo& node = scratch_.node;
    node.AddPod(*victim, node.generation());
    if (scratch_.state == nullptr) return Status::Success();
    return host_.PodAdded(*scratch_.state, pod_, **victim, node);
  }
  Status RunFilters() const {
    const framework::CycleState& state = scratch_.state != nullptr ? *scratch_.state : cycle_state_;
    return host_.RunFilters(state, pod_, scratch_.node, original_);
  }
  // The host's resource screen for the pods now off the node (scratch.freed / freed_pods).
  bool CannotFit() const {
    return host_.CannotFitWithout(cycle_state_, pod_, original_, scratch_.freed,
                                  scratch_.freed_pods);
  }

 private:
  const framework::CycleState& cycle_state_;
  const framework::PodInfo& pod_;
  const framework::NodeInfo& original_;
  const framework::PostFilterHost& host_;
  VictimScratch& scratch_;
};

// Sorts the node's pods that are below the preemptor into those it may preempt and the
// NonPreemptible ones it may not, and sums what the former free.
void CollectPotentialVictims(const framework::PodInfo& pod, const framework::NodeInfo& node,
                             const VictimPolicy& policy, VictimScratch& scratch) {
  scratch.potential.clear();
  scratch.protected_pods.clear();
  // Every pod is read: ask for them all before the first is needed, so their cache misses
  // overlap instead of following one another.
  for (const PodInfoPtr& other : node.pods()) __builtin_prefetch(other.get());
  // The preemptor itself (were it on the node) is not below its own priority: neither list.
  for (const PodInfoPtr& other : node.pods()) {
    if (policy.MayPreempt(*other)) {
      scratch.potential.push_back(&other);
    } else if (policy.Protected(*other)) {
      scratch.protected_pods.push_back(&other);
    }
  }
  scratch.freed.Clear();
  for (const PodRef victim : scratch.potential) scratch.freed.Add((*victim)->requests);
  scratch.freed_pods = scratch.potential.size();
}

// The node's verdict when the preemptor does not fit with every eligible pod removed: if removing
// the NonPreemptible pods as well would make room, they are what stands in the way.
// `fits_without_protected(&fits)` removes the NonPreemptible pods as well and sets whether the
// filters then pass; it returns an Error status only when the removal itself fails.
template <typename FitsFn>
Status WhyNoRoom(Status rejection, const VictimScratch& scratch, FitsFn&& fits_without_protected) {
  if (rejection.code() == framework::Code::kError || scratch.protected_pods.empty()) {
    return rejection;
  }
  bool fits = false;
  if (Status removed = fits_without_protected(&fits); !removed.IsSuccess()) return removed;
  return fits ? Status::Unschedulable(kReasonNonPreemptible) : rejection;
}

// The victim stays off the node: its requests count as freed again, and it is recorded.
void KeepAsVictim(const framework::PodInfo& victim, VictimScratch& scratch,
                  std::vector<const framework::PodInfo*>* victims) {
  scratch.freed.Add(victim.requests);
  ++scratch.freed_pods;
  victims->push_back(&victim);
}

// Upstream's filterPodsWithPDBViolation over the sorted potential victims; keeps their order.
void SplitByPdbViolation(PdbBudgets& pdbs, VictimScratch& scratch) {
  scratch.violating.clear();
  scratch.non_violating.clear();
  pdbs.Reset();
  for (const PodRef victim : scratch.potential) {
    (pdbs.Disrupt((*victim)->get()) ? scratch.violating : scratch.non_violating).push_back(victim);
  }
}

// Whether the preemptor's queue has room once the pods in `removed` are gone (always, without
// quota-aware preemption).
bool QuotaFits(const VictimPolicy& policy, const std::vector<std::string>& removed) {
  return policy.quota == nullptr || policy.quota->FitsWithout(removed);
}

// Adds `victim` back; keeps it if the preemptor still fits (node and queue quota), else removes it
// again and records it as a victim. Returns an Error status on an internal error.
Status Reprieve(WhatIf& what_if, PodRef victim, const VictimPolicy& policy, VictimScratch& scratch,
                std::vector<const framework::PodInfo*>* victims, bool* fits) {
  const framework::PodInfo& info = **victim;
  // The resource screen first: when it rules the victim's return out, no filter runs.
  scratch.freed.Subtract(info.requests);
  --scratch.freed_pods;
  if (what_if.CannotFit()) {
    *fits = false;
    KeepAsVictim(info, scratch, victims);
    return Status::Success();
  }
  if (Status added = what_if.Add(victim); !added.IsSuccess()) return added;
  if (policy.quota != nullptr) {
    std::erase(scratch.removed, info.key);
    *fits = QuotaFits(policy, scratch.removed) && what_if.RunFilters().IsSuccess();
    if (!*fits) scratch.removed.push_back(info.key);
  } else {
    *fits = what_if.RunFilters().IsSuccess();
  }
  if (*fits) return Status::Success();
  if (Status removed = what_if.Remove(info); !removed.IsSuccess()) return removed;
  KeepAsVictim(info, scratch, victims);
  return Status::Success();
}

// Reprieves the sorted potential victims, those that would violate a PDB first (upstream's
// order), with `reprieve(victim, &fits)`; victims end most important first.
template <typename ReprieveFn>
Status ReprieveInOrder(PdbBudgets& pdbs, VictimScratch& scratch,
                       std::vector<const framework::PodInfo*>* victims, int* pdb_violations,
                       ReprieveFn&& reprieve) {
  // Victims that tie on priority and start time are ordered by key, held out of line: ask for
  // every key before the first comparison, so that their cache misses overlap.
  for (const PodRef victim : scratch.potential) __builtin_prefetch((*victim)->key.data());
  std::sort(scratch.potential.begin(), scratch.potential.end(), MoreImportantRef);
  SplitByPdbViolation(pdbs, scratch);
  const size_t first_victim = victims->size();
  bool fits = false;
  for (const PodRef victim : scratch.violating) {
    if (Status status = reprieve(victim, &fits); !status.IsSuccess()) return status;
    if (!fits) ++*pdb_violations;
  }
  for (const PodRef victim : scratch.non_violating) {
    if (Status status = reprieve(victim, &fits); !status.IsSuccess()) return status;
  }
  if (!scratch.violating.empty() && !scratch.non_violating.empty()) {
    std::sort(victims->begin() + static_cast<std::ptrdiff_t>(first_victim), victims->end(),
              [](const framework::PodInfo* a, const framework::PodInfo* b) {
                return MoreImportant(*a, *b);
              });
  }
  return Status::Success();
}

// SelectVictimsOnNode with a copy of the node: the general way, for any filters and for
// quota-aware preemption.
Status SelectVictimsOnCopy(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node, const VictimPolicy& policy,
                           PdbBudgets& pdbs, const framework::PostFilterHost& host,
                           VictimScratch& scratch, std::vector<const framework::PodInfo*>* victims,
                           int* pdb_violations) {
  WhatIf what_if(state, pod, node, host, scratch);
  if (Status removed = what_if.RemoveAll(scratch.potential); !removed.IsSuccess()) return removed;
  const auto fits_without_protected = [&](bool* fits) {
    if (Status removed = what_if.RemoveAll(scratch.protected_pods); !removed.IsSuccess()) {
      return removed;
    }
    *fits = what_if.RunFilters().IsSuccess();
    return Status::Success();
  };
  if (scratch.potential.empty()) {
    // Only NonPreemptible pods are below the preemptor: the node is as it was.
    return WhyNoRoom(Status::Unresolvable(kReasonNoVictims), scratch, fits_without_protected);
  }
  if (Status fits = what_if.RunFilters(); !fits.IsSuccess()) {
    return WhyNoRoom(std::move(fits), scratch, fits_without_protected);
  }
  scratch.removed.clear();
  if (policy.quota != nullptr) {
    for (const PodRef victim : scratch.potential) scratch.removed.push_back((*victim)->key);
    if (!QuotaFits(policy, scratch.removed)) {
      // Every pod of the blocking queue's subtree on this node is not enough.
      return Status::Unschedulable(kReasonQuotaNotFreed);
    }
  }
  return ReprieveInOrder(pdbs, scratch, victims, pdb_violations, [&](PodRef victim, bool* fits) {
    return Reprieve(what_if, victim, policy, scratch, victims, fits);
  });
}

// SelectVictimsOnNode without a copy, when the host judges the filters by the pods' summed
// requests alone (JudgesByRequests): the same verdicts and victims as SelectVictimsOnCopy, found
// by arithmetic on `scratch.freed`.
Status SelectVictimsByRequests(const framework::CycleState& state, const framework::PodInfo& pod,
                               const framework::NodeInfo& node, PdbBudgets& pdbs,
                               const framework::PostFilterHost& host, VictimScratch& scratch,
                               std::vector<const framework::PodInfo*>* victims,
                               int* pdb_violations) {
  const auto filters_without = [&]() {
    return host.RunFiltersWithout(state, pod, node, scratch.freed, scratch.freed_pods);
  };
  const auto fits_without_protected = [&](bool* fits) {
    for (const PodRef kept : scratch.protected_pods) scratch.freed.Add((*kept)->requests);
    scratch.freed_pods += scratch.protected_pods.size();
    *fits = filters_without().IsSuccess();
    return Status::Success();
  };
  if (scratch.potential.empty()) {
    return WhyNoRoom(Status::Unresolvable(kReasonNoVictims), scratch, fits_without_protected);
  }
  if (Status fits = filters_without(); !fits.IsSuccess()) {
    return WhyNoRoom(std::move(fits), scratch, fits_without_protected);
  }
  return ReprieveInOrder(pdbs, scratch, victims, pdb_violations, [&](PodRef victim, bool* fits) {
    const framework::PodInfo& info = **victim;
    scratch.freed.Subtract(info.requests);
    --scratch.freed_pods;
    // The resource screen first, as on a copy: it is cheaper than the filters.
    *fits = !host.CannotFitWithout(state, pod, node, scratch.freed, scratch.freed_pods) &&
            filters_without().IsSuccess();
    if (!*fits) KeepAsVictim(info, scratch, victims);
    return Status::Success();
  });
}

}  // namespace

bool MoreImportant(const framework::PodInfo& a, const framework::PodInfo& b) {
  if (a.priority != b.priority) return a.priority > b.priority;
  if (a.start_time != b.start_time) return a.start_time < b.start_time;
  return a.key < b.key;
}

PdbBudgets::PdbBudgets(const std::vector<std::shared_ptr<const api::PodDisruptionBudget>>& pdbs)
    : pdbs_(pdbs), allowed_(pdbs.size(), 0) {
  for (size_t i = 0; i < pdbs_.size(); ++i) {
    by_namespace_[pdbs_[i]->meta.namespace_symbol].push_back(i);
  }
}

void PdbBudgets::Reset() {
  for (size_t i = 0; i < pdbs_.size(); ++i) allowed_[i] = pdbs_[i]->disruptions_allowed;
}

bool PdbBudgets::Disrupt(const api::Pod& pod) {
  // A pod without labels matches no PDB.
  if (pdbs_.empty() || pod.meta.labels.empty()) return false;
  const auto it = by_namespace_.find(pod.meta.namespace_symbol);
  if (it == by_namespace_.end()) return false;
  bool violated = false;
  for (const size_t i : it->second) {
    const api::PodDisruptionBudget& pdb = *pdbs_[i];
    // A PDB with no selector or an empty one matches nothing (upstream).
    if (!pdb.selector.has_value() || pdb.selector->empty()) continue;
    if (!pdb.selector->Matches(pod.meta.labels)) continue;
    // Already counted by the API server: not a new violation, and no double count.
    const auto& disrupted = pdb.disrupted_pods;
    if (std::find(disrupted.begin(), disrupted.end(), pod.meta.name) != disrupted.end()) continue;
    if (--allowed_[i] < 0) violated = true;
  }
  return violated;
}

bool ScreenedOut(const framework::CycleState& state, const framework::PodInfo& pod,
                 const framework::NodeInfo& node, const VictimPolicy& policy,
                 const framework::PostFilterHost& host, VictimScratch& scratch) {
  scratch.collected_for = nullptr;
  // Not even with every pod gone (a node held by pods nominated to it): its pods need no look.
  if (host.CannotFitWithout(state, pod, node, node.requested(), node.pods().size())) return true;
  CollectPotentialVictims(pod, node, policy, scratch);
  scratch.collected_for = &node;
  return host.CannotFitWithout(state, pod, node, scratch.freed, scratch.freed_pods);
}

Status SelectVictimsOnNode(const framework::CycleState& state, const framework::PodInfo& pod,
                           const framework::NodeInfo& node, const VictimPolicy& policy,
                           PdbBudgets& pdbs, const framework::PostFilterHost& host,
                           VictimScratch& scratch, std::vector<const framework::PodInfo*>* victims,
                           int* pdb_violations) {
  *pdb_violations = 0;
  if (scratch.collected_for != &node) CollectPotentialVictims(pod, node, policy, scratch);
  scratch.collected_for = nullptr;
  if (scratch.potential.empty() && scratch.protected_pods.empty()) {
    return Status::Unresolvable(kReasonNoVictims);
  }
  if (policy.quota == nullptr && host.JudgesByRequests()) {
    return SelectVictimsByRequests(state, pod, node, pdbs, host, scratch, victims, pdb_violations);
  }
  return SelectVictimsOnCopy(state, pod, node, policy, pdbs, host, scratch, victims,
                             pdb_violations);
}

}  // namespace kubesched::plugins::preemption
