#include "scheduler/cmd/cli.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "config/config.h"
#include "scheduler/cmd/flags.h"
#include "scheduler/cmd/kube_scheduler_flags.h"
#include "scheduler/cmd/serving_flags.h"
#include "scheduler/metrics/metrics_server.h"
#include "scheduler/run/health_server.h"
#include "scheduler/run/run.h"
#include "scheduler/simulate/report_output.h"
#include "scheduler/simulate/simulation.h"
#include "scheduler/util/log.h"
#include "scheduler/util/strings.h"

namespace kubesched::scheduler {
namespace {

constexpr std::string_view kMainHelp =
    R"(kubesched - a Kubernetes scheduler for large, GPU-heavy clusters

Usage:
  kubesched <command> [flags]

Commands:
  simulate   Schedule the pending pods of a cluster dump with the real scheduler and report
  explain    Show, for one pod, every filter's verdict and every score on every node
  run        Run against a Kubernetes API server (the default command)

Flags:
  -h, --help      Show help (also: kubesched <command> --help)
      --version   Print the version

Exit codes:
  0  success
  1  an input file could not be read or parsed
  2  bad flags or a bad configuration
  3  finished, but some input objects were bad and skipped (listed on stderr)
)";

constexpr std::string_view kSimulateHelp =
    R"(Schedule every pending pod of a cluster dump and report where each one goes.

Usage:
  kubesched simulate --cluster FILE [--workload FILE] [--config FILE] [--output table|json]
                     [--metrics FILE]

Input files are what `kubectl get nodes,pods,namespaces,priorityclasses -A -o yaml` (or -o json)
prints: a List with items, multi-document YAML, or single objects. Bound pods occupy their
nodes; pending pods whose spec.schedulerName matches a profile are scheduled in queue order;
workload pods are created after the cluster, in file order. Other schedulers' pods are skipped.
Backoff uses a virtual clock, so a simulation never sleeps.

Flags:
  --cluster FILE     cluster dump (required)
  --workload FILE    pods to create after the cluster
  --config FILE      KubeSchedulerConfiguration (default: upstream defaults, profile "kubesched")
  --output FORMAT    table (default) or json
  --seed N           seed for breaking ties between equal scores (default 1)
  --threads N        filter/score threads, at most 1024 (default: CPU count, at most the
                     config's parallelism)
  --metrics FILE     write the run's final metrics scrape (Prometheus text format, the families
                     `kubesched run` serves on /metrics) to FILE; a FILE that cannot be written
                     is an error (exit code 2) before anything is simulated
)";

constexpr std::string_view kExplainHelp = R"(Explain where one pod would go and why.

Usage:
  kubesched explain --cluster FILE --pod FILE [--config FILE] [--policy NAME] [--output table|json]

Runs every filter plugin on every node (without stopping at the first failure) and, for the
feasible nodes, every score plugin: raw score, normalized score (0..100), weight and the weighted
total. All feasible nodes are scored (no sampling). The pod file holds exactly one Pod.

Flags:
  --cluster FILE     cluster dump (required)
  --pod FILE         the pod to explain (required)
  --config FILE      KubeSchedulerConfiguration (default: upstream defaults)
  --policy NAME      explain under this per-pod policy (as if the pod carried the annotation
                     kubesched.io/policy: NAME); the pod's own annotation works too
  --output FORMAT    table (default) or json
)";

constexpr std::string_view kRunHelp =
    R"(Run against a Kubernetes API server: watch the cluster and bind every pending pod
whose spec.schedulerName is one of the configuration's profiles.

Usage:
  kubesched run [--config FILE] [--kubeconfig FILE] [flags]
  kubesched [flags]            (run is the default command)

Connection: --kubeconfig, else clientConnection.kubeconfig in the config, else $KUBECONFIG, else
in-cluster (service account), else ~/.kube/config. With leader election on (the default), a
replica that does not hold the lease keeps its cache warm but binds nothing; losing the lease
exits with code 1. SIGTERM or SIGINT: stop taking pods, let in-flight binds finish (up to
--shutdown-grace), release the lease, exit 0.

