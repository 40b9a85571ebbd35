#include "scheduler/metrics/scheduler_metrics.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "scheduler/metrics/metrics_server.h"
#include "tests/testing/scrape.h"

namespace kubesched::metrics {
namespace {

using testing::Scrape;
using LabelNames = std::set<std::set<std::string>>;

Scrape ScrapeOf(const SchedulerMetrics& metrics) {
  auto scrape = Scrape::Parse(ScrapeText(metrics.collectables()));
  REQUIRE(scrape.ok());
  return *scrape;
}

// The `le` labels of Exp(start, factor, count), as the text format prints them, and "+Inf".
std::vector<std::string> ExpectedBounds(double start, double factor, int count) {
  std::vector<std::string> bounds;
  for (double bound : ExponentialBuckets(start, factor, count)) {
    std::ostringstream text;
    // prometheus-cpp prints doubles with max_digits10 - 1 significant digits.
    text.precision(std::numeric_limits<double>::max_digits10 - 1);
    text << bound;
    bounds.push_back(text.str());
  }
  bounds.push_back("+Inf");
  return bounds;
}

TEST_CASE("metrics: upstream buckets are Exp(start, factor, count) as upstream builds them",
          "[metrics]") {
  const std::vector<double> attempt = ExponentialBuckets(0.001, 2, 15);
  REQUIRE(attempt.size() == 15);
  CHECK(attempt.front() == 0.001);
  CHECK(attempt.back() == Approx(16.384));
  const std::vector<double> sli = ExponentialBuckets(0.01, 2, 20);
  CHECK(sli.back() == Approx(0.01 * (1 << 19)));
  CHECK(ExponentialBuckets(1, 2, 5) == std::vector<double>{1, 2, 4, 8, 16});
  CHECK(ExponentialBuckets(1, 2, 7) == std::vector<double>{1, 2, 4, 8, 16, 32, 64});
  const std::vector<double> plugin = PluginTimings::BucketBounds();
  REQUIRE(plugin.size() == 20);
  CHECK(plugin.front() == 0.00001);
  CHECK(plugin.back() == Approx(0.00001 * std::pow(1.5, 19)));
}

TEST_CASE("metrics: a profile's attempt and bind series exist at zero before anything happens",
          "[metrics]") {
  SchedulerMetrics metrics;
  metrics.Profile("kubesched");
  const Scrape scrape = ScrapeOf(metrics);
  CHECK(scrape.Type(kScheduleAttemptsTotal) == "counter");
  CHECK(scrape.LabelSets(kScheduleAttemptsTotal) == LabelNames{{"profile", "result"}});
  for (const char* result : {"scheduled", "unschedulable", "error"}) {
    INFO(result);
    CHECK(scrape.Has(kScheduleAttemptsTotal, {{"result", result}, {"profile", "kubesched"}}));
    CHECK(scrape.Value(kScheduleAttemptsTotal, {{"result", result}}) == 0);
    CHECK(scrape.BucketBounds(kSchedulingAttemptDuration, {{"result", result}}) ==
          ExpectedBounds(0.001, 2, 15));
  }
  CHECK(scrape.Value(kBindsTotal, {{"result", "bound"}, {"profile", "kubesched"}}) == 0);
  CHECK(scrape.Value(kBindsTotal, {{"result", "failed"}, {"profile", "kubesched"}}) == 0);
  CHECK(scrape.Value(kPreemptionAttemptsTotal) == 0);
  CHECK(scrape.Value(kPolicyReloadsTotal, {{"result", "applied"}}) == 0);
  CHECK(scrape.Value(kPolicyReloadsTotal, {{"result", "rejected"}}) == 0);
}

TEST_CASE("metrics: recorded values land in upstream's families, labels and buckets", "[metrics]") {
  SchedulerMetrics metrics;
  ProfileMetrics& profile = metrics.Profile("gpu");
  profile.ObserveAttempt(AttemptResult::kScheduled, 0.003);
  profile.ObserveAttempt(AttemptResult::kUnschedulable, 0.5);
  profile.ObserveExtensionPoint(ExtensionPoint::kPreFilter, framework::Code::kSuccess, 0.0002);
  profile.ObserveExtensionPoint(ExtensionPoint::kBind, framework::Code::kError, 0.01);
  profile.CountBind(true);
  metrics.ObserveAlgorithm(0.002);
  metrics.ObservePodScheduled(3, 1.5);
  metrics.ObservePodScheduled(40, 100);
  metrics.CountPreemptionAttempt();
  metrics.ObservePreemptionVictims(3);
  metrics.CountPolicyReload(false);
  const Scrape scrape = ScrapeOf(metrics);

  CHECK(scrape.Value(kScheduleAttemptsTotal, {{"result", "scheduled"}, {"profile", "gpu"}}) == 1);
  CHECK(scrape.Value(std::string(kSchedulingAttemptDuration) + "_count",
                     {{"result", "unschedulable"}, {"profile", "gpu"}}) == 1);
  CHECK(scrape.Value(std::string(kSchedulingAttemptDuration) + "_sum",
                     {{"result", "unschedulable"}}) == Approx(0.5));

  CHECK(scrape.Type(kFrameworkExtensionPointDuration) == "histogram");
  CHECK(scrape.LabelSets(std::string(kFrameworkExtensionPointDuration) + "_count") ==
        LabelNames{{"extension_point", "profile", "status"}});
  CHECK(scrape.Value(std::string(kFrameworkExtensionPointDuration) + "_count",
                     {{"extension_point", "Bind"}, {"status", "Error"}, {"profile", "gpu"}}) == 1);
  CHECK(scrape.BucketBounds(kFrameworkExtensionPointDuration, {{"extension_point", "PreFilter"}}) ==
        ExpectedBounds(0.0001, 2, 12));

  CHECK(scrape.LabelSets(std::string(kSchedulingAlgorithmDuration) + "_count") == LabelNames{{}});
  CHECK(scrape.BucketBounds(kSchedulingAlgorithmDuration) == ExpectedBounds(0.001, 2, 15));

  CHECK(scrape.LabelSets(std::string(kPodSchedulingSliDuration) + "_count") ==
        LabelNames{{"attempts"}});
  CHECK(scrape.Value(std::string(kPodSchedulingSliDuration) + "_count", {{"attempts", "3"}}) == 1);
  CHECK(scrape.Value(std::string(kPodSchedulingSliDuration) + "_count", {{"attempts", "15+"}}) ==
        1);
  CHECK(scrape.BucketBounds(kPodSchedulingSliDuration, {{"attempts", "3"}}) ==
        ExpectedBounds(0.01, 2, 20));
  CHECK(scrape.BucketBounds(kPodSchedulingAttempts) == ExpectedBounds(1, 2, 5));
  CHECK(scrape.Value(std::string(kPodSchedulingAttempts) + "_count") == 2);

  CHECK(scrape.Value(kPreemptionAttemptsTotal) == 1);
  CHECK(scrape.BucketBounds(kPreemptionVictims) == ExpectedBounds(1, 2, 7));
  CHECK(scrape.Value(std::string(kPreemptionVictims) + "_sum") == 3);
  CHECK(scrape.Value(kBindsTotal, {{"result", "bound"}, {"profile", "gpu"}}) == 1);
  CHECK(scrape.Value(kPolicyReloadsTotal, {{"result", "rejected"}}) == 1);
}

TEST_CASE("metrics: pod group scheduling durations land in one series with the SLI's buckets",
          "[metrics]") {
  SchedulerMetrics metrics;
  const Scrape empty = ScrapeOf(metrics);
  CHECK(empty.Type(kPodGroupSchedulingDuration) == "histogram");
  CHECK(empty.Value(std::string(kPodGroupSchedulingDuration) + "_count") == 0);
  metrics.ObservePodGroupScheduled(12.5);
  metrics.ObservePodGroupScheduled(-1);  // a clock that stepped back counts as no wait
  const Scrape scrape = ScrapeOf(metrics);
  CHECK(scrape.LabelSets(std::string(kPodGroupSchedulingDuration) + "_count") == LabelNames{{}});
  CHECK(scrape.BucketBounds(kPodGroupSchedulingDuration) == ExpectedBounds(0.01, 2, 20));
  CHECK(scrape.Value(std::string(kPodGroupSchedulingDuration) + "_count") == 2);
  CHECK(scrape.Value(std::string(kPodGroupSchedulingDuration) + "_sum") == Approx(12.5));
  CHECK(scrape.Value(std::string(kPodGroupSchedulingDuration) + "_bucket", {{"le", "0.01"}}) == 1);
}

TEST_CASE("metrics: API requests are counted as client-go counts them, timed except watches",
          "[metrics]") {
  SchedulerMetrics metrics;
  const std::string host = "10.0.0.1:6443";
  metrics.ObserveApiRequest(host, "POST", 201, 0.01);
  metrics.ObserveApiRequest(host, "POST", 201, 0.03);
  metrics.ObserveApiRequest(host, "GET", 0, 2.5);     // no response
  metrics.ObserveApiRequest(host, "GET", 9999, 0.1);  // not an HTTP status: no new code
  metrics.ObserveApiRequest(host, "GET", 200, -1);    // a watch ended
  const Scrape scrape = ScrapeOf(metrics);
  CHECK(scrape.Type(kRestClientRequestsTotal) == "counter");
  CHECK(scrape.LabelSets(kRestClientRequestsTotal) == LabelNames{{"code", "host", "method"}});
  CHECK(scrape.Value(kRestClientRequestsTotal,
                     {{"method", "POST"}, {"code", "201"}, {"host", host}}) == 2);
  CHECK(scrape.Value(kRestClientRequestsTotal, {{"method", "GET"}, {"code", "<error>"}}) == 2);
  CHECK(scrape.Value(kRestClientRequestsTotal, {{"method", "GET"}, {"code", "200"}}) == 1);
  CHECK(scrape.Type(kRestClientRequestDuration) == "histogram");
  CHECK(scrape.LabelSets(std::string(kRestClientRequestDuration) + "_count") ==
        LabelNames{{"host", "verb"}});
  CHECK(scrape.Value(std::string(kRestClientRequestDuration) + "_count",
                     {{"verb", "POST"}, {"host", host}}) == 2);
  CHECK(scrape.Value(std::string(kRestClientRequestDuration) + "_sum", {{"verb", "POST"}}) ==
        Approx(0.04));
  CHECK(scrape.Value(std::string(kRestClientRequestDuration) + "_count", {{"verb", "GET"}}) == 2);
  CHECK(scrape.BucketBounds(kRestClientRequestDuration, {{"verb", "POST"}}) ==
        std::vector<std::string>{"0.005", "0.025", "0.1", "0.25", "0.5", "1", "2", "4", "8", "15",
                                 "30", "60", "+Inf"});
}

TEST_CASE("metrics: the leader status is 1 while leading, 0 otherwise, absent before election",
          "[metrics]") {
  SchedulerMetrics metrics;
  CHECK_FALSE(ScrapeOf(metrics).Has(kLeaderElectionMasterStatus));
  metrics.SetLeaderStatus("kubesched", false);
  CHECK(ScrapeOf(metrics).Type(kLeaderElectionMasterStatus) == "gauge");
  CHECK(ScrapeOf(metrics).Has(kLeaderElectionMasterStatus, {{"name", "kubesched"}}));
  CHECK(ScrapeOf(metrics).Value(kLeaderElectionMasterStatus) == 0);
  metrics.SetLeaderStatus("kubesched", true);
  CHECK(ScrapeOf(metrics).Value(kLeaderElectionMasterStatus, {{"name", "kubesched"}}) == 1);
  metrics.SetLeaderStatus("kubesched", false);
  CHECK(ScrapeOf(metrics).Value(kLeaderElectionMasterStatus, {{"name", "kubesched"}}) == 0);
  CHECK(ScrapeOf(metrics).LabelSets(kLeaderElectionMasterStatus) == LabelNames{{"name"}});
}

TEST_CASE("metrics: only a configured profile or policy name finds series, others create none",
          "[metrics]") {
  SchedulerMetrics metrics;
  ProfileMetrics& configured = metrics.Profile("kubesched");
  CHECK(metrics.FindProfile("kubesched") == &configured);
  CHECK(metrics.FindProfile("junk-from-a-pod") == nullptr);
  CHECK(metrics.FindProfile("kubesched") == &configured);  // after a miss, the fast path again
  CHECK_FALSE(ScrapeOf(metrics).Has(kScheduleAttemptsTotal, {{"profile", "junk-from-a-pod"}}));
  CHECK(&metrics.Profile("kubesched") == &configured);
}

TEST_CASE("metrics: plugin timings are recorded lock-free from many threads and summed on scrape",
          "[metrics]") {
  PluginTimings timings;
  const int filter = timings.Register("NodeResourcesFit", ExtensionPoint::kFilter);
  CHECK(timings.Register("NodeResourcesFit", ExtensionPoint::kFilter) == filter);
  const int score = timings.Register("NodeResourcesFit", ExtensionPoint::kScore);
  CHECK(score != filter);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        timings.Observe(filter, framework::Code::kSuccess, 5'000);  // 5 µs: the first bucket
        timings.Observe(filter, framework::Code::kUnschedulable, 1'000'000'000);  // 1 s: +Inf
      }
    });
  }
  for (auto& thread : threads) thread.join();
  timings.Observe(-1, framework::Code::kSuccess, 1);  // a full table's -1 is ignored

