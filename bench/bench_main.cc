// kubesched_bench: runs scheduler_perf-like workloads through `simulate` and prints one table.
//
//   kubesched_bench [--workload NAME] [--runs N] [--threads N] [--keep DIR]
//   kubesched_bench --compare-affinity
//   kubesched_bench --scrape-cost PENDING_PODS [--runs N]
//
// Each workload is generated into a temporary directory (or DIR), then simulated N times; the
// table shows the median run by pods/s. Each workload runs in a process of its own, as
// `kubesched simulate` does: one workload's heap does not shape the next one's, and the peak RSS
// is the workload's own, taken after its first run.
//
// The scale workloads (SchedulingBasic20k, SchedulingBasic50k) take minutes and GiBs of generated
// files, so a run of every workload leaves them out; name them with --workload.

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "bench/affinity_comparison.h"
#include "bench/scrape_cost.h"
#include "bench/workloads.h"
#include "config/config.h"
#include "scheduler/api/decode.h"
#include "scheduler/simulate/simulation.h"
#include "scheduler/util/process_setup.h"

namespace {

struct Options {
  std::string workload;  // empty = all
  int runs = 3;
  int threads = 0;
  std::string keep_dir;
  bool compare_affinity = false;
  int scrape_cost_pending = 0;  // > 0: time a metrics scrape with this many pods pending
};

bool ParseArgs(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> std::string { return i + 1 < argc ? argv[++i] : ""; };
    if (arg == "--workload") {
      options->workload = value();
    } else if (arg == "--runs") {
      options->runs = std::max(1, std::atoi(value().c_str()));
    } else if (arg == "--threads") {
      options->threads = std::atoi(value().c_str());
    } else if (arg == "--keep") {
      options->keep_dir = value();
    } else if (arg == "--scrape-cost") {
      options->scrape_cost_pending = std::max(1, std::atoi(value().c_str()));
    } else if (arg == "--compare-affinity") {
      options->compare_affinity = true;
    } else {
      std::cerr
          << "usage: kubesched_bench [--workload NAME] [--runs N] [--threads N] [--keep DIR]\n"
          << "       kubesched_bench --compare-affinity\n"
          << "       kubesched_bench --scrape-cost PENDING_PODS [--runs N]\n"
          << "workloads:";
      for (const auto& w : kubesched::bench::Workloads()) {
        if (!w.opt_in) std::cerr << " " << w.name;
      }
      std::cerr << "\nrun only when named with --workload (large):";
      for (const auto& w : kubesched::bench::Workloads()) {
        if (w.opt_in) std::cerr << " " << w.name;
      }
      std::cerr
          << "\ncolumns: load s is the median run's wall time from reading the cluster file"
          << " to the first\nscheduling attempt; RSS MiB is the workload process's peak through"
          << " its first run.\n";
      return false;
    }
  }
  return true;
}

// Wall time to read and decode both files, as simulate does before it starts scheduling.
double DecodeSeconds(const kubesched::bench::GeneratedFiles& files) {
  const auto start = std::chrono::steady_clock::now();
  for (const auto& path : {files.cluster_path, files.workload_path}) {
    if (!kubesched::api::DecodeFileQueue(path).ok()) return -1;
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double PeakRssMiB() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

// Generates `spec` into `dir`, simulates it options.runs times and prints its row; 0 on success.
int RunWorkload(const kubesched::bench::WorkloadSpec& spec, const Options& options,
                const std::string& dir) {
  const auto files = kubesched::bench::Generate(spec, dir);
  auto config = kubesched::config::DefaultConfiguration();
  if (!spec.config_yaml.empty()) {
    auto parsed = kubesched::config::ParseConfiguration(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" +
        spec.config_yaml);
    if (!parsed.ok()) {
      std::cerr << spec.name << ": " << parsed.status().message() << "\n";
      return 1;
    }
    config = *std::move(parsed);
  }
  std::vector<kubesched::scheduler::SimulationReport> reports;
  double first_run_rss = 0;  // later runs reuse a heap the earlier ones shaped
  for (int run = 0; run < options.runs; ++run) {
    kubesched::scheduler::SimulationInput input{files.cluster_path, files.workload_path, 1,
                                                options.threads};
    auto report = kubesched::scheduler::RunSimulation(input, config);
    if (!report.ok()) {
      std::cerr << spec.name << ": " << report.status().message() << "\n";
      return 1;
    }
    const int expected = spec.expect_scheduled >= 0 ? spec.expect_scheduled : spec.measured_pods;
    if (report->scheduled != expected) {
      std::cerr << spec.name << ": " << report->scheduled << " of " << spec.measured_pods
                << " pods were scheduled, not " << expected << "\n";
      return 1;
    }
    reports.push_back(std::move(*report));
    if (run == 0) first_run_rss = PeakRssMiB();
  }
  std::sort(reports.begin(), reports.end(),
            [](const auto& a, const auto& b) { return a.pods_per_second < b.pods_per_second; });
  const auto& median = reports[reports.size() / 2];
  std::printf("%-28s %6d %7d %10.0f %10.1f %10.1f %10.1f %9.3f %9.3f %9.0f\n", spec.name.c_str(),
              spec.nodes, spec.measured_pods, median.pods_per_second,
              median.attempt_latency.p50 * 1e6, median.attempt_latency.p90 * 1e6,
              median.attempt_latency.p99 * 1e6, DecodeSeconds(files), median.load_seconds,
              first_run_rss);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  kubesched::util::SetUpProcess();
  Options options;
  if (!ParseArgs(argc, argv, &options)) return 2;
  if (options.compare_affinity) return kubesched::bench::RunAffinityComparison();
  if (options.scrape_cost_pending > 0) {
    return kubesched::bench::RunScrapeCost(options.scrape_cost_pending, std::max(options.runs, 5));
  }
  namespace fs = std::filesystem;
  const fs::path dir =
      options.keep_dir.empty()
          ? fs::temp_directory_path() / ("kubesched-bench-" + std::to_string(getpid()))
          : fs::path(options.keep_dir);
  fs::create_directories(dir);

  std::printf("%-28s %6s %7s %10s %10s %10s %10s %9s %9s %9s\n", "workload", "nodes", "pods",
              "pods/s", "p50 (us)", "p90 (us)", "p99 (us)", "decode s", "load s", "RSS MiB");
  std::fflush(stdout);  // before forking: the children must not print it again
  bool any = false;
  for (const auto& spec : kubesched::bench::Workloads()) {
    if (options.workload.empty() ? spec.opt_in : spec.name != options.workload) continue;
    any = true;
    const pid_t child = fork();
    if (child < 0) {
      std::perror("fork");
      return 1;
    }
    if (child == 0) {
      const int rc = RunWorkload(spec, options, dir.string());
      std::fflush(stdout);
      std::_Exit(rc);
    }
    int status = 0;
    if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      std::cerr << spec.name << ": the workload's process failed\n";
      return 1;
    }
  }
  if (options.keep_dir.empty()) fs::remove_all(dir);
  if (!any) {
    std::cerr << "unknown workload \"" << options.workload << "\"\n";
    return 2;
  }
  return 0;
}
