#include "scheduler/metrics/process_collector.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "scheduler/metrics/metrics_server.h"
#include "tests/testing/scrape.h"

namespace kubesched::metrics {
namespace {

using LabelNames = std::set<std::set<std::string>>;

testing::Scrape ScrapeOf(std::shared_ptr<ProcessCollector> collector) {
  auto scrape = testing::Scrape::Parse(ScrapeText({std::move(collector)}));
  REQUIRE(scrape.ok());
  return *scrape;
}

// A /proc/<pid>/stat line whose command name holds spaces and a ") (" that must not end it.
constexpr char kStat[] =
    "4242 (kube sched) (x) S 1 4242 4242 0 -1 4194560 900 0 0 0 250 75 0 0 20 0 9 0 12345 "
    "987654321 2048 18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 0 17 1 0 0 0 0 0";

TEST_CASE("process metrics: the stat line is read from after the command's last parenthesis",
          "[metrics]") {
  auto stat = ParseProcStat(kStat);
  REQUIRE(stat.ok());
  CHECK(stat->utime_ticks == 250);
  CHECK(stat->stime_ticks == 75);
  CHECK(stat->starttime_ticks == 12345);
  CHECK(stat->vsize_bytes == 987654321);
  CHECK(stat->rss_pages == 2048);
}

TEST_CASE("process metrics: a malformed stat line or /proc/stat is a clear error", "[metrics]") {
  auto no_paren = ParseProcStat("4242 kubesched S 1 2 3");
  REQUIRE_FALSE(no_paren.ok());
  CHECK(absl::StrContains(no_paren.status().message(), "no \")\""));
  auto short_line = ParseProcStat("4242 (k) S 1 2 3");
  REQUIRE_FALSE(short_line.ok());
  CHECK(absl::StrContains(short_line.status().message(), "want at least 24"));
  std::string bad(kStat);
  bad.replace(bad.find(" 250 "), 5, " x50 ");
  auto not_number = ParseProcStat(bad);
  REQUIRE_FALSE(not_number.ok());
  CHECK(absl::StrContains(not_number.status().message(), "field 14 (\"x50\") is not a number"));

  auto boot = ParseBootTime("cpu  1 2 3\nintr 5\nbtime 1700000000\nprocesses 9\n");
  REQUIRE(boot.ok());
  CHECK(*boot == 1700000000);
  CHECK_FALSE(ParseBootTime("cpu 1 2 3\n").ok());
  CHECK_FALSE(ParseBootTime("btime soon\n").ok());
}

TEST_CASE("process metrics: this process's CPU, memory, descriptors and start time, unlabelled",
          "[metrics]") {
  const testing::Scrape scrape = ScrapeOf(std::make_shared<ProcessCollector>());
  CHECK(scrape.Type(kProcessCpuSecondsTotal) == "counter");
  for (const char* gauge : {kProcessResidentMemoryBytes, kProcessVirtualMemoryBytes,
                            kProcessOpenFds, kProcessMaxFds, kProcessStartTimeSeconds}) {
    INFO(gauge);
    CHECK(scrape.Type(gauge) == "gauge");
    CHECK(scrape.LabelSets(gauge) == LabelNames{{}});
  }
  CHECK(scrape.Value(kProcessCpuSecondsTotal) >= 0);
  CHECK(scrape.Value(kProcessResidentMemoryBytes) > 1e5);
  CHECK(scrape.Value(kProcessVirtualMemoryBytes) > scrape.Value(kProcessResidentMemoryBytes));
  // stdin, stdout and stderr at least; the listing's own descriptor is not counted.
  CHECK(scrape.Value(kProcessOpenFds) >= 3);
  const double open_before = scrape.Value(kProcessOpenFds);
  const int extra = dup(1);
  REQUIRE(extra >= 0);
  CHECK(ScrapeOf(std::make_shared<ProcessCollector>()).Value(kProcessOpenFds) == open_before + 1);
  close(extra);
  CHECK(scrape.Value(kProcessMaxFds) >= scrape.Value(kProcessOpenFds));
  const double now = absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());
  CHECK(scrape.Value(kProcessStartTimeSeconds) <= now + 1);
  CHECK(scrape.Value(kProcessStartTimeSeconds) > now - 24 * 3600);
}

TEST_CASE("process metrics: what cannot be read is left out, never an error", "[metrics]") {
  const testing::Scrape scrape =
      ScrapeOf(std::make_shared<ProcessCollector>("/nonexistent-proc-for-test"));
  CHECK_FALSE(scrape.Has(kProcessCpuSecondsTotal));
  CHECK_FALSE(scrape.Has(kProcessStartTimeSeconds));
  CHECK_FALSE(scrape.Has(kProcessOpenFds));
  CHECK(scrape.Has(kProcessMaxFds));  // getrlimit needs no /proc
}

}  // namespace
}  // namespace kubesched::metrics
