// Budget periods on calendar boundaries (UTC): weeks from Monday 00:00, months from the first,
// through month lengths, leap years and year ends.

#include "scheduler/quota/budget_period.h"

#include <catch2/catch.hpp>

namespace kubesched::quota {
namespace {

using config::PeriodAlignment;

absl::Time At(int year, int month, int day, int hour = 0, int minute = 0, int second = 0) {
  return absl::FromCivil(absl::CivilSecond(year, month, day, hour, minute, second),
                         absl::UTCTimeZone());
}

const BudgetPeriod kMonthly{std::nullopt, PeriodAlignment::kMonth};
const BudgetPeriod kWeekly{absl::Hours(168), PeriodAlignment::kWeek};

TEST_CASE("a month-aligned period runs from the first of the month to the first of the next",
          "[quota][budget_period]") {
  struct Case {
    absl::Time at;
    absl::Time start;
    absl::Time end;
  };
  const std::vector<Case> cases = {
      {At(2026, 1, 31, 23, 59, 59), At(2026, 1, 1), At(2026, 2, 1)},
      {At(2026, 2, 15), At(2026, 2, 1), At(2026, 3, 1)},        // 28 days
      {At(2028, 2, 29, 12), At(2028, 2, 1), At(2028, 3, 1)},    // leap year: 29 days
      {At(2100, 2, 28, 12), At(2100, 2, 1), At(2100, 3, 1)},    // not a leap year
      {At(2000, 2, 29), At(2000, 2, 1), At(2000, 3, 1)},        // a leap year after all
      {At(2026, 4, 30, 6), At(2026, 4, 1), At(2026, 5, 1)},     // 30 days
      {At(2026, 12, 31, 23), At(2026, 12, 1), At(2027, 1, 1)},  // over the year end
      {At(2026, 12, 1), At(2026, 12, 1), At(2027, 1, 1)},       // the boundary itself
  };
  for (const auto& c : cases) {
    CAPTURE(FormatResetTime(c.at));
    const absl::Time start = AlignedPeriodStart(kMonthly, c.at);
    CHECK(start == c.start);
    CHECK(PeriodEnd(kMonthly, start) == c.end);
  }
}

TEST_CASE("a week-aligned period starts on Monday 00:00 UTC", "[quota][budget_period]") {
  // 2026-11-23 is a Monday.
  CHECK(AlignedPeriodStart(kWeekly, At(2026, 11, 25, 8)) == At(2026, 11, 23));
  CHECK(AlignedPeriodStart(kWeekly, At(2026, 11, 23)) == At(2026, 11, 23));
  CHECK(AlignedPeriodStart(kWeekly, At(2026, 11, 22, 23, 59, 59)) == At(2026, 11, 16));
  CHECK(PeriodEnd(kWeekly, At(2026, 11, 23)) == At(2026, 11, 30));
  // Across a year end: 2026-12-28 is a Monday.
  CHECK(AlignedPeriodStart(kWeekly, At(2027, 1, 1)) == At(2026, 12, 28));
  // Before the epoch's first Monday too.
  CHECK(AlignedPeriodStart(kWeekly, At(1970, 1, 1)) == At(1969, 12, 29));
}

TEST_CASE("two-week aligned periods keep their fortnights whatever the start",
          "[quota][budget_period]") {
  const BudgetPeriod fortnightly{absl::Hours(336), PeriodAlignment::kWeek};
  const absl::Time start = AlignedPeriodStart(fortnightly, At(2026, 11, 25));
  // Whole fortnights after Monday 1970-01-05: 2026-11-23 is one, 2026-11-30 is not.
  CHECK(start == At(2026, 11, 23));
  CHECK(AlignedPeriodStart(fortnightly, At(2026, 12, 2)) == At(2026, 11, 23));
  CHECK(AlignedPeriodStart(fortnightly, At(2026, 12, 7)) == At(2026, 12, 7));
  CHECK(AlignedPeriodStart(fortnightly, start + absl::Hours(335)) == start);
  CHECK(PeriodEnd(fortnightly, start) == start + absl::Hours(336));
}

TEST_CASE("the current period follows on from the last one, aligned or not",
          "[quota][budget_period]") {
  // Aligned: months later, the period is the current month's, not a multiple of some length.
  CHECK(CurrentPeriodStart(kMonthly, At(2026, 1, 1), At(2026, 1, 20)) == At(2026, 1, 1));
  CHECK(CurrentPeriodStart(kMonthly, At(2026, 1, 1), At(2026, 5, 3, 4)) == At(2026, 5, 1));
  CHECK(CurrentPeriodStart(kWeekly, At(2026, 11, 16), At(2026, 11, 30)) == At(2026, 11, 30));
  // Unaligned: every `length` from the first start.
  const BudgetPeriod daily{absl::Hours(24), PeriodAlignment::kNone};
  CHECK(CurrentPeriodStart(daily, At(2026, 1, 1, 10), At(2026, 1, 4, 9)) == At(2026, 1, 3, 10));
  CHECK(AlignedPeriodStart(daily, At(2026, 1, 1, 10)) == At(2026, 1, 1, 10));
  // No period: never resets.
  const BudgetPeriod never;
  CHECK_FALSE(never.Resets());
  CHECK_FALSE(PeriodEnd(never, At(2026, 1, 1)).has_value());
  CHECK(CurrentPeriodStart(never, At(2026, 1, 1), At(2030, 1, 1)) == At(2026, 1, 1));
}

TEST_CASE("periods are described as users wrote them", "[quota][budget_period]") {
  CHECK(DescribePeriod(kMonthly) == "per calendar month");
  CHECK(DescribePeriod(kWeekly) == "per calendar week");
  CHECK(DescribePeriod({absl::Hours(336), PeriodAlignment::kWeek}) == "per 2 calendar weeks");
  CHECK(DescribePeriod({absl::Hours(168), PeriodAlignment::kNone}) == "per 168h");
  CHECK(DescribePeriod({}).empty());
  CHECK(FormatResetTime(At(2026, 12, 1)) == "2026-12-01T00:00:00Z");
}

}  // namespace
}  // namespace kubesched::quota
