#include "scheduler/api/decode.h"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"

namespace kubesched::api {
namespace {

// --- Fixtures ---------------------------------------------------------------------------------

constexpr std::string_view kFullPodJson = R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {
    "name": "web-1", "namespace": "prod", "uid": "u-1", "resourceVersion": "42",
    "labels": {"app": "web", "tier": "front"},
    "annotations": {"kubesched.io/policy": "gpu"},
    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web",
                         "uid": "rs-1", "controller": true}],
    "creationTimestamp": "2024-05-01T10:00:00Z",
    "deletionTimestamp": "2024-05-01T11:00:00.5+02:00"
  },
  "spec": {
    "containers": [
      {"name": "app",
       "resources": {"requests": {"cpu": "250m", "memory": "1Gi", "nvidia.com/gpu": 2},
                     "limits": {"cpu": 1, "memory": "2Gi"}},
       "ports": [{"containerPort": 8080, "hostPort": 80, "hostIP": "10.0.0.1", "protocol": "UDP"},
                 {"containerPort": 9090}]},
      {"name": "side", "resources": {"requests": {"memory": "0"}}}
    ],
    "initContainers": [{"name": "init", "restartPolicy": "Always",
                        "resources": {"requests": {"cpu": "1"}}}],
    "overhead": {"cpu": "100m"},
    "nodeSelector": {"disk": "ssd"},
    "affinity": {
      "nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
          {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b", "a"]},
                                {"key": "cores", "operator": "Gt", "values": ["4"]}],
           "matchFields": [{"key": "metadata.name", "operator": "NotIn",
                            "values": ["bad-node"]}]}]},
        "preferredDuringSchedulingIgnoredDuringExecution": [
          {"weight": 10, "preference": {"matchExpressions": [{"key": "disk",
                                                               "operator": "Exists"}]}}]
      },
      "podAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": [
          {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone",
           "namespaces": ["prod", "shared"]}]
      },
      "podAntiAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 50, "podAffinityTerm": {
          "labelSelector": {"matchExpressions": [{"key": "app", "operator": "NotIn",
                                                  "values": ["web"]}]},
          "namespaceSelector": {}, "topologyKey": "kubernetes.io/hostname",
          "matchLabelKeys": ["pod-template-hash"], "mismatchLabelKeys": ["tenant"]}}]
      }
    },
    "tolerations": [
      {"key": "gpu", "operator": "Exists", "effect": "NoSchedule"},
      {"key": "node.kubernetes.io/not-ready", "operator": "Equal", "value": "x",
       "effect": "NoExecute", "tolerationSeconds": 300}
    ],
    "topologySpreadConstraints": [{"maxSkew": 2, "topologyKey": "zone",
      "whenUnsatisfiable": "ScheduleAnyway", "labelSelector": {"matchLabels": {"app": "web"}},
      "minDomains": 3, "nodeAffinityPolicy": "Ignore", "nodeTaintsPolicy": "Honor",
      "matchLabelKeys": ["version"]}],
    "priority": 1000, "priorityClassName": "high", "preemptionPolicy": "Never",
    "schedulerName": "kubesched", "nodeName": "node-1", "hostNetwork": true
  },
  "status": {"phase": "Running",
             "conditions": [{"type": "PodScheduled", "status": "False",
                             "reason": "Unschedulable", "message": "0/3 nodes"}],
             "nominatedNodeName": "node-2", "startTime": "2024-05-01T10:00:05Z"}
})";

// The same pod as kubectl would print it in YAML.
constexpr std::string_view kFullPodYaml = R"(
apiVersion: v1
kind: Pod
metadata:
  name: web-1
  namespace: prod
  uid: u-1
  resourceVersion: "42"
  labels:
    app: web
    tier: front
  annotations:
    kubesched.io/policy: gpu
  ownerReferences:
  - apiVersion: apps/v1
    kind: ReplicaSet
    name: web
    uid: rs-1
    controller: true
  creationTimestamp: "2024-05-01T10:00:00Z"
  deletionTimestamp: 2024-05-01T11:00:00.5+02:00
spec:
  containers:
  - name: app
    resources:
      requests:
        cpu: 250m
        memory: 1Gi
        nvidia.com/gpu: 2
      limits:
        cpu: 1
        memory: 2Gi
    ports:
    - containerPort: 8080
      hostPort: 80
      hostIP: 10.0.0.1
      protocol: UDP
    - containerPort: 9090
  - name: side
    resources:
      requests:
        memory: "0"
  initContainers:
  - name: init
    restartPolicy: Always
    resources: {requests: {cpu: "1"}}
  overhead:
    cpu: 100m
  nodeSelector:
    disk: ssd
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms:
        - matchExpressions:
          - {key: zone, operator: In, values: [b, a]}
          - key: cores
            operator: Gt
            values: ["4"]
          matchFields:
          - key: metadata.name
            operator: NotIn
            values: [bad-node]
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 10
        preference:
          matchExpressions:
          - key: disk
            operator: Exists
    podAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector:
          matchLabels:
            app: db
        topologyKey: zone
        namespaces: [prod, shared]
    podAntiAffinity:
      preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 50
        podAffinityTerm:
          labelSelector:
            matchExpressions:
            - key: app
              operator: NotIn
              values: [web]
          namespaceSelector: {}
          topologyKey: kubernetes.io/hostname
          matchLabelKeys: [pod-template-hash]
          mismatchLabelKeys: [tenant]
  tolerations:
  - key: gpu
    operator: Exists
    effect: NoSchedule
  - key: node.kubernetes.io/not-ready
    operator: Equal
    value: x
    effect: NoExecute
    tolerationSeconds: 300
  topologySpreadConstraints:
  - maxSkew: 2
    topologyKey: zone
    whenUnsatisfiable: ScheduleAnyway
    labelSelector:
      matchLabels:
        app: web
    minDomains: 3
    nodeAffinityPolicy: Ignore
    nodeTaintsPolicy: Honor
    matchLabelKeys: [version]
  priority: 1000
  priorityClassName: high
  preemptionPolicy: Never
  schedulerName: kubesched
  nodeName: node-1
  hostNetwork: true
status:
  phase: Running
  conditions:
  - type: PodScheduled
    status: "False"
    reason: Unschedulable
    message: 0/3 nodes
  nominatedNodeName: node-2
  startTime: "2024-05-01T10:00:05Z"
)";

constexpr std::string_view kClusterYaml = R"(---
apiVersion: v1
kind: Node
metadata:
  name: node-1
  labels: {zone: a}
spec:
  unschedulable: true
  taints:
  - {key: gpu, value: "true", effect: NoSchedule}
status:
  capacity: {cpu: "8", memory: 32Gi, pods: "110"}
  allocatable: {cpu: 7500m, memory: 30Gi, pods: "110"}
  conditions:
  - {type: Ready, status: "True"}
---
# an empty document between separators is skipped
---
apiVersion: v1
kind: Namespace
metadata:
  name: prod
  labels: {team: search}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 100000
globalDefault: false
preemptionPolicy: Never
description: important things
---
apiVersion: v1
kind: ConfigMap
metadata: {name: policies, namespace: kube-system}
data:
  config.yaml: "a: b"
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web-pdb, namespace: prod}
spec:
  minAvailable: 50%
  selector:
    matchLabels: {app: web}
status:
  disruptionsAllowed: 1
  currentHealthy: 3
  desiredHealthy: 2
  expectedPods: 3
  disruptedPods:
    web-b: "2024-05-01T10:00:00Z"
    web-a: "2024-05-01T10:00:00Z"
---
apiVersion: metrics.k8s.io/v1beta1
kind: NodeMetrics
metadata: {name: node-1}
timestamp: "2024-05-01T10:00:00Z"
window: 30s
usage: {cpu: 1500m, memory: 10Gi}
)";

