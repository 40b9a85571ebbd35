#include "bench/workloads.h"

#include <fstream>

#include "absl/strings/str_cat.h"

namespace kubesched::bench {
namespace {

// Upstream's node-default.yaml: 110 pods, 4 cpu, 32Gi.
std::string Node(int index) {
  return absl::StrCat(
      R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-)", index,
      R"(","labels":{"kubernetes.io/hostname":"node-)", index,
      R"("}},"spec":{},"status":{"capacity":{"pods":"110","cpu":"4","memory":"32Gi"},)",
      R"("allocatable":{"pods":"110","cpu":"4","memory":"32Gi"}}})");
}

// Upstream's pod-default.yaml: one pause container requesting 100m cpu and 500Mi memory.
std::string Pod(const std::string& name, const std::string& node_name) {
  std::string spec = R"("schedulerName":"kubesched","containers":[{"name":"pause",)"
                     R"("image":"registry.k8s.io/pause:3.10","resources":{"requests":)"
                     R"({"cpu":"100m","memory":"500Mi"}}}])";
  if (!node_name.empty()) absl::StrAppend(&spec, R"(,"nodeName":")", node_name, "\"");
  return absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")", name,
                      R"(","namespace":"sched-perf"},"spec":{)", spec, R"(},"status":{"phase":")",
                      node_name.empty() ? "Pending" : "Running", "\"}}");
}

void WriteList(const std::string& path, const std::vector<std::string>& items) {
  std::ofstream out(path);
  out << R"({"apiVersion":"v1","kind":"List","items":[)";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out << ",\n";
    out << items[i];
  }
  out << "]}\n";
}

}  // namespace

const std::vector<WorkloadSpec>& Workloads() {
  static const auto* workloads = new std::vector<WorkloadSpec>{
      {"SchedulingBasic", 5000, 1000, 10000},
  };
  return *workloads;
}

GeneratedFiles Generate(const WorkloadSpec& spec, const std::string& directory) {
  std::vector<std::string> cluster = {
      R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"sched-perf"}})"};
  for (int i = 0; i < spec.nodes; ++i) cluster.push_back(Node(i));
  // Initial pods are placed round-robin, as a scheduler spreading them would.
  for (int i = 0; i < spec.init_pods; ++i) {
    cluster.push_back(Pod(absl::StrCat("init-pod-", i), absl::StrCat("node-", i % spec.nodes)));
  }
  std::vector<std::string> workload;
  workload.reserve(spec.measured_pods);
  for (int i = 0; i < spec.measured_pods; ++i) workload.push_back(Pod(absl::StrCat("pod-", i), ""));
  GeneratedFiles files{absl::StrCat(directory, "/", spec.name, "-cluster.json"),
                       absl::StrCat(directory, "/", spec.name, "-workload.json")};
  WriteList(files.cluster_path, cluster);
  WriteList(files.workload_path, workload);
  return files;
}

}  // namespace kubesched::bench
