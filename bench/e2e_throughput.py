#!/usr/bin/python3
"""End-to-end throughput of `kubesched run` over loopback HTTP.

Starts kubesched-testapi with N nodes and M pending pods loaded up front, then `kubesched run`
against it, and measures how long it takes until the API server has seen every pod bound:

  * pods/s from the moment kubesched starts (connect + list + schedule + bind), and
  * pods/s from "informers synced" (read from kubesched's log) to the last bind,
  * time to sync, peak RSS (VmHWM) of kubesched and of the testapi,
  * kubesched's CPU seconds until the last bind, and per bound pod (CPU ms/pod),
  * invariants: every pod bound exactly once (podsBoundMoreThanOnce == 0), every pod listed
    with a nodeName, no node over-committed (cpu, memory, pods).

Standard library only. Example:

  /usr/bin/python3 bench/e2e_throughput.py --runs 5
  /usr/bin/python3 bench/e2e_throughput.py --nodes 500 --pods 1000 --json

Exit status: 0 when every run bound every pod within --timeout and every invariant held,
1 when a run failed, 2 for bad arguments or missing binaries.
"""

import argparse
import calendar
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAMESPACE = "bench"

# Node and pod templates. Nodes: like upstream scheduler_perf's node-default.yaml, larger
# (32 cpu, 256Gi, 110 pods) so that capacity never limits; pods: upstream's pod-default.yaml (one
# pause container requesting 100m cpu and 500Mi memory).
NODE_CPU = "32"
NODE_MEMORY = "256Gi"
NODE_PODS = "110"
POD_CPU = "100m"
POD_MEMORY = "500Mi"
ZONES = ("zone-a", "zone-b", "zone-c")


# ---- quantities -------------------------------------------------------------------------------

_SUFFIXES = {
    "": 1, "m": 0.001, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}


def parse_quantity(text):
    """A Kubernetes quantity as a float (cpu in cores, memory in bytes)."""
    match = re.fullmatch(r"([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)", str(text).strip())
    if not match or match.group(2) not in _SUFFIXES:
        raise ValueError(f"bad quantity {text!r}")
    return float(match.group(1)) * _SUFFIXES[match.group(2)]


# ---- inputs -----------------------------------------------------------------------------------


def node_object(index):
    name = f"node-{index}"
    resources = {"cpu": NODE_CPU, "memory": NODE_MEMORY, "pods": NODE_PODS}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "topology.kubernetes.io/zone": ZONES[index % len(ZONES)],
            },
        },
        "spec": {},
        "status": {
            "capacity": dict(resources),
            "allocatable": dict(resources),
            "conditions": [{"type": "Ready", "status": "True"}],
            "phase": "Running",
        },
    }


def pod_object(index):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"pod-{index}", "namespace": NAMESPACE},
        "spec": {
            "schedulerName": "kubesched",
            "containers": [{
                "name": "pause",
                "image": "registry.k8s.io/pause:3.9",
                "resources": {
                    "requests": {"cpu": POD_CPU, "memory": POD_MEMORY},
                    "limits": {"cpu": POD_CPU, "memory": POD_MEMORY},
                },
            }],
        },
        "status": {"phase": "Pending"},
    }


def write_objects(path, nodes, pods):
    items = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}]
    items += [node_object(i) for i in range(nodes)]
    items += [pod_object(i) for i in range(pods)]
    with open(path, "w") as out:
        json.dump({"apiVersion": "v1", "kind": "List", "items": items}, out,
                  separators=(",", ":"))


def write_kubeconfig(path, server):
    with open(path, "w") as out:
        out.write(f"""apiVersion: v1
kind: Config
clusters:
- name: testapi
  cluster:
    server: {server}
contexts:
- name: testapi
  context:
    cluster: testapi
    user: bench
current-context: testapi
users:
- name: bench
  user: {{}}
""")


# ---- processes --------------------------------------------------------------------------------


def read_hwm_kib(pid):
    """VmHWM (peak resident set) of a live process in KiB, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def cpu_seconds(pid):
    """User + system CPU time a live process has used, in seconds, or None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