// --- Helpers ----------------------------------------------------------------------------------

DecodedObjects MustDecode(std::string_view text, std::string_view source = "test") {
  absl::StatusOr<DecodedObjects> decoded = DecodeObjects(text, source);
  INFO(decoded.status().ToString());
  REQUIRE(decoded.ok());
  return *std::move(decoded);
}

std::string ProblemsText(const DecodedObjects& decoded) {
  std::vector<std::string> lines;
  for (const auto& p : decoded.problems) lines.push_back(p.ToString());
  return absl::StrJoin(lines, "\n");
}

template <typename T>
T Only(const DecodedObjects& decoded) {
  INFO(ProblemsText(decoded));
  REQUIRE(decoded.problems.empty());
  REQUIRE(decoded.objects.size() == 1);
  REQUIRE(std::holds_alternative<T>(decoded.objects[0]));
  return std::get<T>(decoded.objects[0]);
}

std::string Text(Symbol s) { return std::string(SymbolText(s)); }

std::string Res(const ResourceList& list) {
  std::vector<std::string> parts;
  list.ForEachNonZero([&](ResourceId id, int64_t amount) {
    parts.push_back(std::string(ResourceName(id)) + "=" + FormatAmount(id, amount));
  });
  return absl::StrJoin(parts, ",");
}

std::string Str(const LabelSet& labels) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : labels.pairs()) parts.push_back(Text(k) + "=" + Text(v));
  std::sort(parts.begin(), parts.end());
  return absl::StrJoin(parts, ",");
}

std::string Str(const std::vector<Symbol>& symbols) {
  std::vector<std::string> parts;
  for (Symbol s : symbols) parts.push_back(Text(s));
  return absl::StrJoin(parts, "|");
}

std::string Str(const Requirement& r) {
  return absl::StrCat(Text(r.key), " op", static_cast<int>(r.op), " [", Str(r.values), "] #",
                      r.number, r.valid ? "" : " INVALID");
}

std::string Str(const LabelSelector& s) {
  std::vector<std::string> parts;
  for (const auto& r : s.requirements) parts.push_back(Str(r));
  return absl::StrCat("{", absl::StrJoin(parts, "; "), "}");
}

std::string Str(const std::optional<LabelSelector>& s) { return s ? Str(*s) : "none"; }

std::string Str(const NodeSelectorTerm& t) {
  std::vector<std::string> parts;
  for (const auto& r : t.match_expressions) parts.push_back(Str(r));
  for (const auto& f : t.match_fields) {
    parts.push_back(absl::StrCat(f.field, " op", static_cast<int>(f.op), " ",
                                 absl::StrJoin(f.values, "|"), f.valid ? "" : " INVALID"));
  }
  return absl::StrCat("(", absl::StrJoin(parts, "; "), ")");
}

std::string Str(const PodAffinityTerm& t) {
  return absl::StrCat(Str(t.label_selector), " ns=", Str(t.namespaces),
                      " nssel=", Str(t.namespace_selector), " topo=", Text(t.topology_key),
                      " mlk=", Str(t.match_label_keys), " mmlk=", Str(t.mismatch_label_keys));
}

std::string Str(const std::optional<PodAffinity>& a) {
  if (!a) return "none";
  std::string out;
  for (const auto& t : a->required) absl::StrAppend(&out, "req ", Str(t), "\n");
  for (const auto& w : a->preferred)
    absl::StrAppend(&out, "pref ", w.weight, " ", Str(w.term), "\n");
  return out;
}

std::string Str(const std::optional<absl::Time>& t) {
  return t ? absl::FormatTime(absl::RFC3339_full, *t, absl::UTCTimeZone()) : "none";
}

std::string Str(const Container& c) {
  std::string out =
      absl::StrCat(c.name, " req=", Res(c.requests), " lim=", Res(c.limits), " cpu?",
                   c.requests_cpu, " mem?", c.requests_memory, " restart=", c.restart_policy);
  for (const auto& p : c.ports) {
    absl::StrAppend(&out, " port=", p.container_port, "/", p.host_port, "/", p.host_ip, "/",
                    static_cast<int>(p.protocol));
  }
  return out;
}

std::string AffinityText(const SharedOptional<Affinity>& affinity) {
  if (!affinity) return "none";
  std::string out;
  if (const auto& na = affinity->node_affinity) {
    if (na->required) {
      for (const auto& t : na->required->terms) absl::StrAppend(&out, "node req ", Str(t), "\n");
    }
    for (const auto& p : na->preferred) {
      absl::StrAppend(&out, "node pref ", p.weight, " ", Str(p.preference), "\n");
    }
  }
  absl::StrAppend(&out, "pod ", Str(affinity->pod_affinity), "anti ",
                  Str(affinity->pod_anti_affinity));
  return out;
}

// Every decoded field of a pod as text, so that two decodings can be compared in one CHECK.
std::string Fingerprint(const Pod& pod) {
  const auto& m = pod.meta;
  std::string out = absl::StrCat(m.name, " ns=", m.namespace_name, "/", Text(m.namespace_symbol),
                                 " uid=", m.uid, " rv=", m.resource_version,
                                 " labels=", Str(m.labels), " created=", Str(m.creation_timestamp),
                                 " deleted=", Str(m.deletion_timestamp), "\n");
  for (const auto& [k, v] : m.annotations) absl::StrAppend(&out, "ann ", k, "=", v, "\n");
  for (const auto& o : m.owner_references) {
    absl::StrAppend(&out, "owner ", o.api_version, " ", o.kind, " ", o.name, " ", o.uid, " ",
                    o.controller, "\n");
  }
  for (const auto& c : pod.spec.containers) absl::StrAppend(&out, "c ", Str(c), "\n");
  for (const auto& c : pod.spec.init_containers) absl::StrAppend(&out, "init ", Str(c), "\n");
  absl::StrAppend(&out, "overhead=", Res(pod.spec.overhead),
                  " nodeSelector=", Str(pod.spec.node_selector), "\n",
                  AffinityText(pod.spec.affinity));
  for (const auto& t : pod.spec.tolerations) {
    absl::StrAppend(&out, "tol ", t.key, " ", static_cast<int>(t.op), " ", t.value, " ",
                    static_cast<int>(t.effect), " ", t.toleration_seconds.value_or(-1), "\n");
  }
  for (const auto& c : pod.spec.topology_spread_constraints) {
    absl::StrAppend(&out, "spread ", c.max_skew, " ", Text(c.topology_key), " ",
                    static_cast<int>(c.when_unsatisfiable), " ", Str(c.label_selector), " ",
                    c.min_domains.value_or(-1), " ",
                    c.node_affinity_policy ? static_cast<int>(*c.node_affinity_policy) : -1, " ",
                    c.node_taints_policy ? static_cast<int>(*c.node_taints_policy) : -1, " ",
                    Str(c.match_label_keys), "\n");
  }
  const auto& s = pod.spec;
  absl::StrAppend(&out, "prio=", s.priority.value_or(-1), " class=", s.priority_class_name,
                  " preempt=", s.preemption_policy ? static_cast<int>(*s.preemption_policy) : -1,
                  " sched=", s.scheduler_name, " node=", s.node_name, " hostNet=", s.host_network,
                  "\n");
  absl::StrAppend(&out, "phase=", static_cast<int>(pod.status.phase),
                  " nominated=", pod.status.nominated_node_name,
                  " start=", Str(pod.status.start_time));
  for (const auto& c : pod.status.conditions) {
    absl::StrAppend(&out, "\ncond ", c.type, " ", c.status, " ", c.reason, " ", c.message);
  }
  return out;
}

// --- Input shapes -----------------------------------------------------------------------------

