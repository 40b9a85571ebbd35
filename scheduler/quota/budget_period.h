#pragma once

// When a budget period starts and ends. Unaligned periods start at the first launch and follow
// one another every `period`; aligned ones start on calendar boundaries in UTC: weeks at Monday
// 00:00 (periods of whole weeks counted from Monday 1970-01-05), months on the first at 00:00.
// Pure functions of their arguments, so that a restart (the ledger's period start) and any clock
// agree on the same boundaries.

#include <optional>
#include <string>

#include "absl/time/time.h"
#include "config/queues.h"

namespace kubesched::quota {

struct BudgetPeriod {
  std::optional<absl::Duration> length;  // none with kNone: never resets; none with kMonth
  config::PeriodAlignment align = config::PeriodAlignment::kNone;

  bool Resets() const { return length.has_value() || align == config::PeriodAlignment::kMonth; }
};

// The start of the period holding `at` for an aligned period; `at` itself for an unaligned one
// (it starts the first period).
absl::Time AlignedPeriodStart(const BudgetPeriod& period, absl::Time at);
// When the period that started at `start` ends (the next reset); none if it never does.
std::optional<absl::Time> PeriodEnd(const BudgetPeriod& period, absl::Time start);
// The start of the period that holds `now`, following on from one that started at `start`
// (`start` <= `now`; `start` itself while that period runs).
absl::Time CurrentPeriodStart(const BudgetPeriod& period, absl::Time start, absl::Time now);
// "per 168h", "per calendar week", "per 2 calendar weeks", "per calendar month"; "" when the
// budget never resets.
std::string DescribePeriod(const BudgetPeriod& period);
// RFC 3339 in UTC, seconds precision ("2026-12-01T00:00:00Z").
std::string FormatResetTime(absl::Time time);

}  // namespace kubesched::quota