class PeakRss:
    """Polls VmHWM of some processes; VmHWM is already a peak, polling only catches exit."""

    def __init__(self, interval=0.05):
        self.interval = interval
        self.peaks = {}
        self.pids = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def watch(self, label, pid):
        self.pids[label] = pid
        self.sample()

    def sample(self):
        for label, pid in list(self.pids.items()):
            kib = read_hwm_kib(pid)
            if kib is not None:
                self.peaks[label] = max(self.peaks.get(label, 0), kib)

    def _run(self):
        while not self._stop.wait(self.interval):
            self.sample()

    def start(self):
        self._thread.start()

    def stop(self):
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self.sample()


class LogReader:
    """Reads a child's stderr line by line, keeping the lines and when each arrived."""

    def __init__(self, stream, echo=False):
        self.lines = []  # (monotonic arrival time, line)
        self.echo = echo
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, args=(stream,), daemon=True)
        self._thread.start()

    def _run(self, stream):
        for raw in iter(stream.readline, b""):
            line = raw.decode("utf-8", "replace").rstrip("\n")
            with self._cond:
                self.lines.append((time.monotonic(), line))
                self._cond.notify_all()
            if self.echo:
                print(f"    | {line}", file=sys.stderr)

    def find(self, needle):
        with self._cond:
            for arrived, line in self.lines:
                if needle in line:
                    return arrived, line
        return None

    def tail(self, count=20):
        with self._cond:
            return [line for _, line in self.lines[-count:]]

    def join(self, timeout=5):
        self._thread.join(timeout)


# kubesched's log lines: "I 2024-05-01T10:00:00.123Z message" (UTC, milliseconds).
_LOG_TIME = re.compile(r"^[IWE] (\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)\.(\d{3})Z ")


def log_wall_time(line):
    """The wall-clock time (seconds since the epoch) a kubesched log line carries, or None."""
    match = _LOG_TIME.match(line)
    if not match:
        return None
    year, month, day, hour, minute, second, millis = (int(g) for g in match.groups())
    return calendar.timegm((year, month, day, hour, minute, second)) + millis / 1000.0


def stop_process(process, grace=15):
    if process.poll() is not None:
        return process.returncode
    process.send_signal(signal.SIGTERM)
    try:
        return process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait()


def http_get_json(url, timeout=30):
    with urllib.request.urlopen(url, timeout=timeout) as response:
        return json.loads(response.read())


# ---- one run ----------------------------------------------------------------------------------


def check_placements(server, expected_pods):
    """Lists pods and nodes through the API; returns a list of invariant violations."""
    problems = []
    nodes = http_get_json(f"{server}/api/v1/nodes", timeout=120)["items"]
    pods = http_get_json(f"{server}/api/v1/namespaces/{NAMESPACE}/pods", timeout=120)["items"]
    allocatable = {}
    for node in nodes:
        alloc = node.get("status", {}).get("allocatable", {})
        allocatable[node["metadata"]["name"]] = {
            "cpu": parse_quantity(alloc.get("cpu", "0")),
            "memory": parse_quantity(alloc.get("memory", "0")),
            "pods": parse_quantity(alloc.get("pods", "0")),
        }
    used = {name: {"cpu": 0.0, "memory": 0.0, "pods": 0} for name in allocatable}
    unbound = 0
    for pod in pods:
        node_name = pod.get("spec", {}).get("nodeName", "")
        if not node_name:
            unbound += 1
            continue
        if node_name not in used:
            problems.append(f"pod {pod['metadata']['name']} bound to unknown node {node_name}")
            continue
        usage = used[node_name]
        usage["pods"] += 1
        for container in pod["spec"].get("containers", []):
            requests = container.get("resources", {}).get("requests", {})
            usage["cpu"] += parse_quantity(requests.get("cpu", "0"))
            usage["memory"] += parse_quantity(requests.get("memory", "0"))
    if len(pods) != expected_pods:
        problems.append(f"listed {len(pods)} pods, expected {expected_pods}")
    if unbound:
        problems.append(f"{unbound} pod(s) listed without spec.nodeName")
    over = [name for name, usage in used.items()
            if any(usage[r] > allocatable[name][r] + 1e-9 for r in ("cpu", "memory", "pods"))]
    if over:
        problems.append(f"{len(over)} node(s) over-committed, e.g. {over[0]}: {used[over[0]]}")
    busiest = max((usage["pods"] for usage in used.values()), default=0)
    nodes_used = sum(1 for usage in used.values() if usage["pods"] > 0)
    return problems, {"nodesUsed": nodes_used, "maxPodsPerNode": busiest}


