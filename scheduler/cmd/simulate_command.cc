// `kubesched simulate`: on a dump or a live cluster, under one configuration or two (--compare).

#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iomanip>

#include "absl/strings/str_format.h"
#include "scheduler/cmd/report_commands.h"
#include "scheduler/cmd/report_commands_internal.h"
#include "scheduler/cmd/report_help.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/simulate/compare.h"
#include "scheduler/simulate/live_cluster.h"
#include "scheduler/simulate/report_output.h"
#include "scheduler/simulate/simulation.h"
#include "scheduler/simulate/simulation_summary.h"
#include "scheduler/util/exit_codes.h"

namespace kubesched::scheduler {
namespace {

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

// Progress on a terminal: one line, rewritten at most twice a second, cleared at the end.
class TerminalProgress {
 public:
  explicit TerminalProgress(std::ostream& err) : err_(err) {}
  ~TerminalProgress() {
    if (shown_) err_ << "\r\033[K" << std::flush;
  }

  void Update(int done, int total) {
    const auto now = std::chrono::steady_clock::now();
    if (shown_ && now - last_ < std::chrono::milliseconds(500)) return;
    last_ = now;
    shown_ = true;
    const double seconds = std::chrono::duration<double>(now - start_).count();
    const double rate = seconds > 0 ? done / seconds : 0;
    const std::string eta =
        rate > 0 ? absl::StrFormat("%.0fs", (total - done) / rate) : std::string("?");
    err_ << absl::StrFormat("\rsimulating: %d/%d pods, %.0f pods/s, ETA %s\033[K", done, total,
                            rate, eta)
         << std::flush;
  }

