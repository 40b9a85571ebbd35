#include "scheduler/fit_error.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "scheduler/util/strings.h"

namespace kubesched::scheduler {

std::string FitError::Message() const {
  std::string message = absl::StrCat("0/", num_all_nodes, " nodes are available");
  if (!pre_filter_status.IsSuccess()) {
    absl::StrAppend(&message, ": ", pre_filter_status.Message(), ".");
  } else {
    framework::ReasonCounts histogram;
    for (const auto& node_status : node_statuses) histogram.AddAll(node_status.status);
    absl::StrAppend(&message, ": ", util::Join(histogram.SortedParts(), ", "), ".");
  }
  if (!post_filter_message.empty()) absl::StrAppend(&message, " ", post_filter_message, ".");
  return message;
}

std::vector<std::string> FitError::RejectingPlugins() const {
  std::vector<std::string> plugins;
  std::string_view last;  // the plugin added or found last: most nodes repeat it
  auto add = [&](std::string_view plugin) {
    if (plugin.empty()) return;
    if (plugin.data() == last.data() && plugin.size() == last.size()) return;
    last = plugin;
    if (std::find(plugins.begin(), plugins.end(), plugin) == plugins.end()) {
      plugins.emplace_back(plugin);
    }
  };
  add(pre_filter_status.plugin());
  for (const auto& node_status : node_statuses) add(node_status.status.plugin());
  return plugins;
}

}  // namespace kubesched::scheduler
