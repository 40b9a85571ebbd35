#include "plugins/default_preemption/default_preemption.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "plugins/default_preemption/dry_run.h"
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
using preemption::DryRun;

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

// The verdict cache's lock, taken when a dry run may use the cache and no other thread's holds
// it (that one goes without). Held until the nomination is made: the run's kept candidates point
// into the cache.
class CacheLease {
 public:
  CacheLease(absl::Mutex& mu, bool wanted) : mu_(wanted && mu.TryLock() ? &mu : nullptr) {}
  ~CacheLease() {
    if (mu_ != nullptr) mu_->Unlock();
  }
  CacheLease(const CacheLease&) = delete;
  CacheLease& operator=(const CacheLease&) = delete;
  bool held() const { return mu_ != nullptr; }

 private:
  absl::Mutex* mu_;
};

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
  preemption::Worker& worker =
      preemption::ThreadWorker(*group.snapshot, preemption::NextDryRunNumber());
  int pdb_violations = 0;
  // Success without victims: a member fits there once the queue is freed.
  Status status = preemption::SelectVictimsOnNode(*group.state, *group.pod, node, *group.room_only,
                                                  *worker.pdbs, *group.host, worker.scratch,
                                                  victims, &pdb_violations);
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
  std::vector<const framework::PodInfo*> kept_victims;
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
    absl::Span<const framework::PodInfo* const> found = run.VictimsOf(chosen[rank], &kept_victims);
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
  const preemption::PotentialNodes potential =
      preemption::NodesWherePreemptionMightHelp(filtered, quota_view.has_value(), snapshot);
  const std::vector<const framework::NodeInfo*>& nodes = potential.nodes;
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
  // Verdicts are kept only where nothing beyond the pod, the node and its nominations decides
  // them: no PDB, no quota, no pod group.
  std::optional<framework::VerdictScope> scope;
  if (!nodes.empty() && !quota_view.has_value() && gangs == nullptr && members == 1 &&
      snapshot.pdbs().empty()) {
    scope = host.VerdictScopeFor(state, pod);
  }
  const CacheLease lease(verdicts_mu_, scope.has_value());
  DryRun run;
  if (!nodes.empty()) {
    const auto n = static_cast<int32_t>(nodes.size());
    if (lease.held()) verdicts_.Begin(pod, *scope, snapshot);
    run = preemption::DryRunPreemption(state, pod, snapshot, potential,
                                       {NextOffset(n), std::max(NumCandidates(n), members)}, policy,
                                       host, lease.held() ? &verdicts_ : nullptr);
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
