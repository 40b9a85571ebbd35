#pragma once

// Generators of scheduler_perf-like workloads (upstream test/integration/scheduler_perf): the
// cluster file holds the nodes and the initial pods already bound; the workload file holds the
// measured pods, pending.

#include <cstdint>
#include <string>
#include <vector>

namespace kubesched::bench {

struct WorkloadSpec {
  std::string name;
  int nodes = 0;
  int init_pods = 0;
  int measured_pods = 0;
};

// The workloads `kubesched_bench` knows, with upstream's sizes.
const std::vector<WorkloadSpec>& Workloads();

struct GeneratedFiles {
  std::string cluster_path;
  std::string workload_path;
};

// Writes the workload's cluster and workload files (JSON Lists) into `directory`.
GeneratedFiles Generate(const WorkloadSpec& spec, const std::string& directory);

}  // namespace kubesched::bench
