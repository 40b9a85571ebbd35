#include "plugins/default_preemption/pick_node.h"

#include <cstdint>
#include <limits>

#include "absl/time/time.h"
#include "plugins/default_preemption/victims.h"

namespace kubesched::plugins::preemption {
namespace {

using Victims = absl::Span<const framework::PodInfo* const>;

int64_t FewestPdbViolations(const Candidate& c, Victims /*victims*/) { return -c.pdb_violations; }

int64_t LowestHighestPriority(const Candidate& /*c*/, Victims victims) {
  return -static_cast<int64_t>(victims.front()->priority);
}

int64_t SmallestPrioritySum(const Candidate& /*c*/, Victims victims) {
  // Shifted to be >= 0: a few pods of negative priority must not beat fewer of the same.
  constexpr int64_t kShift = int64_t{std::numeric_limits<int32_t>::max()} + 1;
  int64_t sum = 0;
  for (const framework::PodInfo* victim : victims) sum += victim->priority + kShift;
  return -sum;
}

int64_t FewestVictims(const Candidate& /*c*/, Victims victims) {
  return -static_cast<int64_t>(victims.size());
}

// Upstream's GetEarliestPodStartTime: the earliest start among the highest-priority victims; the
// later it is, the better.
int64_t LatestStartTime(const Candidate& /*c*/, Victims victims) {
  int32_t highest = victims.front()->priority;
  absl::Time earliest = victims.front()->start_time;
  for (const framework::PodInfo* victim : victims) {
    if (victim->priority > highest) {
      highest = victim->priority;
      earliest = victim->start_time;
    } else if (victim->priority == highest && victim->start_time < earliest) {
      earliest = victim->start_time;
    }
  }
  return absl::ToUnixNanos(earliest);  // saturates: a pod not started yet is the latest
}

}  // namespace

size_t PickOneNode(absl::Span<const Candidate> candidates,
                   const std::vector<const framework::PodInfo*>& victim_pool) {
  using ScoreFn = int64_t (*)(const Candidate&, Victims);
  constexpr ScoreFn kScores[] = {FewestPdbViolations, LowestHighestPriority, SmallestPrioritySum,
                                 FewestVictims, LatestStartTime};
  // Indices of the candidates still tied; each score keeps those with the highest value.
  std::vector<size_t> tied(candidates.size());
  for (size_t i = 0; i < tied.size(); ++i) tied[i] = i;
  std::vector<size_t> best;
  for (const ScoreFn score : kScores) {
    best.clear();
    int64_t max_score = std::numeric_limits<int64_t>::min();
    for (const size_t i : tied) {
      const Candidate& c = candidates[i];
      const int64_t value = score(c, Victims(victim_pool.data() + c.begin, c.end - c.begin));
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
