#include "scheduler/quota/budget_period.h"

#include "absl/strings/str_cat.h"

namespace kubesched::quota {
namespace {

using config::PeriodAlignment;

// Monday 1970-01-05 00:00 UTC: week-aligned periods are counted from here.
absl::Time WeekEpoch() { return absl::FromUnixSeconds(4 * 24 * 3600); }

absl::Time MonthStart(absl::Time at) {
  const absl::CivilMonth month = absl::ToCivilMonth(at, absl::UTCTimeZone());
  return absl::FromCivil(month, absl::UTCTimeZone());
}

absl::Time NextMonthStart(absl::Time at) {
  const absl::CivilMonth month = absl::ToCivilMonth(at, absl::UTCTimeZone());
  return absl::FromCivil(month + 1, absl::UTCTimeZone());
}

// The start of the `length`-long slot, counted from `origin`, that holds `at` (floored, also
// before the origin).
absl::Time FloorToSlot(absl::Time origin, absl::Duration length, absl::Time at) {
  absl::Duration remainder;
  int64_t slots = absl::IDivDuration(at - origin, length, &remainder);
  if (remainder < absl::ZeroDuration()) --slots;
  return origin + length * slots;
}

}  // namespace

absl::Time AlignedPeriodStart(const BudgetPeriod& period, absl::Time at) {
  switch (period.align) {
    case PeriodAlignment::kWeek:
      return FloorToSlot(WeekEpoch(), period.length.value_or(absl::Hours(24 * 7)), at);
    case PeriodAlignment::kMonth:
      return MonthStart(at);
    case PeriodAlignment::kNone:
      break;
  }
  return at;
}

std::optional<absl::Time> PeriodEnd(const BudgetPeriod& period, absl::Time start) {
  if (period.align == PeriodAlignment::kMonth) return NextMonthStart(start);
  if (!period.length.has_value()) return std::nullopt;
  return start + *period.length;
}

absl::Time CurrentPeriodStart(const BudgetPeriod& period, absl::Time start, absl::Time now) {
  const std::optional<absl::Time> end = PeriodEnd(period, start);
  if (!end.has_value() || now < *end) return start;
  if (period.align != PeriodAlignment::kNone) return AlignedPeriodStart(period, now);
  return FloorToSlot(start, *period.length, now);
}

std::string DescribePeriod(const BudgetPeriod& period) {
  switch (period.align) {
    case PeriodAlignment::kMonth:
      return "per calendar month";
    case PeriodAlignment::kWeek: {
      absl::Duration remainder;
      const int64_t weeks =
          period.length.has_value()
              ? absl::IDivDuration(*period.length, absl::Hours(24 * 7), &remainder)
              : 1;
      return weeks == 1 ? "per calendar week" : absl::StrCat("per ", weeks, " calendar weeks");
    }
    case PeriodAlignment::kNone:
      break;
  }
  if (!period.length.has_value()) return "";
  return absl::StrCat("per ", absl::FormatDuration(*period.length));
}

std::string FormatResetTime(absl::Time time) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", time, absl::UTCTimeZone());
}

}  // namespace kubesched::quota
