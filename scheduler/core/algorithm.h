#pragma once

// Picking a node for one pod: PreFilter, Filter over (a sample of) the nodes in parallel,
// PreScore, Score and NormalizeScore over the feasible ones, weighted sum, selection.

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "scheduler/core/filter_verdicts.h"
#include "scheduler/core/fit_error.h"
#include "scheduler/core/nominated_pods.h"
#include "scheduler/framework/node_positions.h"
#include "scheduler/framework/snapshot.h"
#include "scheduler/runtime/framework.h"
#include "scheduler/util/parallel.h"

namespace kubesched::scheduler {

// std::allocator, except that a vector's resize leaves new elements default-initialised: a list
// about to be overwritten (the feasible nodes) is then not written twice.
template <typename T>
struct DefaultInitAllocator : std::allocator<T> {
  DefaultInitAllocator() = default;
  template <typename U>
  explicit DefaultInitAllocator(const DefaultInitAllocator<U>& /*other*/) {}
  template <typename U, typename... Args>
  void construct(U* place, Args&&... args) {
    if constexpr (sizeof...(Args) == 0) {
      ::new (static_cast<void*>(place)) U;
    } else {
      ::new (static_cast<void*>(place)) U(std::forward<Args>(args)...);
    }
  }
};

// Upstream's numFeasibleNodesToFind: all nodes below 100; otherwise `percentage` of them (0 =
// adaptive: 50 - nodes/125, at least 5), and never fewer than 100.
int NumFeasibleNodesToFind(int percentage, int num_all_nodes);

struct ScheduleSuccess {
  const framework::NodeInfo* node = nullptr;
  int evaluated_nodes = 0;
  int feasible_nodes = 0;
};

// Error statuses (a plugin returned Error) are reported as a framework::Status with kError.
using ScheduleOutcome = std::variant<ScheduleSuccess, FitError, framework::Status>;

// Everything explain shows for one pod.
struct ScoreDetail {
  std::string plugin;
  int64_t raw = 0;
  int64_t normalized = 0;
  int64_t weight = 0;
};
struct NodeExplanation {
  const framework::NodeInfo* node = nullptr;
  std::vector<framework::Status> filters;  // one per filter plugin, stamped
  bool feasible = false;
  std::vector<ScoreDetail> scores;
  int64_t total = 0;
};
struct Explanation {
  framework::Status pre_filter_status;
  std::vector<NodeExplanation> nodes;  // snapshot order
  const framework::NodeInfo* selected = nullptr;
  std::string message;  // FailedScheduling message when nothing fits
  // When no node fits and preemption would help: the node it would nominate and its victims.
  std::optional<std::string> preemption_node;
  std::vector<std::string> preemption_victims;
  // Owns what the statuses' reasons may point into (plugins keep per-pod messages there).
  std::shared_ptr<framework::CycleState> state;
};

// Owns the per-cycle buffers and the round-robin start index, so one instance serves one
// scheduling thread. Not thread-safe.
class ScheduleAlgorithm {
 public:
  ScheduleAlgorithm(util::WorkerPool* pool, int global_percentage, uint64_t seed);

  // `nominated` (may be null): pods nominated to nodes, which filters count (see
  // RunFiltersWithNominated). `nominated_node`: the node the pod itself is nominated to (by an
  // earlier preemption), tried first: if it fits, it is chosen without looking at other nodes.
  ScheduleOutcome Schedule(const runtime::Framework& fw, framework::CycleState& state,
                           const framework::PodInfo& pod, const framework::Snapshot& snapshot,
                           const NominatedPods* nominated = nullptr,
                           std::string_view nominated_node = {});
  // The PreFilter skips of the last Schedule call (for the PostFilter host).
  const runtime::FilterSkips& last_skip_filter() const { return last_skip_filter_; }

  // Gives back a FitError's node statuses once read, so that the next pod that fits nowhere
  // reuses their buffer.
  void Recycle(std::vector<framework::NodeStatus> statuses);

  // Runs every filter on every node (no early stop) and scores every feasible node (no
  // sampling). Does not change the round-robin start index.
  Explanation Explain(const runtime::Framework& fw, framework::CycleState& state,
                      const framework::PodInfo& pod, const framework::Snapshot& snapshot);