TEST_CASE("a kind: List decodes every item in order", "[api]") {
  const DecodedObjects decoded = MustDecode(R"({"apiVersion": "v1", "kind": "List", "items": [
    {"kind": "Node", "metadata": {"name": "n1"}},
    {"kind": "Pod", "metadata": {"name": "p1", "namespace": "ns"}},
    {"kind": "Namespace", "metadata": {"name": "ns"}}]})");
  INFO(ProblemsText(decoded));
  REQUIRE(decoded.objects.size() == 3);
  CHECK(DescribeObject(decoded.objects[0]) == "Node n1");
  CHECK(DescribeObject(decoded.objects[1]) == "Pod ns/p1");
  CHECK(DescribeObject(decoded.objects[2]) == "Namespace ns");
}

TEST_CASE("any *List kind with items is expanded, nested lists included", "[api]") {
  const DecodedObjects decoded = MustDecode(R"({"kind": "PodList", "items": [
    {"kind": "Pod", "metadata": {"name": "a"}},
    {"kind": "List", "items": [{"kind": "Pod", "metadata": {"name": "b"}}]}]})");
  INFO(ProblemsText(decoded));
  REQUIRE(decoded.objects.size() == 2);
  CHECK(DescribeObject(decoded.objects[1]) == "Pod default/b");
}

TEST_CASE("multi-document YAML decodes every kind and skips empty documents", "[api]") {
  const DecodedObjects decoded = MustDecode(kClusterYaml);
  INFO(ProblemsText(decoded));
  CHECK(decoded.problems.empty());
  REQUIRE(decoded.objects.size() == 6);
  CHECK(std::holds_alternative<Node>(decoded.objects[0]));
  CHECK(std::holds_alternative<Namespace>(decoded.objects[1]));
  CHECK(std::holds_alternative<PriorityClass>(decoded.objects[2]));
  CHECK(std::holds_alternative<ConfigMap>(decoded.objects[3]));
  CHECK(std::holds_alternative<PodDisruptionBudget>(decoded.objects[4]));
  CHECK(std::holds_alternative<NodeMetrics>(decoded.objects[5]));
}

TEST_CASE("a JSON array of objects decodes every element", "[api]") {
  const DecodedObjects decoded = MustDecode(R"(  [{"kind": "Pod", "metadata": {"name": "a"}},
    {"kind": "Node", "metadata": {"name": "b"}}])");
  CHECK(decoded.objects.size() == 2);
  CHECK(decoded.problems.empty());
}

TEST_CASE("a YAML sequence of objects decodes every element", "[api]") {
  const DecodedObjects decoded = MustDecode(R"(
- kind: Pod
  metadata: {name: a}
- kind: Node
  metadata: {name: b}
)");
  CHECK(decoded.objects.size() == 2);
  CHECK(decoded.problems.empty());
}

TEST_CASE("a single JSON object decodes", "[api]") {
  const Pod& pod = Only<Pod>(MustDecode(kFullPodJson));
  CHECK(pod.meta.name == "web-1");
}

TEST_CASE("the same pod in YAML and JSON decodes to the same object", "[api]") {
  const DecodedObjects from_json = MustDecode(kFullPodJson);
  const DecodedObjects from_yaml = MustDecode(kFullPodYaml);
  CHECK(Fingerprint(Only<Pod>(from_yaml)) == Fingerprint(Only<Pod>(from_json)));
}

TEST_CASE("empty input decodes to nothing", "[api]") {
  for (std::string_view text : {"", "   \n", "# just a comment\n", "---\n"}) {
    const DecodedObjects decoded = MustDecode(text);
    CHECK(decoded.objects.empty());
    CHECK(decoded.problems.empty());
  }
}

// --- Pod fields -------------------------------------------------------------------------------

TEST_CASE("pod metadata decodes names, labels, annotations, owners and timestamps", "[api]") {
  const Pod& pod = Only<Pod>(MustDecode(kFullPodJson));
  const ObjectMeta& m = pod.meta;
  CHECK(m.namespace_name == "prod");
  CHECK(m.namespace_symbol == Intern("prod"));
  CHECK(m.uid == "u-1");
  CHECK(m.resource_version == "42");
  CHECK(Str(m.labels) == "app=web,tier=front");
  CHECK(m.annotations.at("kubesched.io/policy") == "gpu");
  REQUIRE(m.owner_references.size() == 1);
  CHECK(m.owner_references[0].kind == "ReplicaSet");
  CHECK(m.owner_references[0].controller);
  CHECK(m.creation_timestamp == absl::FromUnixSeconds(1714557600));
  CHECK(m.deletion_timestamp == absl::FromUnixSeconds(1714554000) + absl::Milliseconds(500));
}

TEST_CASE("pod containers decode requests, limits, ports and restart policy", "[api]") {
  const Pod& pod = Only<Pod>(MustDecode(kFullPodJson));
  REQUIRE(pod.spec.containers.size() == 2);
  CHECK(Str(pod.spec.containers[0]) ==
        "app req=cpu=250m,memory=1Gi,nvidia.com/gpu=2 lim=cpu=1,memory=2Gi cpu?1 mem?1 restart= "
        "port=8080/80/10.0.0.1/1 port=9090/0//0");
  CHECK(Str(pod.spec.init_containers.at(0)) == "init req=cpu=1 lim= cpu?1 mem?0 restart=Always");
  CHECK(Res(pod.spec.overhead) == "cpu=100m");
}

TEST_CASE("a container that lists a zero request still counts as listing it", "[api]") {
  const Pod& pod = Only<Pod>(MustDecode(kFullPodJson));
  const Container& side = pod.spec.containers.at(1);
  CHECK(side.requests.IsZero());
  CHECK(side.requests_memory);
  CHECK_FALSE(side.requests_cpu);
}

TEST_CASE("pod affinity decodes node and pod terms", "[api]") {
  const Pod& pod = Only<Pod>(MustDecode(kFullPodJson));
  const std::string expected =
      "node req (zone op0 [a|b] #0; cores op4 [4] #4; metadata.name op1 bad-node)\n"
      "node pref 10 (disk op2 [] #0)\n"
      "pod req {app op0 [db] #0} ns=prod|shared nssel=none topo=zone mlk= mmlk=\n"
      "anti pref 50 {app op1 [web] #0} ns= nssel={} topo=kubernetes.io/hostname "
      "mlk=pod-template-hash mmlk=tenant\n";
  // Values print in symbol order, which is interning order, so normalise "a|b" vs "b|a".
  std::string actual = AffinityText(pod.spec.affinity);
  const size_t ba = actual.find("[b|a]");
  if (ba != std::string::npos) actual.replace(ba, 5, "[a|b]");
  CHECK(actual == expected);
}

TEST_CASE("pod tolerations, spread constraints and priority fields decode", "[api]") {
  const Pod& pod = Only<Pod>(MustDecode(kFullPodJson));
  REQUIRE(pod.spec.tolerations.size() == 2);
  CHECK(pod.spec.tolerations[0].op == TolerationOperator::kExists);
  CHECK(pod.spec.tolerations[0].effect == TaintEffect::kNoSchedule);
  CHECK(pod.spec.tolerations[1].toleration_seconds == 300);
  REQUIRE(pod.spec.topology_spread_constraints.size() == 1);
  const TopologySpreadConstraint& c = pod.spec.topology_spread_constraints[0];
  CHECK(c.max_skew == 2);
  CHECK(c.when_unsatisfiable == UnsatisfiableConstraintAction::kScheduleAnyway);
  CHECK(c.min_domains == 3);
  CHECK(c.node_affinity_policy == NodeInclusionPolicy::kIgnore);
  CHECK(c.node_taints_policy == NodeInclusionPolicy::kHonor);
  CHECK(pod.spec.priority == 1000);
  CHECK(pod.spec.preemption_policy == PreemptionPolicy::kNever);
  CHECK(pod.spec.scheduler_name == "kubesched");
  CHECK(pod.spec.node_name == "node-1");
  CHECK(pod.spec.host_network);
  CHECK(Str(pod.spec.node_selector) == "disk=ssd");
}

