#include "plugins/pod_topology_spread/spread_counts.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace kubesched::plugins::pod_topology_spread {
namespace {

// Nodes per piece of CountAll's work: enough to amortise a piece's own maps and memos.
constexpr size_t kCountChunk = 256;

const std::optional<api::NodeSelector>& RequiredTerms(const api::Pod& pod) {
  static const std::optional<api::NodeSelector> kNone;
  const auto& affinity = pod.spec.affinity;
  if (!affinity.has_value() || !affinity->node_affinity.has_value()) return kNone;
  return affinity->node_affinity->required;
}

}  // namespace

int64_t GlobalMinimum(const ConstraintCounts& counts, int32_t min_domains) {
  if (counts.per_domain.size() < static_cast<size_t>(std::max(min_domains, 0))) return 0;
  int64_t min = std::numeric_limits<int32_t>::max();  // upstream's empty critical path
  for (const auto& [value, count] : counts.per_domain) min = std::min(min, count);
  return min;
}

SpreadCounter::SpreadCounter(const framework::PodInfo& pod, std::vector<Constraint> constraints)
    : label_group_(pod.label_group),
      sample_(pod.pod),
      constraints_(std::make_shared<const std::vector<Constraint>>(std::move(constraints))),
      affinity_(*sample_),
      counts_(std::make_shared<SpreadCounts>()) {
  for (const Constraint& c : *constraints_) {
    honors_affinity_ |= c.node_affinity_policy == api::NodeInclusionPolicy::kHonor;
    honors_taints_ |= c.node_taints_policy == api::NodeInclusionPolicy::kHonor;
  }
}

bool SpreadCounter::Serves(const SpreadTemplate& key) const {
  const api::Pod& pod = key.pod.get();
  return key.pod.label_group == label_group_ && key.constraints == *constraints_ &&
         (!honors_affinity_ || (pod.spec.node_selector == sample_->spec.node_selector &&
                                RequiredTerms(pod) == RequiredTerms(*sample_))) &&
         (!honors_taints_ || pod.spec.tolerations == sample_->spec.tolerations);
}

void SpreadCounter::Update(const framework::Snapshot& snapshot, util::WorkerPool* pool) {
  if (!mark_.CatchUp(snapshot, &changed_)) {
    CountAll(snapshot, pool);
    return;
  }
  changed_constraints_.assign(constraints_->size(), 0);
  for (const uint32_t position : changed_) Recount(*snapshot.nodes()[position], position);
  Settle();
}

// Counts every node's matching pods into its domains, in pieces over `pool`'s threads (inline
// without one); each piece writes the shares of its own nodes and sums its own tallies, which are
// added up afterwards. Addition does not depend on their order, so neither does the result.
void SpreadCounter::CountAll(const framework::Snapshot& snapshot, util::WorkerPool* pool) {
  const std::vector<const framework::NodeInfo*>& nodes = snapshot.nodes();
  const size_t constraints = constraints_->size();
  shares_.assign(nodes.size(), Shares());
  const size_t pieces = (nodes.size() + kCountChunk - 1) / kCountChunk;
  std::vector<Tallies> partial(pieces, Tallies(constraints));
  const auto count_piece = [&](size_t begin, size_t end) {
    CountPiece(nodes, begin, end, partial[begin / kCountChunk]);
  };
  if (pool == nullptr) {
    for (size_t begin = 0; begin < nodes.size(); begin += kCountChunk) {
      count_piece(begin, std::min(nodes.size(), begin + kCountChunk));
    }
  } else {
    pool->ParallelFor(nodes.size(), kCountChunk, count_piece);  // one piece per call
  }
  if (counts_.use_count() > 1) counts_ = std::make_shared<SpreadCounts>();
  counts_->assign(constraints, ConstraintCounts());
  domain_nodes_.assign(constraints, {});
  memos_.assign(constraints, {});
  for (const Tallies& piece : partial) {
    for (size_t i = 0; i < constraints; ++i) {
      for (const auto& [value, tally] : piece[i]) {
        (*counts_)[i].per_domain[value] += tally.pods;
        domain_nodes_[i][value] += tally.nodes;
      }
    }
  }
  changed_constraints_.assign(constraints, 1);
  Settle();
}

void SpreadCounter::CountPiece(const std::vector<const framework::NodeInfo*>& nodes, size_t begin,
                               size_t end, Tallies& out) {
  std::vector<SelectorMemo> memos(constraints_->size());
  for (size_t k = begin; k < end; ++k) {
    Shares& shares = shares_[k];
    SharesOf(*nodes[k], memos, shares);
    for (const Share& share : shares) {
      DomainTally& tally = out[share.constraint][share.value];
      tally.pods += share.count;
      ++tally.nodes;
    }
  }
}

// Takes back the node's last share and adds its share now.
void SpreadCounter::Recount(const framework::NodeInfo& node, uint32_t position) {
  scratch_.clear();
  SharesOf(node, memos_, scratch_);
  Shares& old = shares_[position];
  if (old.empty() && scratch_.empty()) return;
  for (const Share& share : old) Tally(share, -1);
  for (const Share& share : scratch_) Tally(share, +1);
  old = scratch_;
}

// A node counts only if it carries every constraint's key; each constraint then applies its own
// inclusion policies.
void SpreadCounter::SharesOf(const framework::NodeInfo& node, std::vector<SelectorMemo>& memos,
                             Shares& out) const {
  const api::Node* n = node.node();
  if (n == nullptr || !HasAllTopologyKeys(n->meta.labels, *constraints_)) return;
  const api::Pod& pod = *sample_;
  for (size_t i = 0; i < constraints_->size(); ++i) {
    const Constraint& c = (*constraints_)[i];
    if (!MatchesInclusionPolicies(c, pod, *n, affinity_)) continue;
    out.push_back({static_cast<uint32_t>(i), *n->meta.labels.Get(c.topology_key),
                   CountMatchingPods(node, c, pod.meta.namespace_symbol, &memos[i])});
  }
}

void SpreadCounter::Tally(const Share& share, int sign) {
  SpreadCounts& counts = MutableCounts();
  auto& per_domain = counts[share.constraint].per_domain;
  auto& nodes = domain_nodes_[share.constraint];
  changed_constraints_[share.constraint] = 1;
  if (sign > 0) {
    per_domain[share.value] += share.count;
    ++nodes[share.value];
    return;
  }
  const auto tally = nodes.find(share.value);
  if (tally == nodes.end()) return;  // not expected: every share was added before
  per_domain[share.value] -= share.count;
  if (--tally->second > 0) return;
  nodes.erase(tally);
  per_domain.erase(share.value);
}

// The minimum and the pod's own match of each constraint whose domains changed.
void SpreadCounter::Settle() {
  for (size_t i = 0; i < constraints_->size(); ++i) {
    if (changed_constraints_[i] == 0) continue;
    const Constraint& c = (*constraints_)[i];
    ConstraintCounts& counts = MutableCounts()[i];
    counts.min_match = GlobalMinimum(counts, c.min_domains);
    counts.self_match = c.Selects(sample_->meta.labels);
  }
}

SpreadCounts& SpreadCounter::MutableCounts() {
  if (counts_.use_count() > 1) counts_ = std::make_shared<SpreadCounts>(*counts_);
  return *counts_;
}

}  // namespace kubesched::plugins::pod_topology_spread
