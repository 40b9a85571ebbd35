#include "scheduler/simulate/simulation_summary.h"

#include <algorithm>
#include <map>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "scheduler/simulate/report_output.h"
#include "scheduler/util/strings.h"

namespace kubesched::scheduler {
namespace {

constexpr std::string_view kAvailable = " nodes are available: ";

// "3 Insufficient cpu" -> "Insufficient cpu".
std::string WithoutCount(std::string_view part) {
  part = util::Std(absl::StripAsciiWhitespace(util::Absl(part)));
  const size_t space = part.find(' ');
  if (space != std::string_view::npos &&
      std::all_of(part.begin(), part.begin() + space,
                  [](char c) { return absl::ascii_isdigit(c); })) {
    part.remove_prefix(space + 1);
  }
  return std::string(part);
}

// The reasons of one FailedScheduling-style message; the message itself for any other shape.
std::vector<std::string> ReasonsOf(std::string_view message) {
  const size_t at = message.find(kAvailable);
  if (!message.starts_with("0/") || at == std::string_view::npos) return {std::string(message)};
  std::string_view rest = message.substr(at + kAvailable.size());
  // Preemption's own diagnosis follows the histogram after ". ".
  if (const size_t end = rest.find(". "); end != std::string_view::npos) rest = rest.substr(0, end);
  if (rest.ends_with('.')) rest.remove_suffix(1);
  std::vector<std::string> reasons;
  for (absl::string_view part : absl::StrSplit(util::Absl(rest), ", ")) {
    std::string reason = WithoutCount(util::Std(part));
    if (!reason.empty()) reasons.push_back(std::move(reason));
  }
  return reasons;
}

}  // namespace

std::optional<PodsOutput> ParsePodsOutput(std::string_view text) {
  if (text == "all") return PodsOutput::kAll;
  if (text == "pending") return PodsOutput::kPending;
  if (text == "none") return PodsOutput::kNone;
  return std::nullopt;
}

void LimitPodResults(PodsOutput output, SimulationReport* report) {
  auto& pods = report->pod_results;
  if (output == PodsOutput::kNone) pods.clear();
  if (output == PodsOutput::kPending) {
    std::erase_if(pods, [](const PodResult& pod) { return pod.node.has_value() || pod.skipped; });
  }
}

std::vector<ReasonCount> UnschedulableReasons(const std::vector<PodResult>& pods) {
  std::map<std::string, int> counts;
  for (const auto& pod : pods) {
    if (pod.skipped || pod.node.has_value()) continue;
    absl::flat_hash_set<std::string> seen;  // a reason counts once per pod
    for (auto& reason : ReasonsOf(pod.message.value_or("not tried"))) {
      if (seen.insert(reason).second) ++counts[reason];
    }
  }
  std::vector<ReasonCount> reasons;
  for (auto& [reason, count] : counts) reasons.push_back({reason, count});
  std::stable_sort(reasons.begin(), reasons.end(),
                   [](const auto& a, const auto& b) { return a.pods > b.pods; });
  return reasons;
}

std::vector<QueueCount> QueueCounts(const std::vector<PodResult>& pods) {
  std::map<std::string, QueueCount> counts;
  for (const auto& pod : pods) {
    if (pod.skipped) continue;
    QueueCount& count = counts[pod.queue.value_or("-")];
    ++count.pods;
    ++(pod.node.has_value() ? count.scheduled : count.pending);
  }
  std::vector<QueueCount> result;
  for (auto& [queue, count] : counts) {
    count.queue = queue;
    result.push_back(count);
  }
  return result;
}

std::string SimulationSummaryTable(const SimulationReport& report) {
  std::string out;
  const std::vector<ReasonCount> reasons = UnschedulableReasons(report.pod_results);
  if (!reasons.empty()) {
    std::vector<std::vector<std::string>> rows = {{"PODS", "UNSCHEDULABLE BECAUSE"}};
    for (const auto& reason : reasons) rows.push_back({absl::StrCat(reason.pods), reason.reason});
    out += "\n" + AlignedColumns(rows);
  }
  const std::vector<QueueCount> queues = QueueCounts(report.pod_results);
  const bool any_queue =
      std::any_of(queues.begin(), queues.end(), [](const QueueCount& q) { return q.queue != "-"; });
  if (any_queue) {
    std::vector<std::vector<std::string>> rows = {{"QUEUE", "PODS", "SCHEDULED", "PENDING"}};
    for (const auto& queue : queues) {
      rows.push_back({queue.queue, absl::StrCat(queue.pods), absl::StrCat(queue.scheduled),
                      absl::StrCat(queue.pending)});
    }
    out += "\n" + AlignedColumns(rows);
  }
  return out;
}

}  // namespace kubesched::scheduler
