#pragma once

// simulate --compare: the same input scheduled under two configurations, and what differs.

#include <optional>
#include <string>
#include <vector>

#include "scheduler/api/resource.h"
#include "scheduler/simulate/simulation.h"

namespace kubesched::scheduler {

struct PodChange {
  std::string pod;                    // "namespace/name"
  std::optional<std::string> before;  // its node under the first configuration
  std::optional<std::string> after;   // and under the second
};

struct NodeChange {
  std::string name;
  int pods_before = 0;
  int pods_after = 0;
  api::ResourceList requested_before;
  api::ResourceList requested_after;
  api::ResourceList allocatable;
};

struct QueueChange {
  std::string path;
  api::ResourceList used_before;
  api::ResourceList used_after;
};

struct SimulationComparison {
  std::string before_name;  // what the configurations are called in the output (file names)
  std::string after_name;
  int scheduled_before = 0;
  int scheduled_after = 0;
  int unschedulable_before = 0;
  int unschedulable_after = 0;
  std::vector<PodChange> moved;              // placed by both, on different nodes
  std::vector<PodChange> now_unschedulable;  // placed by the first only
  std::vector<PodChange> now_schedulable;    // placed by the second only
  std::vector<NodeChange> nodes;             // nodes whose pods or requests differ
  std::vector<QueueChange> queues;           // queues whose usage differs
};

// Both reports must come from the same input (pods are matched by namespace and name).
SimulationComparison CompareSimulations(const SimulationReport& before,
                                        const SimulationReport& after);

std::string ComparisonTable(const SimulationComparison& comparison);
std::string ComparisonJson(const SimulationComparison& comparison);

}  // namespace kubesched::scheduler
