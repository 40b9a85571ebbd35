#pragma once

// What simulate's table ends with, and how much of the per-pod listing it prints: a report of
// 60,000 pods stays readable when the listing is bounded and the summary says why pods wait.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scheduler/simulate/simulation.h"

namespace kubesched::scheduler {

// --pods-output: every pod (the default), only those left without a node, or none.
enum class PodsOutput { kAll, kPending, kNone };
std::optional<PodsOutput> ParsePodsOutput(std::string_view text);

// Keeps the pod results `output` asks for; the counts of the summary are left as they are.
void LimitPodResults(PodsOutput output, SimulationReport* report);

// The reasons pods were left unschedulable, each counted once per pod: the parts of
// kube-scheduler's "0/N nodes are available: 3 Insufficient cpu, ..." message without their node
// counts, or a message of another shape whole. Most pods first, then by reason.
struct ReasonCount {
  std::string reason;
  int pods = 0;
};
std::vector<ReasonCount> UnschedulableReasons(const std::vector<PodResult>& pods);

// Per queue (pods without a queue under "-"): pods, scheduled, pending.
struct QueueCount {
  std::string queue;
  int pods = 0;
  int scheduled = 0;
  int pending = 0;
};
std::vector<QueueCount> QueueCounts(const std::vector<PodResult>& pods);

// The reason histogram and the per-queue table, each preceded by a blank line; computed on
// every pod of `report` (call before LimitPodResults).
std::string SimulationSummaryTable(const SimulationReport& report);

}  // namespace kubesched::scheduler
