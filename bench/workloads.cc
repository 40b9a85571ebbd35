#include "bench/workloads.h"

#include <fstream>

#include "absl/strings/str_cat.h"
#include "bench/dra_shape.h"
#include "bench/scale_shape.h"

namespace kubesched::bench {
namespace {

constexpr char kSetupNamespace[] = "sched-setup";
constexpr char kTestNamespace[] = "sched-test";
// The measured pods' queue (root.sched-test) holds 600 cpu; the initial pods' is unlimited.
constexpr char kGangQuotaConfig[] = R"(queues:
  autoCreate: true
  tree:
  - name: sched-test
    max: {cpu: "600"}
)";

// Upstream's node-default.yaml: 110 pods, 4 cpu, 32Gi; labelNodePrepareStrategy adds the zone.
std::string Node(int index, const std::vector<std::string>& zones, int cpu) {
  std::string labels = absl::StrCat(R"("kubernetes.io/hostname":"node-)", index, "\"");
  if (!zones.empty()) {
    absl::StrAppend(&labels, R"(,"topology.kubernetes.io/zone":")", zones[index % zones.size()],
                    "\"");
  }
  return absl::StrCat(
      R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-)", index, R"(","labels":{)",
      labels, R"(}},"spec":{},"status":{"capacity":{"pods":"110","cpu":")", cpu,
      R"(","memory":"32Gi"},"allocatable":{"pods":"110","cpu":")", cpu, R"(","memory":"32Gi"}}})");
}

// A pod-affinity term over both benchmark namespaces, as upstream's templates write it.
std::string Term(const std::string& color, const std::string& topology_key) {
  return absl::StrCat(R"({"labelSelector":{"matchLabels":{"color":")", color,
                      R"("}},"topologyKey":")", topology_key, R"(","namespaces":[")",
                      kTestNamespace, R"(",")", kSetupNamespace, R"("]})");
}

std::string Preferred(const std::string& term) {
  return absl::StrCat(R"([{"weight":1,"podAffinityTerm":)", term, "}]");
}

// The labels and the spec fields (after the containers) that make each shape.
struct ShapeParts {
  std::string labels{};
  std::string spec{};
  std::string cpu = "100m";
  std::string annotations{};
};

ShapeParts PartsOf(PodShape shape) {
  constexpr char kHostname[] = "kubernetes.io/hostname";
  constexpr char kZone[] = "topology.kubernetes.io/zone";
  switch (shape) {
    case PodShape::kDefault:
      return {};
    case PodShape::kRequiredAntiAffinity:
      return {R"({"color":"green"})",
              absl::StrCat(R"(,"affinity":{"podAntiAffinity":{)",
                           R"("requiredDuringSchedulingIgnoredDuringExecution":[)",
                           Term("green", kHostname), "]}}")};
    case PodShape::kRequiredAffinity:
      return {R"({"color":"blue"})",
              absl::StrCat(R"(,"affinity":{"podAffinity":{)",
                           R"("requiredDuringSchedulingIgnoredDuringExecution":[)",
                           Term("blue", kZone), "]}}")};
    case PodShape::kPreferredAffinity:
      return {R"({"color":"red"})",
              absl::StrCat(R"(,"affinity":{"podAffinity":{)",
                           R"("preferredDuringSchedulingIgnoredDuringExecution":)",
                           Preferred(Term("red", kHostname)), "}}")};
    case PodShape::kPreferredAntiAffinity:
      return {R"({"color":"yellow"})",
              absl::StrCat(R"(,"affinity":{"podAntiAffinity":{)",
                           R"("preferredDuringSchedulingIgnoredDuringExecution":)",
                           Preferred(Term("yellow", kHostname)), "}}")};
    case PodShape::kNodeAffinity:
      return {"", absl::StrCat(R"(,"affinity":{"nodeAffinity":{)",
                               R"("requiredDuringSchedulingIgnoredDuringExecution":)",
                               R"({"nodeSelectorTerms":[{"matchExpressions":[{"key":")", kZone,
                               R"(","operator":"In","values":["zone1","zone2"]}]}]}}})")};
    case PodShape::kSpreadApplication:
      return {R"({"app":"spread"})",
              absl::StrCat(R"(,"affinity":{"podAntiAffinity":{)",
                           R"("preferredDuringSchedulingIgnoredDuringExecution":[)",
                           R"({"weight":1,"podAffinityTerm":{"labelSelector":{"matchLabels":)",
                           R"({"app":"spread"}},"topologyKey":")", kHostname, R"("}},)",
                           R"({"weight":1,"podAffinityTerm":{"labelSelector":{"matchLabels":)",
                           R"({"app":"spread"}},"topologyKey":")", kZone, R"("}}]}})")};
    case PodShape::kTopologySpread:
      return {R"({"color":"blue"})",
              absl::StrCat(R"(,"topologySpreadConstraints":[{"maxSkew":5,"topologyKey":")", kZone,
                           R"(","whenUnsatisfiable":"DoNotSchedule",)",
                           R"("labelSelector":{"matchLabels":{"color":"blue"}}}])")};
    // Upstream's preemption templates (scheduler_perf templates/pod-low-priority.yaml and
    // pod-high-priority.yaml; their limits equal the requests and do not matter here). Four low
    // pods take 3.6 of a node's 4 cpu, so a high pod (3 cpu) fits nowhere until three of them go.
    case PodShape::kLowPriority:
      return {"", "", "900m"};
    case PodShape::kHighPriority:
      return {"", R"(,"priority":10)", "3000m"};
    case PodShape::kInlineHostnameAffinity:
      return {"", absl::StrCat(R"(,"affinity":{"nodeAffinity":{)",
                               R"("requiredDuringSchedulingIgnoredDuringExecution":)",
                               R"({"nodeSelectorTerms":[{"matchExpressions":[{"key":")", kHostname,
                               R"(","operator":"Exists"}]}]}}})")};
    case PodShape::kPolicy:
      return {"", "", "100m",
              absl::StrCat(R"({"kubesched.io/policy":"basic","kubesched.io/policy-args":)",
                           R"("{\"Label\":\")", kHostname, R"(\"}"})")};
  }
  return {};
}