  // Scraped through a non-owning pointer: the table lives on this stack.
  auto scrape =
      Scrape::Parse(ScrapeText({std::shared_ptr<PluginTimings>(&timings, [](PluginTimings*) {})}));
  REQUIRE(scrape.ok());
  const std::string count = std::string(kPluginExecutionDuration) + "_count";
  CHECK(scrape->Type(kPluginExecutionDuration) == "histogram");
  CHECK(scrape->LabelSets(count) == LabelNames{{"extension_point", "plugin", "status"}});
  CHECK(scrape->Value(count, {{"plugin", "NodeResourcesFit"},
                              {"extension_point", "Filter"},
                              {"status", "Success"}}) == 4000);
  CHECK(scrape->Value(count, {{"status", "Unschedulable"}}) == 4000);
  CHECK(scrape->Value(std::string(kPluginExecutionDuration) + "_sum", {{"status", "Success"}}) ==
        Approx(4000 * 5e-6));
  CHECK(scrape->Value(std::string(kPluginExecutionDuration) + "_bucket",
                      {{"status", "Success"}, {"le", "1e-05"}}) == 4000);
  CHECK(scrape->Value(std::string(kPluginExecutionDuration) + "_bucket",
                      {{"status", "Unschedulable"}, {"le", "+Inf"}}) == 4000);
  CHECK(scrape->BucketBounds(kPluginExecutionDuration, {{"status", "Success"}}) ==
        ExpectedBounds(0.00001, 1.5, 20));
  // Nothing was observed for Score: no series.
  CHECK_FALSE(scrape->Has(count, {{"extension_point", "Score"}}));
}

TEST_CASE("metrics: about one cycle in ten is sampled for plugin timings", "[metrics]") {
  int sampled = 0;
  constexpr int kCycles = 100'000;
  for (int i = 0; i < kCycles; ++i) sampled += PluginTimings::SampleCycle() ? 1 : 0;
  CHECK(sampled > kCycles * 8 / 100);
  CHECK(sampled < kCycles * 12 / 100);
}

}  // namespace
}  // namespace kubesched::metrics
