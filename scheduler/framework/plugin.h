#pragma once

// The plugin contract: one small interface per extension point. A plugin sees the pod, the
// CycleState and node info (or the read-only snapshot in the Pre* hooks); it never sees the
// client, the queue or the binder.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "scheduler/framework/cluster_event.h"
#include "scheduler/framework/cycle_state.h"
#include "scheduler/framework/node_info.h"
#include "scheduler/framework/node_positions.h"
#include "scheduler/framework/pod_info.h"
#include "scheduler/framework/snapshot.h"
#include "scheduler/framework/status.h"

namespace kubesched::framework {

inline constexpr int64_t kMaxNodeScore = 100;
inline constexpr int64_t kMinNodeScore = 0;

class Plugin {
 public:
  virtual ~Plugin() = default;
  virtual std::string_view Name() const = 0;
  // The cluster events that may make a pod this plugin rejected schedulable (upstream's
  // EventsToRegister): the queue moves such a pod back only on one of them (or on the periodic
  // flush). Node changes and freed room by default.
  virtual ClusterEventSet EventsToRegister() const { return kDefaultEvents; }
};

// Decides whether a pending pod may enter activeQ at all (upstream's PreEnqueue). Success lets it
// in; any other status keeps it out, "gated": in no sub-queue, never tried, and pending with the
// status's message as the reason. The core runs the plugins of the pod's profile (its
// schedulerName) when the pod is added or updated, on the informer's thread, before queueing it,
// so PreEnqueue must be quick (no external calls: it holds up every pod behind it) and safe to
// call from any thread. Unlike upstream, kubesched does not run it again when the pod moves
// between sub-queues, only when the pod changes: the verdict must depend on the pod alone.
class PreEnqueuePlugin : public virtual Plugin {
 public:
  virtual Status PreEnqueue(const PodInfo& pod) const = 0;
};

// Orders the active queue. Exactly one per profile.
class QueueSortPlugin : public virtual Plugin {
 public:
  // Whether `a` should be scheduled before `b`. `a_enqueued`/`b_enqueued` are arrival times in
  // the queue, as nanoseconds of the queue's clock.
  virtual bool Less(const PodInfo& a, int64_t a_enqueued, const PodInfo& b,
                    int64_t b_enqueued) const = 0;
};

struct PreFilterResult {
  // When set, only these nodes can fit (NodeAffinity's metadata.name pins); the runner
  // intersects the sets of all plugins.
  std::optional<absl::flat_hash_set<std::string>> node_names;
  // Nodes this plugin's Filter is sure to reject whatever the other plugins say (DynamicResources:
  // nodes with too few matching devices, held or free), by position in the cycle's snapshot,
  // covering every position; null when it knows of none. A hint that saves work, not a verdict:
  // while the core looks for feasible nodes it passes over these without running any filter, and
  // when their verdicts are read (no node fits) it runs every filter on them, so that they carry
  // the first failing plugin's reasons as usual (an Error another filter would give on one of
  // them therefore fails only such a pod's attempt). Unchanged until the cycle ends.
  std::shared_ptr<const NodePositions> sure_rejections;
};

struct PreFilterOutcome {
  Status status;
  PreFilterResult result;
};

// Upstream's PreFilterExtensions: keep a plugin's PreFilter state true to a what-if node when
// pods are added to it (nominated pods) or removed from it (preemption's victims). Called on a
// copy of the cycle state made for that node, never on the cycle's own state.
class PreFilterExtensions {
 public:
  virtual ~PreFilterExtensions() = default;
  virtual Status AddPod(CycleState& state, const PodInfo& pod, const PodInfo& added,
                        const NodeInfo& node) const = 0;
  virtual Status RemovePod(CycleState& state, const PodInfo& pod, const PodInfo& removed,
                           const NodeInfo& node) const = 0;
};

class PreFilterPlugin : public virtual Plugin {
 public:
  // Once per cycle, before any Filter. Skip means this plugin's Filter is not called for the pod.
  // A rejection here rejects every node with the same status.
  virtual PreFilterOutcome PreFilter(CycleState& state, const PodInfo& pod,
                                     const Snapshot& snapshot) = 0;
  // Null for a plugin whose PreFilter state does not depend on the pods of any node.
  virtual const PreFilterExtensions* pre_filter_extensions() const { return nullptr; }
  // True when removing pods may lift a rejection by this PreFilter that no node's verdict
  // explains (queue quota: the pods of the blocking queue). Preemption then judges each node by
  // the other plugins' verdicts, with this plugin left out. False (the default): the rejection
  // stands for every node, and preemption cannot help.
  virtual bool PreemptionMayLiftRejection() const { return false; }
  // True for a plugin that allocates the pod's resource claims (spec.resourceClaims, Dynamic
  // Resource Allocation). Without one in the profile, a pod with claims is not scheduled at all:
  // binding it would leave its claims unallocated and the kubelet unable to start it.
  virtual bool AllocatesResourceClaims() const { return false; }
};

// A plugin whose rejection only a change it can name can lift (queue quota: a pod of the blocking
// queue ending, the quota changing, a budget period starting), rather than a cluster event. A pod
// that it alone rejected waits for one of its wait keys, which the plugin's service wakes
// (SchedulingQueue::MoveQuotaWaiters), and costs nothing until then.
class WaitKeysPlugin {
 public:
  virtual ~WaitKeysPlugin() = default;
  // The keys `pod` waits for after this plugin alone rejected it; empty when what blocked it is
  // already gone, and the pod should retry after its backoff.
  virtual std::vector<std::string> WaitKeys(const PodInfo& pod) const = 0;
};

class FilterPlugin : public virtual Plugin {
 public:
  // Whether `pod` fits `node`. Called concurrently for different nodes from worker threads: it
  // must only read `state`, `pod` and `node`. Reasons only for failing nodes.
  virtual Status Filter(const CycleState& state, const PodInfo& pod,
                        const NodeInfo& node) const = 0;
  // False when the verdict depends only on the node object, never on the pods on the node (nor
  // on anything derived from them): then a preemption what-if copy of the node, which differs in
  // its pods alone, gets the node's own verdict. True (the default) is always safe.
  virtual bool FilterReadsPods() const { return true; }
  // True when, for `pod` in the cycle of `state` (its PreFilter having run), the verdict is a
  // function of the pod (its namespace, labels, annotations, spec and priority) and the NodeInfo
  // alone, and so is what this plugin's PreFilter keeps for it: nothing else of the cluster
  // (volumes, claims, quota, policies, other nodes' pods) and nothing kept between cycles.
  // Preemption then keeps a node's dry-run verdict for the next preemptor alike until the node or
  // its nominations change (PostFilterHost::VerdictScope). False (the default) is always safe.
  virtual bool FilterJudgesPodAndNodeAlone(const CycleState& /*state*/,
                                           const PodInfo& /*pod*/) const {
    return false;
  }
};

// A Filter whose verdict depends on the node's pods only through the sum of their requests and
// their number (NodeResourcesFit). Preemption judges a what-if node with victims removed by
// arithmetic on those two, instead of copying the node and removing the pods.
class RequestsFilterPlugin {
 public:
  virtual ~RequestsFilterPlugin() = default;
  // The verdict Filter would give on `node` if its pods' requests summed to `requested` and they
  // were `num_pods` many. Filter(state, pod, node) equals
  // FilterRequests(state, pod, node, node.requested(), node.pods().size()).
  virtual Status FilterRequests(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
                                const api::ResourceList& requested, int64_t num_pods) const = 0;
  // True when this filter certainly rejects a pod whose cpu, memory, ephemeral storage or pod
  // count exceeds what a node has free (NodeResourcesFit): preemption's resource screen
  // (PostFilterHost::CannotFitWithout) may then pass over nodes where even removing every
  // lower-priority pod leaves too little.
  virtual bool RejectsShortOfBasicResources() const { return false; }
};

// A Filter that answers from the node's row (NodeRow) on its common path. The Filter phase reads
// each node's row from the snapshot's flat table and hands it in, so that a pod whose filters all
// take rows never touches a NodeInfo: in a large cluster that first touch is a cache miss per
// node, the largest cost of the loop. Filter(state, pod, node) must equal
// FilterWithRow(state, pod, node, node.row()).
class RowFilterPlugin {
 public:
  virtual ~RowFilterPlugin() = default;
  // Filter's verdict, with `row` holding node.row()'s values. Reads `node` only where the row
  // cannot answer (a resource the row does not hold, a taint list to judge one by one).
  virtual Status FilterWithRow(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
                               const NodeRow& row) const = 0;
  // Whether FilterWithRow reads nothing of `node` for this pod, its PreFilter having run. When
  // every filter that runs says so, the Filter loop does not ask for the NodeInfos ahead: bringing
  // in lines nobody reads costs as much as the waits it saves elsewhere. False when unsure.
  virtual bool FilterReadsOnlyRow(const CycleState& /*state*/, const PodInfo& /*pod*/) const {
    return false;
  }
  // Clears passes[i] for every node of `rows` (a run of the snapshot's table) that may fail, for
  // a pod whose FilterReadsOnlyRow holds. A flag left set must be a node FilterWithRow passes; a
  // cleared one is judged again by FilterWithRow, which builds its verdict. One call per chunk of
  // nodes, so that where most nodes fit the Filter loop makes no call and builds no Status per
  // node. The default clears every flag: each node is then judged by FilterWithRow.
  virtual void ClearFailingRows(const CycleState& /*state*/, const PodInfo& /*pod*/,
                                absl::Span<const NodeRow> rows, uint8_t* passes) const {
    std::fill(passes, passes + rows.size(), uint8_t{0});
  }
};

// The same for a Score plugin: Score(state, pod, node) must equal
// ScoreWithRow(state, pod, node, node.row()).
class RowScorePlugin {
 public:
  virtual ~RowScorePlugin() = default;
  virtual int64_t ScoreWithRow(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
                               const NodeRow& row) const = 0;
  // ScoreWithRow of each node of a chunk of feasible nodes: scores[i] for nodes[i], whose row is
  // *rows[i]. One call per chunk, so that the pod's state is read once rather than per node.
  virtual void ScoreRows(const CycleState& state, const PodInfo& pod,
                         absl::Span<const NodeInfo* const> nodes, const NodeRow* const* rows,
                         int64_t* scores) const {
    for (size_t i = 0; i < nodes.size(); ++i) {
      scores[i] = ScoreWithRow(state, pod, *nodes[i], *rows[i]);
    }
  }
};

// Per-node statuses of a failed Filter phase, given to PostFilter plugins.
struct NodeStatus {
  const NodeInfo* node = nullptr;
  Status status;
};

struct PostFilterOutcome {
  Status status;                     // Success when a node was nominated
  std::string nominated_node;        // set on success
  std::vector<std::string> victims;  // pod keys to remove
  // On failure: the pod's earlier nomination no longer holds (upstream's PostFilterResult with an
  // empty nominated node), so the scheduler drops it.
  bool clear_nomination = false;
  // API writes the plugin asks for whatever its status (DynamicResources' deallocation of a
  // claim). The scheduler runs them off the scheduling thread, on its bind executor, when it acts
  // on the outcome; a dry run (explain) drops them. The framework gathers every plugin's.
  std::vector<std::function<void()>> writes;
};

// Which filters judged a preemption dry run's verdicts (PostFilterHost::VerdictScopeFor): the
// profile's framework and the filters that ran (bit i: its i-th Filter plugin).
struct VerdictScope {
  const void* filters = nullptr;
  uint64_t running = 0;
  friend bool operator==(const VerdictScope&, const VerdictScope&) = default;
};

// PostFilterHost::NominationStamp's answer when no verdict may be kept for the node.
inline constexpr uint64_t kNoNominationStamp = ~uint64_t{0};

// What a PostFilter plugin may ask of the scheduler that runs it; valid during the call only.
class PostFilterHost {
 public:
  virtual ~PostFilterHost() = default;
  // Runs the profile's Filter plugins for `pod` on `what_if` (a copy of the snapshot's `node`,
  // typically with victims removed) with this cycle's state and PreFilter skips, counting the pods
  // nominated to `node` with priority >= the pod's, as the Filter phase does. Safe to call
  // concurrently for different nodes.
  virtual Status RunFilters(const CycleState& state, const PodInfo& pod, const NodeInfo& what_if,
                            const NodeInfo& node) const = 0;
  // A quick test that spares a dry run on nodes where it cannot succeed. True only when the
  // profile's filters would certainly reject `pod` on the snapshot's `node` even with `freed_pods`
  // of its pods gone, whose requests sum to `freed`: judged on cpu, memory, ephemeral storage and
  // the pod count as NodeResourcesFit judges them, nominated pods counted as RunFilters counts
  // them. False when unsure (the default).
  // Whether the cycle's PreFilter state must follow the pods of a what-if node (a plugin with
  // PreFilter extensions runs for this pod). Then the caller gives every what-if node its own
  // copy of the state, reports each pod it removes or adds back with PodRemoved / PodAdded, and
  // runs the filters with that copy.
  virtual bool StateFollowsPods() const { return false; }
  virtual Status PodRemoved(CycleState& /*state*/, const PodInfo& /*pod*/,
                            const PodInfo& /*removed*/, const NodeInfo& /*what_if*/) const {
    return Status::Success();
  }
  virtual Status PodAdded(CycleState& /*state*/, const PodInfo& /*pod*/, const PodInfo& /*added*/,
                          const NodeInfo& /*what_if*/) const {
    return Status::Success();
  }
  virtual bool CannotFitWithout(const CycleState& /*state*/, const PodInfo& /*pod*/,
                                const NodeInfo& /*node*/, const api::ResourceList& /*freed*/,
                                size_t /*freed_pods*/) const {
    return false;
  }
  // Whether RunFiltersWithout may stand in for RunFilters in this cycle: every filter that runs
  // for the pod either reads no pods or is a RequestsFilterPlugin, and the PreFilter state does not
  // follow the pods (StateFollowsPods() is false). False by default.
  virtual bool JudgesByRequests() const { return false; }
  // Set when a node's dry-run verdict for `pod` may serve a later preemptor alike (same
  // namespace, labels, annotations, spec and priority) judged in the same scope, as long as the
  // node's generation and NominationStamp are the same: every filter that runs judges the pod and
  // the node alone (FilterPlugin::FilterJudgesPodAndNodeAlone) and the PreFilter state does not
  // follow the pods. Unset (the default): no verdict is kept.
  virtual std::optional<VerdictScope> VerdictScopeFor(const CycleState& /*state*/,
                                                      const PodInfo& /*pod*/) const {
    return std::nullopt;
  }
  // With a VerdictScope: a number that changes whenever the pods nominated to `node`, the
  // snapshot's node at `position`, change; kNoNominationStamp when `pod` itself is among them (the
  // filters then leave it out, so its verdict is its own). Reads nothing of `node` but its
  // address. (A plain number: the dry run asks once per node, and an optional came back through
  // memory.)
  virtual uint64_t NominationStamp(const PodInfo& /*pod*/, const NodeInfo& /*node*/,
                                   uint32_t /*position*/) const {
    return kNoNominationStamp;
  }
  // RunFilters' verdict for a what-if copy of the snapshot's `node` without `freed_pods` of its
  // pods, whose requests sum to `freed`, computed without a copy. Only when JudgesByRequests().
  virtual Status RunFiltersWithout(const CycleState& /*state*/, const PodInfo& /*pod*/,
                                   const NodeInfo& /*node*/, const api::ResourceList& /*freed*/,
                                   size_t /*freed_pods*/) const {
    return Status::Error("RunFiltersWithout is not available in this cycle");
  }
  // Calls fn(begin, end) over disjoint chunks covering [0, n) and returns when all are done. The
  // scheduler's host runs the chunks on its worker pool, the calling thread taking part, so `fn`
  // runs concurrently on several threads and must be thread-safe (RunFilters may be called from
  // it). Chunks are small (a few indices): meant for work of a microsecond or more per index,
  // such as a dry run on one node. Not reentrant: `fn` must not call ParallelFor. The default
  // runs fn(0, n) on the calling thread.
  virtual void ParallelFor(size_t n,
                           const std::function<void(size_t begin, size_t end)>& fn) const {
    if (n > 0) fn(0, n);
  }
};

class PostFilterPlugin : public virtual Plugin {
 public:
  // Called when no node fits (e.g. preemption). `filtered` has every node that was rejected,
  // with its status (a PreFilter rejection is given to every node). Skip: nothing to do for this
  // pod; the outcome of the plugins before it stands.
  virtual PostFilterOutcome PostFilter(CycleState& state, const PodInfo& pod,
                                       const Snapshot& snapshot,
                                       absl::Span<const NodeStatus> filtered,
                                       const PostFilterHost& host) = 0;
};

class PreScorePlugin : public virtual Plugin {
 public:
  // Once per cycle with the nodes that passed filtering. Skip: this plugin's Score is not called.
  virtual Status PreScore(CycleState& state, const PodInfo& pod, const Snapshot& snapshot,
                          absl::Span<const NodeInfo* const> feasible) = 0;
};

// A score plugin that switches between spreading and stacking with the cluster's allocated ratio
// (NodeResourcesFit's Watermark strategy) reports its state to simulate, explain and /metrics.
struct WatermarkState {
  std::string_view mode;  // "spread" or "stack": how the next pod is scored
  double allocated_ratio = 0;
  std::string pool = "default";  // the pool the ratio is over ("default": nodes in no pool)
};

class WatermarkReporter {
 public:
  virtual ~WatermarkReporter() = default;
  // The label keys the plugin's pools select on, for the cache to group nodes by
  // (Cache::EnableNodeGroups); nullopt when the plugin is not configured to switch.
  virtual std::optional<std::vector<std::string>> NodeGroupLabelKeys() const = 0;
  // The state `pod` (null: a pod without tolerations) would be scored in, judged on `snapshot`:
  // its pool, that pool's ratio and mode; moves the pool's kept mode exactly as that pod's
  // PreScore would. nullopt when the plugin is not configured to switch.
  virtual std::optional<WatermarkState> ObserveWatermarkState(const Snapshot& snapshot,
                                                              const PodInfo* pod) = 0;
  // Every pool's state at its last scored cycle, without judging anything; safe from any thread
  // (a scrape). Empty when the plugin is not configured to switch.
  virtual std::vector<WatermarkState> LastWatermarkStates() const = 0;
};

// A score plugin that reads measured node usage (MostAvailable): `run` polls node metrics
// (metrics.k8s.io) for it, no more often than the shortest interval any profile's plugin asks.
class NodeMetricsConsumer {
 public:
  virtual ~NodeMetricsConsumer() = default;
  virtual absl::Duration NodeMetricsPollInterval() const = 0;
};

// Optional ability of a ScorePlugin (upstream's ScoreExtensions).
class ScoreNormalizer {
 public:
  virtual ~ScoreNormalizer() = default;
  // Maps the raw scores of all scored nodes, in place, to [kMinNodeScore, kMaxNodeScore].
  virtual void NormalizeScore(const CycleState& state, const PodInfo& pod,
                              absl::Span<int64_t> scores) const = 0;
};

class ScorePlugin : public virtual Plugin {
 public:
  // Raw score of `node`. Called concurrently for different nodes; read-only like Filter.
  virtual int64_t Score(const CycleState& state, const PodInfo& pod,
                        const NodeInfo& node) const = 0;
  // null if the raw score is final.
  virtual const ScoreNormalizer* normalizer() const { return nullptr; }
};

class ReservePlugin : public virtual Plugin {
 public:
  // Claims what the pod needs on `node_name` (e.g. quota). A failure aborts the cycle and calls
  // Unreserve of every reserve plugin.
  virtual Status Reserve(CycleState& state, const PodInfo& pod, std::string_view node_name) = 0;
  // Undoes Reserve. Must be idempotent and must tolerate a Reserve that never happened.
  virtual void Unreserve(CycleState& state, const PodInfo& pod, std::string_view node_name) = 0;
};

// Upstream's cap on how long a pod may wait at Permit.
inline constexpr absl::Duration kMaxPermitTimeout = absl::Minutes(15);

class PermitPlugin : public virtual Plugin {
 public:
  // Success lets the pod go to binding; a rejection unreserves it. Wait (Status::Wait()) holds the
  // pod, reserved and assumed, until every plugin that said Wait allows it through
  // WaitingPods::Allow, one rejects it (WaitingPods::Reject), or `*timeout` passes, which rejects
  // it. The plugin sets `*timeout` when it says Wait (at most kMaxPermitTimeout).
  virtual Status Permit(CycleState& state, const PodInfo& pod, std::string_view node_name,
                        absl::Duration* timeout) = 0;
};

class PreBindPlugin : public virtual Plugin {
 public:
  virtual Status PreBind(CycleState& state, const PodInfo& pod, std::string_view node_name) = 0;
};

// What a Bind plugin binds through. Implemented by the scheduler's binder (embedded cluster or
// API client); synchronous from the plugin's view, run on a bind worker, never on the scheduling
// thread.
class PodBinder {
 public:
  virtual ~PodBinder() = default;
  // Binds, retrying what a retry can fix (transport errors, 429/5xx). On failure, an Error with
  // the reason; the scheduler requeues the pod with backoff, and the watch removes it from the
  // queue if it turns out to be bound or deleted.
  virtual Status BindPod(const api::Pod& pod, std::string_view node_name) = 0;
};

class BindPlugin : public virtual Plugin {
 public:
  // Skip means "not mine", and the next bind plugin is asked.
  virtual Status Bind(CycleState& state, const PodInfo& pod, std::string_view node_name) = 0;
};

class PostBindPlugin : public virtual Plugin {
 public:
  virtual void PostBind(CycleState& state, const PodInfo& pod, std::string_view node_name) = 0;
};

}  // namespace kubesched::framework
