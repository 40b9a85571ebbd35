// PodTopologySpread PreFilter/Filter: DoNotSchedule constraints. PreFilter counts the matching
// pods of every eligible domain once; Filter compares the node's domain with the global minimum.

#include <algorithm>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "plugins/pod_topology_spread/common.h"
#include "plugins/pod_topology_spread/pod_topology_spread.h"
#include "scheduler/util/parallel.h"
#include "scheduler/util/strings.h"

namespace kubesched::plugins {
namespace {

using framework::CycleState;
using framework::NodeInfo;
using framework::PodInfo;
using framework::Snapshot;
using framework::Status;
using pod_topology_spread::Constraint;

// What Filter needs for one constraint.
struct ConstraintCounts {
  // Matching pods per topology value, for every eligible domain (zero counts included: an empty
  // domain is the global minimum).
  absl::flat_hash_map<api::Symbol, int64_t> per_domain;
  // The global minimum the skew is measured against: 0 while there are fewer eligible domains
  // than minDomains; "infinite" when there is no domain at all (then nothing can be skewed).
  int64_t min_match = 0;
  // Whether the incoming pod counts itself in the domain it lands in.
  bool self_match = false;
};

struct PreFilterState final : framework::StateData {
  std::vector<Constraint> constraints;
  std::vector<ConstraintCounts> counts;  // parallel to constraints

