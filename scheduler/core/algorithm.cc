#include "scheduler/core/algorithm.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cassert>
#include <type_traits>

namespace kubesched::scheduler {
namespace {

using framework::Status;

constexpr int kMinFeasibleNodesToFind = 100;
constexpr int kMinFeasibleNodesPercentageToFind = 5;
// How many nodes ahead the Filter loop asks for a NodeInfo (FindFeasible).
constexpr size_t kPrefetchAhead = 4;

// Entry i of a search from candidate `start` is candidate start + i, wrapped at n (i < n).
size_t CandidatePosition(size_t start, size_t entry_index, size_t n) {
  return start + entry_index >= n ? start + entry_index - n : start + entry_index;
}

// splitmix64 (tie-breaking needs speed, not statistical quality): draw k of a generator whose
// state was s is SplitMix(s + k * kSplitMixStep).
constexpr uint64_t kSplitMixStep = 0x9e3779b97f4a7c15ULL;
uint64_t SplitMix(uint64_t state) {
  state = (state ^ (state >> 30)) * 0xbf58476d1ce4e5b9ULL;
  state = (state ^ (state >> 27)) * 0x94d049bb133111ebULL;
  return state ^ (state >> 31);
}

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
// Entry i of entries_ is the i-th node filtered, but only rejections are sure to be written
// there, and only when they are read (FilterJob::keep_verdicts): each chunk lists which of its
// entries failed and, in order, which fit (ChunkResult). Reading a round is then a copy of those
// short lists rather than a pass over every verdict, and a node that fits costs no write of a
// verdict nobody reads. A pod that fits nowhere (a preemptor) hands the whole buffer to
// its FitError. Returns how many nodes it evaluated; their rejections are in `fit_error` when no
// node fits or a filter erred.
size_t ScheduleAlgorithm::FindFeasible(
    const runtime::Framework& fw, const framework::CycleState& state, const framework::PodInfo& pod,
    const runtime::FilterSkips& skip, const std::vector<const framework::NodeInfo*>& candidates,
    const framework::NodeRow* rows, int to_find, const NominatedPods* nominated,
    const framework::NodePositions* passed_over, FilterVerdicts* kept, FitError* fit_error) {
  if (nominated != nullptr && nominated->empty()) nominated = nullptr;
  nominated_by_requests_ = nominated != nullptr && NominatedFiltersJudgeByRequests(fw, skip);
  feasible_.clear();
  feasible_rows_.clear();
  taken_.clear();
  const size_t n = candidates.size();
  if (n == 0) return 0;
  const size_t chunks = (n + kNodeChunk - 1) / kNodeChunk;
  if (entries_.size() < n) entries_.resize(n);
  if (chunk_results_.size() < chunks) chunk_results_.resize(chunks);
  filter_error_.store(false, std::memory_order_relaxed);
  const size_t start = next_start_index_ % n;
  const auto wanted_total = static_cast<size_t>(to_find);
  // Filters that read only the rows leave the NodeInfos alone: asking for them would only fill
  // the cache with lines nobody reads (at 50,000 nodes, a miss per node). They may then also
  // judge a chunk's rows together first, unless this cycle times its plugins node by node.
  const bool rows_alone = rows != nullptr && fw.FiltersReadOnlyRows(state, pod, skip);
  // Entry i is candidate `start` + i in every search from `start` over as many candidates.
  const bool in_place =
      kept != nullptr && entries_origin_.count == n && entries_origin_.start == start;
  entries_origin_ = {};
  lent_entries_ = nullptr;
  const FilterJob job{fw,
                      state,
                      pod,
                      skip,
                      candidates,
                      rows,
                      nominated,
                      passed_over,
                      rows_alone,
                      rows_alone && !state.record_plugin_metrics(),
                      /*keep_verdicts=*/!last_search_found_,
                      kept,
                      in_place};
  size_t processed = 0;
  while (processed < n && feasible_.size() < wanted_total) {
    const size_t round = RoundSize(wanted_total - feasible_.size(), processed, n);
    const size_t first = CandidatePosition(start, processed, n);
    // Judging rows together pays where most nodes fit; where none does (a preemptor), each node
    // would be judged twice. The first round goes by the last pod's search, later ones by this.
    const bool rows_first =
        job.rows_first && (processed == 0 ? last_search_found_ : !feasible_.empty());
    pool_->ParallelFor(round, kNodeChunk, [&](size_t begin, size_t end) {
      passed_over == nullptr ? FilterChunk<false>(job, first, rows_first, processed, begin, end)
                             : FilterChunk<true>(job, first, rows_first, processed, begin, end);
    });
    processed += TakeFeasible(processed, round, wanted_total);
  }
  PlaceFeasible(candidates, rows, start);
  next_start_index_ = (start + processed) % n;
  last_search_found_ = !feasible_.empty();
  const bool rejections_read = feasible_.empty() || filter_error_.load(std::memory_order_relaxed);
  if (!job.keep_verdicts && rejections_read) FilterRejectedAgain(job, start, processed);
  if (passed_over != nullptr && feasible_.empty()) {
    FilterPassedOver(fw, state, pod, skip, candidates, rows, start, processed, nominated,
                     *passed_over);
  }
  // A pod that fits somewhere only counts the rejections, unless one of them may be an Error.
  if (rejections_read) CollectRejected(processed, fit_error);
  // Only entries written with kept verdicts are worth having back.
  if (kept == nullptr) lent_entries_ = nullptr;
  lent_origin_ = {start, processed};
  return processed;
}

// Counts the nodes that fit in the round of `round` entries from entry `processed`, in order,
// until `wanted` are feasible, and notes which chunks they come from (PlaceFeasible writes them);
// returns how many of the round's entries that used. Only the per-chunk counts are read here:
// the lists were written by the threads that filtered the chunks, and copying them on this
// thread waited on each of their lines.
size_t ScheduleAlgorithm::TakeFeasible(size_t processed, size_t round, size_t wanted) {
  size_t count = feasible_.size();
  size_t used = 0;
  while (used < round && count < wanted) {
    const size_t chunk = (processed + used) / kNodeChunk;
    const ChunkResult& result = chunk_results_[chunk];
    const size_t take = std::min<size_t>(result.found, wanted - count);
    if (take > 0) taken_.push_back({chunk, count, take});
    count += take;
    // The search stops right after the node that completes it, as a node-by-node reading would.
    used = count == wanted && take > 0 ? result.fits[take - 1] + 1 - processed
                                       : std::min(round, used + kNodeChunk);
  }
  feasible_.resize(count);
  feasible_rows_.resize(count);
  return used;
}

void ScheduleAlgorithm::PlaceFeasible(const std::vector<const framework::NodeInfo*>& candidates,
                                      const framework::NodeRow* rows, size_t start) {
  const size_t n = candidates.size();
  const auto place = [&](size_t begin, size_t end) {
    for (size_t t = begin; t < end; ++t) {
      const TakenChunk& taken = taken_[t];
      const uint32_t* fits = chunk_results_[taken.chunk].fits.data();
      for (size_t k = 0; k < taken.take; ++k) {
        const size_t position = CandidatePosition(start, fits[k], n);
        const framework::NodeInfo* node = candidates[position];
        feasible_[taken.offset + k] = node;
        feasible_rows_[taken.offset + k] = rows != nullptr ? &rows[position] : &node->row();
      }
    }
  };
  // A few chunks are placed faster than the workers are woken.
  constexpr size_t kChunksPerJob = 4;
  if (taken_.size() <= 2 * kChunksPerJob) {
    place(0, taken_.size());
  } else {
    pool_->ParallelFor(taken_.size(), kChunksPerJob, place);
  }
}

// Filters [begin, end) of the round whose first node is candidates[first] (wrapping around, so
// that the per-node loop needs no division), the round's entries starting at entry `processed`;
// fills the chunk's ChunkResult. Two copies, so that a pod without passed-over nodes pays nothing
// for them.
template <bool kPassingOver>
void ScheduleAlgorithm::FilterChunk(const FilterJob& job, size_t first, bool rows_first,
                                    size_t processed, size_t begin, size_t end) {
  const size_t n = job.candidates.size();
  size_t index = first + begin;
  if (index >= n) index -= n;
  // With `rows_first`, the filters judge the chunk's rows together (a call each); only the nodes
  // they may reject, and those with nominated pods, are then filtered one by one.
  std::array<uint8_t, kNodeChunk> passes;
  assert(end - begin <= kNodeChunk);
  if (rows_first) {
    const size_t count = end - begin;
    // The threads take the chunks in turn, so this thread's next chunk is most likely as many
    // chunks on as there are threads: its rows are asked for now, while this chunk's are judged
    // (at 50,000 nodes a row's first read is otherwise a wait on memory).
    const size_t next = index + static_cast<size_t>(pool_->threads()) * kNodeChunk;
    for (size_t k = next; k < std::min(n, next + kNodeChunk); ++k) {
      __builtin_prefetch(job.rows + k);
    }
    const size_t before_wrap = std::min(count, n - index);
    job.fw.ClearFailingRows(job.state, job.pod, job.skip, {job.rows + index, before_wrap},
                            passes.data());
    if (before_wrap < count) {
      job.fw.ClearFailingRows(job.state, job.pod, job.skip, {job.rows, count - before_wrap},
                              passes.data() + before_wrap);
    }
  }
  ChunkResult& result = chunk_results_[(processed + begin) / kNodeChunk];
  uint32_t* const fits = result.fits.data();
  uint32_t found = 0;
  uint64_t failed = 0;
  // The NodeInfos are apart in memory and the first Filter waits on each one's first cache
  // line: asking for it a few nodes ahead overlaps those waits.
  size_t ahead = (index + kPrefetchAhead) % n;
  for (size_t i = begin; i < end; ++i) {
    if (!job.rows_alone && (!kPassingOver || !job.passed_over->Contains(ahead))) {
      __builtin_prefetch(job.candidates[ahead]);
    }
    if (++ahead == n) ahead = 0;
    const size_t position = index;
    if (++index == n) index = 0;
    const auto entry_index = static_cast<uint32_t>(processed + i);
    const bool passed = kPassingOver && job.passed_over->Contains(position);
    if (!passed && rows_first && passes[i - begin] != 0 &&
        (job.nominated == nullptr ||
         job.nominated->ForPosition(position, job.candidates[position]) == nullptr)) {
      fits[found++] = entry_index;
      continue;
    }
    const bool fit = job.keep_verdicts ? JudgeInto(job, passed, position, entries_[entry_index])
                                       : JudgeWithoutKeeping(job, passed, position);
    if (fit) {
      fits[found++] = entry_index;
    } else {
      failed |= uint64_t{1} << (i - begin);
    }
  }
  result.found = found;
  result.failed = failed;
}

// Judges candidate `position` into `entry`; true if it fits. A node `passed` over is rejected
// without its filters (FilterPassedOver judges it when its verdict is read).
bool ScheduleAlgorithm::JudgeInto(const FilterJob& job, bool passed, size_t position,
                                  framework::NodeStatus& entry) {
  const framework::NodeInfo* node = job.candidates[position];
  if (passed) {
    entry.node = node;
    entry.status = Status(framework::Code::kUnschedulableAndUnresolvable);
    return false;
  }
  const auto filter = [&] {
    FilterInto(job.fw, job.state, job.pod, job.skip, job.nominated, job.rows, position, *node,
               entry.status);
  };
  if (job.kept == nullptr) {
    entry.node = node;
    filter();
    return entry.status.IsSuccess();
  }
  const uint64_t stamp = job.nominated == nullptr ? 0 : job.nominated->StampAt(position);
  return job.kept->JudgeInto(position, node, stamp, job.entries_in_place, entry, filter);
}

// JudgeInto for a pod whose rejections are likely not read: the verdict stays on this thread's
// stack. The entries' lines were last written by whichever thread had the chunk before, and
// waiting for them was a tenth of the search at 50,000 nodes.
bool ScheduleAlgorithm::JudgeWithoutKeeping(const FilterJob& job, bool passed, size_t position) {
  if (passed) return false;
  Status verdict;
  FilterInto(job.fw, job.state, job.pod, job.skip, job.nominated, job.rows, position,
             *job.candidates[position], verdict);
  return verdict.IsSuccess();
}

// Judges again, into entries_, the nodes a search without kept verdicts rejected among its first
// `processed` entries (from candidate `start`), for a pod whose rejections are read after all.
// The filters read only the snapshot and the cycle state, so the verdicts are those it had.
void ScheduleAlgorithm::FilterRejectedAgain(const FilterJob& job, size_t start, size_t processed) {
  const size_t n = job.candidates.size();
  pool_->ParallelFor(processed, kNodeChunk, [&](size_t begin, size_t end) {
    for (uint64_t failed = chunk_results_[begin / kNodeChunk].FailedBefore(begin, end); failed != 0;
         failed &= failed - 1) {
      const size_t entry_index = begin + static_cast<size_t>(std::countr_zero(failed));
      const size_t position = CandidatePosition(start, entry_index, n);
      const bool passed = job.passed_over != nullptr && job.passed_over->Contains(position);
      JudgeInto(job, passed, position, entries_[entry_index]);
    }
  });
}

// A whole number of chunks, so that every round starts on a chunk boundary and chunk k of the
// round is chunk_results_[processed / kNodeChunk + k].
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
      const size_t position = CandidatePosition(start, i, n);
      if (!passed_over.Contains(position)) continue;
      framework::NodeStatus& entry = entries_[i];
      FilterInto(fw, state, pod, skip, nominated, rows, position, *entry.node, entry.status);
    }
  });
}

