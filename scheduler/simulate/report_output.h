#pragma once

// How simulate and explain print their reports: JSON with the documented field names (tools and
// tests rely on them) or aligned tables for people.

#include <string>
#include <vector>

#include "scheduler/simulate/simulation.h"

namespace kubesched::scheduler {

std::string SimulationJson(const SimulationReport& report);
std::string SimulationTable(const SimulationReport& report);
std::string ExplainJson(const ExplainReport& report);
// Every node, one line each, best first (--nodes all).
std::string ExplainTable(const ExplainReport& report);
// The default: the chosen node, the FailedScheduling-style reason histogram, the `top` feasible
// nodes by total with every score plugin's score, and the failed nodes grouped by reason.
std::string ExplainSummaryTable(const ExplainReport& report, int top);
// What both tables end with: the selected node (or why none fits and what preemption would do),
// the policy, the watermark, the queue path and the pod's group.
std::string ExplainFooter(const ExplainReport& report);
// "K/N nodes are available: 3 Insufficient cpu, 2 node(s) had untolerated taint(s)." counting
// each failed node's first rejecting filter, as kube-scheduler's FailedScheduling message does.
std::string ExplainHistogram(const ExplainReport& report);

// Left-aligned columns, each as wide as its widest cell; trailing blanks trimmed.
std::string AlignedColumns(const std::vector<std::vector<std::string>>& rows);

}  // namespace kubesched::scheduler
