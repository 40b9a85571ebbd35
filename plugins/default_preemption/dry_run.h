#pragma once

// DefaultPreemption's dry run (upstream's DryRunPreemption): the nodes where preemption might
// help, judged in rounds on the host's threads until enough candidates are found.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "plugins/default_preemption/pick_node.h"
#include "plugins/default_preemption/verdict_cache.h"
#include "plugins/default_preemption/victims.h"
#include "scheduler/framework/plugin.h"
#include "scheduler/framework/snapshot.h"

namespace kubesched::plugins::preemption {

// The nodes a dry run evaluates, with their snapshot positions (nodes[i] is at positions[i]).
struct PotentialNodes {
  std::vector<const framework::NodeInfo*> nodes;
  std::vector<uint32_t> positions;
};

// Upstream's nodesWherePreemptionMightHelp: rejected as Unschedulable, which removing pods may
// fix. Quota rejections (QueueQuota's, Coscheduling's for a group) count only with a quota view
// (quota-aware preemption): then the victims must free the queue as well as the node.
PotentialNodes NodesWherePreemptionMightHelp(absl::Span<const framework::NodeStatus> filtered,
                                             bool quota_aware, const framework::Snapshot& snapshot);

// What a dry run over the potential nodes found.
struct DryRun {
  std::vector<Candidate> candidates;
  // Parallel to `candidates`: the verdict kept for a candidate found in the verdict cache, whose
  // victims are not in `victim_pool` (they are read only for the candidate chosen); null for a
  // candidate judged in this run.
  std::vector<const KeptVerdict*> kept;
  std::vector<const framework::PodInfo*> victim_pool;
  std::vector<framework::Status> failed;  // the statuses of the nodes that are no candidate
  framework::Status error;                // the first Error, if any

  // The victims of candidates[i], most important first; a kept candidate's are written into
  // `scratch`. Valid while the verdict cache the run used is not used again.
  absl::Span<const framework::PodInfo* const> VictimsOf(
      size_t i, std::vector<const framework::PodInfo*>* scratch) const;
};

// Where the dry run starts and how many candidates it looks for.
struct DryRunBounds {
  int32_t offset = 0;
  int32_t wanted = 0;
};

// From `bounds.offset` on (wrapping around), until `bounds.wanted` candidates are found with at
// least one among them that violates no PDB. `kept` (may be null, else begun for `pod`) gives
// and keeps verdicts.
DryRun DryRunPreemption(const framework::CycleState& state, const framework::PodInfo& pod,
                        const framework::Snapshot& snapshot, const PotentialNodes& potential,
                        DryRunBounds bounds, const VictimPolicy& policy,
                        const framework::PostFilterHost& host, VerdictCache* kept);

// What a thread works with in a dry run: its what-if buffers, kept from run to run (warm, and
// no lock per chunk), and PDB budgets rebuilt for each run's snapshot.
struct Worker {
  uint64_t run = 0;  // the dry run `pdbs` and `scratch` are set up for
  std::optional<PdbBudgets> pdbs;
  VictimScratch scratch;
};

// This thread's worker, set up for the dry run numbered `run` (NextDryRunNumber).
Worker& ThreadWorker(const framework::Snapshot& snapshot, uint64_t run);
uint64_t NextDryRunNumber();

}  // namespace kubesched::plugins::preemption
