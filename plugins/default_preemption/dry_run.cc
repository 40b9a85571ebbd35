#include "plugins/default_preemption/dry_run.h"

#include <algorithm>
#include <atomic>
#include <string_view>
#include <utility>

#include "absl/strings/str_cat.h"
#include "plugins/default_preemption/gang_victims.h"
#include "plugins/names.h"

namespace kubesched::plugins::preemption {
namespace {

using framework::Code;
using framework::NodeStatus;
using framework::Status;

// One node's dry run, as it is left for the gathering. What the gathering reads of every node
// comes first, in the result's first cache line; the victims and the status are read only for a
// node judged in this run.
struct alignas(64) NodeResult {
  bool screened_out = false;  // passed over by ScreenedOut: no status yet
  int pdb_violations = 0;
  // A candidate whose verdict was kept: `victims` and `status` are not written.
  const KeptVerdict* kept = nullptr;
  VictimSummary summary;  // a candidate's
  std::vector<const framework::PodInfo*> victims;
  Status status;
};

// The results of the calling thread's dry runs, kept from one to the next: a fresh buffer would
// be zeroed and faulted in on the scheduling thread for every preemptor. (Named by reference,
// so that the workers' chunks write into the caller's buffer, not a thread_local of their own.)
std::vector<NodeResult>& ResultsBuffer() {
  thread_local std::vector<NodeResult> results;
  return results;
}

// A node of a round that is judged afresh: its index in the round and its nominations' stamp.
struct Pending {
  size_t index;
  uint64_t nominations;
};

std::vector<Pending>& PendingBuffer() {
  thread_local std::vector<Pending> pending;
  return pending;
}

// A node that is no candidate: its status goes to the diagnosis.
void RecordFailure(const framework::NodeInfo& node, Status status, DryRun& run) {
  if (status.IsSuccess()) {
    status = Status::Error(absl::StrCat("expected at least one victim pod on node ", node.name()));
  }
  if (status.code() == Code::kError && run.error.IsSuccess()) run.error = status;
  run.failed.push_back(std::move(status));
}

// The verdict kept for the node at `position` into `result`; false when none applies. Reads
// nothing of the node.
bool ReadKept(const VerdictCache& kept, uint32_t position, const framework::NodeInfo* node,
              uint64_t nominations, NodeResult& result) {
  if (nominations == framework::kNoNominationStamp) return false;
  const std::optional<VerdictCache::Found> found = kept.Find(position, node, nominations);
  if (!found.has_value()) return false;
  result.screened_out = found->screened_out;
  result.kept = found->candidate;
  if (result.kept != nullptr) {
    result.pdb_violations = 0;
    result.summary = result.kept->summary;
  }
  return true;
}

// `node`'s dry run into `result`, at snapshot position `position`; kept in `kept` (may be null)
// when worth keeping and `nominations` allows it.
void JudgeAfresh(const framework::CycleState& state, const framework::PodInfo& pod,
                 const framework::NodeInfo& node, uint32_t position, uint64_t nominations,
                 const VictimPolicy& policy, const framework::PostFilterHost& host,
                 VerdictCache* kept, Worker& worker, NodeResult& result) {
  result.kept = nullptr;
  result.victims.clear();
  result.pdb_violations = 0;
  result.screened_out = ScreenedOut(state, pod, node, policy, host, worker.scratch);
  if (!result.screened_out) {
    result.status = SelectVictimsOnNode(state, pod, node, policy, *worker.pdbs, host,
                                        worker.scratch, &result.victims, &result.pdb_violations);
    if (!result.status.IsSuccess() || result.victims.empty()) return;
    if (policy.gangs != nullptr) policy.gangs->Expand(&result.victims);
    result.summary = SummarizeVictims(result.victims);
  }
  if (kept != nullptr && nominations != framework::kNoNominationStamp &&
      result.pdb_violations == 0) {
    kept->Keep(position, node, nominations, result.screened_out, result.victims, result.summary);
  }
}

// How many nodes a round may evaluate beyond the candidates still wanted, at most: rounds grow
// (1, 1, 2, 4, ...) while candidates are missing only because nodes failed or violated PDBs.
constexpr size_t kMaxExtraRound = 64;

// The size of the next round of a dry run that has `processed` nodes behind it, `found`
// candidates among them and `missing` still wanted, with `remaining` nodes left. At least the
// candidates still wanted; once some were found, as many nodes as the rate so far says the missing
// ones need, so that a cluster where most nodes are passed over (nominated to earlier preemptors)
// takes two or three rounds rather than dozens.
size_t RoundSize(size_t remaining, size_t processed, size_t found, size_t missing) {
  size_t round = std::max({missing, std::min(processed, kMaxExtraRound), size_t{1}});
  if (found > 0 && missing > 0) round = std::max(round, missing * processed / found);
  return std::min(remaining, round);
}

// The nodes of a round: potential.nodes[first + i] (wrapping around) for i < size.
struct Round {
  const PotentialNodes& potential;
  size_t first;
  size_t size;

