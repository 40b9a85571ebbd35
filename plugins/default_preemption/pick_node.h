#pragma once

// DefaultPreemption's choice among the candidate nodes (upstream's pickOneNodeForPreemption).

#include <cstddef>
#include <vector>

#include "absl/types/span.h"
#include "scheduler/framework/plugin.h"

namespace kubesched::plugins::preemption {

// A node where the preemptor fits once `victims` are gone.
struct Candidate {
  const framework::NodeInfo* node = nullptr;
  // The victims, most important first: [begin, end) of a pool shared by all candidates.
  size_t begin = 0;
  size_t end = 0;
  int pdb_violations = 0;
};

// The index of the best candidate: fewest PDB violations, then the lowest priority of its most
// important victim, then the smallest sum of victim priorities (each shifted by 2^31 so that
// negative priorities count as upstream), then the fewest victims, then the latest start among
// its highest-priority victims, then the first. `candidates` is not empty.
size_t PickOneNode(absl::Span<const Candidate> candidates,
                   const std::vector<const framework::PodInfo*>& victim_pool);

}  // namespace kubesched::plugins::preemption
