#!/usr/bin/env python3
"""Regenerates examples/cluster.yaml and examples/workload.yaml (deterministic).

The cluster is a small but realistic GPU platform: CPU nodes in three zones, A100 and V100 GPU
nodes tainted for GPU work, a cordoned node, a control-plane node, system pods on every node, a
few running applications, a finished job and a pod of another scheduler. The workload exercises
every built-in plugin: resource fit (incl. some pods too big to fit), node affinity (required and
preferred), taints and tolerations, host ports, pod anti-affinity and affinity, node names,
priorities, init containers and pod overhead.
"""
import random

import yaml

random.seed(7)
ZONES = ["zone-a", "zone-b", "zone-c"]
SCHEDULER = "kubesched"


def meta(name, namespace=None, labels=None, annotations=None):
    m = {"name": name}
    if namespace is not None:
        m["namespace"] = namespace
    if labels:
        m["labels"] = labels
    if annotations:
        m["annotations"] = annotations
    return m


def node(name, zone, cpu, memory, pods="110", gpus=0, product=None, taints=None,
         unschedulable=False, extra_labels=None):
    labels = {"kubernetes.io/hostname": name, "topology.kubernetes.io/zone": zone,
              "kubernetes.io/os": "linux"}
    capacity = {"cpu": cpu, "memory": memory, "pods": pods, "ephemeral-storage": "500Gi"}
    if gpus:
        capacity["nvidia.com/gpu"] = str(gpus)
        labels["nvidia.com/gpu.product"] = product
        labels["nvidia.com/gpu.count"] = str(gpus)
    labels.update(extra_labels or {})
    allocatable = dict(capacity)
    allocatable["cpu"] = f"{int(cpu) * 1000 - 200}m"
    spec = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta(name, labels=labels),
            "spec": spec,
            "status": {"capacity": capacity, "allocatable": allocatable,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def container(name, cpu=None, memory=None, gpus=None, ports=None):
    requests = {}
    if cpu:
        requests["cpu"] = cpu
    if memory:
        requests["memory"] = memory
    if gpus:
        requests["nvidia.com/gpu"] = str(gpus)
    c = {"name": name, "image": f"registry.example.com/{name}:1.0"}
    if requests:
        c["resources"] = {"requests": requests}
        if gpus:
            c["resources"]["limits"] = {"nvidia.com/gpu": str(gpus)}
    if ports:
        c["ports"] = ports
    return c


def pod(name, namespace, containers, labels=None, node_name=None, scheduler=SCHEDULER, **spec):
    body = {"schedulerName": scheduler, "containers": containers}
    if node_name:
        body["nodeName"] = node_name
    body.update(spec)
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": meta(name, namespace, labels), "spec": body,
         "status": {"phase": "Running" if node_name else "Pending"}}
    return p


GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def cluster():
    items = []
    for ns, labels in [("default", {}), ("kube-system", {}), ("web", {"team": "frontend"}),
                       ("ml-training", {"team": "research"}), ("batch", {"team": "data"})]:
        labels = dict(labels, **{"kubernetes.io/metadata.name": ns})
        items.append({"apiVersion": "v1", "kind": "Namespace", "metadata": meta(ns, labels=labels)})
    for name, value, default in [("system-node-critical", 2000001000, False),
                                 ("system-cluster-critical", 2000000000, False),
                                 ("online-high", 100000, False), ("training", 10000, False),
                                 ("batch-low", 100, True)]:
        items.append({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                      "metadata": meta(name), "value": value, "globalDefault": default,
                      "description": f"{name} workloads"})
    nodes = [node("control-plane-1", "zone-a", "8", "32Gi",
                  taints=[{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}],
                  extra_labels={"node-role.kubernetes.io/control-plane": ""})]
    for zone in ZONES:
        for i in range(1, 5):
            big = i <= 2
            name = f"cpu-{zone[-1]}-{i}"
            nodes.append(node(name, zone, "32" if big else "16", "128Gi" if big else "64Gi",
                              extra_labels={"node.kubernetes.io/instance-type":
                                            "c6.8xlarge" if big else "c6.4xlarge"}))
    # A cordoned node, as `kubectl cordon` leaves it.
    cordoned = nodes[-1]
    cordoned["spec"]["unschedulable"] = True
    cordoned["spec"]["taints"] = [{"key": "node.kubernetes.io/unschedulable",
                                   "effect": "NoSchedule"}]
    # A node being drained softly: prefer not to schedule there.
    nodes[5]["spec"]["taints"] = [{"key": "maintenance", "value": "soon",
                                   "effect": "PreferNoSchedule"}]
    gpu_taint = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    for i in range(1, 5):
        nodes.append(node(f"gpu-a100-{i}", ZONES[(i - 1) % 3], "96", "1Ti", gpus=8,
                          product="NVIDIA-A100-SXM4-80GB", taints=gpu_taint))
    for i in range(1, 4):
        nodes.append(node(f"gpu-v100-{i}", ZONES[i % 3], "48", "384Gi", gpus=4,
                          product="Tesla-V100-SXM2-32GB", taints=gpu_taint))
    items += nodes
    for n in nodes:
        nn = n["metadata"]["name"]
        items.append(pod(f"kube-proxy-{nn}", "kube-system",
                         [container("kube-proxy", "100m", "128Mi")],
                         labels={"k8s-app": "kube-proxy"}, node_name=nn,
                         scheduler="default-scheduler", priorityClassName="system-node-critical",
                         priority=2000001000, tolerations=[{"operator": "Exists"}]))
    for i, nn in enumerate(["cpu-a-1", "cpu-b-1"]):
        items.append(pod(f"coredns-{i}", "kube-system", [container("coredns", "100m", "170Mi")],
                         labels={"k8s-app": "kube-dns"}, node_name=nn,
                         scheduler="default-scheduler", priority=2000000000,
                         priorityClassName="system-cluster-critical"))
    for i in range(6):
        nn = f"cpu-{'abc'[i % 3]}-{1 + i // 3}"
        items.append(pod(f"postgres-{i}", "default", [container("postgres", "4", "16Gi")],
                         labels={"app": "postgres"}, node_name=nn))
    items.append(pod("train-resnet-0", "ml-training", [container("trainer", "16", "128Gi", 8)],
                     labels={"app": "resnet", "job": "resnet"}, node_name="gpu-a100-1",
                     tolerations=[GPU_TOLERATION], priority=10000, priorityClassName="training"))
    finished = pod("nightly-report-1", "batch", [container("report", "8", "32Gi")],
                   labels={"app": "report"}, node_name="cpu-a-2")
    finished["status"]["phase"] = "Succeeded"
    items.append(finished)
    items.append(pod("legacy-app-0", "default", [container("legacy", "500m", "1Gi")],
                     labels={"app": "legacy"}, scheduler="default-scheduler"))
    items.append(pod("warmup-0", "web", [container("web", "500m", "1Gi")],
                     labels={"app": "web", "tier": "frontend"}))
    return {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}


