#include "scheduler/cmd/report_commands.h"

#include "absl/strings/numbers.h"
#include "scheduler/cmd/report_commands_internal.h"
#include "scheduler/cmd/report_help.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/simulate/live_cluster.h"
#include "scheduler/simulate/report_output.h"
#include "scheduler/simulate/simulation.h"
#include "scheduler/util/exit_codes.h"

namespace kubesched::scheduler {

std::optional<config::Configuration> LoadConfigFlag(const ParsedFlags& flags, std::ostream& err) {
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

std::optional<config::Configuration> ResolveConfigFlags(const ParsedFlags& flags,
                                                        client::HttpTransport* transport,
                                                        std::ostream& err) {
  const auto map = Get(flags, "config-map");
  if (!map.has_value()) return LoadConfigFlag(flags, err);
  if (Get(flags, "config").has_value()) {
    err << "error: --config and --config-map exclude each other\n";
    return std::nullopt;
  }
  if (transport == nullptr) {
    err << "error: --config-map reads a live cluster's ConfigMap: give --kubeconfig\n";
    return std::nullopt;
  }
  auto loaded = ConfigFromConfigMap(transport, *map);
  if (!loaded.ok()) {
    err << "error: " << loaded.status().message() << "\n";
    return std::nullopt;
  }
  if (auto status = CheckConfiguration(*loaded); !status.ok()) {
    err << "error: ConfigMap " << *map << ": " << status.message() << "\n";
    return std::nullopt;
  }
  return *loaded;
}

std::optional<bool> WantsJson(const ParsedFlags& flags, std::ostream& err) {
  const std::string output = Get(flags, "output").value_or("table");
  if (output == "json") return true;
  if (output == "table") return false;
  err << "error: --output must be table or json, got \"" << output << "\"\n";
  return std::nullopt;
}

int ReportProblems(const std::vector<api::DecodeProblem>& problems, std::ostream& err) {
  for (const auto& problem : problems) err << "warning: skipped " << problem.ToString() << "\n";
  if (problems.empty()) return kExitOk;
  err << problems.size() << " input object(s) were skipped\n";
  return kExitSkippedInput;
}

std::unique_ptr<client::HttpTransport> ConnectFromFlags(const ParsedFlags& flags,
                                                        std::ostream& err) {
  LiveClusterSource source{Get(flags, "kubeconfig").value_or(""),
                           Get(flags, "context").value_or("")};
  auto transport = ConnectLive(source);
  if (!transport.ok()) {
    err << "error: " << transport.status().message() << "\n";
    return nullptr;
  }
  return *std::move(transport);
}

namespace {

// explain's arguments with its positional POD taken out (into `pods`) and "-n NS" spelled
// "--namespace NS", for the flag parser. Every explain flag but --help takes a value.
std::vector<std::string> TakePositional(const std::vector<std::string>& args,
                                        std::vector<std::string>* pods) {
  std::vector<std::string> flags = {args.front()};
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "-n") {
      flags.push_back("--namespace");
      if (i + 1 < args.size()) flags.push_back(args[++i]);
    } else if (arg.rfind("-n=", 0) == 0) {
      flags.push_back("--namespace=" + arg.substr(3));
    } else if (arg == "-h" || arg == "--help" || arg.find('=') != std::string::npos ||
               arg.rfind("-", 0) != 0) {
      (arg.rfind("-", 0) == 0 ? flags : *pods).push_back(arg);
    } else {
      flags.push_back(arg);
      if (i + 1 < args.size()) flags.push_back(args[++i]);
    }
  }
  return flags;
}

// --nodes and --top: nullopt for every node, else how many feasible nodes the summary lists.
bool ParseNodesFlags(const ParsedFlags& flags, std::optional<int>* top, std::ostream& err) {
  const std::string nodes = Get(flags, "nodes").value_or("summary");
  if (nodes != "summary" && nodes != "all") {
    err << "error: --nodes must be summary or all, got \"" << nodes << "\"\n";
    return false;
  }
  uint64_t count = 10;
  if (!ParseUint(flags, "top", &count, err)) return false;
  if (count > 100000) {
    err << "error: --top must be at most 100000, got " << count << "\n";
    return false;
  }
  if (nodes == "summary") *top = static_cast<int>(count);
  return true;
}

// Reads the live cluster and explains `pod_arg` in it into `report`. Returns kExitOk then (the
// report may hold an error still to print), else the exit code after printing the error.
int ExplainLive(const ParsedFlags& flags, const std::string& pod_arg,
                const std::optional<std::string>& policy, uint64_t seed,
                absl::StatusOr<ExplainReport>* report, std::ostream& err) {
  auto pod = ParseLivePod(pod_arg, Get(flags, "namespace").value_or("default"));
  if (!pod.ok()) {
    err << "error: " << pod.status().message() << "\n";
    return kExitUsage;
  }
  std::unique_ptr<client::HttpTransport> transport = ConnectFromFlags(flags, err);
  if (transport == nullptr) return kExitFailure;
  auto config = ResolveConfigFlags(flags, transport.get(), err);
  if (!config.has_value()) return kExitUsage;
  auto objects = ListLive(transport.get(), *config);
  if (!objects.ok()) {
    *report = objects.status();
    return kExitOk;
  }
  *report = ExplainListedPod(*objects, *pod, *config, seed, policy);
  return kExitOk;
}

// Which input explain runs on: the --cluster and --pod files, or the live POD. Checks that the
// flags of the other are absent; false after printing the error.
bool CheckExplainInput(const ParsedFlags& flags, const std::vector<std::string>& pods,
                       std::ostream& err) {
  const bool files = Get(flags, "cluster").has_value() || Get(flags, "pod").has_value();
  const bool live_flags =
      Get(flags, "kubeconfig").has_value() || Get(flags, "context").has_value() ||
      Get(flags, "namespace").has_value() || Get(flags, "config-map").has_value();
  if (pods.size() > 1) {
    err << "error: explain takes one POD, got " << pods.size() << "\n";
    return false;
  }
  if (!pods.empty() && files) {
    err << "error: a live POD and --cluster/--pod exclude each other\n";
    return false;
  }
  if (pods.empty() && live_flags) {
    err << "error: --kubeconfig, --context, -n and --config-map need a POD (NAME or pod/NAME)\n";
    return false;
  }
  if (pods.empty() && (!Get(flags, "cluster").has_value() || !Get(flags, "pod").has_value())) {
    err << "error: --cluster and --pod are required, or a live POD (see kubesched explain "
           "--help)\n";
    return false;
  }
  return true;
}

}  // namespace

