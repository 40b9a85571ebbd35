// QuotaTracker: budgets, spent amounts accrued per period at the running pods' rate, and the
// ledger that carries them across restarts.

#include <algorithm>

#include "scheduler/quota/quota_tracker.h"
#include "scheduler/quota/wait_keys.h"

namespace kubesched::quota {

double QuotaTracker::SpentLocked(int queue, size_t budget, absl::Time now) {
  BudgetState& state = budgets_[queue][budget];
  const absl::Time start = CurrentPeriodStart(tree_.node(queue).period, state.period_start, now);
  if (start != state.period_start) {
    state.period_start = start;
    state.spent = 0;
    state.last = std::max(state.last, state.period_start);
  }
  if (now > state.last) {
    state.spent += state.rate * absl::ToDoubleSeconds(now - state.last);
    state.last = now;
  }
  return state.spent;
}

void QuotaTracker::FoldBudgetsLocked(absl::Time now) {
  for (size_t q = 0; q < budgets_.size(); ++q) {
    for (size_t b = 0; b < budgets_[q].size(); ++b) SpentLocked(static_cast<int>(q), b, now);
  }
}

void QuotaTracker::EnsureBudgetStatesLocked(absl::Time now) {
  const size_t old_size = budgets_.size();
  used_.resize(tree_.size());
  held_.resize(tree_.size());
  budgets_.resize(tree_.size());
  for (size_t q = old_size; q < tree_.size(); ++q) {
    const QueueNode& node = tree_.node(static_cast<int>(q));
    // An aligned budget's first period started at the last boundary, not now.
    const absl::Time start = AlignedPeriodStart(node.period, now);
    budgets_[q].assign(node.budget.size(), BudgetState{0, 0, now, start, start});
  }
}

std::vector<std::string> QuotaTracker::Tick() {
  const absl::Time now = clock_->Now();
  std::vector<std::string> keys;
  {
    absl::MutexLock lock(&mu_);
    for (size_t q = 0; q < budgets_.size(); ++q) {
      for (size_t b = 0; b < budgets_[q].size(); ++b) {
        SpentLocked(static_cast<int>(q), b, now);
        BudgetState& state = budgets_[q][b];
        if (state.period_start != state.announced_start) {
          state.announced_start = state.period_start;
          keys.push_back(BudgetKey(tree_.node(static_cast<int>(q)).path));
        }
      }
    }
  }
  Wake(keys);
  return keys;
}

Ledger QuotaTracker::ExportLedger() {
  const absl::Time now = clock_->Now();
  absl::MutexLock lock(&mu_);
  Ledger ledger;
  ledger.written_at = now;
  for (size_t q = 0; q < budgets_.size(); ++q) {
    const QueueNode& node = tree_.node(static_cast<int>(q));
    for (size_t b = 0; b < budgets_[q].size(); ++b) {
      const double spent = SpentLocked(static_cast<int>(q), b, now);
      ledger.entries.push_back({node.path, std::string(api::ResourceName(node.budget[b].resource)),
                                spent, budgets_[q][b].period_start});
    }
  }
  return ledger;
}

void QuotaTracker::ImportLedger(const Ledger& ledger) {
  const absl::Time now = clock_->Now();
  absl::MutexLock lock(&mu_);
  for (const auto& entry : ledger.entries) {
    const int q = tree_.Find(entry.queue);
    if (q < 0) continue;
    const QueueNode& node = tree_.node(q);
    for (size_t b = 0; b < node.budget.size(); ++b) {
      if (api::ResourceName(node.budget[b].resource) != entry.resource) continue;
      BudgetState& state = budgets_[q][b];
      SpentLocked(q, b, now);
      state.spent = entry.used_unit_seconds;
      // Aligned: the boundary the written period began at, also if it was written unaligned.
      state.period_start = AlignedPeriodStart(node.period, std::min(entry.period_start, now));
      state.last = now;
      SpentLocked(q, b, now);  // a period that ended while the ledger sat unread resets
    }
  }
  ledger_written_at_ = ledger.written_at;
}

}  // namespace kubesched::quota