// A claim and the volume it is bound to, as upstream's createPods pre-binds them (pvc.yaml and
// pv-aws.yaml / pv-csi.yaml: 1Gi, ReadOnlyMany).
std::vector<std::string> BoundVolume(const std::string& claim, const std::string& namespace_name,
                                     PodVolume volume) {
  const std::string pv = absl::StrCat("pv-", namespace_name, "-", claim);
  const std::string source =
      volume == PodVolume::kCsi
          ? absl::StrCat(R"("csi":{"driver":"ebs.csi.aws.com","volumeHandle":")", pv, R"("})")
          : absl::StrCat(R"("awsElasticBlockStore":{"volumeID":")", pv, R"("})");
  return {absl::StrCat(R"({"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":")", pv,
                       R"("},"spec":{"capacity":{"storage":"1Gi"},"accessModes":["ReadOnlyMany"],)",
                       R"("persistentVolumeReclaimPolicy":"Retain",)", source,
                       R"(,"claimRef":{"namespace":")", namespace_name, R"(","name":")", claim,
                       R"("}},"status":{"phase":"Bound"}})"),
          absl::StrCat(R"({"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":")",
                       claim, R"(","namespace":")", namespace_name,
                       R"(","annotations":{"pv.kubernetes.io/bind-completed":"true"}},)",
                       R"("spec":{"accessModes":["ReadOnlyMany"],"resources":{"requests":)",
                       R"({"storage":"1Gi"}},"volumeName":")", pv,
                       R"("},"status":{"phase":"Bound"}})")};
}

// upstream's nodeAllocatableStrategy for the CSI workload: every node takes 39 EBS volumes.
std::string CsiNode(int index) {
  return absl::StrCat(
      R"({"apiVersion":"storage.k8s.io/v1","kind":"CSINode","metadata":{"name":"node-)", index,
      R"("},"spec":{"drivers":[{"name":"ebs.csi.aws.com","nodeID":"node-)", index,
      R"(","allocatable":{"count":39}}]}})");
}

std::string Pod(const std::string& name, const std::string& namespace_name, PodShape shape,
                const std::string& node_name, PodVolume volume = PodVolume::kNone,
                const std::string& gang_annotations = "", const std::string& extra_spec = "") {
  ShapeParts parts = PartsOf(shape);
  parts.spec += extra_spec;
  if (!gang_annotations.empty()) parts.annotations = gang_annotations;
  std::string metadata =
      absl::StrCat(R"("name":")", name, R"(","namespace":")", namespace_name, "\"");
  if (!parts.labels.empty()) absl::StrAppend(&metadata, R"(,"labels":)", parts.labels);
  if (!parts.annotations.empty()) {
    absl::StrAppend(&metadata, R"(,"annotations":)", parts.annotations);
  }
  std::string spec = absl::StrCat(R"("schedulerName":"kubesched","containers":[{"name":"pause",)"
                                  R"("image":"registry.k8s.io/pause:3.10","resources":{"requests":)"
                                  R"({"cpu":")",
                                  parts.cpu, R"(","memory":"500Mi"}}}])", parts.spec);
  if (!node_name.empty()) absl::StrAppend(&spec, R"(,"nodeName":")", node_name, "\"");
  if (volume != PodVolume::kNone) {
    absl::StrAppend(&spec, R"(,"volumes":[{"name":"data","persistentVolumeClaim":{"claimName":")",
                    name, R"(-pvc"}}])");
  }
  return absl::StrCat(R"({"apiVersion":"v1","kind":"Pod","metadata":{)", metadata, R"(},"spec":{)",
                      spec, R"(},"status":{"phase":")", node_name.empty() ? "Pending" : "Running",
                      "\"}}");
}