Flags:
  --config FILE                KubeSchedulerConfiguration (clientConnection and leaderElection
                               are honoured; default: upstream defaults, profile "kubesched")
  --kubeconfig FILE            kubeconfig to connect with
  --context NAME               kubeconfig context (default: its current-context)
  --health-bind-address ADDR   also serve /healthz, /livez, /readyz over plain HTTP there (off
                               by default: the secure port serves them)
  --metrics-bind-address ADDR  also serve /metrics over plain HTTP, unauthenticated, there (off
                               by default; port 0 picks a free port, logged as "metrics on port N")
  --secure-port N              HTTPS port for /healthz, /livez, /readyz, /metrics, /configz
                               (default 10259; 0: none)
  --bind-address IP            address of the secure port (default 0.0.0.0)
  --tls-cert-file FILE         PEM certificate (chain) of the secure port; without it and
                               --tls-private-key-file, a self-signed one is made at start
  --tls-private-key-file FILE  PEM private key of --tls-cert-file
  --authentication-kubeconfig FILE
                               kubeconfig for the TokenReviews that authenticate bearer tokens on
                               the secure port (default: the scheduler's own connection)
  --authorization-kubeconfig FILE
                               kubeconfig for the SubjectAccessReviews that authorize requests on
                               the secure port (default: the scheduler's own connection)
  --authorization-always-allow-paths PATHS
                               comma-separated paths served without authentication or
                               authorization ("/x/*": a prefix; default /healthz,/readyz,/livez)
  --leader-elect[=true|false]  override leaderElection.leaderElect (a bare --leader-elect is
                               true; the value goes after "=", as every boolean flag's)
  --identity ID                lease holder identity (default: <hostname>_<random uuid>)
  --kube-api-qps N             override clientConnection.qps (0 = unlimited)
  --kube-api-burst N           override clientConnection.burst
  --bind-workers N             concurrent binds (default 16)
  --threads N                  filter/score threads, at most 1024 (default: CPU count - 1, at
                               least 1)
  --shutdown-grace DURATION    how long to wait for in-flight binds on exit (default 10s)
  --relist-interval DURATION   also list every watched resource again this often (at least 1m;
                               default 0: only when a watch needs it, e.g. after 410 Gone)
  -v N, --v=N                  log detail, as kube-scheduler's -v (default 0): 1 adds a line per
                               preemption, 2 a line per pod bound or found unschedulable

kube-scheduler's flags (see README "Migrating from kube-scheduler"):
  --master URL                 API server URL, over the kubeconfig's server (alone, without
                               credentials, when no kubeconfig is given)
  --leader-elect-lease-duration DURATION, --leader-elect-renew-deadline DURATION,
  --leader-elect-retry-period DURATION, --leader-elect-resource-name NAME,
  --leader-elect-resource-namespace NAMESPACE
                               override the configuration's leaderElection fields
  --leader-elect-resource-lock leases
                               the only lock kubesched takes (any other value is an error)
  --logging-format text|json   text (default) or one JSON object per line, as kube-scheduler's
                               ({"ts":..,"caller":..,"msg":..,"v":..,"pod":{..},"node":..})
  --feature-gates A=true,B=false
                               accepted; kubesched behaves one way, and a gate it does not know,
                               or one set to what it does not do, is named in a warning
  --kube-api-content-type, --profiling, --contention-profiling, --vmodule,
  --log-flush-frequency, --log-json-info-buffer-size, --log-json-split-stream,
  --log-text-info-buffer-size, --log-text-split-stream, --allow-metric-labels,
  --allow-metric-labels-manifest, --disabled-metrics, --show-hidden-metrics-for-version,
  --emulated-version, --cert-dir, --tls-cipher-suites, --tls-min-version, --tls-sni-cert-key,
  --http2-max-streams-per-connection, --permit-address-sharing, --permit-port-sharing,
  --client-ca-file, --requestheader-client-ca-file, --requestheader-allowed-names,
  --requestheader-extra-headers-prefix, --requestheader-group-headers,
  --requestheader-uid-headers, --requestheader-username-headers, --authentication-skip-lookup,
  --authentication-token-webhook-cache-ttl, --authentication-tolerate-lookup-failure,
  --authorization-webhook-cache-authorized-ttl, --authorization-webhook-cache-unauthorized-ttl
                               accepted and ignored, each with a warning that names it (none
                               for a boolean set to false)
  --write-config-to            refused (exit code 2): kubesched does not write its config out

Exit codes: 0 stopped by a signal; 1 cannot connect (no kubeconfig, TLS or credentials
rejected) or lost the lease; 2 bad flags or configuration.
)";

std::optional<config::Configuration> LoadConfig(const ParsedFlags& flags, std::ostream& err) {
  const auto path = Get(flags, "config");
  if (!path.has_value()) return config::DefaultConfiguration();
  auto loaded = config::LoadConfigurationFile(*path);
  if (!loaded.ok()) {
    err << "error: " << loaded.status().message() << "\n";
    return std::nullopt;
  }
  if (auto status = CheckConfiguration(*loaded); !status.ok()) {
    err << "error: " << *path << ": " << status.message() << "\n";
    return std::nullopt;
  }
  return *loaded;
}

// --output: "table" or "json"; nullopt (after printing the error) for anything else.
std::optional<bool> WantsJson(const ParsedFlags& flags, std::ostream& err) {
  const std::string output = Get(flags, "output").value_or("table");
  if (output == "json") return true;
  if (output == "table") return false;
  err << "error: --output must be table or json, got \"" << output << "\"\n";
  return std::nullopt;
}

bool ParseUint(const ParsedFlags& flags, const std::string& name, uint64_t* value,
               std::ostream& err) {
  const auto text = Get(flags, name);
  if (!text.has_value()) return true;
  if (!absl::SimpleAtoi(*text, value)) {
    err << "error: --" << name << " must be a non-negative integer, got \"" << *text << "\"\n";
    return false;
  }
  return true;
}

// The most filter/score threads a flag may ask for: far above any machine's cores, and low enough
// that starting them cannot fail.
constexpr uint64_t kMaxThreads = 1024;

// --threads: 0 (the flag's default) picks the CPU count.
bool ParseThreads(const ParsedFlags& flags, int* threads, std::ostream& err) {
  uint64_t value = 0;
  if (!ParseUint(flags, "threads", &value, err)) return false;
  if (value > kMaxThreads) {
    err << "error: --threads must be in 0.." << kMaxThreads << " (0: the default), got " << value
        << "\n";
    return false;
  }
  *threads = static_cast<int>(value);
  return true;
}

// What every command that prints a report reads from its flags: --output and --config.
struct ReportSettings {
  bool json = false;
  config::Configuration config;
};

std::optional<ReportSettings> ReadReportSettings(const ParsedFlags& flags, std::ostream& err) {
  const auto json = WantsJson(flags, err);
  if (!json.has_value()) return std::nullopt;
  auto config = LoadConfig(flags, err);
  if (!config.has_value()) return std::nullopt;
  return ReportSettings{*json, std::move(*config)};
}

int ReportProblems(const std::vector<api::DecodeProblem>& problems, std::ostream& err) {
  for (const auto& problem : problems) err << "warning: skipped " << problem.ToString() << "\n";
  if (problems.empty()) return kExitOk;
  err << problems.size() << " input object(s) were skipped\n";
  return kExitSkippedInput;
}

// Prints a command's report (or its error) and returns the exit code.
template <typename Report>
int PrintReport(const absl::StatusOr<Report>& report, bool json,
                std::string (*to_json)(const Report&), std::string (*to_table)(const Report&),
                std::ostream& out, std::ostream& err) {
  if (!report.ok()) {
    err << "error: " << report.status().message() << "\n";
    return kExitFailure;
  }
  out << (json ? to_json(*report) : to_table(*report));
  return ReportProblems(report->problems, err);
}

// --metrics FILE, opened (and truncated) before the simulation runs, so that a path that cannot be
// written is reported at once; nullopt without the flag. False after printing an error.
bool OpenMetricsFile(const ParsedFlags& flags, std::optional<std::ofstream>* file,
                     std::ostream& err) {
  const auto path = Get(flags, "metrics");
  if (!path.has_value()) return true;
  file->emplace(*path, std::ios::out | std::ios::trunc);
  if (!(*file)->is_open()) {
    err << "error: --metrics: cannot write \"" << *path << "\": " << std::strerror(errno) << "\n";
    return false;
  }
  return true;
}

// Writes simulate's final scrape; false (after printing an error) when the write failed.
bool WriteMetricsFile(const absl::StatusOr<SimulationReport>& report,
                      std::optional<std::ofstream>& file, const std::string& path,
                      std::ostream& err) {
  if (!file.has_value() || !report.ok()) return true;
  *file << report->metrics_text;
  file->close();
  if (file->fail()) {
    err << "error: --metrics: writing \"" << path << "\" failed\n";
    return false;
  }
  return true;
}

int Simulate(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto flags = ParseFlags(
      args, 1, {"cluster", "workload", "config", "output", "seed", "threads", "metrics"}, err);
  if (!flags.has_value()) return kExitUsage;
  if (flags->help) {
    out << kSimulateHelp;
    return kExitOk;
  }
  SimulationInput input;
  const auto cluster = Get(*flags, "cluster");
  if (!cluster.has_value()) {
    err << "error: --cluster is required (see kubesched simulate --help)\n";
    return kExitUsage;
  }
  input.cluster_path = *cluster;
  input.workload_path = Get(*flags, "workload");
  if (!ParseUint(*flags, "seed", &input.seed, err) || !ParseThreads(*flags, &input.threads, err)) {
    return kExitUsage;
  }
  const auto settings = ReadReportSettings(*flags, err);
  if (!settings.has_value()) return kExitUsage;
  std::optional<std::ofstream> metrics_file;
  if (!OpenMetricsFile(*flags, &metrics_file, err)) return kExitUsage;
  input.collect_metrics = metrics_file.has_value();
  const absl::StatusOr<SimulationReport> report = RunSimulation(input, settings->config);
  if (!WriteMetricsFile(report, metrics_file, Get(*flags, "metrics").value_or(""), err)) {
    return kExitFailure;
  }
  return PrintReport(report, settings->json, SimulationJson, SimulationTable, out, err);
}

int Explain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto flags = ParseFlags(args, 1, {"cluster", "pod", "config", "output", "seed", "policy"}, err);
  if (!flags.has_value()) return kExitUsage;
  if (flags->help) {
    out << kExplainHelp;
    return kExitOk;
  }
  ExplainInput input;
  const auto cluster = Get(*flags, "cluster");
  const auto pod = Get(*flags, "pod");
  if (!cluster.has_value() || !pod.has_value()) {
    err << "error: --cluster and --pod are required (see kubesched explain --help)\n";
    return kExitUsage;
  }
  input.cluster_path = *cluster;
  input.pod_path = *pod;
  input.policy = Get(*flags, "policy");
  if (input.policy.has_value() && input.policy->empty()) {
    err << "error: --policy needs a policy name\n";
    return kExitUsage;
  }
  if (!ParseUint(*flags, "seed", &input.seed, err)) return kExitUsage;
  const auto settings = ReadReportSettings(*flags, err);
  if (!settings.has_value()) return kExitUsage;
  return PrintReport(RunExplain(input, settings->config), settings->json, ExplainJson, ExplainTable,
                     out, err);
}

