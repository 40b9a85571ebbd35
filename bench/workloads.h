#pragma once

// Generators of scheduler_perf-like workloads (upstream test/integration/scheduler_perf): the
// cluster file holds the nodes and the initial pods already bound; the workload file holds the
// measured pods, pending.

#include <cstdint>
#include <string>
#include <vector>

namespace kubesched::bench {

// Upstream's pod templates (config/pod-*.yaml, templates/pod-*.yaml): each a pause container
// requesting 100m cpu and 500Mi, plus what the name says (the priority templates request more).
enum class PodShape {
  kDefault,                 // pod-default.yaml
  kRequiredAntiAffinity,    // pod-with-pod-anti-affinity.yaml: one per hostname
  kRequiredAffinity,        // pod-with-pod-affinity.yaml: together in a zone
  kPreferredAffinity,       // pod-with-preferred-pod-affinity.yaml: by hostname, weight 1
  kPreferredAntiAffinity,   // pod-with-preferred-pod-anti-affinity.yaml: by hostname, weight 1
  kNodeAffinity,            // pod-with-node-affinity.yaml: zone in (zone1, zone2)
  kTopologySpread,          // pod-with-topology-spreading.yaml: maxSkew 5 over zones
  kSpreadApplication,       // the source article's application: preferred anti-affinity to its
                            // own pods by hostname and by zone
  kLowPriority,             // pod-low-priority.yaml: 900m cpu, 500Mi, priority unset (0)
  kHighPriority,            // pod-high-priority.yaml: 3000m cpu, 500Mi, priority 10
  kPolicy,                  // pod-default.yaml under the per-pod policy "basic" (kPolicyConfig),
                            // whose node-affinity template is filled from the pod's args
  kInlineHostnameAffinity,  // pod-default.yaml with the node affinity kPolicy's template gives,
                            // written in the pod: kPolicy's baseline
};

// The configuration of the policy workload: one policy with a template that requires the node
// label the pod's args name (every node has it), so the policy is looked up and its template
// filled for every pod, and its node affinity checked on every node.
inline constexpr char kPolicyConfig[] = R"(policies:
  - name: basic
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
          - matchExpressions: [{key: "{{.Label}}", operator: Exists}]
)";

// The volume each pod of a workload mounts (upstream's createPods with
// persistentVolumeTemplatePath / persistentVolumeClaimTemplatePath): none, or a claim bound to a
// volume of its own, created with the pod.
enum class PodVolume {
  kNone,
  kInTreeAws,  // templates/pv-aws.yaml: an in-tree awsElasticBlockStore volume
  kCsi,        // templates/pv-csi.yaml: ebs.csi.aws.com; nodes get a CSINode allowing 39 volumes
};

struct WorkloadSpec {
  std::string name{};
  int nodes = 0;
  int init_pods = 0;
  int measured_pods = 0;
  PodShape init_shape = PodShape::kDefault;
  PodShape measured_shape = PodShape::kDefault;
  // Values of topology.kubernetes.io/zone, given to nodes in turn; empty = no zone label.
  std::vector<std::string> zones{};
  int node_cpu = 4;  // node-default.yaml's
  // Configuration sections (YAML) beyond upstream's defaults; empty = the defaults.
  std::string config_yaml{};
  PodVolume volume = PodVolume::kNone;
  // > 0: the measured pods form gangs of this many (an implicit group each, by annotations, with
  // minMember the gang's size), created in order.
  int gang_size = 0;
  // How many measured pods must end up scheduled; -1: all of them.
  int expect_scheduled = -1;
  // The scale shape (bench/scale_shape.h) instead of upstream's node and pod templates; the
  // shapes and zones above are then unused.
  bool scale_shape = false;
  // Left out of a run of every workload (they take minutes); run by name with --workload.
  bool opt_in = false;
  // > 0: every node publishes this many GPUs as devices, and each measured pod claims some of
  // them through a claim template (bench/dra_shape.h).
  int dra_gpus_per_node = 0;
};

// The workloads `kubesched_bench` knows, with upstream's sizes (the 5000-node performance cases).
const std::vector<WorkloadSpec>& Workloads();

struct GeneratedFiles {
  std::string cluster_path{};
  std::string workload_path{};
};

// Writes the workload's cluster and workload files (JSON Lists) into `directory`. Initial pods
// are bound round-robin (one per node while there are fewer pods than nodes, which keeps every
// shape's constraints satisfied); measured pods are pending.
GeneratedFiles Generate(const WorkloadSpec& spec, const std::string& directory);

}  // namespace kubesched::bench
