#include "plugins/default_preemption/default_preemption.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "plugins/default_preemption/gang_victims.h"
#include "plugins/default_preemption/pick_node.h"
#include "plugins/default_preemption/verdict_cache.h"
#include "plugins/default_preemption/victims.h"
#include "plugins/helper/args.h"
#include "plugins/names.h"
#include "scheduler/util/strings.h"

namespace kubesched::plugins {
namespace {

using framework::Code;
using framework::NodeStatus;
using framework::PostFilterOutcome;
using framework::Status;
using preemption::Candidate;

constexpr std::string_view kNotEligibleNever =
    "preemption: not eligible due to preemptionPolicy=Never.";
constexpr std::string_view kNotEligibleTerminating =
    "preemption: not eligible due to a terminating pod on the nominated node.";
constexpr std::string_view kNotHelpful = "Preemption is not helpful for scheduling";
constexpr uint64_t kSeed = 0x5eedd3fa17179e3b;

// The failure message of one PostFilter call, kept in the cycle's state so that the Status can
// hold a view of it.
struct MessageState final : framework::StateData {
  std::string message;
  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<MessageState>(*this);
  }
};

framework::CycleState::Key MessageKey() {
  static const framework::CycleState::Key key =
      framework::CycleState::AllocateKey("DefaultPreemption/message");
  return key;
}

PostFilterOutcome Rejected(Status status) {
  PostFilterOutcome outcome;
  outcome.status = std::move(status);
  return outcome;
}

PostFilterOutcome RejectedWith(framework::CycleState& state, Code code, std::string message) {
  auto data = std::make_unique<MessageState>();
  data->message = std::move(message);
  const std::string_view view = data->message;
  state.Write(MessageKey(), std::move(data));
  return Rejected(Status(code, view));
}

// Upstream's podTerminatingByPreemption, as kubesched reads it: the pod is being deleted.
bool Terminating(const framework::PodInfo& pod) {
  return pod.get().meta.deletion_timestamp.has_value();
}

// Upstream's PodEligibleToPreemptOthers, past the preemptionPolicy check: a pod that already
// preempted waits while the pods it could preempt on its nominated node are terminating (they are
// probably its victims), unless that node has become unresolvable for it.
bool WaitsForVictims(const framework::PodInfo& pod, const framework::Snapshot& snapshot,
                     absl::Span<const NodeStatus> filtered,
                     const preemption::VictimPolicy& policy) {
  const std::string& nominated = pod.get().status.nominated_node_name;
  if (nominated.empty()) return false;
  for (const NodeStatus& entry : filtered) {
    if (entry.node != nullptr && entry.node->name() == nominated &&
        entry.status.code() == Code::kUnschedulableAndUnresolvable) {
      return false;
    }
  }
  const framework::NodeInfo* node = snapshot.Get(nominated);
  if (node == nullptr) return false;
  return std::any_of(node->pods().begin(), node->pods().end(),
                     [&](const framework::PodInfoPtr& other) {
                       return policy.MayPreempt(*other) && Terminating(*other);
                     });
}

// Upstream's nodesWherePreemptionMightHelp: rejected as Unschedulable, which removing pods may
// fix. Quota rejections (QueueQuota's, Coscheduling's for a group) count only with a quota view
// (quota-aware preemption): then the victims must free the queue as well as the node.
std::vector<const framework::NodeInfo*> PotentialNodes(absl::Span<const NodeStatus> filtered,
                                                       bool quota_aware) {
  std::vector<const framework::NodeInfo*> nodes;
  for (const NodeStatus& entry : filtered) {
    if (entry.node == nullptr || entry.status.code() != Code::kUnschedulable) continue;
    const std::string_view plugin = entry.status.plugin();
    if ((plugin == names::kQueueQuota || plugin == names::kCoscheduling) && !quota_aware) continue;
    nodes.push_back(entry.node);
  }
  return nodes;
}

// When queue quota holds the pod back (a PreFilter rejection is every node's status), by the pod's
// own need (QueueQuota) or its group's (Coscheduling): what victims must free in the queue.
std::optional<quota::QuotaPreemption> QuotaView(quota::QuotaTracker* quota,
                                                const framework::PodInfo& pod,
                                                const framework::Snapshot& snapshot,
                                                absl::Span<const NodeStatus> filtered) {
  if (quota == nullptr || filtered.empty() ||
      filtered.front().status.code() != Code::kUnschedulable) {
    return std::nullopt;
  }
  const std::string_view plugin = filtered.front().status.plugin();
  if (plugin == names::kQueueQuota) return quota->PreemptionView(pod);
  if (plugin == names::kCoscheduling) {
    return quota->GangPreemptionView(pod, framework::GangNeedOf(pod, snapshot.gangs()),
                                     framework::MinMemberOf(pod, snapshot.gangs()));
  }
  return std::nullopt;
}

// Upstream's FitError text over the nodes that were tried and failed; every other node of the
// snapshot counts as "Preemption is not helpful for scheduling".
// `histogram` holds the reasons of the `tried` nodes.
std::string Diagnosis(size_t num_all_nodes, framework::ReasonCounts histogram, size_t tried) {
  if (tried < num_all_nodes) histogram.Add(kNotHelpful, num_all_nodes - tried);
  std::string message = absl::StrCat("preemption: 0/", num_all_nodes, " nodes are available");
  if (!histogram.empty()) {
    absl::StrAppend(&message, ": ", absl::StrJoin(histogram.SortedParts(), ", "), ".");
  }
  return message;
}

std::string Diagnosis(size_t num_all_nodes, absl::Span<const Status> failed) {
  framework::ReasonCounts histogram;
  for (const Status& status : failed) histogram.AddAll(status);
  return Diagnosis(num_all_nodes, std::move(histogram), failed.size());
}

// What a dry run over the potential nodes found.
struct DryRun {
  std::vector<Candidate> candidates;
  std::vector<const framework::PodInfo*> victim_pool;
  std::vector<Status> failed;  // the statuses of the nodes that are no candidate
  Status error;                // the first Error, if any
};

// Where the dry run starts and how many candidates it looks for.
struct DryRunBounds {
  int32_t offset = 0;
  int32_t wanted = 0;
};

// One node's dry run, as a worker leaves it for the gathering. What the gathering reads of every
// node comes first, in the result's first cache line (results are written on the workers and read
// on the scheduling thread, one line per node); the status is read only for a node that failed.
struct alignas(64) NodeResult {
  bool screened_out = false;  // passed over by ScreenedOut: no status yet
  int pdb_violations = 0;
  preemption::VictimSummary summary;  // of `victims`, when there are any
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

// What a thread works with in a dry run: its what-if buffers, kept from run to run (warm, and
// no lock per chunk), and PDB budgets rebuilt for each run's snapshot.
struct Worker {
  uint64_t run = 0;  // the dry run `pdbs` and `scratch` are set up for
  std::optional<preemption::PdbBudgets> pdbs;
  preemption::VictimScratch scratch;
};

// This thread's worker, set up for the dry run numbered `run` (runs are numbered from 1).
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

// A node that is no candidate: its status goes to the diagnosis.
void RecordFailure(const framework::NodeInfo& node, Status status, DryRun& run) {
  if (status.IsSuccess()) {
    status = Status::Error(absl::StrCat("expected at least one victim pod on node ", node.name()));
  }
  if (status.code() == Code::kError && run.error.IsSuccess()) run.error = status;
  run.failed.push_back(std::move(status));
}

// One node's dry run into `result`: its kept verdict when `kept` (may be null) has it, else judged
// and, when worth keeping, kept.
void JudgeNode(const framework::CycleState& state, const framework::PodInfo& pod,
               const framework::NodeInfo& node, const preemption::VictimPolicy& policy,
               const framework::PostFilterHost& host, preemption::VerdictCache* kept,
               Worker& worker, NodeResult& result) {
  result.victims.clear();
  result.pdb_violations = 0;
  std::optional<uint64_t> nominations;
  if (kept != nullptr) nominations = host.NominationStamp(pod, node);
  if (nominations.has_value()) {
    if (const preemption::KeptVerdict* verdict = kept->Find(node, *nominations)) {
      result.screened_out = verdict->screened_out;
      if (result.screened_out) return;
      for (const uint32_t position : verdict->victims) {
        result.victims.push_back(node.pods()[position].get());
      }
      result.status = Status();
      result.summary = verdict->summary;
      return;
    }
  }
  result.screened_out = preemption::ScreenedOut(state, pod, node, policy, host, worker.scratch);
  if (!result.screened_out) {
    result.status =
        preemption::SelectVictimsOnNode(state, pod, node, policy, *worker.pdbs, host,
                                        worker.scratch, &result.victims, &result.pdb_violations);
    if (!result.status.IsSuccess() || result.victims.empty()) return;
    if (policy.gangs != nullptr) policy.gangs->Expand(&result.victims);
    result.summary = preemption::SummarizeVictims(result.victims);
  }
  if (nominations.has_value() && result.pdb_violations == 0) {
    kept->Keep(node, *nominations, result.screened_out, result.victims, result.summary);
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

// Upstream's DryRunPreemption: from `offset` on (wrapping around), until `wanted` candidates are
// found with at least one among them that violates no PDB. Nodes are evaluated in rounds; each
// round runs in parallel on the host's threads (every worker with its own scratch and PDB
// budgets), then its results are read in node order and the run stops where the sequential one
// would have, so the outcome does not depend on the number of threads. A round is as large as
// the number of candidates still wanted, so a run where every node is a candidate evaluates no
// node more than one after another would.
DryRun DryRunPreemption(const framework::CycleState& state, const framework::PodInfo& pod,
                        const framework::Snapshot& snapshot,
                        const std::vector<const framework::NodeInfo*>& nodes, DryRunBounds bounds,
                        const preemption::VictimPolicy& policy,
                        const framework::PostFilterHost& host, preemption::VerdictCache* kept) {
  DryRun run;
  const uint64_t run_number = NextDryRunNumber();
  std::vector<NodeResult>& results = ResultsBuffer();
  size_t non_violating = 0;
  const size_t n = nodes.size();
  const auto wanted = static_cast<size_t>(std::max<int32_t>(bounds.wanted, 0));
  // offset < n and i < n: one subtraction wraps around (no division per node).
  const auto node_at = [&](size_t i) -> const framework::NodeInfo& {
    const size_t index = static_cast<size_t>(bounds.offset) + i;
    return *nodes[index < n ? index : index - n];
  };
  std::vector<const framework::NodeInfo*> screened;
  size_t processed = 0;
  bool done = false;
  while (!done && processed < n) {
    const size_t found = run.candidates.size();
    const size_t missing = wanted > found ? wanted - found : 0;
    const size_t round = RoundSize(n - processed, processed, found, missing);
    if (results.size() < round) results.resize(round);
    host.ParallelFor(round, [&](size_t begin, size_t end) {
      Worker& worker = ThreadWorker(snapshot, run_number);
      for (size_t i = begin; i < end; ++i) {
        JudgeNode(state, pod, node_at(processed + i), policy, host, kept, worker, results[i]);
      }
    });
    size_t used = 0;
    while (used < round && !done) {
      NodeResult& result = results[used];
      const framework::NodeInfo& node = node_at(processed + used);
      ++used;
      if (result.screened_out) {
        screened.push_back(&node);
        continue;
      }
      if (result.status.IsSuccess() && !result.victims.empty()) {
        Candidate candidate{&node, run.victim_pool.size(), 0, result.pdb_violations,
                            result.summary};
        run.victim_pool.insert(run.victim_pool.end(), result.victims.begin(), result.victims.end());
        candidate.end = run.victim_pool.size();
        if (candidate.pdb_violations == 0) ++non_violating;
        run.candidates.push_back(candidate);
        done = non_violating > 0 && run.candidates.size() >= wanted;
        continue;
      }
      RecordFailure(node, std::move(result.status), run);
    }
    processed += used;
  }
  if (run.candidates.empty() && !screened.empty()) {
    // The diagnosis reports every node's own verdict.
    Worker& worker = ThreadWorker(snapshot, run_number);
    for (const framework::NodeInfo* node : screened) {
      NodeResult result;
      worker.scratch.collected_for = nullptr;
      result.status =
          preemption::SelectVictimsOnNode(state, pod, *node, policy, *worker.pdbs, host,
                                          worker.scratch, &result.victims, &result.pdb_violations);
      if (!result.victims.empty()) {
        result.status = Status::Error(absl::StrCat(
            "node ", node->name(), " passed the dry run after the resource screen rejected it"));
      }
      RecordFailure(*node, std::move(result.status), run);
    }
  }
  return run;
}

// What a group member's nomination needs besides the dry run: for a group held back by quota,
// the best candidate's victims free the group's quota as well as one member's room; the other
// members then need only room, so the victims on their nodes are chosen again without the
// quota's condition (the queue is freed already).
struct GroupNomination {
  size_t members = 1;
  const preemption::GangVictims* gangs = nullptr;
  // Set for a group held back by quota: the policy without the quota's condition, and what
  // SelectVictimsOnNode needs.
  const preemption::VictimPolicy* room_only = nullptr;
  const framework::CycleState* state = nullptr;
  const framework::PodInfo* pod = nullptr;
  const framework::Snapshot* snapshot = nullptr;
  const framework::PostFilterHost* host = nullptr;
};

// The victims on a candidate node beyond the best, when only room is wanted there.
Status RoomOnlyVictims(const GroupNomination& group, const framework::NodeInfo& node,
                       std::vector<const framework::PodInfo*>* victims) {
  Worker& worker = ThreadWorker(*group.snapshot, NextDryRunNumber());
  int pdb_violations = 0;
  // Success without victims: a member fits there once the queue is freed.
  const Status status = preemption::SelectVictimsOnNode(*group.state, *group.pod, node,
                                                        *group.room_only, *worker.pdbs, *group.host,
                                                        worker.scratch, victims, &pdb_violations);
  if (status.IsSuccess()) return status;
  // Fewer conditions than the dry run's, which found room here: not expected.
  return Status::Error(
      absl::StrCat("preemption: node ", node.name(),
                   " has no room without the quota's condition: ", status.Message()));
}

// The nomination and the victims: the best candidate's, or, for a member of a pod group with
// more than one member still to place, the victims of the best `members` candidates (one member
// per node, each judged as this one), nominated to the best.
PostFilterOutcome Nominate(const DryRun& run, const GroupNomination& group) {
  PostFilterOutcome outcome;
  const std::vector<size_t> chosen =
      group.members <= 1 ? std::vector<size_t>{preemption::PickOneNode(run.candidates)}
                         : preemption::RankCandidates(run.candidates, group.members);
  outcome.nominated_node = run.candidates[chosen.front()].node->name();
  std::vector<const framework::PodInfo*> victims;
  std::vector<const framework::PodInfo*> room;
  absl::flat_hash_set<const framework::PodInfo*> taken;
  for (size_t rank = 0; rank < chosen.size(); ++rank) {
    const Candidate& candidate = run.candidates[chosen[rank]];
    absl::Span<const framework::PodInfo* const> found(run.victim_pool.data() + candidate.begin,
                                                      candidate.end - candidate.begin);
    if (rank > 0 && group.room_only != nullptr) {
      room.clear();
      if (Status status = RoomOnlyVictims(group, *candidate.node, &room); !status.IsSuccess()) {
        return Rejected(std::move(status));
      }
      found = room;
    }
    for (const framework::PodInfo* victim : found) {
      if (taken.insert(victim).second) victims.push_back(victim);
    }
  }
  // Members a group could spare on each node may be more than it can spare in all.
  if (chosen.size() > 1 && group.gangs != nullptr) group.gangs->Expand(&victims);
  outcome.victims.reserve(victims.size());
  for (const framework::PodInfo* victim : victims) outcome.victims.push_back(victim->key);
  return outcome;
}

}  // namespace

DefaultPreemption::DefaultPreemption(const config::DefaultPreemptionArgs& args,
                                     quota::QuotaTracker* quota)
    : args_(args), quota_(quota), random_state_(kSeed) {}

std::string_view DefaultPreemption::Name() const { return names::kDefaultPreemption; }

int32_t DefaultPreemption::NumCandidates(int32_t num_nodes) const {
  int64_t n = int64_t{num_nodes} * args_.min_candidate_nodes_percentage / 100;
  n = std::max<int64_t>(n, args_.min_candidate_nodes_absolute);
  return static_cast<int32_t>(std::min<int64_t>(n, num_nodes));
}

int32_t DefaultPreemption::NextOffset(int32_t n) {
  // splitmix64: one atomic add per call, so concurrent callers never share a draw.
  uint64_t z = random_state_.fetch_add(0x9e3779b97f4a7c15, std::memory_order_relaxed);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
  z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
  z ^= z >> 31;
  return static_cast<int32_t>(z % static_cast<uint64_t>(n));
}

PostFilterOutcome DefaultPreemption::PostFilter(framework::CycleState& state,
                                                const framework::PodInfo& pod,
                                                const framework::Snapshot& snapshot,
                                                absl::Span<const NodeStatus> filtered,
                                                const framework::PostFilterHost& host) {
  // preemptionPolicy: Never from the pod, or else from its PriorityClass.
  if (pod.preempt_never) {
    return Rejected(Status::Unschedulable(kNotEligibleNever));
  }
  const std::optional<quota::QuotaPreemption> quota_view =
      QuotaView(quota_, pod, snapshot, filtered);
  preemption::VictimPolicy policy{pod.priority, args_.non_preemptible_override_priority,
                                  quota_view.has_value() ? &*quota_view : nullptr};
  const std::vector<const framework::NodeInfo*> nodes =
      PotentialNodes(filtered, quota_view.has_value());
  if (quota_view.has_value() && quota_view->Empty()) {
    // Only pods of the blocking queue below the pod's priority may go, and there are none.
    framework::ReasonCounts histogram;
    if (!nodes.empty()) histogram.Add(preemption::kReasonNoVictims, nodes.size());
    PostFilterOutcome outcome =
        RejectedWith(state, Code::kUnschedulable,
                     Diagnosis(snapshot.nodes().size(), std::move(histogram), nodes.size()));
    outcome.clear_nomination = true;
    return outcome;
  }
  const std::unique_ptr<preemption::GangVictims> gangs =
      preemption::GangVictims::Collect(snapshot, policy);
  policy.gangs = gangs.get();
  if (WaitsForVictims(pod, snapshot, filtered, policy)) {
    return Rejected(Status::Unschedulable(kNotEligibleTerminating));
  }
  if (snapshot.nodes().empty()) return Rejected(Status::Error("preemption: no nodes available"));

  const int32_t members = preemption::MembersToPlace(pod, snapshot);
  DryRun run;
  if (!nodes.empty()) {
    const auto n = static_cast<int32_t>(nodes.size());
    // Verdicts are kept only where nothing beyond the pod, the node and its nominations decides
    // them: no PDB, no quota, no pod group.
    std::optional<framework::VerdictScope> scope;
    if (!quota_view.has_value() && gangs == nullptr && members == 1 && snapshot.pdbs().empty()) {
      scope = host.VerdictScopeFor(state, pod);
    }
    // A dry run that finds the cache in use (another thread's) goes without it.
    const bool locked = scope.has_value() && verdicts_mu_.TryLock();
    if (locked) verdicts_.Begin(pod, *scope, snapshot.nodes().size());
    run = DryRunPreemption(state, pod, snapshot, nodes,
                           {NextOffset(n), std::max(NumCandidates(n), members)}, policy, host,
                           locked ? &verdicts_ : nullptr);
    if (locked) verdicts_mu_.Unlock();
  }
  if (run.candidates.empty() || run.candidates.size() < static_cast<size_t>(members)) {
    if (!run.error.IsSuccess()) {
      return Rejected(Status::Error(absl::StrCat("preemption: ", run.error.Message())));
    }
    // No node would do: an earlier nomination of the pod is void (upstream clears it).
    PostFilterOutcome outcome = RejectedWith(
        state, Code::kUnschedulable,
        run.candidates.empty()
            ? Diagnosis(snapshot.nodes().size(), run.failed)
            : absl::StrCat("preemption: pod group ", pod.gang.key, " needs room for ", members,
                           " more member(s); removing lower-priority pods makes room on ",
                           run.candidates.size(), " node(s)"));
    outcome.clear_nomination = true;
    return outcome;
  }
  // Upstream lists candidates without PDB violations before the others; the order only matters
  // among candidates tied on every score, which have equal violations, so it is kept as found.
  GroupNomination group{static_cast<size_t>(members), gangs.get()};
  preemption::VictimPolicy room_only = policy;
  room_only.quota = nullptr;
  if (members > 1 && quota_view.has_value()) {
    group.room_only = &room_only;
    group.state = &state;
    group.pod = &pod;
    group.snapshot = &snapshot;
    group.host = &host;
  }
  return Nominate(run, group);
}

absl::StatusOr<std::unique_ptr<framework::Plugin>> NewDefaultPreemption(
    const config::PluginArgs& args, const PluginHandle& handle) {
  constexpr std::string_view kPlugin = names::kDefaultPreemption;
  auto typed = helper::ArgsAs<config::DefaultPreemptionArgs>(args, kPlugin);
  if (!typed.ok()) return typed.status();
  const int32_t percentage = typed->min_candidate_nodes_percentage;
  const int32_t absolute = typed->min_candidate_nodes_absolute;
  if (percentage < 0 || percentage > 100) {
    return helper::ArgsError(
        kPlugin, "minCandidateNodesPercentage",
        absl::StrCat("Invalid value: ", percentage, ": not in valid range [0, 100]"));
  }
  if (absolute < 0) {
    return helper::ArgsError(
        kPlugin, "minCandidateNodesAbsolute",
        absl::StrCat("Invalid value: ", absolute, ": not in valid range [0, inf)"));
  }
  if (percentage == 0 && absolute == 0) {
    return helper::ArgsError(
        kPlugin, "minCandidateNodesPercentage",
        "Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute");
  }
  if (typed->non_preemptible_override_priority < 0) {
    return helper::ArgsError(
        kPlugin, "nonPreemptibleOverridePriority",
        absl::StrCat("must not be negative, got ", typed->non_preemptible_override_priority));
  }
  return std::make_unique<DefaultPreemption>(*typed, handle.quota);
}

}  // namespace kubesched::plugins
