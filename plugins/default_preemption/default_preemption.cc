#include "plugins/default_preemption/default_preemption.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "plugins/default_preemption/pick_node.h"
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
// fix. QueueQuota's rejections count only with a quota view (quota-aware preemption): then the
// victims must free the queue as well as the node.
std::vector<const framework::NodeInfo*> PotentialNodes(absl::Span<const NodeStatus> filtered,
                                                       bool quota_aware) {
  std::vector<const framework::NodeInfo*> nodes;
  for (const NodeStatus& entry : filtered) {
    if (entry.node == nullptr || entry.status.code() != Code::kUnschedulable) continue;
    if (entry.status.plugin() == names::kQueueQuota && !quota_aware) continue;
    nodes.push_back(entry.node);
  }
  return nodes;
}

// Queue quota holds the pod back (its PreFilter rejection is every node's status).
bool BlockedByQuota(absl::Span<const NodeStatus> filtered) {
  return !filtered.empty() && filtered.front().status.plugin() == names::kQueueQuota &&
         filtered.front().status.code() == Code::kUnschedulable;
}

// Upstream's FitError text over the nodes that were tried and failed; every other node of the
// snapshot counts as "Preemption is not helpful for scheduling".
std::string Diagnosis(size_t num_all_nodes, absl::Span<const Status> failed) {
  std::map<std::string_view, size_t> histogram;
  for (const Status& status : failed) {
    for (const std::string_view reason : status.reasons()) ++histogram[reason];
  }
  if (failed.size() < num_all_nodes) histogram[kNotHelpful] += num_all_nodes - failed.size();
  std::vector<std::string> parts;
  parts.reserve(histogram.size());
  for (const auto& [reason, count] : histogram) {
    parts.push_back(absl::StrCat(count, " ", util::Absl(reason)));
  }
  std::sort(parts.begin(), parts.end());
  std::string message = absl::StrCat("preemption: 0/", num_all_nodes, " nodes are available");
  if (!parts.empty()) absl::StrAppend(&message, ": ", absl::StrJoin(parts, ", "), ".");
  return message;
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

// Upstream's DryRunPreemption, one node after another: from `offset` on (wrapping around), until
// `wanted` candidates are found with at least one among them that violates no PDB.
DryRun DryRunPreemption(const framework::CycleState& state, const framework::PodInfo& pod,
                        const framework::Snapshot& snapshot,
                        const std::vector<const framework::NodeInfo*>& nodes, DryRunBounds bounds,
                        const preemption::VictimPolicy& policy,
                        const framework::PostFilterHost& host) {
  DryRun run;
  preemption::PdbBudgets pdbs(snapshot.pdbs());
  preemption::VictimScratch scratch;
  size_t non_violating = 0;
  const size_t n = nodes.size();
  for (size_t i = 0; i < n; ++i) {
    const framework::NodeInfo& node = *nodes[(static_cast<size_t>(bounds.offset) + i) % n];
    Candidate candidate{&node, run.victim_pool.size(), 0, 0};
    Status status = preemption::SelectVictimsOnNode(state, pod, node, policy, pdbs, host, scratch,
                                                    &run.victim_pool, &candidate.pdb_violations);
    candidate.end = run.victim_pool.size();
    if (status.IsSuccess() && candidate.end > candidate.begin) {
      if (candidate.pdb_violations == 0) ++non_violating;
      run.candidates.push_back(candidate);
      if (non_violating > 0 && run.candidates.size() >= static_cast<size_t>(bounds.wanted)) break;
      continue;
    }
    if (status.IsSuccess()) {
      status =
          Status::Error(absl::StrCat("expected at least one victim pod on node ", node.name()));
    }
    if (status.code() == Code::kError && run.error.IsSuccess()) run.error = status;
    run.failed.push_back(std::move(status));
  }
  return run;
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
  const auto& policy_field = pod.get().spec.preemption_policy;
  if (policy_field.has_value() && *policy_field == api::PreemptionPolicy::kNever) {
    return Rejected(Status::Unschedulable(kNotEligibleNever));
  }
  std::optional<quota::QuotaPreemption> quota_view;
  if (quota_ != nullptr && BlockedByQuota(filtered)) quota_view = quota_->PreemptionView(pod);
  const preemption::VictimPolicy policy{pod.priority, args_.non_preemptible_override_priority,
                                        quota_view.has_value() ? &*quota_view : nullptr};
  if (WaitsForVictims(pod, snapshot, filtered, policy)) {
    return Rejected(Status::Unschedulable(kNotEligibleTerminating));
  }
  if (snapshot.nodes().empty()) return Rejected(Status::Error("preemption: no nodes available"));

  const std::vector<const framework::NodeInfo*> nodes =
      PotentialNodes(filtered, quota_view.has_value());
  DryRun run;
  if (!nodes.empty()) {
    const auto n = static_cast<int32_t>(nodes.size());
    run = DryRunPreemption(state, pod, snapshot, nodes, {NextOffset(n), NumCandidates(n)}, policy,
                           host);
  }
  if (run.candidates.empty()) {
    if (!run.error.IsSuccess()) {
      return Rejected(Status::Error(absl::StrCat("preemption: ", run.error.Message())));
    }
    return RejectedWith(state, Code::kUnschedulable,
                        Diagnosis(snapshot.nodes().size(), run.failed));
  }
  // Upstream lists candidates without PDB violations before the others; the order only matters
  // among candidates tied on every score, which have equal violations, so it is kept as found.
  const Candidate& best = run.candidates[preemption::PickOneNode(run.candidates, run.victim_pool)];
  PostFilterOutcome outcome;
  outcome.nominated_node = best.node->name();
  outcome.victims.reserve(best.end - best.begin);
  for (size_t i = best.begin; i < best.end; ++i) outcome.victims.push_back(run.victim_pool[i]->key);
  return outcome;
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
