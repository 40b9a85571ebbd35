#include "scheduler/fit_error.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "scheduler/util/strings.h"

namespace kubesched::scheduler {

std::string FitError::Message() const {
  std::string message = absl::StrCat("0/", num_all_nodes, " nodes are available");
  if (!pre_filter_status.IsSuccess()) {
    absl::StrAppend(&message, ": ", pre_filter_status.Message(), ".");
  } else {
    std::map<std::string_view, int> histogram;
    for (const auto& node_status : node_statuses) {
      for (std::string_view reason : node_status.status.reasons()) ++histogram[reason];
    }
    // Upstream formats "<count> <reason>" and sorts those strings as text.
    std::vector<std::string> parts;
    parts.reserve(histogram.size());
    for (const auto& [reason, count] : histogram) {
      parts.push_back(absl::StrCat(count, " ", util::Absl(reason)));
    }
    std::sort(parts.begin(), parts.end());
    absl::StrAppend(&message, ": ", util::Join(parts, ", "), ".");
  }
  if (!post_filter_message.empty()) absl::StrAppend(&message, " ", post_filter_message, ".");
  return message;
}

std::vector<std::string> FitError::RejectingPlugins() const {
  std::vector<std::string> plugins;
  auto add = [&](std::string_view plugin) {
    if (plugin.empty()) return;
    if (std::find(plugins.begin(), plugins.end(), plugin) == plugins.end()) {
      plugins.emplace_back(plugin);
    }
  };
  add(pre_filter_status.plugin());
  for (const auto& node_status : node_statuses) add(node_status.status.plugin());
  return plugins;
}

}  // namespace kubesched::scheduler