bool ParseRunNumbers(const ParsedFlags& flags, RunOptions* options, std::ostream& err) {
  uint64_t bind_workers = static_cast<uint64_t>(options->bind_workers);
  if (!ParseUint(flags, "bind-workers", &bind_workers, err) ||
      !ParseThreads(flags, &options->threads, err)) {
    return false;
  }
  if (bind_workers == 0 || bind_workers > 1024) {
    err << "error: --bind-workers must be in 1..1024, got " << bind_workers << "\n";
    return false;
  }
  options->bind_workers = static_cast<int>(bind_workers);
  if (const auto qps = Get(flags, "kube-api-qps"); qps.has_value()) {
    double value = 0;
    // SimpleAtod also reads "nan" and "inf", which no rate means.
    if (!absl::SimpleAtod(*qps, &value) || !std::isfinite(value) || value < 0) {
      err << "error: --kube-api-qps must be a non-negative number, got \"" << *qps << "\"\n";
      return false;
    }
    options->qps = value;
  }
  if (const auto burst = Get(flags, "kube-api-burst"); burst.has_value()) {
    int value = 0;
    if (!absl::SimpleAtoi(*burst, &value) || value <= 0) {
      err << "error: --kube-api-burst must be a positive integer, got \"" << *burst << "\"\n";
      return false;
    }
    options->burst = value;
  }
  if (const auto relist = Get(flags, "relist-interval"); relist.has_value()) {
    if (!absl::ParseDuration(*relist, &options->relist_interval) ||
        options->relist_interval < absl::ZeroDuration() ||
        options->relist_interval == absl::InfiniteDuration() ||
        (options->relist_interval > absl::ZeroDuration() &&
         options->relist_interval < absl::Minutes(1))) {
      err << "error: --relist-interval must be 0 or a duration of at least 1m such as 30m, got \""
          << *relist << "\"\n";
      return false;
    }
  }
  if (const auto grace = Get(flags, "shutdown-grace"); grace.has_value()) {
    if (!absl::ParseDuration(*grace, &options->shutdown_grace) ||
        options->shutdown_grace < absl::ZeroDuration() ||
        options->shutdown_grace == absl::InfiniteDuration()) {
      err << "error: --shutdown-grace must be a duration such as 10s, got \"" << *grace << "\"\n";
      return false;
    }
  }
  return true;
}