TEST_CASE("pod status decodes phase, conditions, nomination and start time", "[api]") {
  const Pod& pod = Only<Pod>(MustDecode(kFullPodJson));
  CHECK(pod.status.phase == PodPhase::kRunning);
  REQUIRE(pod.status.conditions.size() == 1);
  CHECK(pod.status.conditions[0].reason == "Unschedulable");
  CHECK(pod.status.nominated_node_name == "node-2");
  CHECK(pod.status.start_time == absl::FromUnixSeconds(1714557605));
}

// --- Defaults ---------------------------------------------------------------------------------

TEST_CASE("a pod without schedulerName gets default-scheduler", "[api]") {
  for (std::string_view text : {R"({"kind": "Pod", "metadata": {"name": "a"}})",
                                R"({"kind": "Pod", "metadata": {"name": "a"}, "spec": {}})",
                                R"({"kind": "Pod", "metadata": {"name": "a"},
                                    "spec": {"schedulerName": ""}})"}) {
    CHECK(Only<Pod>(MustDecode(text)).spec.scheduler_name == "default-scheduler");
  }
}

TEST_CASE("a namespaced object without a namespace is in default", "[api]") {
  const Pod& pod = Only<Pod>(MustDecode(R"({"kind": "Pod", "metadata": {"name": "a"}})"));
  CHECK(pod.meta.namespace_name == "default");
  CHECK(pod.meta.namespace_symbol == Intern("default"));
}

TEST_CASE("an explicit empty namespace stays empty", "[api]") {
  const Pod& pod =
      Only<Pod>(MustDecode(R"({"kind": "Pod", "metadata": {"name": "a", "namespace": ""}})"));
  CHECK(pod.meta.namespace_name.empty());
  CHECK(pod.meta.namespace_symbol == kEmptySymbol);
}

TEST_CASE("cluster-scoped objects have no namespace", "[api]") {
  const Node& node =
      Only<Node>(MustDecode(R"({"kind": "Node", "metadata": {"name": "n", "namespace": "x"}})"));
  CHECK(node.meta.namespace_name.empty());
}

TEST_CASE("a node without allocatable gets its capacity as allocatable", "[api]") {
  const Node& node = Only<Node>(MustDecode(R"({"kind": "Node", "metadata": {"name": "n"},
      "status": {"capacity": {"cpu": "4", "memory": "8Gi"}}})"));
  CHECK(Res(node.status.allocatable) == "cpu=4,memory=8Gi");
}

TEST_CASE("pod phase defaults to Pending", "[api]") {
  CHECK(Only<Pod>(MustDecode(R"({"kind": "Pod", "metadata": {"name": "a"}})")).status.phase ==
        PodPhase::kPending);
}

// --- Other kinds ------------------------------------------------------------------------------

TEST_CASE("a node decodes taints, unschedulable, resources and conditions", "[api]") {
  const DecodedObjects decoded = MustDecode(kClusterYaml);
  const Node& node = std::get<Node>(decoded.objects.at(0));
  CHECK(node.spec.unschedulable);
  REQUIRE(node.spec.taints.size() == 1);
  CHECK(node.spec.taints[0].value == "true");  // quoted in YAML, so a string
  CHECK(node.spec.taints[0].effect == TaintEffect::kNoSchedule);
  CHECK(Res(node.status.capacity) == "cpu=8,memory=32Gi,pods=110");
  CHECK(Res(node.status.allocatable) == "cpu=7500m,memory=30Gi,pods=110");
  REQUIRE(node.status.conditions.size() == 1);
  CHECK(node.status.conditions[0].status == "True");
}

TEST_CASE("namespaces, priority classes and config maps decode", "[api]") {
  const DecodedObjects decoded = MustDecode(kClusterYaml);
  CHECK(Str(std::get<Namespace>(decoded.objects.at(1)).meta.labels) == "team=search");
  const auto& pc = std::get<PriorityClass>(decoded.objects.at(2));
  CHECK(pc.value == 100000);
  CHECK_FALSE(pc.global_default);
  CHECK(pc.preemption_policy == PreemptionPolicy::kNever);
  CHECK(pc.description == "important things");
  const auto& cm = std::get<ConfigMap>(decoded.objects.at(3));
  CHECK(cm.meta.namespace_name == "kube-system");
  CHECK(cm.data.at("config.yaml") == "a: b");
}

TEST_CASE("a pod disruption budget decodes spec and status", "[api]") {
  const DecodedObjects decoded = MustDecode(kClusterYaml);
  const auto& pdb = std::get<PodDisruptionBudget>(decoded.objects.at(4));
  REQUIRE(pdb.min_available.has_value());
  CHECK(pdb.min_available->value == 50);
  CHECK(pdb.min_available->is_percent);
  CHECK_FALSE(pdb.max_unavailable.has_value());
  REQUIRE(pdb.selector.has_value());
  CHECK(Str(*pdb.selector) == "{app op0 [web] #0}");
  CHECK(pdb.disruptions_allowed == 1);
  CHECK(pdb.current_healthy == 3);
  CHECK(pdb.desired_healthy == 2);
  CHECK(pdb.expected_pods == 3);
  CHECK(pdb.disrupted_pods == std::vector<std::string>{"web-a", "web-b"});
}

TEST_CASE("a pod disruption budget takes an integer maxUnavailable", "[api]") {
  const auto& pdb = Only<PodDisruptionBudget>(MustDecode(R"({"kind": "PodDisruptionBudget",
      "metadata": {"name": "p"}, "spec": {"maxUnavailable": 2}})"));
  REQUIRE(pdb.max_unavailable.has_value());
  CHECK(pdb.max_unavailable->value == 2);
  CHECK_FALSE(pdb.max_unavailable->is_percent);
}

TEST_CASE("node metrics decode timestamp and usage", "[api]") {
  const DecodedObjects decoded = MustDecode(kClusterYaml);
  const auto& metrics = std::get<NodeMetrics>(decoded.objects.at(5));
  CHECK(metrics.meta.name == "node-1");
  CHECK(metrics.timestamp == absl::FromUnixSeconds(1714557600));
  CHECK(Res(metrics.usage) == "cpu=1500m,memory=10Gi");
}

// --- Selectors --------------------------------------------------------------------------------

// Decodes a pod whose only required node term holds `expression`, and returns its requirement.
Requirement NodeRequirement(const std::string& expression) {
  const std::string json = absl::StrCat(
      R"({"kind": "Pod", "metadata": {"name": "a"}, "spec": {"affinity": {"nodeAffinity": {)",
      R"("requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [)",
      R"({"matchExpressions": [)", expression, "]}]}}}}}");
  const Pod& pod = Only<Pod>(MustDecode(json));
  return pod.spec.affinity->node_affinity->required->terms.at(0).match_expressions.at(0);
}

