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
#include "scheduler/cmd/report_commands.h"
#include "scheduler/cmd/serving_flags.h"
#include "scheduler/metrics/metrics_server.h"
#include "scheduler/run/health_server.h"
#include "scheduler/run/run.h"
#include "scheduler/util/log.h"
#include "scheduler/util/strings.h"

namespace kubesched::scheduler {
namespace {

constexpr std::string_view kMainHelp =
    R"(kubesched - a Kubernetes scheduler for large, GPU-heavy clusters

Usage:
  kubesched <command> [flags]

Commands:
  simulate   Schedule the pending pods of a cluster dump or a live cluster with the real
             scheduler and report (--compare: under two configurations)
  explain    Show, for one pod of a dump or a live cluster, every filter's verdict and every
             score on every node
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
