#pragma once

// simulate's and explain's --help.

#include <string_view>

namespace kubesched::scheduler {

inline constexpr std::string_view kSimulateHelp =
    R"(Schedule every pending pod of a cluster dump, or of a live cluster, and report where each
one goes. Nothing is written to the cluster.

Usage:
  kubesched simulate --cluster FILE [--workload FILE] [--config FILE] [--output table|json]
                     [--metrics FILE] [--pods-output all|pending|none] [--compare FILE]
  kubesched simulate --kubeconfig FILE [--context NAME] [--config FILE | --config-map NS/NAME]
                     [--workload FILE] [...]

Input files are what `kubectl get nodes,pods,namespaces,priorityclasses -A -o yaml` (or -o json)
prints: a List with items, multi-document YAML, or single objects. Bound pods occupy their
nodes; pending pods whose spec.schedulerName matches a profile are scheduled in queue order;
workload pods are created after the cluster, in file order. Other schedulers' pods are skipped.
Backoff uses a virtual clock, so a simulation never sleeps. With --kubeconfig the cluster is
read once (GET and paginated LIST of every kind `run` watches) and simulated in memory.

Flags:
  --cluster FILE     cluster dump (this or --kubeconfig is required)
  --kubeconfig FILE  read the live cluster this kubeconfig points to instead of a dump
  --context NAME     the kubeconfig context (default: its current-context)
  --workload FILE    pods to create after the cluster
  --config FILE      KubeSchedulerConfiguration (default: upstream defaults, profile "kubesched")
  --config-map NS/NAME[:KEY]
                     with --kubeconfig: the configuration held by this ConfigMap (the one `run`
                     was deployed with), key KEY, else config.yaml, else its only key
  --compare FILE     also simulate the same input under the configuration FILE and report what
                     differs: pods that move, pods that become (un)schedulable, per-node and
                     per-queue usage before (--config) and after (FILE)
  --pods-output WHAT all (default): every pod; pending: only pods left without a node; none: no
                     per-pod lines (the summary, nodes and queues remain; JSON "pods" likewise)
  --output FORMAT    table (default) or json
  --seed N           seed for breaking ties between equal scores (default 1)
  --threads N        filter/score threads, at most 1024 (default: CPU count, at most the
                     config's parallelism)
  --metrics FILE     write the run's final metrics scrape (Prometheus text format, the families
                     `kubesched run` serves on /metrics) to FILE; a FILE that cannot be written
                     is an error (exit code 2) before anything is simulated

The table ends with the reasons pods were left unschedulable (pods per reason) and the pods per
queue. When stderr is a terminal, progress (pods done, pods/s, ETA) is shown there; never on a
pipe or file.
)";

inline constexpr std::string_view kExplainHelp = R"(Explain where one pod would go and why.

Usage:
  kubesched explain --cluster FILE --pod FILE [--config FILE] [--policy NAME] [--output table|json]
  kubesched explain [--kubeconfig FILE] [--context NAME] [-n NAMESPACE] POD
                    [--config FILE | --config-map NS/NAME[:KEY]] [...]

Runs every filter plugin on every node (without stopping at the first failure) and, for the
feasible nodes, every score plugin: raw score, normalized score (0..100), weight and the weighted
total. All feasible nodes are scored (no sampling). A bound pod is explained as if it were pending
and not yet on its node. The pod file holds exactly one Pod.

With POD (NAME or pod/NAME), the live cluster is read once (GET and paginated LIST of every kind
`run` watches; nothing is written) and the pod is judged as `run` would judge it now.

Flags:
  --cluster FILE     cluster dump
  --pod FILE         the pod to explain (with --cluster)
  --kubeconfig FILE  the live cluster's kubeconfig (default as `run`: $KUBECONFIG, in-cluster,
                     ~/.kube/config)
  --context NAME     the kubeconfig context (default: its current-context)
  -n, --namespace NS the live pod's namespace (default "default")
  --config FILE      KubeSchedulerConfiguration (default: upstream defaults)
  --config-map NS/NAME[:KEY]
                     live only: the configuration held by this ConfigMap (the one `run` was
                     deployed with), key KEY, else config.yaml, else its only key
  --policy NAME      explain under this per-pod policy (as if the pod carried the annotation
                     kubesched.io/policy: NAME); the pod's own annotation works too
  --output FORMAT    table (default) or json (every node, best total first)
  --nodes WHICH      summary (default): the chosen node, the FailedScheduling-style reason
                     histogram, the --top feasible nodes with every plugin's score and the failed
                     nodes grouped by reason; all: one line per node, best first
  --top N            how many feasible nodes the summary lists (default 10)
)";

}  // namespace kubesched::scheduler
