#pragma once

// Wait keys: a pod blocked by quota waits under the keys of what blocks it; a change that may
// help announces the matching keys. QuotaTracker::WaitKeys hands them out; SetConfig, the
// namespace calls, Release and Tick announce them.

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "scheduler/util/strings.h"

namespace kubesched::quota {

// Stands for every key.
inline constexpr char kWakeAll[] = "*";

// A pod that names no usable leaf queue: only a new configuration or namespace can help.
inline constexpr std::string_view kPlacementKey = "placement";

// A pod over the max of the queue at `path`: usage released in its subtree may help.
inline std::string QuotaKey(std::string_view path) {
  return absl::StrCat("quota:", util::Absl(path));
}

// A pod over the budget of the queue at `path`: the budget's period rolling over may help.
inline std::string BudgetKey(std::string_view path) {
  return absl::StrCat("budget:", util::Absl(path));
}

}  // namespace kubesched::quota