 private:
  std::ostream& err_;
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point last_;
  bool shown_ = false;
};

// What simulate runs on and how it prints, from its flags.
struct SimulateSettings {
  bool json = false;
  PodsOutput pods_output = PodsOutput::kAll;
  std::optional<std::string> compare;  // the second configuration's file
  config::Configuration config;
  std::string config_name;  // the first configuration, as the comparison names it
  SimulationInput input;
  std::vector<api::DecodeProblem> problems;  // of input decoded here
};

bool ParseOutputFlags(const ParsedFlags& flags, SimulateSettings* settings, std::ostream& err) {
  const auto json = WantsJson(flags, err);
  if (!json.has_value()) return false;
  settings->json = *json;
  const std::string pods = Get(flags, "pods-output").value_or("all");
  const auto pods_output = ParsePodsOutput(pods);
  if (!pods_output.has_value()) {
    err << "error: --pods-output must be all, pending or none, got \"" << pods << "\"\n";
    return false;
  }
  settings->pods_output = *pods_output;
  settings->compare = Get(flags, "compare");
  if (settings->compare.has_value() && Get(flags, "metrics").has_value()) {
    err << "error: --compare and --metrics exclude each other\n";
    return false;
  }
  return ParseUint(flags, "seed", &settings->input.seed, err) &&
         ParseThreads(flags, &settings->input.threads, err);
}

// Decodes `path` into `objects`, its problems into `problems`; false after printing the error.
bool DecodeOnce(const std::string& path, std::optional<std::vector<api::Object>>* objects,
                std::vector<api::DecodeProblem>* problems, std::ostream& err) {
  auto decoded = api::DecodeFile(path);
  if (!decoded.ok()) {
    err << "error: " << decoded.status().message() << "\n";
    return false;
  }
  *objects = std::move(decoded->objects);
  for (auto& problem : decoded->problems) problems->push_back(std::move(problem));
  return true;
}

// The input and the configuration: a live cluster read once, or the files (decoded here when
// two configurations will run on them). Returns kExitOk, else the exit code after the error.
int LoadSimulateInput(const ParsedFlags& flags, SimulateSettings* settings, std::ostream& err) {
  const auto cluster = Get(flags, "cluster");
  const bool live = Get(flags, "kubeconfig").has_value();
  if (cluster.has_value() && live) {
    err << "error: --cluster and --kubeconfig exclude each other\n";
    return kExitUsage;
  }
  if (!cluster.has_value() && !live) {
    err << "error: --cluster is required, or --kubeconfig for a live cluster (see kubesched "
           "simulate --help)\n";
    return kExitUsage;
  }
  if (!live && (Get(flags, "context").has_value() || Get(flags, "config-map").has_value())) {
    err << "error: --context and --config-map need --kubeconfig\n";
    return kExitUsage;
  }
  SimulationInput& input = settings->input;
  input.workload_path = Get(flags, "workload");
  if (!live) {
    input.cluster_path = *cluster;
    auto config = LoadConfigFlag(flags, err);
    if (!config.has_value()) return kExitUsage;
    settings->config = *std::move(config);
    if (!settings->compare.has_value()) return kExitOk;
    if (!DecodeOnce(*cluster, &input.cluster_objects, &settings->problems, err))
      return kExitFailure;
  } else {
    std::unique_ptr<client::HttpTransport> transport = ConnectFromFlags(flags, err);
    if (transport == nullptr) return kExitFailure;
    auto config = ResolveConfigFlags(flags, transport.get(), err);
    if (!config.has_value()) return kExitUsage;
    settings->config = *std::move(config);
    auto listed = ListLive(transport.get(), settings->config);
    if (!listed.ok()) {
      err << "error: " << listed.status().message() << "\n";
      return kExitFailure;
    }
    input.cluster_objects = std::move(listed->objects);
    settings->problems = std::move(listed->problems);
  }
  if (input.workload_path.has_value() &&
      !DecodeOnce(*input.workload_path, &input.workload_objects, &settings->problems, err)) {
    return kExitFailure;
  }
  return kExitOk;
}

int ProblemsExitCode(std::vector<api::DecodeProblem> problems,
                     const std::vector<api::DecodeProblem>& more, std::ostream& err) {
  for (const auto& problem : more) problems.push_back(problem);
  return ReportProblems(problems, err);
}

int PrintSimulation(SimulationReport report, const SimulateSettings& settings, std::ostream& out,
                    std::ostream& err) {
  const std::string summary = settings.json ? "" : SimulationSummaryTable(report);
  LimitPodResults(settings.pods_output, &report);
  out << (settings.json ? SimulationJson(report) : SimulationTable(report) + summary);
  return ProblemsExitCode(settings.problems, report.problems, err);
}

int RunCompare(const SimulateSettings& settings, std::optional<TerminalProgress>& progress,
               std::ostream& out, std::ostream& err) {
  auto other = config::LoadConfigurationFile(*settings.compare);
  if (!other.ok()) {
    err << "error: --compare: " << other.status().message() << "\n";
    return kExitUsage;
  }
  if (auto status = CheckConfiguration(*other); !status.ok()) {
    err << "error: " << *settings.compare << ": " << status.message() << "\n";
    return kExitUsage;
  }
  auto before = RunSimulation(settings.input, settings.config);
  if (!before.ok()) {
    err << "error: " << before.status().message() << "\n";
    return kExitFailure;
  }
  auto after = RunSimulation(settings.input, *other);
  if (!after.ok()) {
    err << "error: " << after.status().message() << "\n";
    return kExitFailure;
  }
  progress.reset();
  SimulationComparison comparison = CompareSimulations(*before, *after);
  comparison.before_name = settings.config_name;
  comparison.after_name = *settings.compare;
  out << (settings.json ? ComparisonJson(comparison) : ComparisonTable(comparison));
  return ProblemsExitCode(settings.problems, before->problems, err);
}

}  // namespace

int Simulate(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  auto flags = ParseFlags(args, 1,
                          {"cluster", "workload", "config", "output", "seed", "threads", "metrics",
                           "kubeconfig", "context", "config-map", "compare", "pods-output"},
                          err);
  if (!flags.has_value()) return kExitUsage;
  if (flags->help) {
    out << kSimulateHelp;
    return kExitOk;
  }
  SimulateSettings settings;
  if (!ParseOutputFlags(*flags, &settings, err)) return kExitUsage;
  std::optional<std::ofstream> metrics_file;
  if (!OpenMetricsFile(*flags, &metrics_file, err)) return kExitUsage;
  if (int code = LoadSimulateInput(*flags, &settings, err); code != kExitOk) return code;
  settings.config_name =
      Get(*flags, "config").value_or(Get(*flags, "config-map").value_or("(defaults)"));
  std::optional<TerminalProgress> progress;
  if (isatty(STDERR_FILENO) == 1) {
    progress.emplace(err);
    settings.input.progress = [&progress](int done, int total) { progress->Update(done, total); };
  }
  if (settings.compare.has_value()) return RunCompare(settings, progress, out, err);
  settings.input.collect_metrics = metrics_file.has_value();
  const absl::StatusOr<SimulationReport> report = RunSimulation(settings.input, settings.config);
  progress.reset();
  if (!WriteMetricsFile(report, metrics_file, Get(*flags, "metrics").value_or(""), err)) {
    return kExitFailure;
  }
  if (!report.ok()) {
    err << "error: " << report.status().message() << "\n";
    return kExitFailure;
  }
  return PrintSimulation(*report, settings, out, err);
}

}  // namespace kubesched::scheduler