int Explain(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  std::vector<std::string> pods;
  auto flags = ParseFlags(TakePositional(args, &pods), 1,
                          {"cluster", "pod", "config", "output", "seed", "policy", "kubeconfig",
                           "context", "namespace", "config-map", "nodes", "top"},
                          err);
  if (!flags.has_value()) return kExitUsage;
  if (flags->help) {
    out << kExplainHelp;
    return kExitOk;
  }
  if (!CheckExplainInput(*flags, pods, err)) return kExitUsage;
  const std::optional<std::string> policy = Get(*flags, "policy");
  if (policy.has_value() && policy->empty()) {
    err << "error: --policy needs a policy name\n";
    return kExitUsage;
  }
  uint64_t seed = 1;
  std::optional<int> top;
  const std::optional<bool> json = WantsJson(*flags, err);
  if (!json.has_value() || !ParseUint(*flags, "seed", &seed, err) ||
      !ParseNodesFlags(*flags, &top, err)) {
    return kExitUsage;
  }
  absl::StatusOr<ExplainReport> report;
  if (!pods.empty()) {
    if (int code = ExplainLive(*flags, pods.front(), policy, seed, &report, err); code != kExitOk) {
      return code;
    }
  } else {
    const auto config = LoadConfigFlag(*flags, err);
    if (!config.has_value()) return kExitUsage;
    report = RunExplain({*Get(*flags, "cluster"), *Get(*flags, "pod"), seed, policy}, *config);
  }
  if (!report.ok()) {
    err << "error: " << report.status().message() << "\n";
    return kExitFailure;
  }
  if (*json) {
    out << ExplainJson(*report);
  } else {
    out << (top.has_value() ? ExplainSummaryTable(*report, *top) : ExplainTable(*report));
  }
  return ReportProblems(report->problems, err);
}

}  // namespace kubesched::scheduler
