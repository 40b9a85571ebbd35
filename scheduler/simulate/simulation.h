#pragma once

// `kubesched simulate` and `kubesched explain` without an API server: load cluster dumps into the
// embedded cluster, run the real scheduler against it with a virtual clock, and report.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "config/config.h"
#include "scheduler/api/decode.h"
#include "scheduler/cluster/embedded_cluster.h"
#include "scheduler/core/algorithm.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/quota/quota_tracker.h"
#include "scheduler/simulate/group_report.h"
#include "scheduler/util/clock.h"

namespace kubesched::scheduler {

struct PodResult {
  std::string namespace_name;
  std::string name;
  std::optional<std::string> node;
  std::optional<std::string> nominated_node;
  std::optional<std::string> policy;
  std::optional<std::string> queue;
  int attempts = 0;
  std::optional<std::string> message;
  bool skipped = false;
};

struct NodeResult {
  std::string name;
  api::ResourceList allocatable;
  api::ResourceList requested;
  int pods = 0;
};

struct PreemptionResult {
  std::string preemptor;  // "namespace/name"
  std::string node;
  std::vector<std::string> victims;
};

// The NodeResourcesFit Watermark strategy's state on the final (simulate) or current (explain)
// cluster: the pool of the pod explained (simulate: of a pod without tolerations), that pool's
// allocated ratio, and the mode the pod would be scored in.
struct WatermarkReport {
  std::string mode;            // "spread" or "stack"
  double allocated_ratio = 0;  // see NodeResourcesFit's class comment for the formula
  std::string pool = "default";
};

struct LatencySummary {
  double p50 = 0;
  double p90 = 0;
  double p99 = 0;
};

struct SimulationReport {
  int pods = 0;
  int scheduled = 0;
  int unschedulable = 0;
  int skipped = 0;
  int preempted = 0;
  double seconds = 0;
  // Wall time from reading the cluster file to the first scheduling attempt: decoding, the
  // embedded cluster, the scheduler and its cache filled with the initial objects.
  double load_seconds = 0;
  double pods_per_second = 0;
  LatencySummary attempt_latency;
  // Set when the first profile (in configuration order) that configures NodeResourcesFit with
  // the Watermark strategy exists.
  std::optional<WatermarkReport> watermark;
  std::vector<PodResult> pod_results;
  std::vector<PreemptionResult> preemptions;
  std::vector<NodeResult> nodes;
  // Every queue at the end: max, used and budget spent (by the virtual clock).
  std::vector<quota::QueueUsage> queues;
  // Typed queue limits that match no node of the cluster (UnmatchedTypedLimit::Message).
  std::vector<std::string> typed_limit_warnings;
  // Every gang (pod group) with a pod in the simulation, and every PodGroup of the dump.
  std::vector<GroupResult> groups;
  // Input objects that were bad and skipped (the CLI's exit code reflects them).
  std::vector<api::DecodeProblem> problems;
  // The final scrape of the run's metrics (Prometheus text format); set when asked for.
  std::string metrics_text;
};

// Drives `scheduler` until no pod can make progress: nothing in activeQ or backoffQ, no bind in
// flight, no event undelivered. Backoff waits advance the virtual clock instead of sleeping.
// `after_attempt` (optional) is called after every scheduling attempt, on the driving thread.
void DriveToQuiescence(cluster::EmbeddedCluster& cluster, Scheduler& scheduler,
                       DeferredBindExecutor& binds, util::FakeClock& clock,
                       const std::function<void()>& after_attempt = nullptr);

// How simulate is getting on: pods tried at least once (or bound) of those it has to place.
using ProgressCallback = std::function<void(int done, int total)>;

struct SimulationInput {
  std::string cluster_path;
  std::optional<std::string> workload_path;
  uint64_t seed = 1;
  int threads = 0;               // 0 = min(hardware threads, config parallelism)
  bool collect_metrics = false;  // record metrics and put the final scrape in metrics_text
  // Objects already decoded (a live cluster's, or a dump decoded once for --compare), used
  // instead of the files when set; their decoding problems are the caller's to report.
  std::optional<std::vector<api::Object>> cluster_objects;
  std::optional<std::vector<api::Object>> workload_objects;
  ProgressCallback progress;  // optional; called now and then on the driving thread
};

// Fatal errors (unreadable or malformed file, a scheduler that cannot be built from `config`) are
// returned; bad objects are skipped and listed in report.problems.
absl::StatusOr<SimulationReport> RunSimulation(const SimulationInput& input,
                                               const config::Configuration& config);

struct ExplainInput {
  std::string cluster_path;
  std::string pod_path;
  uint64_t seed = 1;
  // Explain under this per-pod policy, as if the pod carried kubesched.io/policy: NAME.
  std::optional<std::string> policy;
};

struct FilterResult {
  std::string plugin;
  framework::Code code = framework::Code::kSuccess;
  std::vector<std::string> reasons;
};

struct ExplainedNode {
  std::string name;
  bool feasible = false;
  std::vector<FilterResult> filters;
  std::vector<ScoreDetail> scores;
  int64_t total = 0;
};

struct ExplainReport {
  std::string pod;  // "ns/name"
  std::optional<std::string> policy;
  // The binding that chose `policy` (`binding 2 "batch-namespaces"`); none when the pod's
  // annotation did.
  std::optional<std::string> policy_binding;
  std::vector<ExplainedNode> nodes;
  std::optional<std::string> selected;
  std::optional<std::string> message;  // FailedScheduling message when nothing fits
  // When nothing fits but preemption would help: the node and the pods it would preempt.
  std::optional<std::string> preemption_node;
  std::vector<std::string> preemption_victims;
  // Set when the pod's profile scores NodeResourcesFit with the Watermark strategy.
  std::optional<WatermarkReport> watermark;
  // The pod's leaf queue (absent when it names no usable queue) and the usage of it and every
  // ancestor, leaf first: the headroom the pod has.
  std::optional<std::string> queue;
  std::vector<quota::QueueUsage> queue_path;
  // Typed queue limits that match no node of the cluster (UnmatchedTypedLimit::Message).
  std::vector<std::string> typed_limit_warnings;
  // The pod's group when it is a gang member: its members, its need and the room for it.
  std::optional<GangExplanation> group;
  std::vector<api::DecodeProblem> problems;
};

// The pod file must hold exactly one Pod. A pod the cluster holds (same namespace and name) is
// explained in place of the cluster's copy, and a bound pod as if it were pending and not yet on
// its node: the verdicts are those `run` would give it now.
absl::StatusOr<ExplainReport> RunExplain(const ExplainInput& input,
                                         const config::Configuration& config);

// The same on objects already decoded: `cluster_objects` are created in dependency order
// (duplicates become problems), then `pod` is explained. `registry` (optional) replaces the
// binary's plugins (tests add their own).
absl::StatusOr<ExplainReport> ExplainObjects(const std::vector<api::Object>& cluster_objects,
                                             const api::Pod& pod,
                                             const config::Configuration& config, uint64_t seed = 1,
                                             const plugins::RegistryMap* registry = nullptr);

}  // namespace kubesched::scheduler