TEST_CASE("node selector requirements are valid only as upstream validates them", "[api]") {
  const std::pair<std::string, bool> cases[] = {
      {R"({"key": "zone", "operator": "In", "values": ["a", "b"]})", true},
      {R"({"key": "zone", "operator": "In", "values": []})", false},
      {R"({"key": "zone", "operator": "In"})", false},
      {R"({"key": "zone", "operator": "NotIn", "values": ["a"]})", true},
      {R"({"key": "zone", "operator": "NotIn", "values": []})", false},
      {R"({"key": "zone", "operator": "In", "values": ["not valid!"]})", false},
      {R"({"key": "zone", "operator": "Exists"})", true},
      {R"({"key": "zone", "operator": "Exists", "values": ["a"]})", false},
      {R"({"key": "zone", "operator": "DoesNotExist", "values": ["a"]})", false},
      {R"({"key": "cores", "operator": "Gt", "values": ["4"]})", true},
      {R"({"key": "cores", "operator": "Lt", "values": ["-4"]})", true},
      {R"({"key": "cores", "operator": "Gt", "values": ["4", "5"]})", false},
      {R"({"key": "cores", "operator": "Gt", "values": ["four"]})", false},
      {R"({"key": "cores", "operator": "Lt", "values": []})", false},
      {R"({"key": "cores", "operator": "Gt", "values": ["99999999999999999999"]})", false},
      {R"({"key": "bad key!", "operator": "Exists"})", false},
      {R"({"key": "", "operator": "Exists"})", false},
      {R"({"key": "zone", "operator": "Near", "values": ["a"]})", false},
      {R"({"key": "zone"})", false},
  };
  for (const auto& [expression, valid] : cases) {
    INFO(expression);
    CHECK(NodeRequirement(expression).valid == valid);
  }
}

TEST_CASE("an invalid requirement matches nothing, even for NotIn", "[api]") {
  const Requirement r = NodeRequirement(R"({"key": "zone", "operator": "NotIn", "values": []})");
  CHECK_FALSE(r.Matches(LabelSet()));
}

TEST_CASE("requirement values are sorted and Gt keeps its number", "[api]") {
  const Requirement in =
      NodeRequirement(R"({"key": "zone", "operator": "In", "values": ["zz-9", "aa-1", "mm-5"]})");
  CHECK(in.values.size() == 3);
  CHECK(std::is_sorted(in.values.begin(), in.values.end()));
  const Requirement gt = NodeRequirement(R"({"key": "cores", "operator": "Gt", "values": ["16"]})");
  CHECK(gt.op == SelectorOperator::kGt);
  CHECK(gt.number == 16);
}

TEST_CASE("label selectors reject Gt and Lt and invalid matchLabels", "[api]") {
  const PodDisruptionBudget& pdb = Only<PodDisruptionBudget>(MustDecode(R"({
      "kind": "PodDisruptionBudget", "metadata": {"name": "p"},
      "spec": {"selector": {"matchLabels": {"app": "web", "bad key!": "x", "ok": "bad value!"},
                            "matchExpressions": [{"key": "n", "operator": "Gt",
                                                  "values": ["1"]}]}}})"));
  std::vector<bool> valid;
  for (const auto& r : pdb.selector->requirements) valid.push_back(r.valid);
  CHECK(valid == std::vector<bool>{true, false, false, false});
}

TEST_CASE("match fields accept only metadata.name with In or NotIn and one value", "[api]") {
  const std::pair<std::string, bool> cases[] = {
      {R"({"key": "metadata.name", "operator": "In", "values": ["n1"]})", true},
      {R"({"key": "metadata.name", "operator": "NotIn", "values": ["n1"]})", true},
      {R"({"key": "metadata.name", "operator": "In", "values": ["n1", "n2"]})", false},
      {R"({"key": "metadata.uid", "operator": "In", "values": ["n1"]})", false},
      {R"({"key": "metadata.name", "operator": "Exists"})", false},
  };
  for (const auto& [field, valid] : cases) {
    INFO(field);
    const std::string json = absl::StrCat(
        R"({"kind": "Pod", "metadata": {"name": "a"}, "spec": {"affinity": {"nodeAffinity": {)",
        R"("requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [)",
        R"({"matchFields": [)", field, "]}]}}}}}");
    const Pod& pod = Only<Pod>(MustDecode(json));
    CHECK(pod.spec.affinity->node_affinity->required->terms.at(0).match_fields.at(0).valid ==
          valid);
  }
}

// --- Per-object problems ----------------------------------------------------------------------

