#include "scheduler/core/algorithm.h"

#include <algorithm>
#include <array>
#include <cassert>
#include <type_traits>

namespace kubesched::scheduler {
namespace {

using framework::Status;

constexpr int kMinFeasibleNodesToFind = 100;
constexpr int kMinFeasibleNodesPercentageToFind = 5;
// Nodes per work item handed to a filter/score worker: large enough to amortise the hand-off,
// small enough to balance two to sixteen threads.
constexpr size_t kNodeChunk = 32;
// How many nodes ahead the Filter loop asks for a NodeInfo (FindFeasible).
constexpr size_t kPrefetchAhead = 4;

}  // namespace

int NumFeasibleNodesToFind(int percentage, int num_all_nodes) {
  if (num_all_nodes < kMinFeasibleNodesToFind || percentage >= 100) return num_all_nodes;
  int adaptive = percentage;
  if (adaptive <= 0) {
    adaptive = 50 - num_all_nodes / 125;
    adaptive = std::max(adaptive, kMinFeasibleNodesPercentageToFind);
  }
  const int num = static_cast<int>(static_cast<int64_t>(num_all_nodes) * adaptive / 100);
  return std::max(num, kMinFeasibleNodesToFind);
}

ScheduleAlgorithm::ScheduleAlgorithm(util::WorkerPool* pool, int global_percentage, uint64_t seed)
    : pool_(pool), global_percentage_(global_percentage), random_state_(seed) {}

uint64_t ScheduleAlgorithm::NextRandom() {
  uint64_t z = (random_state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

const std::vector<const framework::NodeInfo*>& ScheduleAlgorithm::CandidateNodes(
    const runtime::PreFilterSummary& summary, const framework::Snapshot& snapshot) {
  if (!summary.node_names.has_value()) return snapshot.nodes();
  auto& candidates = restricted_candidates_;
  candidates.clear();
  for (const auto& name : *summary.node_names) {
    if (const auto* node = snapshot.Get(name); node != nullptr && node->node() != nullptr) {
      candidates.push_back(node);
    }
  }
  // Keep snapshot order so that results do not depend on hash iteration order.
  std::sort(candidates.begin(), candidates.end(),
            [](const auto* a, const auto* b) { return a->name() < b->name(); });
  return candidates;
}

namespace {

// Upstream's evaluateNominatedNode: a pod that preempted is likely to fit only where its victims
// were, so that node is tried alone first (when PreFilter allows it). Null when it does not fit;
// the full search then reports the node's verdict with the others'.
const framework::NodeInfo* FitsNominatedNode(
    const runtime::Framework& fw, const framework::CycleState& state, const framework::PodInfo& pod,
    const framework::Snapshot& snapshot, const runtime::PreFilterSummary& pre,
    const NominatedPods* nominated, std::string_view nominated_node) {
  if (nominated_node.empty()) return nullptr;
  const framework::NodeInfo* node = snapshot.Get(nominated_node);
  if (node == nullptr) return nullptr;
  if (pre.node_names.has_value() && !pre.node_names->contains(node->name())) return nullptr;
  const Status status =
      nominated == nullptr || nominated->empty()
          ? fw.RunFilter(state, pod, *node, pre.skip_filter)
          : RunFiltersWithNominated(fw, state, pod, *node, pre.skip_filter, nominated->For(node));
  return status.IsSuccess() ? node : nullptr;
}

}  // namespace

// Filters nodes in rounds starting at the round-robin index. Each round runs in parallel; the
// results are then read in node order, so the outcome does not depend on thread timing.
//
// Verdicts are written where they stay: entry i of entries_ is the i-th node filtered. A pod that
// fits nowhere (a preemptor) then hands the whole buffer to its FitError instead of moving one
// verdict at a time on the scheduling thread, and each chunk counts its feasible nodes so that
// the reading skips chunks where every node failed.
void ScheduleAlgorithm::FindFeasible(
    const runtime::Framework& fw, const framework::CycleState& state, const framework::PodInfo& pod,
    const runtime::FilterSkips& skip, const std::vector<const framework::NodeInfo*>& candidates,
    const framework::NodeRow* rows, int to_find, const NominatedPods* nominated,
    const framework::NodePositions* passed_over, FitError* fit_error) {
  if (nominated != nullptr && nominated->empty()) nominated = nullptr;
  nominated_by_requests_ = nominated != nullptr && NominatedFiltersJudgeByRequests(fw, skip);
  feasible_.clear();
  feasible_rows_.clear();
  const size_t n = candidates.size();
  if (n == 0) return;
  if (entries_.size() < n) entries_.resize(n);
  chunk_feasible_.assign((n + kNodeChunk - 1) / kNodeChunk, 0);
  filter_error_.store(false, std::memory_order_relaxed);
  const size_t start = next_start_index_ % n;
  const auto wanted_total = static_cast<size_t>(to_find);
  // Filters that read only the rows leave the NodeInfos alone: asking for them would only fill
  // the cache with lines nobody reads (at 50,000 nodes, a miss per node). They may then also
  // judge a chunk's rows together first, unless this cycle times its plugins node by node.
  const bool rows_alone = rows != nullptr && fw.FiltersReadOnlyRows(state, pod, skip);
  const FilterJob job{
      fw,   state,     pod,         skip,       candidates,
      rows, nominated, passed_over, rows_alone, rows_alone && !state.record_plugin_metrics()};
  size_t processed = 0;
  while (processed < n && feasible_.size() < wanted_total) {
    const size_t round = RoundSize(wanted_total - feasible_.size(), processed, n);
    const size_t base_chunk = processed / kNodeChunk;
    const size_t first = (start + processed) % n;
    framework::NodeStatus* const out = entries_.data() + processed;
    // Judging rows together pays where most nodes fit; where none does (a preemptor), each node
    // would be judged twice. The first round goes by the last pod's search, later ones by this.
    const bool rows_first =
        job.rows_first && (processed == 0 ? last_search_found_ : !feasible_.empty());
    pool_->ParallelFor(round, kNodeChunk, [&](size_t begin, size_t end) {
      chunk_feasible_[base_chunk + begin / kNodeChunk] =  // one chunk per call
          passed_over == nullptr ? FilterChunk<false>(job, first, rows_first, out, begin, end)
                                 : FilterChunk<true>(job, first, rows_first, out, begin, end);
    });
    size_t used = 0;
    while (used < round && feasible_.size() < wanted_total) {
      const size_t chunk_end = std::min(round, used + kNodeChunk);
      if (chunk_feasible_[base_chunk + used / kNodeChunk] == 0) {
        used = chunk_end;
        continue;
      }
      for (; used < chunk_end && feasible_.size() < wanted_total; ++used) {
        if (!out[used].status.IsSuccess()) continue;
        const framework::NodeInfo* node = out[used].node;
        feasible_.push_back(node);
        size_t index = first + used;
        if (index >= n) index -= n;
        feasible_rows_.push_back(rows != nullptr ? &rows[index] : &node->row());
      }
    }
    processed += used;
  }
  next_start_index_ = (start + processed) % n;
  last_search_found_ = !feasible_.empty();
  if (passed_over != nullptr && feasible_.empty()) {
    FilterPassedOver(fw, state, pod, skip, candidates, rows, start, processed, nominated,
                     *passed_over);
  }
  CollectRejected(processed, fit_error);
}

// Filters [begin, end) of the round whose first node is candidates[first] (wrapping around, so
// that the per-node loop needs no division) into out[begin, end); returns how many fit. Two
// copies, so that a pod without passed-over nodes pays nothing for them.
template <bool kPassingOver>
uint32_t ScheduleAlgorithm::FilterChunk(const FilterJob& job, size_t first, bool rows_first,
                                        framework::NodeStatus* out, size_t begin, size_t end) {
  const size_t n = job.candidates.size();
  size_t index = first + begin;
  if (index >= n) index -= n;
  // With `rows_first`, the filters judge the chunk's rows together (a call each); only the nodes
  // they may reject, and those with nominated pods, are then filtered one by one.
  std::array<uint8_t, kNodeChunk> passes;
  assert(end - begin <= kNodeChunk);
  if (rows_first) {
    const size_t count = end - begin;
    const size_t before_wrap = std::min(count, n - index);
    job.fw.ClearFailingRows(job.state, job.pod, job.skip, {job.rows + index, before_wrap},
                            passes.data());
    if (before_wrap < count) {
      job.fw.ClearFailingRows(job.state, job.pod, job.skip, {job.rows, count - before_wrap},
                              passes.data() + before_wrap);
    }
  }
  // The NodeInfos are apart in memory and the first Filter waits on each one's first cache
  // line: asking for it a few nodes ahead overlaps those waits.
  size_t ahead = (index + kPrefetchAhead) % n;
  uint32_t found = 0;
  for (size_t i = begin; i < end; ++i) {
    if (!job.rows_alone && (!kPassingOver || !job.passed_over->Contains(ahead))) {
      __builtin_prefetch(job.candidates[ahead]);
    }
    if (++ahead == n) ahead = 0;
    const size_t position = index;
    if (++index == n) index = 0;
    framework::NodeStatus& entry = out[i];
    entry.node = job.candidates[position];
    if (kPassingOver && job.passed_over->Contains(position)) {
      entry.status = Status(framework::Code::kUnschedulableAndUnresolvable);
      continue;
    }
    if (rows_first && passes[i - begin] != 0 &&
        (job.nominated == nullptr || job.nominated->ForPosition(position, entry.node) == nullptr)) {
      entry.status = Status();
      ++found;
      continue;
    }
    FilterInto(job.fw, job.state, job.pod, job.skip, job.nominated, job.rows, position, entry);
    found += entry.status.IsSuccess() ? 1 : 0;
  }
  return found;
}

// A whole number of chunks, so that every round starts on a chunk boundary and chunk k of the
// round is chunk_feasible_[processed / kNodeChunk + k].
size_t ScheduleAlgorithm::RoundSize(size_t wanted, size_t processed, size_t n) const {
  size_t round = std::max<size_t>(wanted + wanted / 4, 64);
  // Where few nodes were feasible so far (none, for a preemptor), fewer and larger rounds: nodes
  // past the last one needed are filtered for nothing, but their verdicts are not read.
  if (processed > 0) {
    round =
        std::max(round, feasible_.empty() ? 2 * processed : wanted * processed / feasible_.size());
  }
  return std::min(n - processed, (round + kNodeChunk - 1) / kNodeChunk * kNodeChunk);
}

// Only a pod that fits nowhere reads the verdicts of the nodes passed over (its FitError, its
// preemption): they get theirs here, as if they had been filtered with the others.
void ScheduleAlgorithm::FilterPassedOver(
    const runtime::Framework& fw, const framework::CycleState& state, const framework::PodInfo& pod,
    const runtime::FilterSkips& skip, const std::vector<const framework::NodeInfo*>& candidates,
    const framework::NodeRow* rows, size_t start, size_t processed, const NominatedPods* nominated,
    const framework::NodePositions& passed_over) {
  const size_t n = candidates.size();
  pool_->ParallelFor(processed, kNodeChunk, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const size_t position = (start + i) % n;
      if (!passed_over.Contains(position)) continue;
      FilterInto(fw, state, pod, skip, nominated, rows, position, entries_[i]);
    }
  });
}

void ScheduleAlgorithm::FilterInto(const runtime::Framework& fw, const framework::CycleState& state,
                                   const framework::PodInfo& pod, const runtime::FilterSkips& skip,
                                   const NominatedPods* nominated, const framework::NodeRow* rows,
                                   size_t position, framework::NodeStatus& entry) {
  // With the snapshot's rows, `position` is the node's snapshot position: neither its row nor its
  // nominations need the NodeInfo, which a node without nominated pods then never touches.
  const framework::NodeRow& row = rows != nullptr ? rows[position] : entry.node->row();
  assert(&row == &entry.node->row());  // a node changed in place must have its row refreshed
  const NominatedPods::Entry* on_node = nominated == nullptr ? nullptr
                                        : rows != nullptr
                                            ? nominated->ForPosition(position, entry.node)
                                            : nominated->For(entry.node);
  if (on_node == nullptr) {
    fw.RunFilterInto(state, pod, *entry.node, row, skip, entry.status);
  } else {
    RunFiltersWithNominatedInto(fw, state, pod, *entry.node, skip, on_node, entry.status,
                                nominated_by_requests_);
  }
  if (entry.status.code() == framework::Code::kError) {
    filter_error_.store(true, std::memory_order_relaxed);
  }
}

void ScheduleAlgorithm::CollectRejected(size_t processed, FitError* fit_error) {
  std::vector<framework::NodeStatus>& rejected = fit_error->node_statuses;
  if (feasible_.empty() && rejected.empty()) {
    // Every node filtered failed: the verdicts are the FitError's as they lie.
    rejected.swap(entries_);
    rejected.resize(processed);
    entries_.swap(spare_entries_);
    return;
  }
  if (rejected.empty()) rejected.reserve(processed - feasible_.size());
  for (size_t i = 0; i < processed; ++i) {
    if (!entries_[i].status.IsSuccess()) rejected.push_back(std::move(entries_[i]));
  }
}

void ScheduleAlgorithm::Recycle(std::vector<framework::NodeStatus> statuses) {
  if (statuses.capacity() > spare_entries_.capacity()) spare_entries_ = std::move(statuses);
}

bool ScheduleAlgorithm::ScoreFeasible(const runtime::Framework& fw, framework::CycleState& state,
                                      const framework::PodInfo& pod,
                                      const framework::Snapshot& snapshot, Status* error,
                                      bool keep_raw) {
  auto pre = fw.RunPreScore(state, pod, snapshot, feasible_);
  if (!pre.status.IsSuccess()) {
    *error = pre.status;
    return false;
  }
  skip_score_ = std::move(pre.skip_score);
  const runtime::ScorePhaseTimer score_timer = fw.TimeScorePhase();
  const auto& plugins = fw.score_plugins();
  const size_t m = feasible_.size();
  plugin_scores_.resize(plugins.size());
  // Every score a plugin that runs gives is written below; a skipped plugin's list is not read.
  for (size_t k = 0; k < plugins.size(); ++k) {
    if (!skip_score_[k]) plugin_scores_[k].resize(m);
  }
  pool_->ParallelFor(m, kNodeChunk, [&](size_t begin, size_t end) {
    const absl::Span<const framework::NodeInfo* const> nodes(feasible_.data() + begin, end - begin);
    for (size_t k = 0; k < plugins.size(); ++k) {
      if (skip_score_[k]) continue;
      fw.RunScoreChunk(k, state, pod, nodes, feasible_rows_.data() + begin,
                       plugin_scores_[k].data() + begin);
    }
  });
  if (keep_raw) raw_scores_ = plugin_scores_;
  totals_.assign(m, 0);
  for (size_t k = 0; k < plugins.size(); ++k) {
    if (skip_score_[k]) continue;
    fw.RunNormalizeScore(k, state, pod, absl::MakeSpan(plugin_scores_[k]));
    for (size_t i = 0; i < m; ++i) totals_[i] += plugin_scores_[k][i] * plugins[k].weight;
  }
  return true;
}

// Highest total wins; ties are broken uniformly at random (reservoir sampling), as upstream.
size_t ScheduleAlgorithm::SelectHost() {
  size_t selected = 0;
  int64_t best = totals_[0];
  uint64_t ties = 1;
  for (size_t i = 1; i < totals_.size(); ++i) {
    if (totals_[i] > best) {
      best = totals_[i];
      selected = i;
      ties = 1;
    } else if (totals_[i] == best) {
      ++ties;
      if (NextRandom() % ties == 0) selected = i;
    }
  }
  return selected;
}

ScheduleOutcome ScheduleAlgorithm::Schedule(const runtime::Framework& fw,
                                            framework::CycleState& state,
                                            const framework::PodInfo& pod,
                                            const framework::Snapshot& snapshot,
                                            const NominatedPods* nominated,
                                            std::string_view nominated_node) {
  FitError fit_error;
  fit_error.num_all_nodes = static_cast<int>(snapshot.nodes().size());
  if (snapshot.nodes().empty()) return FitError();  // no nodes: num_all_nodes is 0

  auto pre = fw.RunPreFilter(state, pod, snapshot);
  last_skip_filter_ = pre.skip_filter;
  if (pre.status.code() == framework::Code::kError) return pre.status;
  if (!pre.status.IsSuccess()) {
    fit_error.pre_filter_status = pre.status;
    return fit_error;
  }
  if (const auto* node =
          FitsNominatedNode(fw, state, pod, snapshot, pre, nominated, nominated_node);
      node != nullptr) {
    return ScheduleSuccess{node, 1, 1};
  }
  const auto& candidates = CandidateNodes(pre, snapshot);
  // The snapshot's own list reads each node's row from the table, in the same order.
  const framework::NodeRow* rows =
      &candidates == &snapshot.nodes() ? snapshot.rows().data() : nullptr;
  if (candidates.size() < snapshot.nodes().size()) {
    const Status excluded = runtime::ExcludedByPreFilter(pre);
    for (const auto* node : snapshot.nodes()) {
      if (!pre.node_names->contains(node->name()))
        fit_error.node_statuses.push_back({node, excluded});
    }
  }
  const int percentage = fw.percentage_of_nodes_to_score().value_or(global_percentage_);
  const int to_find = NumFeasibleNodesToFind(percentage, static_cast<int>(candidates.size()));
  // Sure rejections are by snapshot position: they apply when every node is a candidate.
  const framework::NodePositions* passed_over =
      &candidates == &snapshot.nodes() && pre.sure_rejections != nullptr &&
              pre.sure_rejections->size() == candidates.size()
          ? pre.sure_rejections.get()
          : nullptr;
  FindFeasible(fw, state, pod, pre.skip_filter, candidates, rows, to_find, nominated, passed_over,
               &fit_error);
  // The pool's join orders the workers' writes before this read.
  if (filter_error_.load(std::memory_order_relaxed)) {
    for (const auto& node_status : fit_error.node_statuses) {
      if (node_status.status.code() == framework::Code::kError) return node_status.status;
    }
  }
  if (feasible_.empty()) return fit_error;

  ScheduleSuccess success;
  success.feasible_nodes = static_cast<int>(feasible_.size());
  success.evaluated_nodes =
      success.feasible_nodes + static_cast<int>(fit_error.node_statuses.size());
  if (feasible_.size() == 1) {
    success.node = feasible_[0];
    return success;
  }
  Status error;
  if (!ScoreFeasible(fw, state, pod, snapshot, &error)) return error;
  success.node = feasible_[SelectHost()];
  return success;
}

Explanation ScheduleAlgorithm::Explain(const runtime::Framework& fw, framework::CycleState& state,
                                       const framework::PodInfo& pod,
                                       const framework::Snapshot& snapshot) {
  Explanation out;
  FitError fit_error;
  fit_error.num_all_nodes = static_cast<int>(snapshot.nodes().size());
  auto pre = fw.RunPreFilter(state, pod, snapshot);
  last_skip_filter_ = pre.skip_filter;
  out.pre_filter_status = pre.status;
  if (!pre.status.IsSuccess()) {
    fit_error.pre_filter_status = pre.status;
    out.message = fit_error.Message();
    for (const auto* node : snapshot.nodes()) out.nodes.push_back({node, {}, false, {}, 0});
    return out;
  }
  feasible_.clear();
  feasible_rows_.clear();
  for (const auto* node : snapshot.nodes()) {
    NodeExplanation explained;
    explained.node = node;
    // Nodes left out by PreFilter still show every filter's own verdict; if they all pass,
    // the exclusion is the node's verdict.
    Status first = fw.RunFilter(state, pod, *node, pre.skip_filter, &explained.filters);
    if (first.IsSuccess() && pre.node_names.has_value() &&
        !pre.node_names->contains(node->name())) {
      first = runtime::ExcludedByPreFilter(pre);
      explained.filters.push_back(first);
    }
    explained.feasible = first.IsSuccess();
    if (explained.feasible) {
      feasible_.push_back(node);
      feasible_rows_.push_back(&node->row());
    } else {
      fit_error.node_statuses.push_back({node, first});
    }
    out.nodes.push_back(std::move(explained));
  }
  if (feasible_.empty()) {
    out.message = fit_error.Message();
    return out;
  }
  Status error;
  if (!ScoreFeasible(fw, state, pod, snapshot, &error, /*keep_raw=*/true)) {
    out.message = error.Message();
    return out;
  }
  const auto& plugins = fw.score_plugins();
  size_t f = 0;
  for (auto& explained : out.nodes) {
    if (!explained.feasible) continue;
    for (size_t k = 0; k < plugins.size(); ++k) {
      if (skip_score_[k]) continue;  // PreScore said Skip: the plugin does not score this pod
      ScoreDetail detail;
      detail.plugin = std::string(plugins[k].plugin->Name());
      detail.raw = raw_scores_[k][f];
      detail.normalized = plugin_scores_[k][f];
      detail.weight = plugins[k].weight;
      explained.scores.push_back(std::move(detail));
    }
    explained.total = totals_[f];
    ++f;
  }
  out.selected = feasible_[SelectHost()];
  return out;
}

}  // namespace kubesched::scheduler