void ScheduleAlgorithm::FilterInto(const runtime::Framework& fw, const framework::CycleState& state,
                                   const framework::PodInfo& pod, const runtime::FilterSkips& skip,
                                   const NominatedPods* nominated, const framework::NodeRow* rows,
                                   size_t position, const framework::NodeInfo& node,
                                   Status& status) {
  // With the snapshot's rows, `position` is the node's snapshot position: neither its row nor its
  // nominations need the NodeInfo, which a node without nominated pods then never touches.
  const framework::NodeRow& row = rows != nullptr ? rows[position] : node.row();
  assert(&row == &node.row());  // a node changed in place must have its row refreshed
  const NominatedPods::Entry* on_node = nominated == nullptr ? nullptr
                                        : rows != nullptr ? nominated->ForPosition(position, &node)
                                                          : nominated->For(&node);
  if (on_node == nullptr) {
    fw.RunFilterInto(state, pod, node, row, skip, status);
  } else {
    RunFiltersWithNominatedInto(fw, state, pod, node, skip, on_node, status,
                                nominated_by_requests_);
  }
  if (status.code() == framework::Code::kError) {
    filter_error_.store(true, std::memory_order_relaxed);
  }
}

void ScheduleAlgorithm::CollectRejected(size_t processed, FitError* fit_error) {
  std::vector<framework::NodeStatus>& rejected = fit_error->node_statuses;
  if (feasible_.empty() && rejected.empty()) {
    // Every node filtered failed: the verdicts are the FitError's as they lie.
    rejected.swap(entries_);
    rejected.resize(processed);
    lent_entries_ = rejected.data();
    entries_.swap(spare_entries_);
    return;
  }
  if (rejected.empty()) rejected.reserve(processed - feasible_.size());
  for (size_t chunk = 0; chunk * kNodeChunk < processed; ++chunk) {
    const size_t base = chunk * kNodeChunk;
    for (uint64_t failed = chunk_results_[chunk].FailedBefore(base, processed); failed != 0;
         failed &= failed - 1) {
      rejected.push_back(std::move(entries_[base + static_cast<size_t>(std::countr_zero(failed))]));
    }
  }
}

