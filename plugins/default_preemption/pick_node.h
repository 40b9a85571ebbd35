#pragma once

// DefaultPreemption's choice among the candidate nodes (upstream's pickOneNodeForPreemption).

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::plugins::preemption {

// What the choice compares of a candidate's victims. Summed up where they were found (on the
// dry run's threads, while the pods are in cache), so that choosing among hundreds of candidates
// reads no pod.
struct VictimSummary {
  int32_t highest_priority = 0;
  // Each priority shifted by 2^31, so that a few pods of negative priority do not beat fewer of
  // the same.
  int64_t shifted_priority_sum = 0;
  size_t count = 0;
  // The earliest start among the highest-priority victims (Unix nanoseconds, saturated: a pod not
  // started yet is the latest).
  int64_t earliest_top_start = 0;
};

// `victims` is not empty.
VictimSummary SummarizeVictims(absl::Span<const framework::PodInfo* const> victims);

// A node where the preemptor fits once `victims` are gone.
struct Candidate {
  const framework::NodeInfo* node = nullptr;
  // The victims, most important first: [begin, end) of a pool shared by all candidates.
  size_t begin = 0;
  size_t end = 0;
  int pdb_violations = 0;
  VictimSummary victims;
};

// The index of the best candidate: fewest PDB violations, then the lowest priority of its most
// important victim, then the smallest sum of victim priorities, then the fewest victims, then the
// latest start among its highest-priority victims, then the first. `candidates` is not empty.
size_t PickOneNode(absl::Span<const Candidate> candidates);
// The indices of the best `count` candidates (all of them when fewer), best first, in
// PickOneNode's order: its first is PickOneNode's choice.
std::vector<size_t> RankCandidates(absl::Span<const Candidate> candidates, size_t count);

}  // namespace kubesched::plugins::preemption