std::string Namespace(const std::string& name) {
  return absl::StrCat(R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":")", name,
                      "\"}}");
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

// SchedulingBasic's 5000 nodes and 1000 initial pods, with the measured pods in gangs of `size`.
WorkloadSpec Gangs(const char* name, int size, int measured, const char* config = "",
                   int expect_scheduled = -1) {
  WorkloadSpec spec{.name = name, .nodes = 5000, .init_pods = 1000, .measured_pods = measured};
  spec.config_yaml = config;
  spec.gang_size = size;
  spec.expect_scheduled = expect_scheduled;
  return spec;
}

// SchedulingBasic's pods on a cluster of the scale shape: 4 initial pods per node, one measured
// pod per node.
WorkloadSpec Shaped(const char* name, int nodes, bool opt_in) {
  WorkloadSpec spec{.name = name, .nodes = nodes, .init_pods = 4 * nodes, .measured_pods = nodes};
  spec.scale_shape = true;
  spec.opt_in = opt_in;
  return spec;
}

}  // namespace

const std::vector<WorkloadSpec>& Workloads() {
  using enum PodShape;
  static const auto* workloads = new std::vector<WorkloadSpec>{
      {"SchedulingBasic", 5000, 1000, 10000, kDefault, kDefault, {}},
      // SchedulingBasic with every measured pod under a per-pod policy with a template: the cost
      // of choosing the policy and filling its template (compare with SchedulingBasic).
      {"SchedulingBasicPolicy", 5000, 1000, 10000, kDefault, kPolicy, {}, 4, kPolicyConfig},
      // The same node affinity written in each pod, without a policy: SchedulingBasicPolicy's
      // baseline for the cost of the policy look-up and the template filling alone.
      {"SchedulingBasicInlineAffinity", 5000, 1000, 10000, kDefault, kInlineHostnameAffinity, {}},
      {"SchedulingPodAntiAffinity",
       5000,
       1000,
       2000,
       kRequiredAntiAffinity,
       kRequiredAntiAffinity,
       {}},
      {"SchedulingPodAffinity", 5000, 5000, 5000, kRequiredAffinity, kRequiredAffinity, {"zone1"}},
      {"SchedulingPreferredPodAffinity",
       5000,
       5000,
       5000,
       kPreferredAffinity,
       kPreferredAffinity,
       {}},
      {"SchedulingPreferredPodAntiAffinity",
       5000,
       5000,
       5000,
       kPreferredAntiAffinity,
       kPreferredAntiAffinity,
       {}},
      {"TopologySpreading",
       5000,
       5000,
       5000,
       kDefault,
       kTopologySpread,
       {"moon-1", "moon-2", "moon-3"}},
      {"SchedulingNodeAffinity", 5000, 5000, 10000, kNodeAffinity, kNodeAffinity, {"zone1"}},
      // The source article's end-to-end case: a 1,000-pod application spread by preferred
      // anti-affinity on 300 nodes that already run 15,000 pods.
      {"ArticleSpreadApplication",
       300,
       15000,
       1000,
       kDefault,
       kSpreadApplication,
       {"zone-a", "zone-b", "zone-c"},
       64},
      // The memory goal: 5000 nodes holding 60,000 pods (12 per node), plus 1000 measured.
      {"Memory60k", 5000, 60000, 1000, kDefault, kDefault, {}},
      // Upstream's PreemptionBasic at 5000 nodes (default_preemption/performance-config.yaml; the
      // case upstream comments out as too slow): 4 low-priority pods per node, then 5000
      // high-priority pods, each of which must preempt 3 low pods on a node of its own (a node
      // where one already went keeps 1 low pod plus the high one, 3.9 cpu). A measured pod counts
      // as scheduled once it is bound: simulate runs until the victims are deleted and every
      // preemptor is bound, and pods/s is measured pods bound per second.
      {"Preemption", 5000, 20000, 5000, kLowPriority, kHighPriority, {}},
      // Upstream's volume workloads (performance-config.yaml, 5000Nodes): every pod mounts a
      // claim bound to a volume of its own, in-tree AWS EBS or CSI (with per-node CSI limits).
      {"SchedulingInTreePVs",
       5000,
       2000,
       1000,
       kDefault,
       kDefault,
       {},
       4,
       "",
       PodVolume::kInTreeAws},
      {"SchedulingCSIPVs", 5000, 2000, 1000, kDefault, kDefault, {}, 4, "", PodVolume::kCsi},
      // Gangs (kubesched): SchedulingBasic's pods in implicit groups of 8 and of 64, all placed;
      // then groups of 8 under a queue whose max holds 600 of the 1000 cpu they ask for, so that
      // 750 groups are placed whole and 500 wait on group quota.
      Gangs("GangScheduling8", 8, 10000),
      // 156 whole groups: a partial 157th would wait for the members it lacks.
      Gangs("GangScheduling64", 64, 9984),
      Gangs("GangScheduling8Quota", 8, 10000, kGangQuotaConfig, 6000),
      // The scale steps (bench/scale_shape.h): how the cost per pod grows with the cluster.
      // 5000 nodes / 20,000 initial / 10,000 measured pods, then 20k and 50k nodes with 4 initial
      // and 1 measured pod per node. The two large ones run only when named.
      [] {
        WorkloadSpec spec = Shaped("SchedulingBasicShaped5k", 5000, false);
        spec.measured_pods = 10000;
        return spec;
      }(),
      Shaped("SchedulingBasic20k", 20000, true),
      Shaped("SchedulingBasic50k", 50000, true),
      // Dynamic Resource Allocation (kubesched): 5000 nodes with 8 GPUs each published as
      // devices, of three models; each measured pod claims 1 to 8 GPUs of one model through a
      // ResourceClaimTemplate (bench/dra_shape.h): 22,479 of the 40,000 in all.
      [] {
        WorkloadSpec spec{
            .name = "SchedulingDRA", .nodes = 5000, .init_pods = 1000, .measured_pods = 5000};
        spec.dra_gpus_per_node = 8;
        return spec;
      }(),
  };
  return *workloads;
}