TEST_CASE("a bad object is reported with its name and field and the rest is kept", "[api]") {
  struct Case {
    std::string name;
    std::string item;
    std::string object;   // expected DecodeProblem::object
    std::string message;  // expected substring of DecodeProblem::message
  };
  const std::vector<Case> cases = {
      {"unknown kind", R"({"kind": "Deployment", "metadata": {"name": "d", "namespace": "ns"}})",
       "Deployment ns/d", R"(unknown kind "Deployment")"},
      {"missing kind", R"({"metadata": {"name": "x"}})", "item 2", "missing kind"},
      {"kind not a string", R"({"kind": 7, "metadata": {"name": "x"}})", "item 2",
       "kind: expected string"},
      {"not an object", R"("just text")", "item 2", "expected an object, got string"},
      {"missing metadata", R"({"kind": "Pod"})", "item 2 (kind Pod)", "metadata: missing"},
      {"missing name", R"({"kind": "Pod", "metadata": {"namespace": "ns"}})", "item 2 (kind Pod)",
       "metadata.name: missing or empty"},
      {"empty name", R"({"kind": "Node", "metadata": {"name": ""}})", "item 2 (kind Node)",
       "metadata.name: missing or empty"},
      {"name not a string", R"({"kind": "Node", "metadata": {"name": 5}})", "item 2 (kind Node)",
       "metadata.name: expected string, got number"},
      {"bad quantity",
       R"({"kind": "Pod", "metadata": {"name": "bad"}, "spec": {"containers": [
           {"resources": {"requests": {"cpu": "abc"}}}]}})",
       "Pod default/bad", R"(spec.containers[0].resources.requests.cpu: invalid quantity "abc")"},
      {"overflowing quantity",
       R"({"kind": "Pod", "metadata": {"name": "bad"}, "spec": {"containers": [{},
           {"resources": {"limits": {"memory": "10Ei"}}}]}})",
       "Pod default/bad", R"(spec.containers[1].resources.limits.memory: invalid quantity "10Ei")"},
      {"huge numeric quantity",
       R"({"kind": "Pod", "metadata": {"name": "bad"}, "spec": {"overhead": {"cpu": 1e300}}})",
       "Pod default/bad", "spec.overhead.cpu: invalid quantity"},
      {"negative request",
       R"({"kind": "Pod", "metadata": {"name": "bad", "namespace": "ns"}, "spec": {
           "initContainers": [{"resources": {"requests": {"memory": "-1Gi"}}}]}})",
       "Pod ns/bad", "spec.initContainers[0].resources.requests.memory: must not be negative"},
      {"negative limit",
       R"({"kind": "Pod", "metadata": {"name": "bad"}, "spec": {"containers": [
           {"resources": {"limits": {"cpu": -1}}}]}})",
       "Pod default/bad", "spec.containers[0].resources.limits.cpu: must not be negative"},
      {"negative capacity",
       R"({"kind": "Node", "metadata": {"name": "n-bad"}, "status": {
           "capacity": {"cpu": "-2"}}})",
       "Node n-bad", "status.capacity.cpu: must not be negative"},
      {"invalid resource name",
       R"({"kind": "Node", "metadata": {"name": "n-bad"}, "status": {
           "allocatable": {"not a name!": "1"}}})",
       "Node n-bad", R"(invalid resource name "not a name!")"},
      {"labels not an object", R"({"kind": "Pod", "metadata": {"name": "bad", "labels": ["a"]}})",
       "Pod default/bad", "metadata.labels: expected object, got array"},
      {"label value not a string",
       R"({"kind": "Pod", "metadata": {"name": "bad", "labels": {"tier": 3}}})", "Pod default/bad",
       "metadata.labels.tier: expected string, got number"},
      {"priority not an integer",
       R"({"kind": "Pod", "metadata": {"name": "bad"}, "spec": {"priority": "high"}})",
       "Pod default/bad", "spec.priority: expected integer, got string"},
      {"priority fractional",
       R"({"kind": "Pod", "metadata": {"name": "bad"}, "spec": {"priority": 1.5}})",
       "Pod default/bad", "spec.priority: expected integer, got number"},
      {"priority beyond int32",
       R"({"kind": "Pod", "metadata": {"name": "bad"}, "spec": {"priority": 99999999999}})",
       "Pod default/bad", "spec.priority: integer out of 32-bit range"},
      {"bad timestamp",
       R"({"kind": "Pod", "metadata": {"name": "bad", "creationTimestamp": "yesterday"}})",
       "Pod default/bad", R"(metadata.creationTimestamp: invalid timestamp "yesterday")"},
      {"unsupported toleration operator",
       R"({"kind": "Pod", "metadata": {"name": "bad"}, "spec": {"tolerations": [
           {"key": "k", "operator": "Maybe"}]}})",
       "Pod default/bad", R"(spec.tolerations[0].operator: unsupported value "Maybe")"},
      {"containers not an array",
       R"({"kind": "Pod", "metadata": {"name": "bad"}, "spec": {"containers": {}}})",
       "Pod default/bad", "spec.containers: expected array, got object"},
      {"spec not an object", R"({"kind": "Pod", "metadata": {"name": "bad"}, "spec": 1})",
       "Pod default/bad", "spec: expected object, got number"},
      {"host port out of range",
       R"({"kind": "Pod", "metadata": {"name": "bad"}, "spec": {"containers": [
           {"ports": [{"containerPort": 80, "hostPort": 70000}]}]}})",
       "Pod default/bad", "spec.containers[0].ports[0].hostPort: port out of range"},
      {"affinity term not an object",
       R"({"kind": "Pod", "metadata": {"name": "bad"}, "spec": {"affinity": {"podAffinity": {
           "requiredDuringSchedulingIgnoredDuringExecution": ["x"]}}}})",
       "Pod default/bad",
       "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]: expected "
       "object"},
      {"selector values not strings",
       R"({"kind": "Pod", "metadata": {"name": "bad"}, "spec": {"affinity": {"nodeAffinity": {
           "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
             {"matchExpressions": [{"key": "k", "operator": "In", "values": [1]}]}]}}}}})",
       "Pod default/bad",
       "nodeSelectorTerms[0].matchExpressions[0].values[0]: expected string, got number"},
      {"pdb percentage without %",
       R"({"kind": "PodDisruptionBudget", "metadata": {"name": "p", "namespace": "ns"},
           "spec": {"minAvailable": "50"}})",
       "PodDisruptionBudget ns/p", R"(spec.minAvailable: invalid value "50")"},
      {"priority class value not an integer",
       R"({"kind": "PriorityClass", "metadata": {"name": "pc"}, "value": "1"})", "PriorityClass pc",
       "value: expected integer, got string"},
      {"user priority class above the highest user-definable value",
       R"({"kind": "PriorityClass", "metadata": {"name": "pc"}, "value": 1000000001})",
       "PriorityClass pc",
       "value: maximum allowed value of a user defined priority is 1000000000, got 1000000001"},
      {"system priority class above system-node-critical",
       R"({"kind": "PriorityClass", "metadata": {"name": "system-x"}, "value": 2000001001})",
       "PriorityClass system-x",
       "value: maximum allowed value of a system defined priority is 2000001000"},
      {"node metrics bad usage",
       R"({"kind": "NodeMetrics", "metadata": {"name": "n"}, "usage": {"cpu": "1x"}})",
       "NodeMetrics n", R"(usage.cpu: invalid quantity "1x")"},
      {"config map data not strings",
       R"({"kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": {}}})",
       "ConfigMap default/c", "data.k: expected string, got object"},
  };
  for (const Case& c : cases) {
    INFO(c.name);
    const std::string list = absl::StrCat(
        R"({"kind": "List", "items": [{"kind": "Pod", "metadata": {"name": "good-1"}}, )", c.item,
        R"(, {"kind": "Node", "metadata": {"name": "good-3"}}]})");
    const DecodedObjects decoded = MustDecode(list, "dump.json");
    INFO(ProblemsText(decoded));
    REQUIRE(decoded.objects.size() == 2);
    CHECK(DescribeObject(decoded.objects[0]) == "Pod default/good-1");
    CHECK(DescribeObject(decoded.objects[1]) == "Node good-3");
    REQUIRE(decoded.problems.size() == 1);
    CHECK(decoded.problems[0].source == "dump.json");
    CHECK(decoded.problems[0].object == c.object);
    CHECK_THAT(decoded.problems[0].message, Catch::Contains(c.message));
  }
}

TEST_CASE("a problem prints as source, object and message", "[api]") {
  const DecodeProblem problem{"dump.yaml", "Pod ns/a", "spec.priority: expected integer"};
  CHECK(problem.ToString() == "dump.yaml: Pod ns/a: spec.priority: expected integer");
}

TEST_CASE("YAML items are numbered across documents in problems", "[api]") {
  const DecodedObjects decoded = MustDecode(R"(
kind: Pod
metadata: {name: a}
---
kind: Pod
metadata: {}
)");
  REQUIRE(decoded.problems.size() == 1);
  CHECK(decoded.problems[0].object == "item 2 (kind Pod)");
}

// --- YAML specifics ---------------------------------------------------------------------------

TEST_CASE("plain YAML scalars resolve by the core schema and quoted ones stay strings", "[api]") {
  const Pod& pod = Only<Pod>(MustDecode(R"(
kind: Pod
metadata:
  name: a
  labels: {version: "1.0", enabled: "true", empty: "", nothing: ~}
spec:
  priority: 0x10
  hostNetwork: True
  containers:
  - resources:
      requests: {cpu: 0.5, memory: 1e3, example.com/dev: 0o10}
)"));
  CHECK(Str(pod.meta.labels) == "empty=,enabled=true,nothing=,version=1.0");
  CHECK(pod.spec.priority == 16);
  CHECK(pod.spec.host_network);
  CHECK(Res(pod.spec.containers.at(0).requests) == "cpu=500m,memory=1000,example.com/dev=8");
}

TEST_CASE("an unquoted YAML boolean where a string belongs is a problem", "[api]") {
  const DecodedObjects decoded = MustDecode(
      "kind: Pod\nmetadata: {name: a, labels: {x: yes, "
      "y: true}}\n");
  REQUIRE(decoded.problems.size() == 1);
  CHECK_THAT(decoded.problems[0].message,
             Catch::Contains("metadata.labels.y: expected string, got boolean"));
}

TEST_CASE("YAML null fields read as absent", "[api]") {
  const Pod& pod =
      Only<Pod>(MustDecode("kind: Pod\nmetadata: {name: a, namespace: null}\n"
                           "spec:\n  priority:\n  tolerations: ~\n"));
  CHECK(pod.meta.namespace_name == "default");
  CHECK_FALSE(pod.spec.priority.has_value());
}

TEST_CASE("YAML anchors and aliases expand", "[api]") {
  const DecodedObjects decoded = MustDecode(R"(
- kind: Pod
  metadata: {name: a, labels: &common {app: web}}
- kind: Pod
  metadata: {name: b, labels: *common}
)");
  REQUIRE(decoded.objects.size() == 2);
  CHECK(Str(std::get<Pod>(decoded.objects[1]).meta.labels) == "app=web");
}

TEST_CASE("a YAML alias bomb is an error, not an explosion", "[api]") {
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 30; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    text += absl::StrCat("a", i, ": &a", i, " [", prev, ",", prev, ",", prev, ",", prev, ",", prev,
                         ",", prev, ",", prev, ",", prev, ",", prev, ",", prev, "]\n");
  }
  auto decoded = DecodeObjects(text, "bomb.yaml");
  REQUIRE_FALSE(decoded.ok());
  CHECK_THAT(std::string(decoded.status().message()), Catch::Contains("bomb.yaml"));
}