 private:
  // The snapshot's nodes, or those PreFilter allowed (kept in restricted_candidates_).
  const std::vector<const framework::NodeInfo*>& CandidateNodes(
      const runtime::PreFilterSummary& summary, const framework::Snapshot& snapshot);
  // `rows` (may be null): the rows of `candidates` in the same order (the snapshot's table when
  // the candidates are the snapshot's nodes), read instead of each NodeInfo's. `passed_over`
  // (null: none): candidates by index that some plugin's PreFilter is sure its Filter rejects;
  // they get a verdict of their own only when no node is feasible. `kept` (null: none): verdicts
  // kept for pods alike, begun for this one; given only to a search that keeps its verdicts.
  // Returns how many candidates it evaluated; `fit_error` gets their rejections only when none fits
  // or a filter erred.
  size_t FindFeasible(const runtime::Framework& fw, const framework::CycleState& state,
                      const framework::PodInfo& pod, const runtime::FilterSkips& skip,
                      const std::vector<const framework::NodeInfo*>& candidates,
                      const framework::NodeRow* rows, int to_find, const NominatedPods* nominated,
                      const framework::NodePositions* passed_over, FilterVerdicts* kept,
                      FitError* fit_error);
  // What every chunk of one FindFeasible call reads (see FindFeasible).
  struct FilterJob {
    const runtime::Framework& fw;
    const framework::CycleState& state;
    const framework::PodInfo& pod;
    const runtime::FilterSkips& skip;
    const std::vector<const framework::NodeInfo*>& candidates;
    const framework::NodeRow* rows;
    const NominatedPods* nominated;
    const framework::NodePositions* passed_over;
    // Every running filter reads only the rows (Framework::FiltersReadOnlyRows).
    bool rows_alone;
    // They may judge a chunk's rows together first (Framework::ClearFailingRows).
    bool rows_first;
    // Rejections are written to entries_ as they are found. Otherwise only the chunks' failure
    // bits are, and FilterRejectedAgain writes them if they are read after all: chosen when the
    // last pod fit somewhere, as most pods that follow one that did also do.
    bool keep_verdicts;
    // With kept verdicts, the verdicts kept for pods alike (FilterVerdicts), or null.
    FilterVerdicts* kept;
    // entries_ holds the verdicts of the last search, which kept its verdicts, where it wrote them
    // (FilterVerdicts::JudgeInto's `in_place`).
    bool entries_in_place;
  };
  template <bool kPassingOver>
  void FilterChunk(const FilterJob& job, size_t first, bool rows_first, size_t processed,
                   size_t begin, size_t end);
  size_t TakeFeasible(size_t processed, size_t round, size_t wanted);
  // Writes the nodes TakeFeasible counted into feasible_ and feasible_rows_, in parallel.
  void PlaceFeasible(const std::vector<const framework::NodeInfo*>& candidates,
                     const framework::NodeRow* rows, size_t start);
  // How many nodes the next round of FindFeasible filters, `wanted` more being wanted after
  // `processed` of `n` candidates.
  size_t RoundSize(size_t wanted, size_t processed, size_t n) const;
  // Runs every filter on the first `processed` candidates (from `start`) that were passed over.
  void FilterPassedOver(const runtime::Framework& fw, const framework::CycleState& state,
                        const framework::PodInfo& pod, const runtime::FilterSkips& skip,
                        const std::vector<const framework::NodeInfo*>& candidates,
                        const framework::NodeRow* rows, size_t start, size_t processed,
                        const NominatedPods* nominated,
                        const framework::NodePositions& passed_over);
  bool JudgeInto(const FilterJob& job, bool passed, size_t position, framework::NodeStatus& entry);
  bool JudgeWithoutKeeping(const FilterJob& job, bool passed, size_t position);
  void FilterRejectedAgain(const FilterJob& job, size_t start, size_t processed);
  // Runs the pod's filters on `node`, candidate `position`, into `status`; notes an Error in
  // filter_error_. `rows`: as FindFeasible's.
  void FilterInto(const runtime::Framework& fw, const framework::CycleState& state,
                  const framework::PodInfo& pod, const runtime::FilterSkips& skip,
                  const NominatedPods* nominated, const framework::NodeRow* rows, size_t position,
                  const framework::NodeInfo& node, framework::Status& status);
  // Moves the verdicts of the first `processed` entries that failed into `fit_error`.
  void CollectRejected(size_t processed, FitError* fit_error);
  // Scores feasible_ into totals_; false (with `error`) if PreScore failed. With `keep_raw`
  // (explain), raw_scores_ keeps each plugin's scores from before normalization.
  bool ScoreFeasible(const runtime::Framework& fw, framework::CycleState& state,
                     const framework::PodInfo& pod, const framework::Snapshot& snapshot,
                     framework::Status* error, bool keep_raw = false);
  size_t SelectHost();