def workload():
    items = []
    for i in range(80):
        spec = {"priority": 100000, "priorityClassName": "online-high"}
        if i % 4 == 0:
            spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 50, "preference": {"matchExpressions": [
                    {"key": "topology.kubernetes.io/zone", "operator": "In",
                     "values": ["zone-a"]}]}}]}}
        items.append(pod(f"web-{i}", "web", [container("web", "500m", "1Gi")],
                         labels={"app": "web", "tier": "frontend"}, **spec))
    for i in range(20):
        items.append(pod(f"node-exporter-{i}", "web",
                         [container("exporter", "50m", "64Mi",
                                    ports=[{"containerPort": 9100, "hostPort": 9100,
                                            "protocol": "TCP"}])],
                         labels={"app": "node-exporter"}))
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "cache"}},
         "topologyKey": "kubernetes.io/hostname"}]}}
    for i in range(14):
        items.append(pod(f"cache-{i}", "web", [container("redis", "1", "4Gi")],
                         labels={"app": "cache"}, affinity=anti))
    near_web = {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "web"}},
                                            "topologyKey": "topology.kubernetes.io/zone"}}]}}
    for i in range(20):
        items.append(pod(f"api-{i}", "web", [container("api", "1", "2Gi")],
                         labels={"app": "api"}, affinity=near_web,
                         initContainers=[container("migrate", "2", "1Gi")]))
    items.append(pod("pinned-0", "default", [container("svc", "1", "1Gi")],
                     labels={"app": "pinned"},
                     affinity={"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                         "nodeSelectorTerms": [{"matchFields": [
                             {"key": "metadata.name", "operator": "In",
                              "values": ["cpu-b-2"]}]}]}}}))
    for i in range(24):
        items.append(pod(f"etl-{i}", "batch", [container("etl", random.choice(["2", "4", "6"]),
                                                          random.choice(["4Gi", "8Gi", "16Gi"]))],
                         labels={"app": "etl"}, priorityClassName="batch-low"))
    for i in range(4):
        items.append(pod(f"huge-batch-{i}", "batch", [container("spark", "40", "64Gi")],
                         labels={"app": "spark"}, priorityClassName="batch-low"))
    a100_only = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "nvidia.com/gpu.product", "operator": "In",
             "values": ["NVIDIA-A100-SXM4-80GB"]}]}]}}}
    for i in range(1, 6):
        items.append(pod(f"train-llm-{i}", "ml-training", [container("trainer", "32", "256Gi", 8)],
                         labels={"app": "llm", "job": "llm"}, affinity=a100_only,
                         tolerations=[GPU_TOLERATION], priorityClassName="training"))
    for i in range(24):
        items.append(pod(f"notebook-{i}", "ml-training", [container("jupyter", "4", "32Gi", 1)],
                         labels={"app": "notebook"}, tolerations=[GPU_TOLERATION],
                         priorityClassName="training",
                         overhead={"cpu": "250m", "memory": "120Mi"}))
    for i in range(6):
        items.append(pod(f"gpu-no-toleration-{i}", "ml-training",
                         [container("trainer", "4", "16Gi", 1)], labels={"app": "mistake"}))
    for i in range(10):
        zone = ZONES[i % 3]
        items.append(pod(f"zonal-{i}", "default", [container("svc", "2", "4Gi")],
                         labels={"app": "zonal"}, nodeSelector={"topology.kubernetes.io/zone": zone}))
    for i in range(40):
        items.append(pod(f"worker-{i}", "batch", [container("worker", "250m", "512Mi")],
                         labels={"app": "worker"}))
    for i in range(5):
        items.append(pod(f"other-scheduler-{i}", "default", [container("svc", "100m", "128Mi")],
                         labels={"app": "other"}, scheduler="default-scheduler"))
    return {"apiVersion": "v1", "kind": "List", "items": items, "metadata": {"resourceVersion": ""}}


def explain_pod():
    return pod("train-bert-0", "ml-training", [container("trainer", "8", "64Gi", 4)],
               labels={"app": "bert"}, tolerations=[GPU_TOLERATION], priorityClassName="training",
               affinity={"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                   {"weight": 80, "preference": {"matchExpressions": [
                       {"key": "nvidia.com/gpu.product", "operator": "In",
                        "values": ["NVIDIA-A100-SXM4-80GB"]}]}}]}})


def write(path, doc):
    with open(path, "w") as f:
        yaml.safe_dump(doc, f, sort_keys=False, default_flow_style=False)


if __name__ == "__main__":
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    write(os.path.join(here, "cluster.yaml"), cluster())
    write(os.path.join(here, "workload.yaml"), workload())
    write(os.path.join(here, "pod.yaml"), explain_pod())