TEST_CASE("YAML aliases cannot nest values deeper than the parser allows", "[api]") {
  // The comment only raises the size budget, so that depth is what stops the chain.
  std::string text = "# " + std::string(400000, 'x') + "\na0: &a0 [x]\n";
  for (int i = 1; i < 2100; ++i) absl::StrAppend(&text, "a", i, ": &a", i, " [*a", i - 1, "]\n");
  auto decoded = DecodeObjects(text, "chain.yaml");
  REQUIRE_FALSE(decoded.ok());
  CHECK_THAT(std::string(decoded.status().message()), Catch::Contains("chain.yaml"));
  CHECK_THAT(std::string(decoded.status().message()), Catch::Contains("nesting too deep"));
}

TEST_CASE("non-scalar YAML mapping keys are an error", "[api]") {
  auto decoded = DecodeObjects("? [a, b]\n: c\n", "keys.yaml");
  REQUIRE_FALSE(decoded.ok());
  CHECK_THAT(std::string(decoded.status().message()), Catch::Contains("keys.yaml"));
}

TEST_CASE("scalar YAML mapping keys of any type become strings", "[api]") {
  const Pod& pod =
      Only<Pod>(MustDecode("kind: Pod\nmetadata: {name: a, labels: {1: x, true: y}}\n"));
  CHECK(Str(pod.meta.labels) == "1=x,true=y");
}

// --- Whole-document errors --------------------------------------------------------------------

TEST_CASE("malformed JSON is an error naming the source and position", "[api]") {
  auto decoded = DecodeObjects("{\"kind\": \"List\",\n \"items\": [,]}", "dump.json");
  REQUIRE_FALSE(decoded.ok());
  CHECK(decoded.status().code() == absl::StatusCode::kInvalidArgument);
  const std::string message(decoded.status().message());
  CHECK_THAT(message, Catch::Contains("dump.json"));
  CHECK_THAT(message, Catch::Contains("line 2, column 12"));
}

TEST_CASE("malformed YAML is an error naming the source and line", "[api]") {
  auto decoded = DecodeObjects("kind: Pod\nmetadata:\n  name: [a\n", "dump.yaml");
  REQUIRE_FALSE(decoded.ok());
  const std::string message(decoded.status().message());
  CHECK_THAT(message, Catch::Contains("dump.yaml"));
  CHECK_THAT(message, Catch::Contains("line"));
}

TEST_CASE("a stray comma after a YAML document is an error naming the source and line", "[api]") {
  auto decoded = DecodeObjects("kind: Namespace\nmetadata: {name: a}\n---\n,\n", "dump.yaml");
  REQUIRE_FALSE(decoded.ok());
  CHECK_THAT(std::string(decoded.status().message()),
             Catch::StartsWith("dump.yaml: invalid YAML at line 4, column 1: "));
}

TEST_CASE("input with a NUL byte is an error", "[api]") {
  const std::string json("{\"kind\": \"Pod\"}\0{}", 17);
  CHECK_FALSE(DecodeObjects(json, "nul").ok());
  const std::string yaml("kind: Pod\0", 10);
  CHECK_FALSE(DecodeObjects(yaml, "nul").ok());
}

TEST_CASE("trailing garbage after a JSON document is an error", "[api]") {
  CHECK_FALSE(DecodeObjects(R"({"kind": "Pod", "metadata": {"name": "a"}} x)", "t").ok());
}

// --- Files ------------------------------------------------------------------------------------

TEST_CASE("decoding a missing file is NotFound naming the path", "[api]") {
  auto decoded = DecodeFile("/nonexistent/kubesched/dump.yaml");
  REQUIRE_FALSE(decoded.ok());
  CHECK(decoded.status().code() == absl::StatusCode::kNotFound);
  CHECK_THAT(std::string(decoded.status().message()),
             Catch::Contains("/nonexistent/kubesched/dump.yaml"));
}

TEST_CASE("decoding a directory is an error naming the path", "[api]") {
  auto decoded = DecodeFile("/tmp");
  REQUIRE_FALSE(decoded.ok());
  CHECK_THAT(std::string(decoded.status().message()), Catch::Contains("/tmp"));
}

TEST_CASE("a file decodes with its path as the problem source", "[api]") {
  char path[] = "/tmp/kubesched_decode_test_XXXXXX";
  const int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  std::ofstream(path) << "kind: Pod\nmetadata: {name: a}\n---\nkind: Pod\n";
  auto decoded = DecodeFile(path);
  std::remove(path);
  REQUIRE(decoded.ok());
  CHECK(decoded->objects.size() == 1);
  REQUIRE(decoded->problems.size() == 1);
  CHECK(decoded->problems[0].source == path);
}

// --- Single-object decoders -------------------------------------------------------------------

TEST_CASE("DecodePodJson decodes one pod", "[api]") {
  auto pod = DecodePodJson(kFullPodJson);
  REQUIRE(pod.ok());
  CHECK(Fingerprint(*pod) == Fingerprint(Only<Pod>(MustDecode(kFullPodJson))));
}

TEST_CASE("DecodePodJson errors name the pod and the field", "[api]") {
  auto pod = DecodePodJson(R"({"kind": "Pod", "metadata": {"name": "a"},
                               "spec": {"priority": "x"}})");
  REQUIRE_FALSE(pod.ok());
  CHECK(std::string(pod.status().message()) ==
        "Pod a: spec.priority: expected integer, got string");
}

TEST_CASE("DecodePodJson rejects other kinds, non-objects and malformed JSON", "[api]") {
  CHECK_FALSE(DecodePodJson(R"({"kind": "Node", "metadata": {"name": "a"}})").ok());
  CHECK_FALSE(DecodePodJson(R"([{"kind": "Pod", "metadata": {"name": "a"}}])").ok());
  CHECK_FALSE(DecodePodJson(R"({"kind": "Pod", "metadata": )").ok());
  CHECK_FALSE(DecodePodJson("kind: Pod").ok());
}

TEST_CASE("DecodeNodeJson decodes one node", "[api]") {
  auto node = DecodeNodeJson(R"({"metadata": {"name": "n"},
                                 "status": {"allocatable": {"cpu": "2"}}})");
  REQUIRE(node.ok());
  CHECK(node->meta.name == "n");
  CHECK(Res(node->status.allocatable) == "cpu=2");
}

TEST_CASE("DecodeNodeAffinity reads JSON and YAML alike", "[api]") {
  auto from_json = DecodeNodeAffinity(R"({"requiredDuringSchedulingIgnoredDuringExecution":
      {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In",
                                                    "values": ["a"]}]}]}})");
  auto from_yaml = DecodeNodeAffinity(R"(
requiredDuringSchedulingIgnoredDuringExecution:
  nodeSelectorTerms:
  - matchExpressions:
    - {key: zone, operator: In, values: [a]}
)");
  REQUIRE(from_json.ok());
  REQUIRE(from_yaml.ok());
  REQUIRE(from_json->required.has_value());
  CHECK(Str(from_json->required->terms.at(0)) == Str(from_yaml->required->terms.at(0)));
  CHECK(from_json->required->Matches(LabelSet::FromPairs({{Intern("zone"), Intern("a")}}), "n"));
}

TEST_CASE("DecodeNodeAffinity errors name the field", "[api]") {
  auto affinity = DecodeNodeAffinity(R"({"preferredDuringSchedulingIgnoredDuringExecution":
      [{"weight": "heavy"}]})");
  REQUIRE_FALSE(affinity.ok());
  CHECK_THAT(std::string(affinity.status().message()),
             Catch::Contains("preferredDuringSchedulingIgnoredDuringExecution[0].weight"));
}