  util::WorkerPool* pool_;
  int global_percentage_;
  uint64_t random_state_;  // splitmix64's (see SelectHost)
  size_t next_start_index_ = 0;
  // Whether the last FindFeasible found a node: the next one's first round then lets the filters
  // judge its chunks' rows together (FilterJob::rows_first).
  bool last_search_found_ = true;

  // Nodes per work item handed to a filter or score worker: large enough that taking one (an
  // atomic add the threads contend for) costs little beside judging it, small enough to balance
  // two to sixteen threads. A chunk's failures are the bits of a uint64_t.
  static constexpr size_t kNodeChunk = 64;
  // What the Filter phase found in one chunk of kNodeChunk entries, written by the thread that
  // filtered it. Each on cache lines of its own: the threads take neighbouring chunks.
  struct alignas(64) ChunkResult {
    uint64_t failed;                        // bit k: the chunk's entry k failed
    uint32_t found;                         // how many of its entries fit,
    std::array<uint32_t, kNodeChunk> fits;  // and which (entry indices, in order)

    // The failure bits of the entries before `processed`, the chunk's first entry being `base`.
    uint64_t FailedBefore(size_t base, size_t processed) const {
      const size_t count = processed - base;
      return count < kNodeChunk ? failed & ((uint64_t{1} << count) - 1U) : failed;
    }
  };

  // Reused across cycles to avoid allocation per pod.
  // The Filter phase's verdicts in the order filtered (rejections only are sure to be written),
  // and each chunk's results. A search writes the results of every chunk it filters, and reads
  // no other.
  std::vector<framework::NodeStatus> entries_;
  std::vector<ChunkResult> chunk_results_;
  // Whether a filter returned an Error in the last FindFeasible (set by the workers), so that a
  // pod that fits nowhere is not searched for errors node by node.
  std::atomic<bool> filter_error_{false};
  // Set by FindFeasible for its pod: nodes with nominated pods are judged on the nominations' sums
  // (RunFiltersWithNominatedInto's `by_requests`).
  bool nominated_by_requests_ = false;
  // The verdicts of the last searches that kept theirs, for the next pod alike.
  FilterVerdicts kept_verdicts_;
  // A buffer given back by Recycle, which replaces entries_ when entries_ went to a FitError.
  std::vector<framework::NodeStatus> spare_entries_;
  // What a buffer of entries holds: the verdicts the last search wrote with kept verdicts, from
  // candidate `start` on, over `count` entries (0: none).
  struct EntriesOrigin {
    size_t start = 0;
    size_t count = 0;
  };
  EntriesOrigin entries_origin_;
  // The entries the last search, with kept verdicts, gave its FitError whole, and what they hold:
  // given back intact by Recycle, they become entries_ again, so that the next search alike
  // rewrites only what changed.
  const framework::NodeStatus* lent_entries_ = nullptr;
  EntriesOrigin lent_origin_;
  // A chunk's feasible nodes that the search takes: the first `take` of its list, placed from
  // feasible_[offset].
  struct TakenChunk {
    size_t chunk;
    size_t offset;
    size_t take;
  };
  std::vector<TakenChunk> taken_;
  std::vector<const framework::NodeInfo*, DefaultInitAllocator<const framework::NodeInfo*>>
      feasible_;
  // The row of each feasible node (the snapshot's table where the Filter phase read it).
  std::vector<const framework::NodeRow*, DefaultInitAllocator<const framework::NodeRow*>>
      feasible_rows_;
  std::vector<const framework::NodeInfo*> restricted_candidates_;
  std::vector<std::vector<int64_t>> plugin_scores_;
  std::vector<std::vector<int64_t>> raw_scores_;
  std::vector<int64_t> totals_;
  std::vector<bool> skip_score_;
  runtime::FilterSkips last_skip_filter_;
};

}  // namespace kubesched::scheduler