  std::unique_ptr<framework::StateData> Clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
};

CycleState::Key PreFilterKey() {
  static const CycleState::Key key = CycleState::AllocateKey("PreFilterPodTopologySpread");
  return key;
}

// Nodes per piece of CountDomains' work: enough to amortise a piece's own maps and memos.
constexpr size_t kCountChunk = 256;

// The matching pods per domain, one map per constraint, of the nodes of one piece of work.
using DomainCounts = std::vector<absl::flat_hash_map<api::Symbol, int64_t>>;

// Adds the matching pods of nodes [begin, end) to `out`'s domains. A node counts only if it
// carries every constraint's key; each constraint then applies its own inclusion policies.
void CountDomainsOf(const api::Pod& pod, const std::vector<Constraint>& constraints,
                    const std::vector<const NodeInfo*>& nodes, size_t begin, size_t end,
                    DomainCounts& out) {
  const pod_topology_spread::RequiredNodeAffinity affinity(pod);
  std::vector<pod_topology_spread::SelectorMemo> memos(constraints.size());
  out.resize(constraints.size());
  for (size_t k = begin; k < end; ++k) {
    const NodeInfo* node = nodes[k];
    const api::Node* n = node->node();
    if (n == nullptr || !HasAllTopologyKeys(n->meta.labels, constraints)) continue;
    for (size_t i = 0; i < constraints.size(); ++i) {
      const Constraint& c = constraints[i];
      if (!MatchesInclusionPolicies(c, pod, *n, affinity)) continue;
      const api::Symbol value = *n->meta.labels.Get(c.topology_key);
      out[i][value] += CountMatchingPods(*node, c, pod.meta.namespace_symbol, &memos[i]);
    }
  }
}

// Counts every node's matching pods into its domains, in pieces over `pool`'s threads (inline
// without one). The pieces' sums are added up afterwards; addition does not depend on their
// order, so neither does the result.
void CountDomains(const api::Pod& pod, const Snapshot& snapshot, util::WorkerPool* pool,
                  PreFilterState& state) {
  const std::vector<const NodeInfo*>& nodes = snapshot.nodes();
  const size_t pieces = (nodes.size() + kCountChunk - 1) / kCountChunk;
  std::vector<DomainCounts> partial(pieces);
  const auto count_piece = [&](size_t begin, size_t end) {
    CountDomainsOf(pod, state.constraints, nodes, begin, end, partial[begin / kCountChunk]);
  };
  if (pool == nullptr) {
    for (size_t begin = 0; begin < nodes.size(); begin += kCountChunk) {
      count_piece(begin, std::min(nodes.size(), begin + kCountChunk));
    }
  } else {
    pool->ParallelFor(nodes.size(), kCountChunk, count_piece);  // one piece per call
  }
  for (const DomainCounts& piece : partial) {
    for (size_t i = 0; i < piece.size(); ++i) {
      for (const auto& [value, count] : piece[i]) state.counts[i].per_domain[value] += count;
    }
  }
}

int64_t GlobalMinimum(const ConstraintCounts& counts, int32_t min_domains) {
  if (counts.per_domain.size() < static_cast<size_t>(std::max(min_domains, 0))) return 0;
  int64_t min = std::numeric_limits<int32_t>::max();  // upstream's empty critical path
  for (const auto& [value, count] : counts.per_domain) min = std::min(min, count);
  return min;
}

}  // namespace

framework::PreFilterOutcome PodTopologySpread::PreFilter(CycleState& state, const PodInfo& pod,
                                                         const Snapshot& snapshot) {
  absl::StatusOr<std::vector<Constraint>> constraints = pod_topology_spread::PodConstraints(
      pod.get(), default_constraints_, api::UnsatisfiableConstraintAction::kDoNotSchedule);
  if (!constraints.ok()) return {Status::Error(util::Std(constraints.status().message())), {}};
  if (constraints->empty()) return {Status::Skip(), {}};

  auto data = std::make_unique<PreFilterState>();
  data->constraints = *std::move(constraints);
  data->counts.resize(data->constraints.size());
  CountDomains(pod.get(), snapshot, pool_, *data);
  for (size_t i = 0; i < data->constraints.size(); ++i) {
    const Constraint& c = data->constraints[i];
    data->counts[i].min_match = GlobalMinimum(data->counts[i], c.min_domains);
    data->counts[i].self_match = c.Selects(pod.get().meta.labels);
  }
  state.Write(PreFilterKey(), std::move(data));
  return {};
}

Status PodTopologySpread::Filter(const CycleState& state, const PodInfo& pod,
                                 const NodeInfo& node) const {
  const auto* data = state.Read<PreFilterState>(PreFilterKey());
  if (data == nullptr) return Status::Error("PodTopologySpread: Filter without PreFilter state");
  if (node.node() == nullptr) return Status::Error("PodTopologySpread: node not found");
  const api::LabelSet& labels = node.node()->meta.labels;
  for (size_t i = 0; i < data->constraints.size(); ++i) {
    const Constraint& c = data->constraints[i];
    const std::optional<api::Symbol> value = labels.Get(c.topology_key);
    if (!value) return Status::Unresolvable(kReasonTopologySpreadMissingLabel);
    const ConstraintCounts& counts = data->counts[i];
    const auto it = counts.per_domain.find(*value);
    const int64_t match = it == counts.per_domain.end() ? 0 : it->second;
    // 'existing matching pods' + 'the pod itself if it matches' - 'global minimum' <= maxSkew
    const int64_t skew = match + (counts.self_match ? 1 : 0) - counts.min_match;
    if (skew > c.max_skew) return Status::Unschedulable(kReasonTopologySpreadConstraintsNotMatch);
  }
  return Status::Success();
}

namespace {

// Upstream's updateWithPod: a pod that joins or leaves an eligible domain moves its count (and the
// global minimum) by `delta`.
Status UpdateWithPod(CycleState& state, const PodInfo& pod, const PodInfo& changed,
                     const NodeInfo& node, int64_t delta) {
  auto* data = state.ReadMutable<PreFilterState>(PreFilterKey());
  if (data == nullptr) return Status::Error("PodTopologySpread: PreFilter state missing");
  const api::Node* n = node.node();
  if (n == nullptr || !HasAllTopologyKeys(n->meta.labels, data->constraints)) {
    return Status::Success();
  }
  const pod_topology_spread::RequiredNodeAffinity affinity(pod.get());
  for (size_t i = 0; i < data->constraints.size(); ++i) {
    const Constraint& c = data->constraints[i];
    if (c.selects_nothing || !MatchesInclusionPolicies(c, pod.get(), *n, affinity)) continue;
    if (!pod_topology_spread::PodCounts(changed.get(), c, pod.get().meta.namespace_symbol)) {
      continue;
    }
    ConstraintCounts& counts = data->counts[i];
    counts.per_domain[*n->meta.labels.Get(c.topology_key)] += delta;
    counts.min_match = GlobalMinimum(counts, c.min_domains);
  }
  return Status::Success();
}

}  // namespace

Status PodTopologySpread::AddPod(CycleState& state, const PodInfo& pod, const PodInfo& added,
                                 const NodeInfo& node) const {
  return UpdateWithPod(state, pod, added, node, 1);
}

Status PodTopologySpread::RemovePod(CycleState& state, const PodInfo& pod, const PodInfo& removed,
                                    const NodeInfo& node) const {
  return UpdateWithPod(state, pod, removed, node, -1);
}

}  // namespace kubesched::plugins