TEST_CASE("DecodeNodeAffinity of empty text is an empty affinity", "[api]") {
  auto affinity = DecodeNodeAffinity("");
  REQUIRE(affinity.ok());
  CHECK_FALSE(affinity->required.has_value());
  CHECK(affinity->preferred.empty());
}

// --- Hostile input ----------------------------------------------------------------------------

TEST_CASE("deeply nested input never overflows the stack", "[api]") {
  const size_t depth = 100000;
  const std::string json_arrays = std::string(depth, '[') + std::string(depth, ']');
  auto decoded = DecodeObjects(json_arrays, "deep.json");
  CHECK((!decoded.ok() || !decoded->problems.empty()));

  const std::string nested_field =
      R"({"kind": "Pod", "metadata": {"name": "a"}, "unknown": )" + json_arrays + "}";
  decoded = DecodeObjects(nested_field, "deep.json");
  REQUIRE(decoded.ok());
  CHECK(decoded->objects.size() == 1);

  const std::string yaml_flow = std::string(depth, '[') + std::string(depth, ']');
  decoded = DecodeObjects("x: " + yaml_flow, "deep.yaml");
  CHECK((!decoded.ok() || !decoded->problems.empty()));
  std::string yaml_block;
  for (size_t i = 0; i < 5000; ++i) yaml_block += std::string(i, ' ') + "a:\n";
  decoded = DecodeObjects(yaml_block, "deep.yaml");
  CHECK((!decoded.ok() || !decoded->problems.empty()));
}

TEST_CASE("every prefix of a valid document decodes or fails cleanly", "[api]") {
  for (std::string_view document : {kFullPodJson, kFullPodYaml, kClusterYaml}) {
    for (size_t n = 0; n < document.size(); ++n) {
      auto decoded = DecodeObjects(document.substr(0, n), "prefix");
      if (document[0] == '{' && n > 0) CHECK_FALSE(decoded.ok());  // JSON cut short
    }
  }
}

TEST_CASE("random bytes never decode to objects and never crash", "[api]") {
  std::mt19937 rng(20240501);
  std::uniform_int_distribution<int> byte(1, 255);
  std::uniform_int_distribution<size_t> length(1, 300);
  size_t rejected = 0;
  const size_t runs = 2000;
  for (size_t run = 0; run < runs; ++run) {
    std::string text(length(rng), ' ');
    for (char& c : text) c = static_cast<char>(byte(rng));
    if (run % 2 == 0) text[0] = run % 4 == 0 ? '{' : '[';  // exercise the JSON path as well
    auto decoded = DecodeObjects(text, "random");
    if (!decoded.ok() || !decoded->problems.empty()) ++rejected;
    CHECK((!decoded.ok() || decoded->objects.empty()));
  }
  CHECK(rejected > runs * 9 / 10);
}

TEST_CASE("mutated valid documents never crash", "[api]") {
  std::mt19937 rng(7);
  const std::string alphabet = "{}[]:,\"'-?&*!|>#%@` \n\t0123456789.eE+-xyzKiMm~";
  for (std::string_view document : {kFullPodJson, kFullPodYaml, kClusterYaml}) {
    std::uniform_int_distribution<size_t> position(0, document.size() - 1);
    std::uniform_int_distribution<size_t> pick(0, alphabet.size() - 1);
    for (int run = 0; run < 400; ++run) {
      std::string text(document);
      for (int edit = 0; edit < 1 + run % 5; ++edit) {
        const size_t at = position(rng);
        switch (run % 3) {
          case 0:
            text[at] = alphabet[pick(rng)];
            break;
          case 1:
            text.erase(at, 1);
            break;
          default:
            text.insert(at, 1, alphabet[pick(rng)]);
            break;
        }
      }
      auto decoded = DecodeObjects(text, "mutated");
      if (decoded.ok()) {
        for (const auto& problem : decoded->problems) CHECK_FALSE(problem.message.empty());
      }
      (void)DecodePodJson(text);
      (void)DecodeNodeAffinity(text);
    }
  }
}

TEST_CASE("huge numbers are problems or errors, never wrapped values", "[api]") {
  auto too_big_for_double = DecodeObjects(
      R"({"kind": "Pod", "metadata": {"name": "a"}, "spec": {"priority": 1e400}})", "t");
  CHECK_FALSE(too_big_for_double.ok());
  const DecodedObjects decoded = MustDecode(R"({"kind": "Pod", "metadata": {"name": "a"},
      "spec": {"priority": 18446744073709551615, "tolerations": [{"tolerationSeconds": 1e30}]}})");
  CHECK(decoded.objects.empty());
  CHECK(decoded.problems.size() == 1);
}

// --- Performance ------------------------------------------------------------------------------

std::string LargeClusterJson(int nodes, int pods) {
  std::string out = R"({"apiVersion": "v1", "kind": "List", "items": [)";
  for (int i = 0; i < nodes; ++i) {
    absl::StrAppend(
        &out, i == 0 ? "" : ",", R"({"apiVersion": "v1", "kind": "Node",
      "metadata": {"name": "node-)",
        i, R"(", "uid": "uid-node-)", i, R"(",
        "resourceVersion": "123", "creationTimestamp": "2024-05-01T10:00:00Z",
        "labels": {"kubernetes.io/hostname": "node-)",
        i, R"(", "topology.kubernetes.io/zone": "zone-)", i % 10,
        R"(", "nvidia.com/gpu.product": "A100", "node.kubernetes.io/instance-type": "p4d"}},
      "spec": {"taints": [{"key": "gpu", "value": "true", "effect": "NoSchedule"}]},
      "status": {"capacity": {"cpu": "96", "memory": "1152Gi", "pods": "110", "nvidia.com/gpu": "8",
                              "ephemeral-storage": "7Ti"},
                 "allocatable": {"cpu": "95500m", "memory": "1100Gi", "pods": "110",
                                 "nvidia.com/gpu": "8", "ephemeral-storage": "6Ti"},
                 "conditions": [{"type": "Ready", "status": "True"}]}})");
  }
  for (int i = 0; i < pods; ++i) {
    absl::StrAppend(&out, R"(,{"apiVersion": "v1", "kind": "Pod",
      "metadata": {"name": "pod-)",
                    i, R"(", "namespace": "ns-)", i % 50, R"(", "uid": "uid-pod-)", i, R"(",
        "labels": {"app": "app-)",
                    i % 100, R"(", "pod-template-hash": "abcdef"},
        "annotations": {"kubesched.io/policy": "default"},
        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "x", "controller": true}]},
      "spec": {"schedulerName": "kubesched", "priority": 100,
        "containers": [{"name": "main", "image": "registry/app:1.0", "args": ["--flag", "value"],
          "resources": {"requests": {"cpu": "500m", "memory": "1Gi", "nvidia.com/gpu": "1"},
                        "limits": {"cpu": "1", "memory": "2Gi", "nvidia.com/gpu": "1"}},
          "ports": [{"containerPort": 8080, "protocol": "TCP"}]}],
        "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
          {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "app-)",
                    i % 100,
                    R"("}}, "topologyKey": "kubernetes.io/hostname"}}]}}},
      "status": {"phase": "Pending"}})");
  }
  out += "]}";
  return out;
}

// Decode speed is measured by kubesched_bench (its "decode s" column), not here.
TEST_CASE("a 15k-object JSON list decodes completely", "[api]") {
  const DecodedObjects decoded = MustDecode(LargeClusterJson(5000, 10000), "large.json");
  CHECK(decoded.objects.size() == 15000);
  CHECK(decoded.problems.empty());
}

}  // namespace
}  // namespace kubesched::api
