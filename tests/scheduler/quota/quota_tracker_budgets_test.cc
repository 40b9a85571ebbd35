// QuotaTracker's budgets on calendar-aligned periods (a fake clock): where the first period
// starts, what the message says, when Tick resets them, and the ledger across restarts.

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "config/queues.h"
#include "scheduler/quota/quota_tracker.h"
#include "tests/testing/builders.h"

namespace kubesched::quota {
namespace {

using testing::PodBuilder;

config::QueuesConfig Queues(const std::string& yaml) {
  auto parsed = config::ParseQueuesDocument(yaml);
  INFO(parsed.status().message());
  REQUIRE(parsed.ok());
  return *parsed;
}

absl::Time At(int year, int month, int day, int hour = 0) {
  return absl::FromCivil(absl::CivilHour(year, month, day, hour), absl::UTCTimeZone());
}

framework::PodInfoPtr GpuPod(const std::string& name, int gpus) {
  PodBuilder builder(name, "default");
  builder.Container({{"nvidia.com/gpu", std::to_string(gpus)}});
  builder.Label(std::string(kQueueLabel), "root.research");
  return framework::MakePodInfo(builder.Ptr(), 0);
}

BudgetUsage Budget(QuotaTracker& tracker) {
  for (const auto& queue : tracker.Usage()) {
    if (queue.path == "root.research" && queue.budgets.size() == 1) return queue.budgets[0];
  }
  FAIL("no budget on root.research");
  return {};
}

constexpr char kMonthly[] =
    "tree: [{name: research, budget: {nvidia.com/gpu: 100h, alignTo: month}}]";

TEST_CASE("a month-aligned budget starts on the first, says when it resets, and resets then",
          "[quota][budget_period]") {
  util::FakeClock clock(At(2026, 11, 25, 8));
  QuotaTracker tracker(&clock, Queues(kMonthly));
  CHECK(Budget(tracker).period_start == At(2026, 11, 1));
  CHECK(Budget(tracker).next_reset == At(2026, 12, 1));
  auto job = GpuPod("job", 10);
  REQUIRE(tracker.Reserve(*job, "n").ok());
  clock.Advance(absl::Hours(10));
  const auto admission = tracker.Admit(*GpuPod("x", 1));
  REQUIRE(admission.verdict == Verdict::kOverBudget);
  CHECK(admission.message ==
        "queue root.research: budget for nvidia.com/gpu used up (used 100h of 100h per calendar "
        "month); budget spent, resets at 2026-12-01T00:00:00Z");
  tracker.Release(job->key, false);
  clock.Set(At(2026, 11, 30, 23));
  CHECK(tracker.Tick().empty());
  clock.Set(At(2026, 12, 1));
  CHECK(tracker.Tick() == std::vector<std::string>{"budget:root.research"});
  CHECK(tracker.Admit(*GpuPod("x", 1)).verdict == Verdict::kFits);
  CHECK(Budget(tracker).used_hours == 0);
  CHECK(Budget(tracker).next_reset == At(2027, 1, 1));
}

TEST_CASE("a week-aligned budget resets at Monday 00:00 UTC", "[quota][budget_period]") {
  // Sunday 2026-11-29, 22:00.
  util::FakeClock clock(At(2026, 11, 29, 22));
  QuotaTracker tracker(
      &clock, Queues("tree: [{name: research, budget: {nvidia.com/gpu: 2h, alignTo: week}}]"));
  CHECK(Budget(tracker).period_start == At(2026, 11, 23));
  auto job = GpuPod("job", 2);
  REQUIRE(tracker.Reserve(*job, "n").ok());
  clock.Advance(absl::Hours(1));
  const auto admission = tracker.Admit(*GpuPod("x", 1));
  REQUIRE(admission.verdict == Verdict::kOverBudget);
  CHECK_THAT(admission.message,
             Catch::EndsWith("per calendar week); budget spent, resets at 2026-11-30T00:00:00Z"));
  tracker.Release(job->key, false);
  clock.Advance(absl::Hours(1));  // Monday 00:00
  CHECK(tracker.Tick() == std::vector<std::string>{"budget:root.research"});
  CHECK(Budget(tracker).next_reset == At(2026, 12, 7));
}

TEST_CASE("a message for a budget with no period says it never resets", "[quota][budget_period]") {
  util::FakeClock clock(At(2026, 11, 25));
  QuotaTracker tracker(&clock, Queues("tree: [{name: research, budget: {nvidia.com/gpu: 1h}}]"));
  auto job = GpuPod("job", 1);
  REQUIRE(tracker.Reserve(*job, "n").ok());
  clock.Advance(absl::Hours(1));
  CHECK_THAT(tracker.Admit(*GpuPod("x", 1)).message,
             Catch::EndsWith("(used 1h of 1h); budget spent, it has no period and never resets"));
  CHECK_FALSE(Budget(tracker).next_reset.has_value());
}

TEST_CASE("the ledger keeps a month-aligned budget across restarts", "[quota][budget_period]") {
  util::FakeClock clock(At(2026, 11, 10));
  Ledger ledger;
  {
    QuotaTracker before(&clock, Queues(kMonthly));
    auto job = GpuPod("job", 5);
    REQUIRE(before.Reserve(*job, "n").ok());
    clock.Advance(absl::Hours(4));  // 20 GPU-hours
    ledger = before.ExportLedger();
  }
  REQUIRE(ledger.entries.size() == 1);
  CHECK(ledger.entries[0].period_start == At(2026, 11, 1));

  SECTION("restarted in the same month: the spending stays, the period is the month") {
    clock.Advance(absl::Hours(24));
    QuotaTracker after(&clock, Queues(kMonthly));
    after.ImportLedger(ledger);
    CHECK(Budget(after).used_hours == Approx(20));
    CHECK(Budget(after).period_start == At(2026, 11, 1));
    CHECK(Budget(after).next_reset == At(2026, 12, 1));
  }
  SECTION("restarted in the next month: the budget has reset") {
    clock.Set(At(2026, 12, 2));
    QuotaTracker after(&clock, Queues(kMonthly));
    after.ImportLedger(ledger);
    CHECK(Budget(after).used_hours == 0);
    CHECK(Budget(after).period_start == At(2026, 12, 1));
  }
  SECTION("a ledger written before the budget was aligned keeps its spending this month") {
    ledger.entries[0].period_start = At(2026, 11, 7, 13);  // a rolling period's start
    clock.Advance(absl::Hours(1));
    QuotaTracker after(&clock, Queues(kMonthly));
    after.ImportLedger(ledger);
    CHECK(Budget(after).used_hours == Approx(20));
    CHECK(Budget(after).period_start == At(2026, 11, 1));
  }
}

TEST_CASE("a reload that aligns a rolling budget keeps its spending and moves its start",
          "[quota][budget_period]") {
  util::FakeClock clock(At(2026, 11, 25, 8));
  QuotaTracker tracker(
      &clock, Queues("tree: [{name: research, budget: {nvidia.com/gpu: 100h, period: 720h}}]"));
  CHECK(Budget(tracker).period_start == At(2026, 11, 25, 8));
  auto job = GpuPod("job", 1);
  REQUIRE(tracker.Reserve(*job, "n").ok());
  clock.Advance(absl::Hours(3));
  tracker.SetConfig(Queues(kMonthly));
  CHECK(Budget(tracker).used_hours == Approx(3));
  CHECK(Budget(tracker).period_start == At(2026, 11, 1));
  CHECK(Budget(tracker).next_reset == At(2026, 12, 1));
}

}  // namespace
}  // namespace kubesched::quota
