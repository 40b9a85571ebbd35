#pragma once

// The source article's comparison: InterPodAffinity's two-phase score (PreScore once per pod,
// then a map look-up per node) against the straightforward per-node loop over every existing pod
// and term, on 300 nodes with 15,000 existing pods and 10 to 10,000 of them in the affinity
// group. Checks that both give the same raw scores, then prints the time per pod of each.

namespace kubesched::bench {

// Prints the table; 0 on success, 1 if the two scores ever disagree.
int RunAffinityComparison();

}  // namespace kubesched::bench