def one_run(args, objects_path, run_index, workdir):
    bin_dir = os.path.join(args.build_dir, "bin")
    port_file = os.path.join(workdir, f"port-{run_index}")
    kubeconfig = os.path.join(workdir, f"kubeconfig-{run_index}")
    result = {"run": run_index + 1, "ok": False, "problems": []}
    rss = PeakRss()
    testapi = subprocess.Popen(
        [os.path.join(bin_dir, "kubesched-testapi"), "--load", objects_path,
         "--port-file", port_file, "--threads", str(args.testapi_threads)] + args.testapi_arg,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    testapi_log = LogReader(testapi.stderr, echo=args.verbose)
    kubesched = None
    kubesched_log = None
    perf = []
    try:
        rss.watch("testapi", testapi.pid)
        load_started = time.monotonic()
        while not os.path.exists(port_file):
            if testapi.poll() is not None:
                raise RuntimeError("kubesched-testapi exited: " + " / ".join(testapi_log.tail(5)))
            if time.monotonic() - load_started > args.load_timeout:
                raise RuntimeError("kubesched-testapi did not start listening in time")
            time.sleep(0.02)
        result["testapiLoadSeconds"] = time.monotonic() - load_started
        with open(port_file) as f:
            server = f.read().strip()
        write_kubeconfig(kubeconfig, server)
        stats_url = f"{server}/testapi/stats"
        before = http_get_json(stats_url)
        if before.get("podsBound", 0) != 0:
            raise RuntimeError(f"pods already bound before kubesched started: {before['podsBound']}")

        command = [os.path.join(bin_dir, "kubesched"), "run", "--kubeconfig", kubeconfig,
                   "--leader-elect=false", "--kube-api-qps", "0",
                   "--health-bind-address", "127.0.0.1:0",
                   "--metrics-bind-address", "127.0.0.1:0", "--secure-port", "0"] + args.kubesched_arg
        testapi_cpu_before = cpu_seconds(testapi.pid)
        start_wall = time.time()
        start = time.monotonic()
        kubesched = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        kubesched_log = LogReader(kubesched.stderr, echo=args.verbose)
        rss.watch("kubesched", kubesched.pid)
        rss.start()
        perf = start_perf(args, workdir, run_index, kubesched.pid, testapi.pid)

        deadline = start + args.timeout
        stats = before
        first_bound = None
        while True:
            stats = http_get_json(stats_url)
            # Conservative: the last bind happened before this answer arrived.
            now = time.monotonic()
            bound = stats.get("podsBound", 0)
            if bound > 0 and first_bound is None:
                first_bound = now
            if bound >= args.pods:
                end = now
                break
            if kubesched.poll() is not None:
                raise RuntimeError(f"kubesched exited with {kubesched.returncode} after binding "
                                   f"{bound}/{args.pods}: " + " / ".join(kubesched_log.tail(5)))
            if now > deadline:
                # Still check the invariants below: what was bound must be bound correctly.
                result["problems"].append(f"timeout: {bound}/{args.pods} pods bound after "
                                          f"{args.timeout:g} s")
                end = None
                break
            time.sleep(args.poll_interval)
        kubesched_cpu = cpu_seconds(kubesched.pid)
        testapi_cpu = cpu_seconds(testapi.pid)
        stop_perf(perf)
        perf = []
        rss.sample()

        total = (end - start) if end is not None else None
        synced = kubesched_log.find("informers synced")
        sync_seconds = None
        if synced is not None:
            wall = log_wall_time(synced[1])
            sync_seconds = (wall - start_wall) if wall is not None else (synced[0] - start)
            sync_seconds = max(0.0, sync_seconds)
            if total is not None:
                sync_seconds = min(sync_seconds, total)
        finished = total is not None
        result.update({
            "seconds": total,
            "podsPerSecond": args.pods / total if finished and total > 0 else None,
            "syncSeconds": sync_seconds,
            "afterSyncSeconds":
                (total - sync_seconds) if finished and sync_seconds is not None else None,
            "podsPerSecondAfterSync":
                (args.pods / (total - sync_seconds))
                if finished and sync_seconds is not None and total > sync_seconds else None,
            "firstBindSeconds": (first_bound - start) if first_bound is not None else None,
            # CPU used until every pod was bound (kubesched: since it started; testapi: since
            # kubesched started, so without loading the objects).
            "kubeschedCpuSeconds": kubesched_cpu,
            # What one bound pod costs kubesched in CPU, start-up and list included.
            "kubeschedCpuMsPerPod":
                (kubesched_cpu * 1e3 / stats["podsBound"])
                if kubesched_cpu is not None and stats.get("podsBound") else None,
            "testapiCpuSeconds":
                (testapi_cpu - testapi_cpu_before)
                if testapi_cpu is not None and testapi_cpu_before is not None else None,
            "binds": stats.get("binds"),
            "bindConflicts": stats.get("bindConflicts"),
            "podsBound": stats.get("podsBound"),
            "podsBoundMoreThanOnce": stats.get("podsBoundMoreThanOnce"),
            "requests": stats.get("requests"),
        })

        # Let in-flight work settle, then check that nothing was bound twice afterwards either.
        time.sleep(args.settle)
        stats = http_get_json(stats_url)
        result["podsBoundMoreThanOnce"] = stats.get("podsBoundMoreThanOnce")
        result["binds"] = stats.get("binds")
        if stats.get("podsBoundMoreThanOnce", 0) != 0:
            result["problems"].append(
                f"podsBoundMoreThanOnce = {stats['podsBoundMoreThanOnce']}")
        if finished and stats.get("podsBound") != args.pods:
            result["problems"].append(f"podsBound = {stats.get('podsBound')}, expected {args.pods}")
        problems, placement = check_placements(server, args.pods)
        if not finished:  # unbound pods are already reported as the timeout
            problems = [p for p in problems if "without spec.nodeName" not in p]
        result["problems"] += problems
        result.update(placement)
        rss.sample()
    except (RuntimeError, OSError, urllib.error.URLError, ValueError, KeyError) as error:
        result["problems"].append(str(error))
    finally:
        stop_perf(perf)
        rss.sample()
        if kubesched is not None:
            result["kubeschedExit"] = stop_process(kubesched)
        rss.stop()
        stop_process(testapi)
        testapi_log.join()
        if kubesched_log is not None:
            kubesched_log.join()
    result["kubeschedPeakRssMiB"] = rss.peaks.get("kubesched", 0) / 1024.0
    result["testapiPeakRssMiB"] = rss.peaks.get("testapi", 0) / 1024.0
    if kubesched_log is not None:
        warnings = [line for _, line in kubesched_log.lines if line.startswith(("W", "E"))]
        result["kubeschedWarnings"] = len(warnings)
        if warnings:
            result["firstWarning"] = warnings[0]
    result["ok"] = not result["problems"]
    return result


# ---- optional profiling -----------------------------------------------------------------------


def start_perf(args, workdir, run_index, kubesched_pid, testapi_pid):
    processes = []
    for enabled, pid, label in ((args.perf_kubesched, kubesched_pid, "kubesched"),
                                (args.perf_testapi, testapi_pid, "testapi")):
        if not enabled:
            continue
        output = os.path.join(args.perf_dir or workdir, f"perf-{label}-{run_index + 1}.data")
        processes.append(subprocess.Popen(
            ["perf", "record", "-g", "-F", str(args.perf_frequency), "-p", str(pid),
             "-o", output], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        print(f"  perf recording {label} (pid {pid}) to {output}", file=sys.stderr)
    return processes


def stop_perf(processes):
    for process in processes:
        process.send_signal(signal.SIGINT)
    for process in processes:
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()


# ---- output -----------------------------------------------------------------------------------


def fmt(value, spec):
    if value is None:
        return "-"
    if spec == "d" and isinstance(value, float):
        return format(int(value), "d") if value.is_integer() else format(value, ".1f")
    return format(value, spec)


COLUMNS = (
    ("run", "run", "", 5),
    ("pods/s", "podsPerSecond", ",.0f", 8),
    ("total s", "seconds", ".3f", 8),
    ("sync s", "syncSeconds", ".3f", 7),
    ("1st bind s", "firstBindSeconds", ".3f", 10),
    ("pods/s after sync", "podsPerSecondAfterSync", ",.0f", 17),
    ("kubesched RSS MiB", "kubeschedPeakRssMiB", ".1f", 17),
    ("testapi RSS MiB", "testapiPeakRssMiB", ".1f", 15),
    ("kubesched CPU s", "kubeschedCpuSeconds", ".2f", 15),
    ("CPU ms/pod", "kubeschedCpuMsPerPod", ".3f", 10),
    ("testapi CPU s", "testapiCpuSeconds", ".2f", 13),
    ("bound twice", "podsBoundMoreThanOnce", "d", 11),
    ("binds", "binds", "d", 6),
    ("ok", "ok", "", 3),
)


def print_table(results, summary):
    header = "  ".join(title.rjust(width) for title, _, _, width in COLUMNS)
    print(header)
    print("-" * len(header))
    for result in results:
        cells = []
        for _, key, spec, width in COLUMNS:
            value = result.get(key)
            if key == "ok":
                text = "yes" if value else "NO"
            elif key == "run":
                text = str(value)
            else:
                text = fmt(value, spec)
            cells.append(text.rjust(width))
        print("  ".join(cells))
    if len(results) > 1:
        print("-" * len(header))
        cells = []
        for _, key, spec, width in COLUMNS:
            if key == "run":
                text = "median"
            elif key == "ok":
                text = "yes" if summary["ok"] else "NO"
            else:
                text = fmt(summary["median"].get(key), spec)
            cells.append(text.rjust(width))
        print("  ".join(cells))
    for result in results:
        for problem in result["problems"]:
            print(f"run {result['run']}: FAILED: {problem}")
        if result.get("firstWarning"):
            print(f"run {result['run']}: {result['kubeschedWarnings']} kubesched warning(s), "
                  f"first: {result['firstWarning']}")


def median_of(results, key):
    values = [r[key] for r in results if isinstance(r.get(key), (int, float))
              and not isinstance(r.get(key), bool)]
    return statistics.median(values) if values else None


# ---- main -------------------------------------------------------------------------------------


def main():
    parser = argparse.ArgumentParser(
        description="End-to-end kubesched throughput against kubesched-testapi over loopback "
                    "HTTP (goal: >= 3,000 pods/s for 5000 nodes, 10000 pods).")
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=10000)
    parser.add_argument("--runs", type=int, default=1, help="runs; the median is reported")
    parser.add_argument("--build-dir", default=os.path.join(REPO, "build"),
                        help="CMake build directory holding bin/kubesched and "
                             "bin/kubesched-testapi (default: build, the README's Release build)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--timeout", type=float, default=300,
                        help="seconds allowed for binding every pod (default 300)")
    parser.add_argument("--load-timeout", type=float, default=300,
                        help="seconds allowed for kubesched-testapi to load the objects")
    parser.add_argument("--testapi-threads", type=int, default=2)
    parser.add_argument("--kubesched-arg", action="append", default=[],
                        help="extra argument for `kubesched run` (repeatable, e.g. "
                             "--kubesched-arg=--bind-workers=32)")
    parser.add_argument("--testapi-arg", action="append", default=[],
                        help="extra argument for kubesched-testapi (repeatable)")
    parser.add_argument("--poll-interval", type=float, default=0.02,
                        help="seconds between /testapi/stats polls (default 0.02)")
    parser.add_argument("--settle", type=float, default=0.5,
                        help="seconds to wait after the last bind before checking invariants")
    parser.add_argument("--objects-file", help="write the generated objects here (and keep them)")
    parser.add_argument("--perf-kubesched", action="store_true",
                        help="perf record -g the kubesched process during each run")
    parser.add_argument("--perf-testapi", action="store_true",
                        help="perf record -g the testapi process during each run")
    parser.add_argument("--perf-dir", help="where perf data goes (default: a temporary directory "
                                           "that is kept when perf is on)")
    parser.add_argument("--perf-frequency", type=int, default=999)
    parser.add_argument("--verbose", action="store_true", help="echo the children's logs")
    args = parser.parse_args()
    if args.nodes < 1 or args.pods < 1 or args.runs < 1:
        parser.error("--nodes, --pods and --runs must be positive")
    args.build_dir = os.path.abspath(args.build_dir)
    for binary in ("kubesched", "kubesched-testapi"):
        path = os.path.join(args.build_dir, "bin", binary)
        if not os.access(path, os.X_OK):
            print(f"error: {path} not found; build it with\n  cmake -S {REPO} -B {args.build_dir}"
                  f" -DCMAKE_BUILD_TYPE=Release && cmake --build {args.build_dir} "
                  f"--target kubesched kubesched-testapi", file=sys.stderr)
            return 2

    keep = bool(args.perf_kubesched or args.perf_testapi) and not args.perf_dir
    workdir = tempfile.mkdtemp(prefix="kubesched-e2e-")
    try:
        objects_path = args.objects_file or os.path.join(workdir, "objects.json")
        write_objects(objects_path, args.nodes, args.pods)
        if not args.json:
            print(f"kubesched e2e throughput: {args.nodes} nodes, {args.pods} pending pods, "
                  f"{args.runs} run(s), binaries from {args.build_dir}")
            print(f"  nodes {NODE_CPU} cpu / {NODE_MEMORY} / {NODE_PODS} pods; pods request "
                  f"{POD_CPU} cpu / {POD_MEMORY}; testapi --threads {args.testapi_threads}; "
                  f"kubesched run --kube-api-qps 0 {' '.join(args.kubesched_arg)}".rstrip())
            print()
        results = []
        for run in range(args.runs):
            result = one_run(args, objects_path, run, workdir)
            results.append(result)
            if not args.json:
                status = "ok" if result["ok"] else "FAILED"
                print(f"  run {run + 1}/{args.runs}: {fmt(result.get('podsPerSecond'), ',.0f')} "
                      f"pods/s, {fmt(result.get('seconds'), '.3f')} s total, sync "
                      f"{fmt(result.get('syncSeconds'), '.3f')} s, kubesched peak RSS "
                      f"{result['kubeschedPeakRssMiB']:.1f} MiB ({status})", flush=True)
        keys = ("podsPerSecond", "seconds", "syncSeconds", "afterSyncSeconds",
                "podsPerSecondAfterSync", "firstBindSeconds", "kubeschedPeakRssMiB",
                "testapiPeakRssMiB", "testapiLoadSeconds", "kubeschedCpuSeconds", "kubeschedCpuMsPerPod", "testapiCpuSeconds",
                "podsBoundMoreThanOnce", "binds")
        summary = {
            "nodes": args.nodes,
            "pods": args.pods,
            "runs": args.runs,
            "ok": all(r["ok"] for r in results),
            "median": {key: median_of(results, key) for key in keys},
        }
        if args.json:
            print(json.dumps({"summary": summary, "runs": results}, indent=2))
        else:
            print()
            print_table(results, summary)
            median = summary["median"]
            print()
            print(f"median: {fmt(median['podsPerSecond'], ',.0f')} pods/s end to end "
                  f"({fmt(median['podsPerSecondAfterSync'], ',.0f')} pods/s after informers "
                  f"synced in {fmt(median['syncSeconds'], '.3f')} s); kubesched peak RSS "
                  f"{fmt(median['kubeschedPeakRssMiB'], '.1f')} MiB, testapi "
                  f"{fmt(median['testapiPeakRssMiB'], '.1f')} MiB; kubesched CPU "
                  f"{fmt(median['kubeschedCpuMsPerPod'], '.3f')} ms per bound pod")
            if keep:
                print(f"perf data kept in {workdir}")
        return 0 if summary["ok"] else 1
    finally:
        if not keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
