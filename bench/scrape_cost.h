#pragma once

// What one /metrics scrape costs while many pods wait: the state collector walks the pending pods
// (per-queue pending counts) on every scrape, under the scheduling queue's lock for the copy.

namespace kubesched::bench {

// Builds a scheduler holding `pending` unschedulable pods spread over ten quota queues, scrapes
// its metrics `runs` times and prints the median scrape time and the time per pending pod.
// 0 on success; 1 (with a message on stderr) if the scrape does not show the pods pending.
int RunScrapeCost(int pending, int runs);

}  // namespace kubesched::bench
