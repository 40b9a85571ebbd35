#include "bench/scrape_cost.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "config/config.h"
#include "scheduler/api/decode.h"
#include "scheduler/cluster/embedded_cluster.h"
#include "scheduler/core/scheduler.h"
#include "scheduler/instrumentation/instrumentation.h"
#include "scheduler/metrics/metrics_server.h"
#include "scheduler/simulate/simulation.h"
#include "scheduler/util/clock.h"

namespace kubesched::bench {
namespace {

constexpr int kQueues = 10;
constexpr int kNodes = 10;

std::string ConfigYaml() {
  std::string out =
      "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
      "queues:\n  tree:\n";
  for (int q = 0; q < kQueues; ++q) absl::StrAppend(&out, "  - {name: q", q, "}\n");
  return out;
}

// Ten 4-CPU nodes and `pending` pods of 100 CPUs each, in the queues in turn: none fits.
std::string ClusterJson(int pending) {
  std::string out = R"({"apiVersion":"v1","kind":"List","items":[)";
  for (int n = 0; n < kNodes; ++n) {
    absl::StrAppend(&out, n == 0 ? "" : ",",
                    R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"node-)", n,
                    R"("},"status":{"allocatable":{"cpu":"4","memory":"16Gi","pods":"110"}}})");
  }
  for (int p = 0; p < pending; ++p) {
    absl::StrAppend(&out, R"(,{"apiVersion":"v1","kind":"Pod","metadata":{"name":"pod-)", p,
                    R"(","namespace":"default","labels":{"kubesched.io/queue":"root.q)",
                    p % kQueues, R"("}},"spec":{"schedulerName":"kubesched","containers":)",
                    R"([{"name":"c","resources":{"requests":{"cpu":"100"}}}]}})");
  }
  return out + "]}";
}

// The sum of the per-queue pending gauge in a scrape's text.
double PendingInScrape(const std::string& text) {
  double sum = 0;
  for (size_t at = text.find("\nkubesched_queue_pending_pods{"); at != std::string::npos;
       at = text.find("\nkubesched_queue_pending_pods{", at + 1)) {
    const size_t space = text.find(' ', text.find('}', at));
    sum += std::stod(text.substr(space + 1, text.find('\n', space + 1) - space - 1));
  }
  return sum;
}

}  // namespace

int RunScrapeCost(int pending, int runs) {
  auto config = config::ParseConfiguration(ConfigYaml());
  auto objects = api::DecodeObjects(ClusterJson(pending), "scrape-cost");
  if (!config.ok() || !objects.ok()) {
    std::cerr << "scrape-cost: "
              << (config.ok() ? objects.status().message() : config.status().message()) << "\n";
    return 1;
  }
  util::FakeClock clock{absl::FromUnixSeconds(1'700'000'000)};
  cluster::EmbeddedCluster cluster;
  scheduler::DeferredBindExecutor binds;
  metrics::Instrumentation instrumentation(&clock, *config);
  scheduler::SchedulerDeps deps{&clock, &cluster, &binds, nullptr, /*seed=*/1, /*threads=*/1};
  deps.deleter = &cluster;
  instrumentation.Instrument(deps);
  auto scheduler = scheduler::Scheduler::Create(*config, deps);
  if (!scheduler.ok()) {
    std::cerr << "scrape-cost: " << scheduler.status().message() << "\n";
    return 1;
  }
  instrumentation.state().AttachScheduler(scheduler->get());
  cluster.Watch(scheduler->get());
  for (const api::Object& object : objects->objects) {
    if (auto status = cluster.Create(object); !status.ok()) {
      std::cerr << "scrape-cost: " << status.message() << "\n";
      return 1;
    }
  }
  scheduler::DriveToQuiescence(cluster, **scheduler, binds, clock);

  std::vector<double> seconds;
  std::string text;
  for (int run = 0; run < runs; ++run) {
    const auto start = std::chrono::steady_clock::now();
    text = metrics::ScrapeText(instrumentation.collectables());
    seconds.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  instrumentation.state().AttachScheduler(nullptr);
  if (PendingInScrape(text) != pending) {
    std::cerr << "scrape-cost: the scrape shows " << PendingInScrape(text) << " pods pending, not "
              << pending << "\n";
    return 1;
  }
  std::sort(seconds.begin(), seconds.end());
  const double median = seconds[seconds.size() / 2];
  std::printf(
      "pending pods %d, scrapes %d: median %.2f ms per scrape, %.0f ns per pending pod, %zu "
      "bytes\n",
      pending, runs, median * 1e3, median * 1e9 / pending, text.size());
  return 0;
}

}  // namespace kubesched::bench