GeneratedFiles Generate(const WorkloadSpec& spec, const std::string& directory) {
  std::vector<std::string> cluster = {Namespace(kSetupNamespace), Namespace(kTestNamespace)};
  for (int i = 0; i < spec.nodes; ++i) {
    cluster.push_back(spec.scale_shape ? ShapedNode(i) : Node(i, spec.zones, spec.node_cpu));
    if (spec.volume == PodVolume::kCsi) cluster.push_back(CsiNode(i));
    if (spec.dra_gpus_per_node > 0) cluster.push_back(DraNodeSlice(i, spec.dra_gpus_per_node));
  }
  if (spec.dra_gpus_per_node > 0) {
    for (std::string& object : DraClassAndTemplates(kTestNamespace)) {
      cluster.push_back(std::move(object));
    }
  }
  // Claims and volumes of every pod are in the cluster from the start, as upstream creates them
  // before their pods.
  const auto add_volume = [&](const std::string& pod, const char* namespace_name) {
    if (spec.volume == PodVolume::kNone) return;
    for (auto& object : BoundVolume(pod + "-pvc", namespace_name, spec.volume)) {
      cluster.push_back(std::move(object));
    }
  };
  for (int i = 0; i < spec.init_pods; ++i) {
    const std::string name = absl::StrCat("init-pod-", i);
    add_volume(name, kSetupNamespace);
    const std::string node = absl::StrCat("node-", i % spec.nodes);
    cluster.push_back(
        spec.scale_shape
            ? ShapedPod(name, kSetupNamespace, i, node, IsShapedGpuNode(i % spec.nodes))
            : Pod(name, kSetupNamespace, spec.init_shape, node, spec.volume));
  }
  std::vector<std::string> workload;
  workload.reserve(spec.measured_pods);
  for (int i = 0; i < spec.measured_pods; ++i) {
    const std::string name = absl::StrCat("pod-", i);
    add_volume(name, kTestNamespace);
    std::string gang;
    if (spec.gang_size > 0) {
      gang = absl::StrCat(R"({"kubesched.io/pod-group":"gang-)", i / spec.gang_size,
                          R"(","kubesched.io/pod-group-min-member":")", spec.gang_size, "\"}");
    }
    const std::string claims = spec.dra_gpus_per_node > 0 ? DraPodClaims(i) : "";
    workload.push_back(spec.scale_shape ? ShapedPod(name, kTestNamespace, i, "", false)
                                        : Pod(name, kTestNamespace, spec.measured_shape, "",
                                              spec.volume, gang, claims));
  }
  GeneratedFiles files{absl::StrCat(directory, "/", spec.name, "-cluster.json"),
                       absl::StrCat(directory, "/", spec.name, "-workload.json")};
  WriteList(files.cluster_path, cluster);
  WriteList(files.workload_path, workload);
  return files;
}

}  // namespace kubesched::bench
