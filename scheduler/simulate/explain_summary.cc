// explain's default table: a summary that stays short on thousands of nodes.

#include <algorithm>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "scheduler/simulate/report_output.h"
#include "scheduler/util/strings.h"

namespace kubesched::scheduler {
namespace {

// How many node names a failure group lists before "(+N more)".
constexpr size_t kNamesPerReason = 5;

bool Failed(const FilterResult& filter) {
  return filter.code != framework::Code::kSuccess && filter.code != framework::Code::kSkip;
}

// The verdict that rejected `node` first (filters run in profile order), as run reports it.
const FilterResult* FirstRejection(const ExplainedNode& node) {
  for (const auto& filter : node.filters) {
    if (Failed(filter)) return &filter;
  }
  return nullptr;
}

// Every rejecting filter of a node, "Plugin: reason, reason; Plugin: reason".
std::string RejectionText(const ExplainedNode& node) {
  std::vector<std::string> parts;
  for (const auto& filter : node.filters) {
    if (Failed(filter))
      parts.push_back(absl::StrCat(filter.plugin, ": ", util::Join(filter.reasons, ", ")));
  }
  return parts.empty() ? "(no verdict)" : util::Join(parts, "; ");
}

// The score plugins in the order the best node lists them.
std::vector<std::string> ScorePlugins(const std::vector<const ExplainedNode*>& nodes) {
  std::vector<std::string> plugins;
  for (const auto* node : nodes) {
    for (const auto& score : node->scores) {
      if (std::find(plugins.begin(), plugins.end(), score.plugin) == plugins.end()) {
        plugins.push_back(score.plugin);
      }
    }
  }
  return plugins;
}

std::string TopNodes(const ExplainReport& report, int top) {
  std::vector<const ExplainedNode*> feasible;
  for (const auto& node : report.nodes) {
    if (node.feasible) feasible.push_back(&node);
  }
  if (feasible.empty()) return "";
  const size_t shown = std::min(feasible.size(), static_cast<size_t>(std::max(top, 0)));
  feasible.resize(shown);
  if (feasible.empty()) return "";
  const std::vector<std::string> plugins = ScorePlugins(feasible);
  std::vector<std::vector<std::string>> rows = {{"", "NODE", "TOTAL"}};
  for (const auto& plugin : plugins) rows.front().push_back(plugin);
  for (const auto* node : feasible) {
    const bool chosen = report.selected.has_value() && *report.selected == node->name;
    std::vector<std::string> row = {chosen ? "*" : "", node->name, absl::StrCat(node->total)};
    for (const auto& plugin : plugins) {
      auto it = std::find_if(node->scores.begin(), node->scores.end(),
                             [&](const ScoreDetail& score) { return score.plugin == plugin; });
      row.push_back(it == node->scores.end()
                        ? "-"
                        : absl::StrCat(it->normalized, "x", it->weight, " (raw ", it->raw, ")"));
    }
    rows.push_back(std::move(row));
  }
  const size_t all = static_cast<size_t>(std::count_if(report.nodes.begin(), report.nodes.end(),
                                                       [](const auto& n) { return n.feasible; }));
  return absl::StrCat("\nTop ", shown, " of ", all,
                      " feasible node(s) by total score (normalized x weight):\n",
                      AlignedColumns(rows));
}

std::string FailedNodes(const ExplainReport& report) {
  // Reason text -> node names, the reasons with most nodes first.
  std::map<std::string, std::vector<std::string>> by_reason;
  for (const auto& node : report.nodes) {
    if (!node.feasible) by_reason[RejectionText(node)].push_back(node.name);
  }
  if (by_reason.empty()) return "";
  std::vector<std::pair<std::string, std::vector<std::string>>> groups(by_reason.begin(),
                                                                       by_reason.end());
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  std::vector<std::vector<std::string>> rows = {{"NODES", "REASON", "EXAMPLES"}};
  for (auto& [reason, names] : groups) {
    std::sort(names.begin(), names.end());
    std::vector<std::string> shown(names.begin(),
                                   names.begin() + std::min(names.size(), kNamesPerReason));
    std::string examples = util::Join(shown, ", ");
    if (names.size() > shown.size())
      absl::StrAppend(&examples, " (+", names.size() - shown.size(), " more)");
    rows.push_back({absl::StrCat(names.size()), reason, examples});
  }
  return absl::StrCat("\nFailed nodes by reason:\n", AlignedColumns(rows));
}

}  // namespace

std::string ExplainHistogram(const ExplainReport& report) {
  absl::flat_hash_map<std::string, int> counts;
  int available = 0;
  for (const auto& node : report.nodes) {
    if (node.feasible) {
      ++available;
      continue;
    }
    const FilterResult* rejection = FirstRejection(node);
    if (rejection == nullptr) continue;
    for (const auto& reason : rejection->reasons) ++counts[reason];
  }
  std::vector<std::string> parts;
  for (const auto& [reason, count] : counts) parts.push_back(absl::StrCat(count, " ", reason));
  std::sort(parts.begin(), parts.end());
  std::string text = absl::StrCat(available, "/", report.nodes.size(), " nodes are available");
  if (!parts.empty()) absl::StrAppend(&text, ": ", util::Join(parts, ", "));
  return text + ".";
}

std::string ExplainSummaryTable(const ExplainReport& report, int top) {
  std::string out = absl::StrCat("Pod ", report.pod, "\n");
  if (!report.nodes.empty()) out += ExplainHistogram(report) + "\n";
  out += TopNodes(report, top);
  out += FailedNodes(report);
  return out + ExplainFooter(report);
}

}  // namespace kubesched::scheduler
