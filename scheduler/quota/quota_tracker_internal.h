#pragma once

// Small helpers shared by QuotaTracker's implementation files (quota_tracker*.cc and
// quota_preemption.cc). Internal to scheduler/quota/.

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "scheduler/api/labels.h"
#include "scheduler/api/resource.h"
#include "scheduler/api/symbol.h"
#include "scheduler/framework/pod_info.h"

namespace kubesched::quota::internal {

// Canonical units per whole unit: cpu is counted in milli-cores.
inline double UnitScale(api::ResourceId id) { return api::CountsInMilli(id) ? 1000.0 : 1.0; }

// A budget amount (canonical units x seconds) in whole-unit hours, as budgets are configured.
inline double Hours(api::ResourceId id, double unit_seconds) {
  return unit_seconds / 3600.0 / UnitScale(id);
}

inline std::string FormatHours(double hours) { return absl::StrFormat("%.6gh", hours); }

// The pod's request as quota counts it: its effective requests plus one `pods`.
inline api::ResourceList BaseAmounts(const framework::PodInfo& pod) {
  api::ResourceList amounts = pod.requests;
  amounts.Add(api::kPods, 1);
  return amounts;
}

// "used 6, max 8", or with other groups' holds counted "used 6, held 2 for pod groups, max 8".
inline std::string UsedAndMax(api::ResourceId id, int64_t used, int64_t held, int64_t max) {
  std::string text = absl::StrCat("used ", api::FormatAmount(id, used));
  if (held > 0) absl::StrAppend(&text, ", held ", api::FormatAmount(id, held), " for pod groups");
  absl::StrAppend(&text, ", max ", api::FormatAmount(id, max));
  return text;
}

// The value of label `key`, interned; kEmptySymbol when absent.
inline api::Symbol LabelSymbol(const api::LabelSet& labels, std::string_view key) {
  const api::Symbol symbol = api::FindSymbol(key);
  if (symbol == api::kNoSuchSymbol) return api::kEmptySymbol;
  return labels.Get(symbol).value_or(api::kEmptySymbol);
}

// The value of label `key`; "" when absent.
inline std::string LabelText(const api::LabelSet& labels, std::string_view key) {
  const api::Symbol symbol = api::FindSymbol(key);
  if (symbol == api::kNoSuchSymbol) return "";
  auto value = labels.Get(symbol);
  return value.has_value() ? std::string(api::SymbolText(*value)) : std::string();
}

}  // namespace kubesched::quota::internal
