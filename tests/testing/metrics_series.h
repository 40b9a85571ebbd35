#pragma once

// What the metrics cardinality tests compare between scrapes: the series, less the families that
// grow with timing rather than with what pods carry, and the values of the labels that come from
// the configuration.

#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "scheduler/metrics/scheduler_metrics.h"
#include "tests/testing/scrape.h"

namespace kubesched::testing {

// Families whose series are created on the first occurrence of something from a fixed set (a
// plugin's sampled timing, a queue event, an extension point's status, a number of attempts, an
// HTTP status): when they appear depends on timing, not on what pods carry, so they are compared
// by their label values (LabelValues) rather than series by series. And the process' own.
inline bool EventDriven(const std::string& name) {
  for (const char* prefix :
       {"process_", "rest_client_", metrics::kPluginExecutionDuration,
        metrics::kQueueIncomingPodsTotal, metrics::kFrameworkExtensionPointDuration,
        metrics::kPodSchedulingSliDuration}) {
    if (absl::StartsWith(name, prefix)) return true;
  }
  return false;
}

// Each series as `name{label=value,...}`, less the event-driven families.
inline std::set<std::string> Series(const Scrape& scrape) {
  std::set<std::string> series;
  for (const ScrapeSample& sample : scrape.samples()) {
    if (EventDriven(sample.name)) continue;
    std::vector<std::string> labels;
    for (const auto& [name, value] : sample.labels)
      labels.push_back(absl::StrCat(name, "=", value));
    series.insert(absl::StrCat(sample.name, "{", absl::StrJoin(labels, ","), "}"));
  }
  return series;
}

// The values of the labels that come from the configuration, over every family.
inline std::set<std::string> LabelValues(const Scrape& scrape) {
  std::set<std::string> values;
  for (const ScrapeSample& sample : scrape.samples()) {
    for (const auto& [name, value] : sample.labels) {
      if (name == "profile" || name == "queue" || name == "resource" || name == "host" ||
          name == "name") {
        values.insert(absl::StrCat(name, "=", value));
      }
    }
  }
  return values;
}

}  // namespace kubesched::testing