void ScheduleAlgorithm::Recycle(std::vector<framework::NodeStatus> statuses) {
  if (lent_entries_ != nullptr && statuses.data() == lent_entries_) {
    // Back as lent: the next search of a pod alike writes only the verdicts that changed.
    spare_entries_ = std::move(entries_);
    entries_ = std::move(statuses);
    entries_origin_ = lent_origin_;
    lent_entries_ = nullptr;
    return;
  }
  lent_entries_ = nullptr;
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
  // Twice the Filter phase's chunk: at 5,000 nodes a pod scores about 500 nodes, and four
  // hand-offs rather than eight were faster (bench/RESULTS.md).
  constexpr size_t kScoreChunk = 2 * kNodeChunk;
  pool_->ParallelFor(m, kScoreChunk, [&](size_t begin, size_t end) {
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

// Highest total wins; ties are broken uniformly at random, as upstream: reservoir sampling, one
// draw for each node that ties the best so far, keeping that node when the number of ties so far
// divides the draw. Only the draws for the final best's ties decide, and the last one that keeps
// its node wins; splitmix64 being a counter, any draw can be made out of turn. So a first pass
// finds the best and counts the draws, and a second walks the best's ties back from the end until
// one keeps its node: half the draws on average, and the same choice.
size_t ScheduleAlgorithm::SelectHost() {
  int64_t best = totals_[0];
  size_t first = 0;
  uint64_t earlier_draws = 0;  // for ties of bests beaten later
  uint64_t ties = 1;
  for (size_t i = 1; i < totals_.size(); ++i) {
    if (totals_[i] > best) {
      best = totals_[i];
      first = i;
      earlier_draws += ties - 1;
      ties = 1;
    } else if (totals_[i] == best) {
      ++ties;
    }
  }
  const uint64_t before_best = random_state_ + earlier_draws * kSplitMixStep;
  random_state_ += (earlier_draws + ties - 1) * kSplitMixStep;
  size_t i = totals_.size();
  for (uint64_t tie = ties; tie >= 2; --tie) {
    do {
      --i;
    } while (totals_[i] != best);
    if (SplitMix(before_best + (tie - 1) * kSplitMixStep) % tie == 0) return i;
  }
  return first;
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
  const size_t excluded = fit_error.node_statuses.size();
  // A pod alike the last ones, which fit nowhere, takes their verdicts where nothing changed.
  FilterVerdicts* kept =
      !last_search_found_ && rows != nullptr &&
              kept_verdicts_.Begin(fw, state, pod, pre.skip_filter, snapshot, nominated)
          ? &kept_verdicts_
          : nullptr;
  const size_t evaluated = FindFeasible(fw, state, pod, pre.skip_filter, candidates, rows, to_find,
                                        nominated, passed_over, kept, &fit_error);
  // The pool's join orders the workers' writes before this read.
  if (filter_error_.load(std::memory_order_relaxed)) {
    for (const auto& node_status : fit_error.node_statuses) {
      if (node_status.status.code() == framework::Code::kError) return node_status.status;
    }
  }
  if (feasible_.empty()) return fit_error;

  ScheduleSuccess success;
  success.feasible_nodes = static_cast<int>(feasible_.size());
  success.evaluated_nodes = static_cast<int>(excluded + evaluated);
  if (feasible_.size() == 1) {
    success.node = feasible_[0];
    return success;
  }
  Status error;
  if (!ScoreFeasible(fw, state, pod, snapshot, &error)) return error;
  success.node = feasible_[SelectHost()];
  return success;
}

}  // namespace kubesched::scheduler