  size_t IndexOf(size_t i) const {
    const size_t index = first + i;
    const size_t n = potential.nodes.size();
    return index < n ? index : index - n;
  }
};

// Judges a round's nodes into `results`. Kept verdicts are read on the calling thread, one
// after another: a worker's chunk would cost more than the look-up, and each result's line would
// cross between cores twice. Only the nodes judged afresh go to the host's threads.
void JudgeRound(const framework::CycleState& state, const framework::PodInfo& pod,
                const framework::Snapshot& snapshot, const Round& round, uint64_t run_number,
                const VictimPolicy& policy, const framework::PostFilterHost& host,
                VerdictCache* kept, std::vector<NodeResult>& results) {
  const PotentialNodes& potential = round.potential;
  std::vector<Pending>& pending = PendingBuffer();
  pending.clear();
  for (size_t i = 0; i < round.size; ++i) {
    if (kept == nullptr) {
      pending.push_back({i, framework::kNoNominationStamp});
      continue;
    }
    const size_t index = round.IndexOf(i);
    const framework::NodeInfo* node = potential.nodes[index];
    const uint32_t position = potential.positions[index];
    const uint64_t nominations = host.NominationStamp(pod, *node, position);
    if (!ReadKept(*kept, position, node, nominations, results[i])) {
      pending.push_back({i, nominations});
    }
  }
  host.ParallelFor(pending.size(), [&](size_t begin, size_t end) {
    Worker& worker = ThreadWorker(snapshot, run_number);
    for (size_t k = begin; k < end; ++k) {
      const size_t index = round.IndexOf(pending[k].index);
      JudgeAfresh(state, pod, *potential.nodes[index], potential.positions[index],
                  pending[k].nominations, policy, host, kept, worker, results[pending[k].index]);
    }
  });
}

// Each screened node's own verdict, for the diagnosis of a run without candidates.
void DiagnoseScreened(const framework::CycleState& state, const framework::PodInfo& pod,
                      const framework::Snapshot& snapshot, uint64_t run_number,
                      const std::vector<const framework::NodeInfo*>& screened,
                      const VictimPolicy& policy, const framework::PostFilterHost& host,
                      DryRun& run) {
  Worker& worker = ThreadWorker(snapshot, run_number);
  for (const framework::NodeInfo* node : screened) {
    NodeResult result;
    worker.scratch.collected_for = nullptr;
    result.status = SelectVictimsOnNode(state, pod, *node, policy, *worker.pdbs, host,
                                        worker.scratch, &result.victims, &result.pdb_violations);
    if (!result.victims.empty()) {
      result.status = Status::Error(absl::StrCat(
          "node ", node->name(), " passed the dry run after the resource screen rejected it"));
    }
    RecordFailure(*node, std::move(result.status), run);
  }
}

}  // namespace

PotentialNodes NodesWherePreemptionMightHelp(absl::Span<const NodeStatus> filtered,
                                             bool quota_aware,
                                             const framework::Snapshot& snapshot) {
  PotentialNodes potential;
  potential.nodes.reserve(filtered.size());
  potential.positions.reserve(filtered.size());
  const std::vector<const framework::NodeInfo*>& all = snapshot.nodes();
  // The Filter phase lists the nodes in snapshot order from where it started, so each position is
  // the last one's next, checked against the snapshot's list: the NodeInfo is read only where the
  // guess fails.
  size_t next = all.size();
  for (const NodeStatus& entry : filtered) {
    if (entry.node == nullptr) continue;
    const size_t position =
        next < all.size() && all[next] == entry.node ? next : entry.node->snapshot_position();
    next = position + 1 < all.size() ? position + 1 : 0;
    if (entry.status.code() != Code::kUnschedulable) continue;
    const std::string_view plugin = entry.status.plugin();
    if ((plugin == names::kQueueQuota || plugin == names::kCoscheduling) && !quota_aware) continue;
    potential.nodes.push_back(entry.node);
    potential.positions.push_back(static_cast<uint32_t>(position));
  }
  return potential;
}

absl::Span<const framework::PodInfo* const> DryRun::VictimsOf(
    size_t i, std::vector<const framework::PodInfo*>* scratch) const {
  const Candidate& candidate = candidates[i];
  if (kept[i] == nullptr) {
    return {victim_pool.data() + candidate.begin, candidate.end - candidate.begin};
  }
  scratch->clear();
  const auto& pods = candidate.node->pods();
  for (const uint32_t index : kept[i]->victims) scratch->push_back(pods[index].get());
  return *scratch;
}

// Nodes are evaluated in rounds; each round runs in parallel on the host's threads (every worker
// with its own scratch and PDB budgets), then its results are read in node order and the run stops
// where the sequential one would have, so the outcome does not depend on the number of threads. A
// round is as large as the number of candidates still wanted, so a run where every node is a
// candidate evaluates no node more than one after another would.
DryRun DryRunPreemption(const framework::CycleState& state, const framework::PodInfo& pod,
                        const framework::Snapshot& snapshot, const PotentialNodes& potential,
                        DryRunBounds bounds, const VictimPolicy& policy,
                        const framework::PostFilterHost& host, VerdictCache* kept) {
  DryRun run;
  const uint64_t run_number = NextDryRunNumber();
  std::vector<NodeResult>& results = ResultsBuffer();
  size_t non_violating = 0;
  const size_t n = potential.nodes.size();
  const auto wanted = static_cast<size_t>(std::max<int32_t>(bounds.wanted, 0));
  std::vector<const framework::NodeInfo*> screened;
  size_t processed = 0;
  bool done = false;
  while (!done && processed < n) {
    const size_t found = run.candidates.size();
    const size_t missing = wanted > found ? wanted - found : 0;
    // offset < n and processed < n: one subtraction wraps around (no division per node).
    const size_t first = static_cast<size_t>(bounds.offset) + processed;
    const Round round{potential, first < n ? first : first - n,
                      RoundSize(n - processed, processed, found, missing)};
    if (results.size() < round.size) results.resize(round.size);
    JudgeRound(state, pod, snapshot, round, run_number, policy, host, kept, results);
    size_t used = 0;
    while (used < round.size && !done) {
      NodeResult& result = results[used];
      const framework::NodeInfo& node = *potential.nodes[round.IndexOf(used)];
      ++used;
      if (result.screened_out) {
        screened.push_back(&node);
        continue;
      }
      const bool candidate =
          result.kept != nullptr || (result.status.IsSuccess() && !result.victims.empty());
      if (!candidate) {
        RecordFailure(node, std::move(result.status), run);
        continue;
      }
      const size_t begin = run.victim_pool.size();
      if (result.kept == nullptr) {
        run.victim_pool.insert(run.victim_pool.end(), result.victims.begin(), result.victims.end());
      }
      run.candidates.push_back(
          {&node, begin, run.victim_pool.size(), result.pdb_violations, result.summary});
      run.kept.push_back(result.kept);
      if (result.pdb_violations == 0) ++non_violating;
      done = non_violating > 0 && run.candidates.size() >= wanted;
    }
    processed += used;
  }
  if (run.candidates.empty() && !screened.empty()) {
    DiagnoseScreened(state, pod, snapshot, run_number, screened, policy, host, run);
  }
  return run;
}

Worker& ThreadWorker(const framework::Snapshot& snapshot, uint64_t run) {
  thread_local Worker worker;
  if (worker.run != run) {
    worker.run = run;
    worker.pdbs.emplace(snapshot.pdbs());
    // The pods it collected belong to another preemptor.
    worker.scratch.collected_for = nullptr;
  }
  return worker;
}

uint64_t NextDryRunNumber() {
  static std::atomic<uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace kubesched::plugins::preemption
