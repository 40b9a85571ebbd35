#include "plugins/default_preemption/pick_node.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "absl/time/time.h"
#include "plugins/default_preemption/victims.h"

namespace kubesched::plugins::preemption {
VictimSummary SummarizeVictims(absl::Span<const framework::PodInfo* const> victims) {
  constexpr int64_t kShift = int64_t{std::numeric_limits<int32_t>::max()} + 1;
  VictimSummary summary;
  summary.count = victims.size();
  summary.highest_priority = victims.front()->priority;
  absl::Time earliest = victims.front()->start_time;
  for (const framework::PodInfo* victim : victims) {
    summary.shifted_priority_sum += victim->priority + kShift;
    // Upstream's GetEarliestPodStartTime.
    if (victim->priority > summary.highest_priority) {
      summary.highest_priority = victim->priority;
      earliest = victim->start_time;
    } else if (victim->priority == summary.highest_priority && victim->start_time < earliest) {
      earliest = victim->start_time;
    }
  }
  summary.earliest_top_start = absl::ToUnixNanos(earliest);
  return summary;
}

namespace {

// Each score: the higher, the better.
int64_t FewestPdbViolations(const Candidate& c) { return -c.pdb_violations; }
int64_t LowestHighestPriority(const Candidate& c) { return -int64_t{c.victims.highest_priority}; }
int64_t SmallestPrioritySum(const Candidate& c) { return -c.victims.shifted_priority_sum; }
int64_t FewestVictims(const Candidate& c) { return -static_cast<int64_t>(c.victims.count); }
int64_t LatestStartTime(const Candidate& c) { return c.victims.earliest_top_start; }

using ScoreFn = int64_t (*)(const Candidate&);
constexpr ScoreFn kScores[] = {FewestPdbViolations, LowestHighestPriority, SmallestPrioritySum,
                               FewestVictims, LatestStartTime};

}  // namespace

std::vector<size_t> RankCandidates(absl::Span<const Candidate> candidates, size_t count) {
  std::vector<size_t> order(candidates.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  count = std::min(count, order.size());
  // Lexicographic on the scores, then the first found: PickOneNode's tie-breaking.
  const auto better = [&](size_t a, size_t b) {
    for (const ScoreFn score : kScores) {
      const int64_t left = score(candidates[a]);
      const int64_t right = score(candidates[b]);
      if (left != right) return left > right;
    }
    return a < b;
  };
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(count), order.end(),
                    better);
  order.resize(count);
  return order;
}

size_t PickOneNode(absl::Span<const Candidate> candidates) {
  // Indices of the candidates still tied; each score keeps those with the highest value.
  std::vector<size_t> tied(candidates.size());
  for (size_t i = 0; i < tied.size(); ++i) tied[i] = i;
  std::vector<size_t> best;
  for (const ScoreFn score : kScores) {
    best.clear();
    int64_t max_score = std::numeric_limits<int64_t>::min();
    for (const size_t i : tied) {
      const int64_t value = score(candidates[i]);
      if (value > max_score) {
        max_score = value;
        best.clear();
      }
      if (value == max_score) best.push_back(i);
    }
    if (best.size() == 1) return best.front();
    tied.swap(best);
  }
  return tied.front();
}

}  // namespace kubesched::plugins::preemption