// Every flag has parsed: from here on the log has its format, and in JSON even the errors that
// stop the run are JSON lines.
int RunWithLogFormat(const RunOptions& options, const KubeSchedulerSettings& settings,
                     std::ostream& err) {
  const util::LogFormat previous = util::CurrentLogFormat();
  util::SetLogFormat(settings.log_format);
  for (const std::string& warning : settings.warnings) util::LogWarning(warning);
  int code = kExitOk;
  if (settings.log_format == util::LogFormat::kJson) {
    util::ErrorLogStream errors("stopping on an error");
    code = RunScheduler(options, errors);
  } else {
    code = RunScheduler(options, err);
  }
  util::SetLogFormat(previous);
  return code;
}

int Run(const std::vector<std::string>& args, size_t first, std::ostream& out, std::ostream& err) {
  auto flags = ParseFlags(
      args, first,
      {"config", "kubeconfig", "context", "health-bind-address", "metrics-bind-address",
       "leader-elect", "identity", "kube-api-qps", "kube-api-burst", "bind-workers", "threads",
       "shutdown-grace", "relist-interval", "v",
       // the secure port (serving_flags.h)
       "secure-port", "bind-address", "tls-cert-file", "tls-private-key-file",
       "authentication-kubeconfig", "authorization-kubeconfig", "authorization-always-allow-paths"},
      err, KubeSchedulerFlags());
  if (!flags.has_value()) return kExitUsage;
  if (flags->help) {
    out << kRunHelp;
    return kExitOk;
  }
  if (const auto verbosity = Get(*flags, "v"); verbosity.has_value()) {
    int level = 0;
    if (!absl::SimpleAtoi(*verbosity, &level) || level < 0 || level > 10) {
      err << "error: -v must be a number from 0 to 10, got \"" << *verbosity << "\"\n";
      return kExitUsage;
    }
    util::SetVerbosity(level);
  }
  RunOptions options;
  options.config_path = Get(*flags, "config");
  options.kubeconfig = Get(*flags, "kubeconfig").value_or("");
  options.context = Get(*flags, "context").value_or("");
  options.identity = Get(*flags, "identity").value_or("");
  options.health_bind_address =
      Get(*flags, "health-bind-address").value_or(options.health_bind_address);
  if (absl::Status address = ValidateBindAddress(options.health_bind_address);
      !options.health_bind_address.empty() && !address.ok()) {
    err << "error: --health-bind-address: " << address.message() << "\n";
    return kExitUsage;
  }
  options.metrics_bind_address =
      Get(*flags, "metrics-bind-address").value_or(options.metrics_bind_address);
  if (absl::Status address = metrics::ValidateMetricsAddress(options.metrics_bind_address);
      !options.metrics_bind_address.empty() && !address.ok()) {
    err << "error: --metrics-bind-address: " << address.message() << "\n";
    return kExitUsage;
  }
  if (!ParseServingFlags([&](const std::string& name) { return Get(*flags, name); },
                         &options.serving, err)) {
    return kExitUsage;
  }
  KubeSchedulerSettings settings;
  if (!ReadKubeSchedulerFlags(*flags, &options, &settings, err) ||
      !ParseRunNumbers(*flags, &options, err)) {
    return kExitUsage;
  }
  return RunWithLogFormat(options, settings, err);
}

}  // namespace

int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty()) return Run(args, 0, out, err);
  const std::string& command = args[0];
  if (command == "-h" || command == "--help" || command == "help") {
    out << kMainHelp;
    return kExitOk;
  }
  if (command == "--version" || command == "version") {
    out << "kubesched " << KUBESCHED_VERSION << "\n";
    return kExitOk;
  }
  if (command == "simulate") return Simulate(args, out, err);
  if (command == "explain") return Explain(args, out, err);
  if (command == "run") return Run(args, 1, out, err);
  // Flags first, as a kube-scheduler command line has them (`-v=2 --config ...`): run.
  if (command.rfind("-", 0) == 0) return Run(args, 0, out, err);
  err << "error: unknown command \"" << command << "\"\n\n" << kMainHelp;
  return kExitUsage;
}

}  // namespace kubesched::scheduler
